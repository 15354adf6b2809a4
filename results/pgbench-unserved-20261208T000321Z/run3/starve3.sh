#!/bin/sh
# Which pgbench -S clients go unserved on 6.1 (postgres-scale: 189 of 500
# backends ran no transaction in 20 s)? Per backend after 20 guest s:
# process state, schedstat (run ns, run_delay ns, timeslices), and what
# PostgreSQL says it waits for.
. /guest/pg/pg-common.sh
out=/out
N=${N:-500}
pg_init || exit 1
pg_start 4k 2GB 1010 || exit 1
"$PGBIN/pgbench" -h "$PGRUN" -U postgres -i -s 8 -q postgres >$out/init.log 2>&1 || { cat $out/init.log; exit 1; }
ulimit -n 4096
"$PGBIN/pgbench" -h "$PGRUN" -U postgres -n -S -M prepared -c $N -j 2 -T 80 postgres >$out/pgbench.log 2>&1 &
bp=$!
while :; do
	c=$(psqlc -c "select count(*) from pg_stat_activity where backend_type='client backend'")
	[ "${c:-0}" -ge $((N + 1)) ] && break
	sleep 1
done
echo "all $N connected at $(cat /proc/uptime)" >$out/times.txt
snap() {
	# one awk over every process: pid comm state utime stime (backends: comm postgres)
	awk '{print $1, $2, $3, $14, $15}' /proc/[0-9]*/stat 2>/dev/null
}
act() {
	psqlc -c "select pid, state, coalesce(wait_event_type,'-'), coalesce(wait_event,'-'), round(extract(epoch from now() - state_change)::numeric, 2), round(extract(epoch from now() - backend_start)::numeric, 2), xact_start is null, left(query, 60) from pg_stat_activity where backend_type='client backend' and pid <> pg_backend_pid() order by backend_start"
}
threads() {
	for t in /proc/$bp/task/*; do echo "${t##*/} $(awk '{print $3, $14, $15, $18, $19}' $t/stat) $(cat $t/wchan 2>/dev/null)"; done
}
sleep 20
echo "snap1 at $(cat /proc/uptime)" >>$out/times.txt
threads >$out/threads1.txt; snap >$out/snap1.txt; act >$out/act1.txt
echo "snap1 done at $(cat /proc/uptime)" >>$out/times.txt
sleep 20
command -v ss >/dev/null \&\& ss -xp > $out/ss1.txt 2>\&1
ls -l /proc/$bp/fd > $out/fd1.txt 2>\&1
echo "snap2 at $(cat /proc/uptime)" >>$out/times.txt
threads >$out/threads2.txt; snap >$out/snap2.txt; act >$out/act2.txt
echo "snap2 done at $(cat /proc/uptime)" >>$out/times.txt
grep -H . /proc/sys/kernel/sched_* 2>/dev/null >$out/sched.txt
ls /sys/kernel/debug/sched 2>/dev/null >>$out/sched.txt
wait $bp
echo "pgbench rc $?" >>$out/times.txt
exit 0
