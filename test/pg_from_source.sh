#!/bin/bash
# test/pg_from_source.sh MAJOR...: build each PostgreSQL major from Debian's source package with
# assertions and TAP support into its own prefix, once per machine, and print each pg_config.
# test/pg_from_source.sh --source MAJOR: only fetch the orig tarball of MAJOR (15: Debian 12's) and
# print its path.
# Debian 12 has no binary packages of 17 or 18 that fit its libc, so the servers the tests need
# come from the orig tarballs of trixie (17, its security archive) and sid (18), fetched through a
# private apt configuration from the Debian mirrors this machine's apt already uses.
# GPUEXT_PG_CACHE (default /var/cache/gpuext/postgres) holds the sources and the builds.
set -euo pipefail
cache=${GPUEXT_PG_CACHE:-/var/cache/gpuext/postgres}

# The Debian archive and security archive URIs of this machine's apt sources, as "ARCHIVE SECURITY".
debian_mirrors() {
	apt-get indextargets --format '$(REPO_URI) $(CODENAME) $(ORIGIN)' | awk '
		$3 == "Debian" && $2 ~ /-security$/ && !sec { sec = $1 }
		$3 == "Debian" && $2 !~ /-security$/ && !arc { arc = $1 }
		END { sub(/\/$/, "", arc); sub(/\/$/, "", sec); if (arc) print arc, sec }'
}

# Fetch the orig tarball of postgresql-$1 into $cache/src-$1 through a private source list.
fetch_source() {
	local major=$1 apt=$cache/apt archive security
	read -r archive security < <(debian_mirrors) || true
	if [ -z "${archive:-}" ]; then
		echo "pg_from_source.sh: no Debian archive in this machine's apt sources (apt-get indextargets)" >&2
		return 1
	fi
	mkdir -p "$apt/lists/partial" "$cache/src-$major"
	local list key=/usr/share/keyrings/debian-archive-keyring.gpg
	list=$({
		local suite
		for suite in ${security:+bookworm-security trixie-security}; do echo "deb-src [signed-by=$key] $security $suite main"; done
		for suite in bookworm trixie sid; do echo "deb-src [signed-by=$key] $archive $suite main"; done
	})
	# A changed list (another mirror, more suites) needs its index fetched again.
	if [ "$list" != "$(cat "$apt/sources.list" 2>/dev/null)" ]; then
		printf '%s\n' "$list" >"$apt/sources.list"
		rm -f "$apt/updated"
	fi
	local opts=(-o "Dir::Etc::SourceList=$apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache" -o APT::Get::Only-Source=true -o APT::Sandbox::User=root)
	[ -f "$apt/updated" ] || { apt-get -qq "${opts[@]}" update && touch "$apt/updated"; }
	(cd "$cache/src-$major" && apt-get -qq "${opts[@]}" source --download-only "postgresql-$major") && return
	fetch_older "$major" "$(apt-cache "${opts[@]}" showsrc "postgresql-$major" | awk '/^Version:/ {print $2; exit}')" \
		"$archive" "$security"
}

# A mirror may lag its index: take the newest of the five minor releases before the index's version
# whose .dsc the mirror has, and its orig tarball checked against the .dsc's SHA-256.
fetch_older() {
	local major=$1 version=$2 archive=$3 security=$4 dir=$cache/src-$major
	local minor=${version#*.} rev=${version#*-}
	minor=${minor%%-*}
	for ((m = minor; m >= 0 && m > minor - 6; m--)); do
		local dsc=postgresql-${major}_$major.$m-$rev.dsc
		for url in "$archive/pool/main" ${security:+"$security/pool/updates/main"}; do
			url=$url/p/postgresql-$major
			/usr/lib/apt/apt-helper -o APT::Sandbox::User=root -qq download-file "$url/${dsc//+/%2b}" "$dir/$dsc" >/dev/null 2>&1 || continue
			local sum orig
			read -r sum orig < <(awk '/^Checksums-Sha256:/ {f = 1; next} f && /orig\.tar/ {print $1, $3; exit}' "$dir/$dsc")
			/usr/lib/apt/apt-helper -o APT::Sandbox::User=root -qq download-file "$url/$orig" "$dir/$orig" "SHA256:$sum" >/dev/null && return
		done
	done
	echo "pg_from_source.sh: no source of postgresql-$major could be fetched" >&2
	return 1
}

# The orig tarball of postgresql-$1, fetched when the cache has none.
orig_tarball() {
	ls "$cache/src-$1"/postgresql-"$1"_*.orig.tar.* >/dev/null 2>&1 || fetch_source "$1" >&2
	ls -v "$cache/src-$1"/postgresql-"$1"_*.orig.tar.* | tail -1
}

if [ "${1:-}" = --source ]; then
	orig_tarball "$2"
	exit
fi
for major in "$@"; do
	prefix=$cache/$major
	if [ -x "$prefix/bin/pg_config" ] && [ -f "$prefix/.complete" ]; then
		echo "$prefix/bin/pg_config"
		continue
	fi
	echo "== building PostgreSQL $major (assertions on) into $prefix" >&2
	rm -rf "$prefix" "$cache/build-$major"
	tarball=$(orig_tarball "$major")
	mkdir -p "$cache/build-$major"
	tar -xf "$tarball" -C "$cache/build-$major" --strip-components=1
	(
		cd "$cache/build-$major"
		./configure -q --prefix="$prefix" --enable-cassert --enable-debug --enable-tap-tests \
			--with-readline --with-zlib --without-icu --without-llvm CFLAGS="-O2" >/dev/null
		make -s -j"$(nproc)" >/dev/null
		make -s install >/dev/null
		make -s -C contrib/pg_stat_statements install >/dev/null
	) >&2
	rm -rf "$cache/build-$major"
	touch "$prefix/.complete"
	echo "$prefix/bin/pg_config"
done
