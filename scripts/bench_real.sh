#!/usr/bin/env bash
# scripts/bench_real.sh: the real-workload rows of `make bench` (run at the
# end of scripts/bench.sh; BENCH_REAL=0 skips it there).  See BENCHMARKS.md.
#
# Four deterministic workloads on Debian programs: gawk (a word count over
# generated text), /usr/bin/python3 (dicts, lists and long strings, JSON),
# sqlite3 (:memory:, 20,000 rows inserted, an index, two queries) and
# bench/cxxwork.cpp (std::map / std::string / std::vector churn, g++ -O2 -g
# as Debian builds).  Each runs untraced, under memtrace --probe-only (the
# trap floor), memtrace --bench-part blocks and caller (the table of blocks
# alone, then with one-frame stacks: where full tracing's cost goes, and
# whether 1.15x of the floor is within reach on the machine), memtrace
# full tracing, memtrace -s 512K, memtrace
# --unwind fp (which probes every operator new/delete as well: the cost
# before one-trap-per-C++-allocation), and, where installed, heaptrack,
# valgrind memcheck and bpftrace with three empty probes (malloc, its
# return, free).  REPS rounds, interleaved; the table shows medians.
#
# The workload is timed from inside (build/bench/stamp.so, LD_PRELOADed
# into the workload only): from its first constructor to its last
# destructor, so each tracer's start-up and report stay out of the
# per-call figures and are shown in columns of their own.
#
# Then: start-up (`memtrace -- /bin/true`: total, and to /bin/true's first
# instruction; BENCH_STARTUP_REPS runs, with memtrace's own account of its
# phases from -v) and the report time of a 10,000-stack profile (churn
# --stacks; CMD's exit to memtrace's exit).
#
# A benchmark, not a test: nothing is compared with a limit for the exit
# status.  It exits non-zero only when something that must run could not
# (not root, memtrace missing, a build failed, a workload failed).  A
# missing optional tool (heaptrack, valgrind, bpftrace, gawk, sqlite3,
# g++) skips its rows with the reason.
#
# Knobs (environment):
#   BENCH_REPS=3           rounds (the table shows the median)
#   BENCH_REAL_WORKLOADS="gawk python3 sqlite3 cxx"  which workloads (none:
#                          only the start-up and the report time)
#   BENCH_STARTUP_REPS=5   start-up runs (the median is shown)
#   MEMTRACE=./memtrace    the memtrace to measure (e.g. an older build)
#   BENCH_REAL_STACKS=10000  distinct stacks for the report-time run (0: skip)
#   BENCH_REAL_BIG="clang node"  large programs whose report (symbolising
#                          tens of thousands of stacks through libLLVM,
#                          libclang-cpp, node) is timed once each (none: skip)
#   BENCH_HEAPTRACK=1, BENCH_VALGRIND=1, BENCH_BPFTRACE=1   0 skips that row
#   BENCH_KEEP=1           keep the run directory and print its path
set -euo pipefail

cd "$(dirname "$0")/.."

REPS=${BENCH_REPS:-3}
STARTUP_REPS=${BENCH_STARTUP_REPS:-5}
WORKLOADS=${BENCH_REAL_WORKLOADS:-gawk python3 sqlite3 cxx}
[ "$WORKLOADS" = none ] && WORKLOADS=""
STACKS=${BENCH_REAL_STACKS:-10000}
BIG=${BENCH_REAL_BIG:-clang node}
[ "$BIG" = none ] && BIG=""
SAMPLE_BYTES=524288
MEMTRACE=$(readlink -f "${MEMTRACE:-$PWD/memtrace}")
# Under sudo, memtrace runs CMD as the invoking user unless --as-root: the
# workloads run as root in every row (they write into the run directory).
MT=("$MEMTRACE" --as-root)
PY=/usr/bin/python3
STAMP=$PWD/build/bench/stamp.so
CXXWORK=$PWD/build/bench/cxxwork
CHURN=$PWD/build/bench/churn

die() { echo "bench_real.sh: $*" >&2; exit 1; }
say() { echo "bench_real.sh: $*" >&2; }

