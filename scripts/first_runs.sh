#!/usr/bin/env bash
# scripts/first_runs.sh [--warm]: whole stacks on first runs, system-wide.
# See BENCHMARKS.md, "First runs".
#
# Starts memtrace system-wide (bounded by -d, stopped by this script, and
# killed on any exit), with an unwind table cache of its own, empty: every
# table the programs need is made while they run (cold).  Then runs, once
# each, six short-lived Debian programs with a small real workload:
#   gawk     a word count over a generated file
#   sqlite3  a database file: a table of 5,000 rows, an index, two queries
#   python3  /usr/bin/python3 -c: json, re, collections, decimal, hashlib
#   perl     a one-liner building hashes and sorting their keys
#   grep     grep -E over the generated file
#   sort     sort -k2 of the generated file's 4,000 lines
# stops memtrace and prints, per program (by the pid the script started
# it as): allocations, bytes, the share of bytes whose stack reaches main,
# and the stacks cut short (bench/first_runs.py says how each stack is
# classed) and its truncated stacks (memtrace -v says whose each is);
# then the trace header's `truncated stacks:` line (every process
# traced, the machine's other processes too: the most named) and what memtrace
# -v said about its unwind tables and deferred stack copies.
#
# --warm: the programs run twice, each time under a memtrace of its own
# with the same cache: the second run (measured) reads the tables the
# first one wrote to disk.
#
# One line per program for scripts ("first_runs program=gawk pid=...
# main_pct=99.98 cut_allocs=0 ..."), and one for the header's truncated
# count, end the output.  A measurement, not a test: it exits non-zero
# only when something could not run (not root, memtrace missing, a program
# missing or failing, memtrace failing).
#
# Knobs (environment):
#   MEMTRACE=./memtrace          the memtrace to measure
#   FIRST_RUNS_DURATION=120      memtrace's -d bound, in seconds
#   FIRST_RUNS_KEEP=1            keep the run directory (the profiles,
#                                memtrace's -v output) and print its path
set -euo pipefail

cd "$(dirname "$0")/.."

MODE=cold
case "${1:-}" in
"") ;;
--warm) MODE=warm ;;
*) echo "usage: scripts/first_runs.sh [--warm]" >&2; exit 2 ;;
esac

PY=/usr/bin/python3
MEMTRACE=$(readlink -f "${MEMTRACE:-$PWD/memtrace}")
DURATION=${FIRST_RUNS_DURATION:-120}

die() { echo "first_runs.sh: $*" >&2; exit 1; }
say() { echo "first_runs.sh: $*" >&2; }

[[ $DURATION =~ ^[0-9]+$ ]] && [ "$DURATION" -ge 10 ] ||
	die "FIRST_RUNS_DURATION must be a number of seconds, 10 or more, not '$DURATION'"
[ "$(id -u)" -eq 0 ] || die "must run as root: memtrace loads BPF programs and attaches uprobes"
[ -x "$MEMTRACE" ] || die "$MEMTRACE not found: build it first (make memtrace)"
[ -x "$PY" ] || die "$PY not found (apt-get install python3)"
for p in gawk sqlite3 perl grep sort; do
	[ -x "/usr/bin/$p" ] || die "/usr/bin/$p not found (apt-get install gawk sqlite3 perl grep coreutils)"
done

