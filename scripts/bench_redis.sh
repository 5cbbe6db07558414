#!/usr/bin/env bash
# scripts/bench_redis.sh: the redis-server row of `make bench` (run at the
# end of scripts/bench.sh; BENCH_REDIS=0 skips it there).  See BENCHMARKS.md.
#
# Debian's redis-server (linked with jemalloc) on 127.0.0.1, not persisting
# (--save '' --appendonly no), driven by redis-benchmark (SET and GET,
# BENCH_REDIS_REQUESTS requests each, 50 clients) over loopback.  Each row
# starts a fresh server, attaches its tracer to the running server, waits
# until the tracer says it is attached, runs redis-benchmark, then stops the
# tracer and the server:
#   untraced                  nothing attached
#   memtrace --probe-only     the trap floor (-p PID)
#   memtrace, full tracing    memtrace -p PID
#   memtrace -s 512K          memtrace -p PID -s 524288
#   heaptrack -p PID          heaptrack injected by gdb (its row says why
#                             when attaching fails)
# REPS rounds, interleaved; the table shows the median requests/s of each
# test and its ratio to the untraced row.  redis-benchmark and the server
# share the machine's CPUs: the figures are for comparing rows, not servers.
#
# A benchmark, not a test: nothing here sets the exit status but a failure
# to run (the rows that cannot run say why and are skipped).
#
# Knobs (environment):
#   BENCH_REPS=3                 rounds (the table shows the median)
#   BENCH_REDIS_REQUESTS=20000   requests per test (SET, GET) and row
#   BENCH_HEAPTRACK=1            0 skips the heaptrack row
#   BENCH_KEEP=1                 keep the run directory and print its path
#   MEMTRACE=./memtrace          the memtrace to measure
set -euo pipefail

cd "$(dirname "$0")/.."

REPS=${BENCH_REPS:-3}
REQUESTS=${BENCH_REDIS_REQUESTS:-20000}
SAMPLE_BYTES=524288
MEMTRACE=$(readlink -f "${MEMTRACE:-$PWD/memtrace}")

die() { echo "bench_redis.sh: $*" >&2; exit 1; }
say() { echo "bench_redis.sh: $*" >&2; }
skip() { echo; echo "redis-server row: skipped: $*"; exit 0; }