[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || die "BENCH_REPS must be a positive integer, not '$REPS'"
[[ $STARTUP_REPS =~ ^[0-9]+$ ]] && [ "$STARTUP_REPS" -ge 1 ] ||
	die "BENCH_STARTUP_REPS must be a positive integer, not '$STARTUP_REPS'"
[[ $STACKS =~ ^[0-9]+$ ]] || die "BENCH_REAL_STACKS must be a non-negative integer, not '$STACKS'"
[ "$(id -u)" -eq 0 ] ||
	die "must run as root: memtrace loads BPF programs and attaches uprobes (try: sudo make bench)"
[ -x "$MEMTRACE" ] || die "$MEMTRACE not found: build it first (make memtrace)"
[ -x "$PY" ] || die "$PY not found (scripts/install-deps.sh installs python3)"
CC=${CC:-cc}
CXX=${CXX:-g++}
command -v "$CC" >/dev/null || die "C compiler '$CC' not found"

build() { # OUT SRC COMPILER FLAGS...
	local out=$1 src=$2
	shift 2
	[ -x "$out" ] && [ ! "$src" -nt "$out" ] && return 0
	mkdir -p "$(dirname "$out")"
	say "building $out"
	"$@" -o "$out.tmp" "$src" || die "building $out failed"
	mv "$out.tmp" "$out"
}
build "$STAMP" bench/stamp.c "$CC" -O2 -Wall -Wextra -shared -fPIC
build "$CHURN" bench/churn.c "$CC" -O2 -g -fno-omit-frame-pointer -pthread -Wall -Wextra

T=$(mktemp -d /tmp/memtrace-bench-real.XXXXXX)
if [ "${BENCH_KEEP:-0}" = 1 ]; then
	trap 'echo "bench_real.sh: run directory kept: $T" >&2' EXIT
else
	trap 'rm -rf "$T"' EXIT
fi

# bench/rusage.py OUT CMD...: CMD's rusage and wall-clock ends, into OUT.

# ---- the workloads: inputs (generated, seeded) and command lines ----
# Arguments have no spaces: bpftrace -c takes one string.
"$PY" - "$T" <<'EOF'
import random, sys
T = sys.argv[1]
r = random.Random(1)
words = ["Word%d" % i for i in range(5000)]
with open(T + "/text.txt", "w") as f:
    for i in range(2000):
        f.write(" ".join(r.choice(words) for _ in range(10)) + "\n")
with open(T + "/wc.awk", "w") as f:
    f.write("{ for (i = 1; i <= NF; i++) c[tolower($i)]++ }\n"
            "END { n = 0; for (w in c) n++; print n, NR }\n")
with open(T + "/work.py", "w") as f:
    f.write("""import json
d = {}
for i in range(30000):
    k = "key-%06d" % (i % 5000)
    d[k] = {"id": i, "name": k * 60, "tags": [k] * 80}
s = json.dumps(list(d.values())[:500])
print(len(d), len(s), len(json.loads(s)))
""")
with open(T + "/work.sql", "w") as f:
    f.write("CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);\n"
            "CREATE INDEX t_grp ON t(grp);\nBEGIN;\n")
    for s in range(400):
        f.write("INSERT INTO t(name, grp, val) VALUES\n" + ",\n".join(
            "('name-%d-%s', %d, %d.5)" % (i, "x" * (i % 50), (i * 7919) % 100, i % 1000)
            for i in range(s * 50, s * 50 + 50)) + ";\n")
    f.write("COMMIT;\nSELECT grp, count(*), sum(val), max(name) FROM t GROUP BY grp ORDER BY grp LIMIT 3;\n"
            "SELECT count(DISTINCT name) FROM t;\n")
EOF

declare -A WL_CMD WL_EXE WL_SKIP
for w in $WORKLOADS; do
	case $w in
	gawk)
		if g=$(command -v gawk); then
			WL_EXE[$w]=$(readlink -f "$g")
			WL_CMD[$w]="$g -f $T/wc.awk $T/text.txt"
		else WL_SKIP[$w]="gawk not installed (apt-get install gawk)"; fi ;;
	python3)
		WL_EXE[$w]=$(readlink -f "$PY")
		WL_CMD[$w]="$PY -s $T/work.py" ;;
	sqlite3)
		if g=$(command -v sqlite3); then
			WL_EXE[$w]=$(readlink -f "$g")
			WL_CMD[$w]="$g -batch -init $T/work.sql :memory: .quit"
		else WL_SKIP[$w]="sqlite3 not installed (apt-get install sqlite3)"; fi ;;
	cxx)
		if command -v "$CXX" >/dev/null; then
			build "$CXXWORK" bench/cxxwork.cpp "$CXX" -O2 -g -Wall -Wextra
			WL_EXE[$w]=$CXXWORK
			WL_CMD[$w]="$CXXWORK -r 5 -s 1"
		else WL_SKIP[$w]="C++ compiler '$CXX' not found"; fi ;;
	*) die "unknown workload '$w' in BENCH_REAL_WORKLOADS (gawk python3 sqlite3 cxx)" ;;
	esac
done

LIBC=$(ldd "$CHURN" | awk '$1 == "libc.so.6" { print $3 }')
[ -n "$LIBC" ] && [ -e "$LIBC" ] || die "cannot find the libc.so.6 (ldd $CHURN)"
LIBC=$(readlink -f "$LIBC")

# ---- the optional tools ----
declare -A TOOL_SKIP
opt_tool() { # ROW KNOB COMMAND APT-PACKAGE
	if [ "${!2:-1}" != 1 ]; then
		TOOL_SKIP[$1]="$2=${!2}"
	elif ! command -v "$3" >/dev/null; then
		TOOL_SKIP[$1]="$3 not installed (apt-get install $4)"
	fi
}
opt_tool heaptrack BENCH_HEAPTRACK heaptrack heaptrack
opt_tool valgrind BENCH_VALGRIND valgrind valgrind
opt_tool bpftrace BENCH_BPFTRACE bpftrace bpftrace
BPFTRACE_PROG="uprobe:$LIBC:malloc {} uretprobe:$LIBC:malloc {} uprobe:$LIBC:free {}"

