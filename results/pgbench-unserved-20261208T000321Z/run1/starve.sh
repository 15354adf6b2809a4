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
"$PGBIN/pgbench" -h "$PGRUN" -U postgres -n -S -M prepared -c $N -j 2 -T 60 postgres >$out/pgbench.log 2>&1 &
bp=$!
while :; do
	c=$(psqlc -c "select count(*) from pg_stat_activity where backend_type='client backend'")
	[ "${c:-0}" -ge $((N + 1)) ] && break
	sleep 1
done
echo "all $N connected at $(cat /proc/uptime)" >$out/times.txt
snap() {
	for pid in $(psqlc -c "select pid from pg_stat_activity where backend_type='client backend' and pid <> pg_backend_pid() order by backend_start"); do
		echo "$pid $(sed 's/^.*) //' /proc/$pid/stat | awk '{print $1, $12, $13}') $(cat /proc/$pid/schedstat 2>/dev/null) $(cat /proc/$pid/wchan 2>/dev/null)"
	done
}
act() {
	psqlc -c "select pid, state, coalesce(wait_event_type,'-'), coalesce(wait_event,'-'), round(extract(epoch from now() - state_change)::numeric, 2), round(extract(epoch from now() - backend_start)::numeric, 2) from pg_stat_activity where backend_type='client backend' and pid <> pg_backend_pid() order by backend_start"
}
threads() {
	for t in /proc/$bp/task/*; do echo "${t##*/} $(sed 's/^.*) //' $t/stat | awk '{print $1, $12, $13}') $(cat $t/schedstat 2>/dev/null) $(cat $t/wchan 2>/dev/null)"; done
}
sleep 20
echo "snap1 at $(cat /proc/uptime)" >>$out/times.txt
snap >$out/snap1.txt; act >$out/act1.txt; threads >$out/threads1.txt
sleep 10
echo "snap2 at $(cat /proc/uptime)" >>$out/times.txt
snap >$out/snap2.txt; act >$out/act2.txt; threads >$out/threads2.txt
grep -H . /proc/sys/kernel/sched_* 2>/dev/null >$out/sched.txt
ls /sys/kernel/debug/sched 2>/dev/null >>$out/sched.txt
wait $bp
echo "pgbench rc $?" >>$out/times.txt
exit 0
