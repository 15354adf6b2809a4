# tests/lib/postgres.sh - for the host tests that start a throw-away
# PostgreSQL (sourced, not run).
#
# as_pg CMD [ARG...]  runs CMD as the cluster's owner: as the caller until
#                     pg_owner has chosen another
# pg_owner DIR        PostgreSQL refuses to run as root: as root, the owner is
#                     postgres (nobody without that user), DIR becomes theirs
#                     and as_pg runs commands as them; pguser names the owner
as_pg() { "$@"; }
pguser=$(id -un)
pg_owner() {
	[ "$(id -u)" = 0 ] || return 0
	if id postgres >/dev/null 2>&1; then pguser=postgres; else pguser=nobody; fi
	chown "$pguser" "$1"
	as_pg() { su "$pguser" -s /bin/sh -c 'exec "$0" "$@"' -- "$@"; }
}