ROWS="untraced floor blocks caller full sampling fpwalk heaptrack valgrind bpftrace"

# run_row ROW WORKLOAD REP: one run; files $T/WORKLOAD.ROW.REP.*
run_row() {
	local row=$1 w=$2 rep=$3 p=$T/$2.$1.$3 rc=0
	local -a cmd tool=()
	read -ra cmd <<<"${WL_CMD[$w]}"
	case $row in
	untraced) ;;
	floor) tool=("${MT[@]}" --probe-only -o "$p.report" --) ;;
	blocks | caller) tool=("${MT[@]}" --bench-part "$row" -o "$p.report" --) ;;
	full) tool=("${MT[@]}" -o "$p.report" --) ;;
	sampling) tool=("${MT[@]}" -s "$SAMPLE_BYTES" -o "$p.report" --) ;;
	fpwalk) tool=("${MT[@]}" --unwind fp -o "$p.report" --) ;;
	heaptrack) tool=(heaptrack -o "$p.heaptrack") ;;
	valgrind) tool=(valgrind --tool=memcheck --log-file="$p.valgrind") ;;
	bpftrace) tool=(bpftrace -e "$BPFTRACE_PROG" -c "${cmd[*]}"); cmd=() ;;
	esac
	# env puts the stamp into the tool and the workload only (it is active in
	# the workload's executable alone), not into rusage.py's python.
	PYTHONHASHSEED=0 "$PY" bench/rusage.py "$p.ru" env LD_PRELOAD="$STAMP" STAMP_OUT="$p.stamp" \
		STAMP_EXE="${WL_EXE[$w]}" "${tool[@]}" "${cmd[@]}" >"$p.out" 2>"$p.err" </dev/null || rc=$?
	echo "$w $row $rep $p $rc" >>"$T/runs"
}

say "$REPS rounds of: $(for w in $WORKLOADS; do [ -n "${WL_SKIP[$w]:-}" ] || printf '%s ' "$w"; done)x" \
	"$(for r in $ROWS; do [ -n "${TOOL_SKIP[$r]:-}" ] || printf '%s ' "$r"; done)"
LOADAVG=$(cut -d' ' -f1-3 /proc/loadavg)
# Other tracers on the machine, noted at each round: a system-wide one
# (memtrace without -p or --; any bpftrace) puts its
# traps into every row.
others() { pgrep -a -x 'memtrace|bpftrace' >>"$T/others" 2>/dev/null || true; }
START=$SECONDS
: >"$T/runs"
: >"$T/others"
for ((rep = 1; rep <= REPS; rep++)); do
	for w in $WORKLOADS; do
		[ -z "${WL_SKIP[$w]:-}" ] || continue
		others
		say "round $rep/$REPS: $w"
		for row in $ROWS; do
			[ -z "${TOOL_SKIP[$row]:-}" ] || continue
			run_row "$row" "$w" "$rep"
		done
	done
done

# Start-up: memtrace -- /bin/true (stamped: when true's first instruction ran),
# then as many runs with -v for memtrace's own account of its phases (-v
# prints libbpf's debug output too, which slows it: not timed).
TRUE_EXE=$(readlink -f /bin/true)
for ((rep = 1; rep <= STARTUP_REPS; rep++)); do
	others
	p=$T/true.$rep rc=0
	"$PY" bench/rusage.py "$p.ru" env LD_PRELOAD="$STAMP" STAMP_OUT="$p.stamp" STAMP_EXE="$TRUE_EXE" \
		"${MT[@]}" -o "$p.report" -- /bin/true >"$p.out" 2>"$p.err" </dev/null || rc=$?
	echo "true startup $rep $p $rc" >>"$T/runs"
done
for ((rep = 1; rep <= STARTUP_REPS; rep++)); do
	"${MT[@]}" -v -o /dev/null -- /bin/true 2>&1 </dev/null | grep '^memtrace: started in' >>"$T/phases" || true
done
# Where full tracing's time goes: one more run of each workload, full and
# -s, with -v, which has the kernel time memtrace's BPF programs (their
# statistics add some tens of ns to each run: not timed, not in the table).
for w in $WORKLOADS; do
	[ -z "${WL_SKIP[$w]:-}" ] || continue
	read -ra cmd <<<"${WL_CMD[$w]}"
	for row in full sampling; do
		p=$T/$w.$row.cost
		extra=()
		[ "$row" = sampling ] && extra=(-s "$SAMPLE_BYTES")
		"${MT[@]}" -v "${extra[@]}" -o "$p.report" -- "${cmd[@]}" >/dev/null 2>"$p.err" </dev/null || true
		grep '^memtrace: BPF ' "$p.err" | sed "s/^/$w $row /" >>"$T/bpfcost" || true
	done
