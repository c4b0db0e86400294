# Sourced by test/demo.sh and test/run_all.sh: as root on Debian 12, install the packages in
# $PACKAGES that are missing; otherwise leave SUDO=sudo for the install step.
PACKAGES=${PACKAGES:-postgresql-15 postgresql-server-dev-15 postgresql-common make gcc}
SUDO=""
if [ "$(id -u)" = 0 ]; then
	missing=$(for p in $PACKAGES; do dpkg -s "$p" >/dev/null 2>&1 || echo "$p"; done)
	if [ -n "$missing" ]; then
		echo "== installing:" $missing
		apt-get update -qq
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $missing >/dev/null
	fi
else
	SUDO=sudo
fi
export PG_CONFIG=${PG_CONFIG:-/usr/lib/postgresql/15/bin/pg_config}