T=$(mktemp -d /tmp/memtrace-first-runs.XXXXXX)
export MEMTRACE_UNWIND_CACHE=$T/unwind-cache
TRACER=
cleanup() {
	# Only the memtrace this script started, by its id: SIGINT (it
	# writes its report and exits), then SIGKILL if it is still there.
	if [ -n "$TRACER" ] && kill -0 "$TRACER" 2>/dev/null; then
		kill -INT "$TRACER" 2>/dev/null || true
		for _ in $(seq 50); do kill -0 "$TRACER" 2>/dev/null || break; sleep 0.2; done
		kill -KILL "$TRACER" 2>/dev/null || true
	fi
	if [ "${FIRST_RUNS_KEEP:-0}" = 1 ]; then
		echo "first_runs.sh: run directory kept: $T" >&2
	else
		rm -rf "$T"
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- inputs (made before any tracing) ----
"$PY" - "$T" <<'EOF'
import random, sys
T = sys.argv[1]
r = random.Random(1)
words = ["word%d" % i for i in range(3000)]
with open(T + "/text.txt", "w") as f:
    for i in range(4000):
        f.write("%s %d %s\n" % (" ".join(r.choice(words) for _ in range(6)), r.randrange(100000),
                                 r.choice(words)))
EOF

# run_programs PASS: each program once, started in the background of this
# shell (a simple command: its pid is the program's after the exec), one
# after another; "NAME PID MS" lines (MS: its wall time, traced) into
# $T/pids.PASS.
run_programs() {
	local pass=$1 name pid t0
	local -a cmd
	: >"$T/pids.$pass"
	rm -f "$T/db.$pass"
	for name in gawk sqlite3 python3 perl grep sort; do
		case $name in
		gawk) cmd=(/usr/bin/gawk '{ for (i = 1; i <= NF; i++) c[tolower($i)]++ }
			END { n = 0; for (w in c) n++; print n, NR }' "$T/text.txt") ;;
		sqlite3) cmd=(/usr/bin/sqlite3 "$T/db.$pass" "create table t(a integer, b text);
			with recursive s(i) as (select 1 union all select i + 1 from s where i < 5000)
			insert into t select i, hex(randomblob(16)) from s;
			create index tb on t(b);
			select count(*), max(b) from t where a % 7 = 0;
			select substr(b, 1, 2), count(*) from t group by 1 order by 2 desc limit 3;") ;;
		python3) cmd=("$PY" -c 'import json, re, collections, decimal, hashlib
d = {"k%d" % i: [i, str(i) * 3, {"x": i / 7}] for i in range(5000)}
s = json.dumps(d)
c = collections.Counter(re.findall(r"[a-z]+[0-9]", s))
t = sum(decimal.Decimal(i) / 7 for i in range(500))
print(len(json.loads(s)), len(c), t > 0, hashlib.sha256(s.encode()).hexdigest()[:8])') ;;
		perl) cmd=(/usr/bin/perl -e 'my (%h, %w);
			for my $i (1 .. 20000) { $h{$i % 997} .= "x$i"; $w{"k$i"} = [$i, $i * 2] }
			my @k = sort { length($h{$a}) <=> length($h{$b}) } keys %h;
			print scalar(@k), " ", scalar(keys %w), "\n"') ;;
		grep) cmd=(/usr/bin/grep -c -E '(word1[0-9]{2}|word2[0-9]{3}) [0-9]+' "$T/text.txt") ;;
		sort) cmd=(/usr/bin/sort -k2,2 -k7n -o "$T/sorted.$pass" "$T/text.txt") ;;
		esac
		t0=$(date +%s%N)
		"${cmd[@]}" >"$T/out.$name.$pass" 2>&1 &
		pid=$!
		wait "$pid" || die "$name failed (pass $pass): $(tail -n 3 "$T/out.$name.$pass")"
		echo "$name $pid $((($(date +%s%N) - t0) / 1000000))" >>"$T/pids.$pass"
	done
}

# trace PASS: memtrace system-wide around run_programs PASS.
trace() {
	local pass=$1 err=$T/memtrace.$1.err
	"$MEMTRACE" -v -d "$DURATION" -n 5 --text="$T/report.$pass.txt" --pprof "$T/heap.$pass.pb.gz" \
		</dev/null >"$T/memtrace.$pass.out" 2>"$err" &
	TRACER=$!
	local started=0
	for _ in $(seq 600); do
		if grep -q '^memtrace: tracing' "$err"; then started=1; break; fi
		kill -0 "$TRACER" 2>/dev/null || break
		sleep 0.1
	done
	[ $started = 1 ] || die "memtrace did not start tracing: $(tail -n 3 "$err")"
	say "pass $pass: memtrace $TRACER tracing system-wide; running the programs"
	run_programs "$pass"
	sleep 1 # the stacks copied for deferred unwinding are read and unwound
	kill -INT "$TRACER" 2>/dev/null || true
	local rc=0
	wait "$TRACER" || rc=$?
	TRACER=
	[ $rc = 0 ] || die "memtrace exited with status $rc: $(tail -n 3 "$err")"
}

say "run directory $T; unwind cache $MEMTRACE_UNWIND_CACHE (empty)"
if [ $MODE = warm ]; then
	trace 1
	say "pass 1 done: $(find "$MEMTRACE_UNWIND_CACHE" -type f | wc -l) tables on disk"
	PASS=2
else
	PASS=1
fi
trace $PASS

names=$(awk '{print $1}' "$T/pids.$PASS" | paste -sd '|')
"$MEMTRACE" report "$T/heap.$PASS.pb.gz" --json="$T/profile.$PASS.json" \
	--tagfocus "comm=^($names)\$" >/dev/null 2>"$T/report.$PASS.err" ||
	die "memtrace report failed: $(tail -n 3 "$T/report.$PASS.err")"

echo "first runs, system-wide, unwind cache $MODE ($(date -u +%Y-%m-%dT%H:%MZ), load $(cut -d' ' -f1-3 /proc/loadavg))"
"$PY" bench/first_runs.py "$T/profile.$PASS.json" "$T/pids.$PASS" "$T/report.$PASS.txt" \
	"$T/memtrace.$PASS.err"
echo "memtrace -v (pass $PASS): deferred stacks; tables in the order they were loaded (#N), the"
echo "programs' own and any that took 500 ms or more:"
grep -E '^memtrace: deferred' "$T/memtrace.$PASS.err" | sed 's/^/  /' || true
grep -E '^memtrace: (unwind table of|no unwind table)' "$T/memtrace.$PASS.err" |
	awk '{ n++; ms = 0; if (match($0, /(built|from cache) in [0-9.]+ ms/)) { split(substr($0, RSTART, RLENGTH), w, " "); ms = w[length(w) - 1] + 0 } }
	     ms >= 500 || /\/usr\/bin\/(gawk|sqlite3|python3\.[0-9]+|perl|grep|sort):/ || /no unwind table/ { sub(/^memtrace: /, ""); printf "  #%d %s\n", n, $0 }'