done
# Report time over STACKS distinct stacks: churn's exit to memtrace's exit.
if [ "$STACKS" -gt 0 ]; then
	for ((rep = 1; rep <= REPS; rep++)); do
		p=$T/stacks.$rep rc=0
		"$PY" bench/rusage.py "$p.ru" "${MT[@]}" --max-stacks $((STACKS * 2)) -o "$p.report" \
			-- "$CHURN" --stacks "$STACKS" -o "$p.churn" >"$p.out" 2>"$p.err" </dev/null || rc=$?
		echo "stacks report $rep $p $rc" >>"$T/runs"
	done
fi
# Report time of large programs, once each: CMD's exit (stamped by the
# shell that runs it) to memtrace's exit.
for b in $BIG; do
	p=$T/big.$b rc=0
	case $b in
	clang)
		c=$(command -v clang-14 || command -v clang || true)
		[ -n "$c" ] || { echo "$b: clang-14 not installed" >>"$T/bigskip"; continue; }
		printf '#include <iostream>\n#include <map>\n#include <regex>\n#include <string>\n#include <vector>\nint main() { std::map<std::string, std::vector<int>> m; std::regex r("a+"); m["x"].push_back(1); std::cout << m.size() << std::regex_match("aa", r) << "\\n"; }\n' >"$T/big.cpp"
		cmd=("$c" -fsyntax-only "$T/big.cpp") ;;
	node)
		c=$(command -v node || command -v nodejs || true)
		[ -n "$c" ] || { echo "$b: not installed (apt-get install nodejs)" >>"$T/bigskip"; continue; }
		printf '%s\n' "const m = new Map();" \
			"for (let i = 0; i < 200000; i++) m.set('k' + i, {a: i, b: [i, i + 1], s: JSON.stringify({x: i})});" \
			"let s = 0; for (const [k, v] of m) s += v.a; console.log(s);" >"$T/big.js"
		cmd=("$c" "$T/big.js") ;;
	*) die "unknown program '$b' in BENCH_REAL_BIG (clang node)" ;;
	esac
	"$PY" bench/rusage.py "$p.ru" "${MT[@]}" -o "$p.report" -- sh -c \
		'"$@"; s=$?; date +%s%N >"$0"; exit $s' "$p.exit" "${cmd[@]}" \
		>"$p.out" 2>"$p.err" </dev/null || rc=$?
	echo "$b big 1 $p $rc" >>"$T/runs"
done
ELAPSED=$((SECONDS - START))

# ---- the table ----
skips=""
for w in $WORKLOADS; do [ -z "${WL_SKIP[$w]:-}" ] || skips+="workload $w: ${WL_SKIP[$w]}"$'\n'; done
for r in $ROWS; do [ -z "${TOOL_SKIP[$r]:-}" ] || skips+="row $r: ${TOOL_SKIP[$r]}"$'\n'; done
export BENCH_T=$T BENCH_REPS=$REPS BENCH_STACKS=$STACKS BENCH_WORKLOADS=$WORKLOADS \
	BENCH_ROWS=$ROWS BENCH_SKIPS=$skips BENCH_ELAPSED=$ELAPSED BENCH_LOADAVG=$LOADAVG \
	BENCH_MEMTRACE=$MEMTRACE BENCH_SAMPLE_BYTES=$SAMPLE_BYTES
"$PY" - <<'EOF' || exit 1
import os, re, statistics, subprocess

E = os.environ
T = E["BENCH_T"]
failed = False

def kv(path, prefix=None):
    """key=value pairs of a file's lines (those starting with prefix); a list, one per line."""
    out = []
    try:
        for line in open(path):
            if prefix and not line.startswith(prefix):
                continue
            out.append({k: int(v) if v.isdigit() else v
                        for k, v in (w.split("=", 1) for w in line.split() if "=" in w)})
    except OSError:
        pass
    return out

def header(path):
    try:
        text = open(path).read()
    except OSError:
        return {}
    h = {}
    for key, pat in (("events", r"^events: (\d+) allocator calls"),
                     ("allocs", r"^allocated: \d+ bytes in (\d+) objects"),
                     ("frees", r"^freed: \d+ bytes in (\d+) objects"),
                     ("drops", r"^drops: (\d+)")):
        m = re.search(pat, text, re.M)
        if m:
            h[key] = int(m[1])
    return h

def tail(path, n=4):
    try:
        return "".join(open(path).readlines()[-n:]).rstrip()
    except OSError:
        return "(no output)"

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

runs = {}
for line in open(os.path.join(T, "runs")):
    w, row, rep, p, rc = line.split()
    runs.setdefault((w, row), []).append((int(rep), p, int(rc)))

