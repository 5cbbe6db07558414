#!/usr/bin/env bash
# Install the Debian packages memtrace needs to build, run and test;
# with "bench", those `make bench` compares memtrace with instead: heaptrack
# (it pulls in Boost) and bpftrace, and redis-server with redis-benchmark
# (redis-tools) for the redis row, which nothing but the benchmark uses
# (its rows say why they were skipped when they are missing).
# Idempotent: prints nothing and changes nothing when all are present.
set -euo pipefail

if [ "${1:-}" = bench ]; then
	PKGS=(heaptrack bpftrace redis-server redis-tools)
else
PKGS=(
	make gcc g++ clang bpftool pkg-config
	libbpf-dev libelf-dev libdw-dev zlib1g-dev libcap-dev libcapstone-dev
	libmicrohttpd-dev
	libprotobuf-c-dev protobuf-c-compiler
	libcmocka-dev python3 valgrind util-linux procps golang-go
	clang-tidy cppcheck
	libjemalloc-dev libgoogle-perftools-dev
	gawk sqlite3 libc6-dbg
	python3-prometheus-client  # parses /metrics (tests/integration/test_http.py)
	prometheus  # scrapes /metrics (tests/integration/test_prometheus.py)
	man-db bash-completion
	chromium  # headless, loads the SVG memtrace writes (tests/integration/browser.py)
)
fi

missing=()
for p in "${PKGS[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		missing+=("$p")
	fi
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}" >&2
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq >/dev/null
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
