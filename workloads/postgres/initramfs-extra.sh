# Sourced by kernel/vm/mkinitramfs.sh (its EXTRA_SCRIPT) to build the
# PostgreSQL guest (build/vm/initramfs-pg.cpio, `make pg-initramfs`): Debian's
# postgresql-15 binaries as packaged, every loadable module of the package
# but the LLVM JIT (jit=off), the ldd closure of all of them at the host's
# paths, the share files (catalog templates, timezone sets) and the system
# timezone database, a `postgres` user, the preload library and the guest
# scripts. Why copy rather than mount the host's root over 9p: the guest then
# depends on nothing of the host's state while it runs, exec and library
# loads come from RAM, not a 9p round trip per page under TCG, and the set of
# files is exactly what ldd and the package say (workloads/postgres/README.md).
# Needs: $stage, copy_with_libs, copy_lib, copy_libs_of, die (mkinitramfs.sh);
# PG_MSHARE_SO (the built library) in the environment.
pg_bin=/usr/lib/postgresql/15/bin
pg_lib=/usr/lib/postgresql/15/lib
[ -x "$pg_bin/postgres" ] || die "PostgreSQL 15 is not installed ($pg_bin/postgres missing; apt-get install postgresql-15)"
[ -n "${PG_MSHARE_SO:-}" ] && [ -f "$PG_MSHARE_SO" ] || die "PG_MSHARE_SO (the preload library) not built: ${PG_MSHARE_SO:-unset}"
for b in postgres initdb pg_ctl psql pgbench pg_controldata; do
	copy_with_libs "$pg_bin/$b"
done
for so in "$pg_lib"/*.so; do
	case "$so" in */llvmjit*) continue ;; esac
	copy_lib "$so"
	copy_libs_of "$so"
done
mkdir -p "$stage/usr/share/postgresql" "$stage/usr/share"
cp -a /usr/share/postgresql/15 "$stage/usr/share/postgresql/"
cp -a /usr/share/zoneinfo "$stage/usr/share/"
cp "$PG_MSHARE_SO" "$stage/usr/lib/pg-mshare.so"
mkdir -p "$stage/guest/pg"
cp "$(dirname "$extra")"/guest/*.sh "$stage/guest/pg/"
chmod 755 "$stage"/guest/pg/*.sh
echo 'postgres:x:70:70:PostgreSQL:/tmp:/bin/sh' >>"$stage/etc/passwd"
echo 'postgres:x:70:' >>"$stage/etc/group"