def collect(w, row):
    global failed
    res = []
    for rep, p, rc in runs.get((w, row), []):
        st, ru = kv(p + ".stamp", "stamp:"), kv(p + ".ru")
        if rc != 0 or len(st) != 1 or len(ru) != 1:
            failed = True
            why = f"exit {rc}" if rc else f"{len(st)} stamp lines"
            print(f"bench_real.sh: {w} {row} run {rep} failed ({why}):\n{tail(p + '.err')}\n")
            continue
        st, ru = st[0], ru[0]
        cpu = (st["user_us"] + st["sys_us"]) / 1e6
        tool_cpu = (ru["user_us"] + ru["sys_us"]) / 1e6 - cpu
        res.append({"run": st["run_ns"] / 1e9, "cpu": cpu,
                    "start": (st["start_realtime_ns"] - ru["start_realtime_ns"]) / 1e9,
                    "end": (ru["end_realtime_ns"] - st["exit_realtime_ns"]) / 1e9,
                    "total": (ru["end_realtime_ns"] - ru["start_realtime_ns"]) / 1e9,
                    "tool_cpu": tool_cpu, "rss": ru["maxrss_kb"],
                    "rss_is_cmd": ru["maxrss_kb"] <= st["maxrss_kb"],
                    "h": header(p + ".report")})
    return res

def sh(cmd):
    try:
        return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
    except OSError:
        return ""

labels = {"untraced": "untraced", "floor": "memtrace --probe-only (floor)",
          "blocks": "memtrace --bench-part blocks", "caller": "memtrace --bench-part caller",
          "full": "memtrace, full tracing", "sampling": f"memtrace -s {E['BENCH_SAMPLE_BYTES']}",
          "fpwalk": "memtrace, full, --unwind fp", "heaptrack": "heaptrack",
          "valgrind": "valgrind memcheck", "bpftrace": "bpftrace, 3 empty probes"}

print()
print("memtrace benchmark: real workloads (each timed inside the workload, first constructor to last destructor)")
cpu = sh("grep -m1 '^model name' /proc/cpuinfo | cut -d: -f2-").strip()
virt = "yes (hypervisor CPU flag)" if "hypervisor" in sh("grep -m1 '^flags' /proc/cpuinfo").split() else "no"
print(f"  machine:  {sh('nproc')} CPUs, {cpu}, virtualised: {virt}; kernel {os.uname().release}")
vers = [sh(E["BENCH_MEMTRACE"] + " -V"), sh("gawk --version | head -1"), sh("/usr/bin/python3 -V"),
        "sqlite " + sh("sqlite3 -version | cut -d' ' -f1"), sh("g++ --version | head -1"),
        sh("heaptrack --version 2>/dev/null"), sh("valgrind --version 2>/dev/null"),
        sh("bpftrace --version 2>/dev/null")]
print("  tools:    " + "; ".join(v for v in vers if v and v != "sqlite "))
print(f"  load:     {E['BENCH_LOADAVG']} (1/5/15-min load average before the runs), "
      f"now {' '.join(open('/proc/loadavg').read().split()[:3])}")
syswide = {}
for l in open(os.path.join(T, "others")):
    pid, _, args = l.strip().partition(" ")
    a = args.split()
    if a and a[0].endswith("memtrace") and ("--" in a or "report" in a[1:2]
                                            or any(x in ("-p", "--pid") or x.startswith("--pid=") for x in a)):
        continue
    syswide.setdefault(pid, args[:110])
if syswide:
    print(f"  WARNING:  {len(syswide)} system-wide tracer(s) of other users ran during the runs: their traps")
    print("            were in every row, the untraced one too; these figures are not clean:")
    for pid, args in list(syswide.items())[:5]:
        print(f"            {pid} {args}")
else:
    print("  others:   no system-wide tracer seen at the start of any round")
try:
    if open("/proc/sys/kernel/bpf_stats_enabled").read().strip() != "0":
        print("  WARNING:  kernel.bpf_stats_enabled is on: every BPF program run is timed (two clock")
        print("            reads), in every memtrace row and the bpftrace one; sysctl it to 0 for clean figures")
except OSError:
    pass
print(f"  median of {E['BENCH_REPS']} runs per row, rounds interleaved")
for l in E.get("BENCH_SKIPS", "").splitlines():
    if l:
        print(f"  skipped:  {l}")
print()

hdr = ["workload / row", "run s", "total s", "added ns/call", "/floor", "cpu added ns/call", "cpu /floor",
       "start s", "end s", "tool CPU s", "tool maxrss", "drops"]