[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || die "BENCH_REPS must be a positive integer, not '$REPS'"
[[ $REQUESTS =~ ^[0-9]+$ ]] && [ "$REQUESTS" -ge 1 ] ||
	die "BENCH_REDIS_REQUESTS must be a positive integer, not '$REQUESTS'"
[ "$(id -u)" -eq 0 ] || die "must run as root: memtrace loads BPF programs and attaches uprobes"
[ -x "$MEMTRACE" ] || die "$MEMTRACE not found: build it first (make memtrace)"
command -v redis-server >/dev/null ||
	skip "redis-server not installed (scripts/install-deps.sh bench, or apt-get install redis-server)"
command -v redis-benchmark >/dev/null ||
	skip "redis-benchmark not installed (apt-get install redis-tools)"
command -v redis-cli >/dev/null || skip "redis-cli not installed (apt-get install redis-tools)"

ROWS="untraced floor full sampling heaptrack"
HEAPTRACK_SKIP=
if [ "${BENCH_HEAPTRACK:-1}" != 1 ]; then
	HEAPTRACK_SKIP="BENCH_HEAPTRACK=${BENCH_HEAPTRACK}"
elif ! command -v heaptrack >/dev/null; then
	HEAPTRACK_SKIP="heaptrack not installed (apt-get install heaptrack)"
elif ! command -v gdb >/dev/null; then
	HEAPTRACK_SKIP="heaptrack -p needs gdb (apt-get install gdb)"
fi

T=$(mktemp -d /tmp/memtrace-bench-redis.XXXXXX)
SERVER=
TRACER=
cleanup() {
	# Only the processes this script started, by their ids.
	[ -z "$TRACER" ] || kill -INT "$TRACER" 2>/dev/null || true
	[ -z "$SERVER" ] || kill "$SERVER" 2>/dev/null || true
	wait 2>/dev/null || true
	if [ "${BENCH_KEEP:-0}" = 1 ]; then
		echo "bench_redis.sh: run directory kept: $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server P: a fresh redis-server on 127.0.0.1:PORT; sets SERVER, PORT.
start_server() {
	local p=$1
	PORT=$(free_port)
	redis-server --port "$PORT" --bind 127.0.0.1 --save '' --appendonly no \
		--dir "$T" --logfile "$p.redis.log" --daemonize no >/dev/null 2>&1 </dev/null &
	SERVER=$!
	for _ in $(seq 100); do
		[ "$(redis-cli -h 127.0.0.1 -p "$PORT" ping 2>/dev/null)" = PONG ] && return 0
		sleep 0.1
	done
	return 1
}

stop_server() {
	redis-cli -h 127.0.0.1 -p "$PORT" shutdown nosave >/dev/null 2>&1 || kill "$SERVER" 2>/dev/null || true
	wait "$SERVER" 2>/dev/null || true
	SERVER=
}

# wait_for FILE PATTERN SECONDS: until FILE has a line matching PATTERN
# (or the tracer exited).
wait_for() {
	local i
	for ((i = 0; i < $3 * 10; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$TRACER" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# run_row ROW REP: $T/ROW.REP.{bench,err,report,...}; a line in $T/runs.
run_row() {
	local row=$1 rep=$2 p=$T/$1.$2 rc=0 why=
	start_server "$p" || { echo "$row $rep $p 1 server did not start" >>"$T/runs"; stop_server; return 0; }
	case $row in
	untraced) ;;
	floor | full | sampling)
		local -a opt=()
		[ "$row" = floor ] && opt=(--probe-only)
		[ "$row" = sampling ] && opt=(-s "$SAMPLE_BYTES")
		# -d bounds it should the INT below never come.
		"$MEMTRACE" -p "$SERVER" -d 600 "${opt[@]}" -o "$p.report" >"$p.out" 2>"$p.err" </dev/null &
		TRACER=$!
		wait_for "$p.err" '^memtrace: tracing pid' 60 || why="memtrace did not attach: $(tail -n1 "$p.err")" ;;
	heaptrack)
		heaptrack -o "$p.heaptrack" -p "$SERVER" >"$p.err" 2>&1 </dev/null &
		TRACER=$!
		wait_for "$p.err" '^injection finished' 120 ||
			why="heaptrack did not attach: $(grep -v '^$' "$p.err" | tail -n1)" ;;
	esac
	if [ -z "$why" ]; then
		redis-benchmark -h 127.0.0.1 -p "$PORT" -t set,get -n "$REQUESTS" -c 50 -q --csv \
			>"$p.bench" 2>"$p.bench_err" </dev/null || rc=$?
	fi
	if [ -n "$TRACER" ]; then
		kill -INT "$TRACER" 2>/dev/null || true
		# heaptrack writes its file when the server exits.
		[ "$row" = heaptrack ] && stop_server
		wait "$TRACER" 2>/dev/null || true
		TRACER=
	fi
	[ -z "$SERVER" ] || stop_server
	if [ "$row" = heaptrack ] && [ -z "$why" ] && command -v heaptrack_print >/dev/null; then
		f=$(ls "$p".heaptrack* 2>/dev/null | head -n1)
		[ -n "$f" ] && heaptrack_print -f "$f" -p 0 -a 0 -T 0 -l 0 2>/dev/null |
			grep -m1 'calls to allocation functions' >"$p.calls" || true
	fi
	echo "$row $rep $p $rc $why" >>"$T/runs"
}

say "$REPS rounds of: $(for r in $ROWS; do [ "$r" = heaptrack ] && [ -n "$HEAPTRACK_SKIP" ] || printf '%s ' "$r"; done)($REQUESTS SET and GET requests each)"
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
START=$SECONDS
: >"$T/runs"
for ((rep = 1; rep <= REPS; rep++)); do
	say "round $rep/$REPS"
	for row in $ROWS; do
		[ "$row" = heaptrack ] && [ -n "$HEAPTRACK_SKIP" ] && continue
		run_row "$row" "$rep"
	done
done
ELAPSED=$((SECONDS - START))

export BENCH_T=$T BENCH_REPS=$REPS BENCH_REQUESTS=$REQUESTS BENCH_HEAPTRACK_SKIP=$HEAPTRACK_SKIP \
	BENCH_LOADAVG=$LOADAVG BENCH_ELAPSED=$ELAPSED BENCH_SAMPLE_BYTES=$SAMPLE_BYTES
python3 - <<'EOF'
import os, re, statistics, subprocess

E = os.environ
T = E["BENCH_T"]

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""

def rps(path):
    out = {}
    try:
        for line in open(path):
            f = [x.strip('"') for x in line.strip().split(",")]
            if len(f) >= 2 and f[0] in ("SET", "GET"):
                out[f[0]] = float(f[1])
    except (OSError, ValueError):
        pass
    return out

def events(path):
    try:
        m = re.search(r"^events: (\d+) allocator calls", open(path).read(), re.M)
        return int(m[1]) if m else None
    except OSError:
        return None

runs = {}
for line in open(os.path.join(T, "runs")):
    row, rep, p, rc, *why = line.split()
    runs.setdefault(row, []).append((int(rep), p, int(rc), " ".join(why)))

labels = {"untraced": "untraced", "floor": "memtrace -p, --probe-only (floor)",
          "full": "memtrace -p, full tracing", "sampling": f"memtrace -p -s {E['BENCH_SAMPLE_BYTES']}",
          "heaptrack": "heaptrack -p"}
print()
print(f"redis-server ({sh('redis-server --version').split(' sha=')[0]}, "
      f"malloc={sh('redis-server --version').rpartition('malloc=')[2].split()[0] or '?'}) "
      f"with redis-benchmark on 127.0.0.1: {E['BENCH_REQUESTS']} SET and GET requests, 50 clients;")
print(f"  tracers attached to the running server; median of {E['BENCH_REPS']} rounds; load before: {E['BENCH_LOADAVG']}")
base = {}
res = {}
for row in ("untraced", "floor", "full", "sampling", "heaptrack"):
    got = []
    whys = []
    for rep, p, rc, why in runs.get(row, []):
        r = rps(p + ".bench")
        if why or rc or not r:
            whys.append(why or f"redis-benchmark exit {rc}")
            continue
        r["events"] = events(p + ".report")
        try:
            r["calls"] = open(p + ".calls").read().strip()
        except OSError:
            pass
        got.append(r)
    res[row] = (got, whys)
hdr = ("row", "SET req/s", "x untraced", "GET req/s", "x untraced", "note")
lines = []
for row in ("untraced", "floor", "full", "sampling", "heaptrack"):
    got, whys = res[row]
    if row == "heaptrack" and E["BENCH_HEAPTRACK_SKIP"]:
        lines.append((labels[row], "skipped: " + E["BENCH_HEAPTRACK_SKIP"]))
        continue
    if not got:
        lines.append((labels[row], "FAILED: " + (whys[0] if whys else "no run")))
        continue
    cols = [labels[row]]
    for t in ("SET", "GET"):
        v = med(r.get(t) for r in got)
        if row == "untraced":
            base[t] = v
        cols.append(f"{v:,.0f}" if v else "-")
        cols.append(f"{v / base[t]:.2f}x" if v and base.get(t) else "-")
    note = ""
    ev = med(r.get("events") for r in got)
    if ev is not None:
        note = f"report: {ev:,.0f} allocator calls"
    c = [r.get("calls") for r in got if r.get("calls")]
    if c:
        note = "heaptrack: " + c[0]
    if whys:
        note += f" ({len(whys)} run(s) failed: {whys[0]})"
    cols.append(note)
    lines.append(tuple(cols))
w = [max(len(hdr[i]), *(len(l[i]) for l in lines if len(l) == len(hdr))) for i in range(len(hdr) - 1)]
print("  " + "  ".join(h.ljust(w[i]) if i == 0 else h.rjust(w[i]) for i, h in enumerate(hdr[:-1])) + "  " + hdr[-1])
for l in lines:
    if len(l) != len(hdr):
        print("  " + l[0].ljust(w[0]) + "  " + l[1])
    else:
        print("  " + "  ".join(c.ljust(w[i]) if i == 0 else c.rjust(w[i]) for i, c in enumerate(l[:-1])) + "  " + l[-1])
for row in ("untraced", "floor", "full", "sampling", "heaptrack"):
    got = res[row][0]
    if len(got) > 1:
        print(f"  {labels[row]}: per round SET " + ", ".join(f"{r.get('SET', 0):,.0f}" for r in got)
              + "; GET " + ", ".join(f"{r.get('GET', 0):,.0f}" for r in got))
print(f"\nbench_redis: {E['BENCH_ELAPSED']} s in all")
EOF
