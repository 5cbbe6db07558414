#!/usr/bin/env bash
# Install the Debian packages `make bench` compares memtrace with: heaptrack
# (it pulls in Boost) and bpftrace.  Not in install-deps.sh: nothing but the
# benchmark uses them, and its rows say why they were skipped when they are
# missing (scripts/bench.sh and scripts/bench_real.sh run without them).
# Idempotent: prints nothing and changes nothing when all are present.
set -euo pipefail

PKGS=(heaptrack bpftrace)

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-bench-deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