lines, notes, summary = [], [], {}
for w in E["BENCH_WORKLOADS"].split():
    if not any(k[0] == w for k in runs):
        continue
    R = {row: collect(w, row) for row in E["BENCH_ROWS"].split() if (w, row) in runs}
    full_h = [r["h"] for r in R.get("full", []) if "events" in r["h"]]
    calls = med(h["events"] for h in full_h)
    if full_h and len({h["events"] for h in full_h}) > 1:
        notes.append(f"{w}: allocator calls differ between runs: "
                     + ", ".join(str(h["events"]) for h in full_h))
    base = med(r["run"] for r in R.get("untraced", []))
    base_cpu = med(r["cpu"] for r in R.get("untraced", []))
    def added(row, key="run"):
        if not R.get(row) or calls is None:
            return None
        b = base if key == "run" else base_cpu
        return None if b is None else (med(r[key] for r in R[row]) - b) * 1e9 / calls
    fl, fl_cpu = added("floor"), added("floor", "cpu")
    # A floor not above the untraced run (a system-wide tracer trapping the
    # untraced row, or noise) gives no ratio.
    if (fl is not None and fl <= 0) or (fl_cpu is not None and fl_cpu <= 0):
        notes.append(f"{w}: the floor is not above the untraced row: no ratios for it")
        fl = fl if fl and fl > 0 else None
        fl_cpu = fl_cpu if fl_cpu and fl_cpu > 0 else None
    lines.append([f"{w}: {int(calls):,} allocator calls" if calls else f"{w}: allocator calls unknown"])
    summary[w] = {"calls": calls}
    for row, res in R.items():
        label = "  " + labels[row]
        if not res:
            lines.append([label, "FAILED (see above)"])
            continue
        a, ac = added(row), added(row, "cpu")
        rss = med(r["rss"] for r in res)
        rss_s = f"{rss / 1024:.1f} MiB"
        if all(r["rss_is_cmd"] for r in res):
            rss_s = "<=" + rss_s
        drops = [r["h"].get("drops") for r in res]
        untr = row == "untraced"
        lines.append([label, f"{med(r['run'] for r in res):.3f}", f"{med(r['total'] for r in res):.2f}",
                      "-" if untr or a is None else f"{a:.0f}",
                      "-" if untr or a is None or not fl else f"{a / fl:.2f}x",
                      "-" if untr or ac is None else f"{ac:.0f}",
                      "-" if untr or ac is None or not fl_cpu else f"{ac / fl_cpu:.2f}x",
                      f"{med(r['start'] for r in res):.2f}", f"{med(r['end'] for r in res):.2f}",
                      "-" if untr else f"{med(r['tool_cpu'] for r in res):.2f}",
                      "-" if untr else rss_s,
                      "-" if None in drops or row in ("floor",) else str(max(drops))])
        if row == "floor":
            a, ac = fl, fl_cpu
        summary[w][row] = (a, ac)
        runs_s = ", ".join(f"{r['run']:.3f}" for r in res)
        spread = (max(r["run"] for r in res) - min(r["run"] for r in res)) / med(r["run"] for r in res)
        notes.append(f"{w}, {labels[row]}: run s per run: {runs_s}"
                     + (f"  (NOISY: runs differ by {100 * spread:.0f}% of the median)" if spread > 0.2 else ""))
    # Trap cost: the floor's added time over its traps (every allocator call
    # traps at its entry, every allocation once more at its return).
    fh = full_h[0] if full_h else {}
    if fl and "allocs" in fh:
        traps = fh["events"] + fh["allocs"]
        summary[w]["trap_ns"] = fl * calls / traps
        summary[w]["trap_cpu_ns"] = fl_cpu * calls / traps if fl_cpu else None

widths = [max([len(hdr[i])] + [len(l[i]) for l in lines if len(l) == len(hdr)]) for i in range(len(hdr))]
def fmt(cols):
    if len(cols) == 1:
        return cols[0]
    if len(cols) == 2:
        return cols[0].ljust(widths[0]) + "  " + cols[1]
    return "  ".join(c.ljust(widths[i]) if i == 0 else c.rjust(widths[i]) for i, c in enumerate(cols))
if lines:
    print(fmt(hdr))
    print("  ".join("-" * x for x in widths))
for l in lines:
    print(fmt(l))
print()
if lines:
    print("run s: the workload's own wall time (stamp.so: first constructor to last destructor), so the")
    print("tracer's start-up and report are not in it; total s: the whole command, tracer and all;")
    print("start s: tracer launched -> workload's first constructor; end s: workload's exit -> tracer's")
    print("exit (memtrace: its report).")
    print("added ns/call: run s minus untraced, over the allocator calls of memtrace's full-tracing report")
    print("(its events: line); /floor: over memtrace --probe-only's added ns/call.  cpu: the same on the")
    print("workload's own user+sys time (probe handling included), less disturbed by other load.")
    print("tool CPU s / maxrss: the tracer's own (wait4's rusage minus the workload's); <= when wait4's")
    print("maxrss is the workload's.  The --unwind fp row probes operator new/delete too (as before the")
    print("one-trap change) and walks frame pointers instead of CFI.")
for n in notes:
    print("  " + n)

# ---- start-up and report ----
print()
st = collect("true", "startup")
if st:
    print(f"start-up: memtrace -- /bin/true takes {med(r['total'] for r in st):.3f} s in all, "
          f"{med(r['start'] for r in st):.3f} s to true's first instruction, "
          f"{med(r['end'] for r in st):.3f} s from its exit to memtrace's (median of {len(st)})")
    print("  to the first instruction, per run: " + ", ".join(f"{r['start']:.3f}" for r in st))
phases = []
try:
    for l in open(os.path.join(T, "phases")):
        m = re.match(r"memtrace: started in ([\d.]+) ms \((.*), in ms;", l)
        if m:
            phases.append([("started", float(m[1]))] +
                          [(k, float(v)) for k, v in (x.rsplit(" ", 1) for x in m[2].split(", "))])
except OSError:
    pass
if phases:
    print("  memtrace -v's phases (main() to CMD released; tables beside the rest), median ms of "
          f"{len(phases)}: " + ", ".join(f"{k} {med(p[i][1] for p in phases):.1f}"
                                          for i, (k, _) in enumerate(phases[0])))
rep = []
for _, p, rc in runs.get(("stacks", "report"), []):
    c, ru, h = kv(p + ".churn", "churn:"), kv(p + ".ru"), header(p + ".report")
    if rc != 0 or not c or not ru:
        failed = True
        print(f"bench_real.sh: stacks run failed (exit {rc}):\n{tail(p + '.err')}")
        continue
    rep.append({"render": (ru[0]["end_realtime_ns"] - c[0]["exit_realtime_ns"]) / 1e9,
                "ok": h.get("allocs") == c[0]["mallocs"] and h.get("drops") == 0})
if rep:
    print(f"report over {int(E['BENCH_STACKS']):,} distinct stacks: {med(r['render'] for r in rep):.3f} s from churn's "
          f"exit to memtrace's (runs: {', '.join('%.3f' % r['render'] for r in rep)}; "
          f"totals {'ok' if all(r['ok'] for r in rep) else 'MISMATCH'})")

try:
    for l in open(os.path.join(T, "bigskip")):
        print(f"report of {l.strip()}: skipped")
except OSError:
    pass
big_s = {}
for (b, row), rs in runs.items():
    if row != "big":
        continue
    _, p, rc = rs[0]
    ru, h = kv(p + ".ru"), header(p + ".report")
    try:
        exit_ns = int(open(p + ".exit").read())
    except (OSError, ValueError):
        exit_ns = None
    if rc != 0 or not ru or exit_ns is None:
        failed = True
        print(f"bench_real.sh: the {b} run failed (exit {rc}):\n{tail(p + '.err')}")
        continue
    try:
        stacks = re.search(r"^Top \d+ stacks", open(p + ".report").read(), re.M) is not None
    except OSError:
        stacks = False
    calls = f"{h['events']:,}" if isinstance(h.get("events"), int) else "?"
    big_s[b] = (ru[0]['end_realtime_ns'] - exit_ns) / 1e9
    print(f"report of {b} ({calls} allocator calls): "
          f"{(ru[0]['end_realtime_ns'] - exit_ns) / 1e9:.2f} s from its exit to memtrace's"
          + ("" if stacks else " (no stacks in the report!)"))

# ---- the first report: memtrace -v's final report line of the -v runs ----
first = []
for w in E["BENCH_WORKLOADS"].split():
    try:
        for l in open(os.path.join(T, f"{w}.full.cost.err")):
            m = re.match(r"memtrace: final report: (\d+) blocks and (\d+) stacks read in ([\d.]+) ms, "
                         r"written in ([\d.]+) ms(?:; ([\d.]+) ms of CPU)?", l)
            if m:
                first.append((w, int(m[2]), float(m[3]), float(m[4]), float(m[5]) if m[5] else None))
    except OSError:
        pass
if first:
    print("first report of a run (full tracing, memtrace -v's final report: the maps read, then symbolised")
    print("and written, every file's symbols opened for the first time): " + "; ".join(
        f"{w} {n:,} stacks {r + wr:.0f} ms (read {r:.1f}, written {wr:.1f}"
        + (f"; {c:.0f} ms of CPU)" if c is not None else ")") for w, n, r, wr, c in first))
    print()

# ---- the BPF programs' own time ----
cost = {}
try:
    for l in open(os.path.join(T, "bpfcost")):
        m = re.match(r"(\S+) (\S+) memtrace: BPF (\w+): (\d+) runs, ([\d.]+) ns each, ([\d.]+) ms in all", l)
        if m and m[3].startswith("uprobe_"):
            cost.setdefault((m[1], m[2]), []).append((m[3], int(m[4]), float(m[5]), float(m[6])))
except OSError:
    pass
if cost:
    print("BPF programs' own time (one more run each, with -v: the kernel's run-time statistics), per")
    print("allocator call, beside what the row adds over the floor (CPU; the floor's programs return at once):")
    for w, s in summary.items():
        for row in ("full", "sampling"):
            progs = cost.get((w, row))
            if not progs or not s.get("calls"):
                continue
            per_call = sum(p[3] for p in progs) * 1e6 / s["calls"]
            a, f = s.get(row, (None, None))[1], s.get("floor", (None, None))[1]
            parts = ", ".join(f"{n} {r:,} x {ns:.0f} ns" for n, r, ns, _ in progs)
            print(f"  {w}, {labels[row]}: {per_call:.0f} ns per call in BPF ({parts})"
                  + (f"; {a - f:+.0f} ns per call over the floor" if a is not None and f else ""))
    print()

# ---- where full tracing's cost goes ----
# The --bench-part rows, each doing more of the work: what each part adds
# (CPU, per allocator call) and what it is of the floor.  The blocks row is
# what an exact tracer with no stacks at all costs, the lower bound of any
# tracer keeping every block in a BPF map: when it alone is above 1.15x,
# full tracing cannot be within 1.15x of the floor on this machine.
steps = (("floor", "traps"), ("blocks", "the table of blocks and the totals"),
         ("caller", "one-frame stacks (hashed and stored)"), ("full", "the walk of the whole stack"))
parts = []
for w, s in summary.items():
    have = [(row, what) for row, what in steps if s.get(row) and s[row][1] is not None]
    if len(have) < 2 or not s.get("floor") or not s["floor"][1]:
        continue
    fl = s["floor"][1]
    bits = [f"{have[0][1]} {s[have[0][0]][1]:.0f} ns"]
    for (before, _), (row, what) in zip(have, have[1:]):
        d = s[row][1] - s[before][1]
        bits.append(f"{what} {d:.0f} ns ({d / fl:.2f}x)")
    parts.append(f"  {w}: " + ", ".join(bits))
if parts:
    print("where full tracing's cost goes (CPU added ns per allocator call, each --bench-part row over the")
    print("one before it; in brackets, over the floor):")
    for l in parts:
        print(l)
    print()

# ---- the machine's trap cost ----
tn = [s["trap_ns"] for s in summary.values() if s.get("trap_ns")]
tc = [s["trap_cpu_ns"] for s in summary.values() if s.get("trap_cpu_ns")]
if tn:
    print(f"trap cost on this machine, from the floor rows: {med(tn):.0f} ns per trap wall"
          + (f", {med(tc):.0f} ns CPU" if tc else "") + " (median over the workloads)")
    print("  per workload (wall / CPU): " + ", ".join(
        f"{w} {s['trap_ns']:.0f} / " + (f"{s['trap_cpu_ns']:.0f}" if s.get("trap_cpu_ns") else "-")
        for w, s in summary.items() if s.get("trap_ns")))
    print("  traps = allocator calls + allocations (each call traps at its entry, each allocation at its")
    print("  return too); to scale the ns columns to another machine, use its figure over this one")

# ---- targets ----
print()
print("targets (informational; nothing here affects the exit status):")
for w, s in summary.items():
    for row, lim in (("full", 1.15), ("sampling", 1.0)):
        if s.get(row) and s.get("floor") and s[row][0] is not None and s["floor"][0]:
            r = s[row][0] / s["floor"][0]
            rc = s[row][1] / s["floor"][1] if s[row][1] is not None and s["floor"][1] else None
            print(f"  {w}: {labels[row]} <= {lim:.2f}x floor: {r:.2f}x -> {'met' if r <= lim else 'MISSED'}"
                  + (f" (CPU: {rc:.2f}x)" if rc is not None else ""))
for w, s in summary.items():
    if s.get("blocks") and s.get("floor") and s["blocks"][1] is not None and s["floor"][1]:
        r = s["blocks"][1] / s["floor"][1]
        print(f"  {w}: reachable: the blocks alone, no stacks, {r:.2f}x the floor (CPU): full tracing within"
              f" 1.15x is {'possible' if r <= 1.15 else 'out of reach'} here")
c = summary.get("cxx", {})
if c.get("full") and c.get("fpwalk") and c["full"][0] is not None and c["fpwalk"][0]:
    r = c["full"][0] / c["fpwalk"][0]
    rc = c["full"][1] / c["fpwalk"][1] if c["full"][1] is not None and c["fpwalk"][1] else None
    print(f"  cxx: full tracing adds <= 0.6x what --unwind fp (new probed, today) adds: {r:.2f}x -> "
          f"{'met' if r <= 0.6 else 'MISSED'}" + (f" (CPU: {rc:.2f}x)" if rc is not None else ""))
if st:
    v = med(r["start"] for r in st)
    print(f"  start-up to first traced instruction <= 0.15 s: {v:.3f} s -> {'met' if v <= 0.15 else 'MISSED'}")
if rep:
    v = med(r["render"] for r in rep)
    print(f"  report of {int(E['BENCH_STACKS']):,} stacks <= 0.5 s: {v:.3f} s -> {'met' if v <= 0.5 else 'MISSED'}")
for w, n, r, wr, c in first:
    if w == "python3":
        print(f"  first python3 report <= 150 ms: {r + wr:.0f} ms -> {'met' if r + wr <= 150 else 'MISSED'}"
              + (f" ({c:.0f} ms of CPU)" if c is not None else ""))
for b, v in big_s.items():
    print(f"  report after {b}'s exit <= 1.5 s: {v:.2f} s -> {'met' if v <= 1.5 else 'MISSED'}")
print(f"\nbench_real: {E['BENCH_ELAPSED']} s in all")
raise SystemExit(1 if failed else 0)
EOF
