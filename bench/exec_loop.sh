#!/usr/bin/env bash
# bench/exec_loop.sh: the cost of an exec under following.  Times
# `sh -c 'for i in $(seq N); do /bin/true; done'` untraced, under
# `memtrace --no-follow` and under memtrace following (the default), REPS
# rounds interleaved; prints each round and the medians: wall seconds
# (memtrace's start-up and report included) and, traced, the command's own
# time (the report's duration: what the execs cost the command).  A
# benchmark, not a test.
#
# Knobs (environment): BENCH_REPS=3, BENCH_EXECS=50, MEMTRACE (the binary,
# default ./memtrace: another build to compare).
set -euo pipefail

cd "$(dirname "$0")/.."

REPS=${BENCH_REPS:-3}
N=${BENCH_EXECS:-50}
MEMTRACE=${MEMTRACE:-$PWD/memtrace}
LOOP="for i in \$(seq $N); do /bin/true; done"

die() { echo "exec_loop.sh: $*" >&2; exit 1; }
[[ $REPS =~ ^[0-9]+$ ]] && [ "$REPS" -ge 1 ] || die "BENCH_REPS must be a positive integer, not '$REPS'"
[[ $N =~ ^[0-9]+$ ]] && [ "$N" -ge 1 ] || die "BENCH_EXECS must be a positive integer, not '$N'"
[ "$(id -u)" -eq 0 ] || die "must run as root: memtrace attaches uprobes"
[ -x "$MEMTRACE" ] || die "$MEMTRACE not found: build it first (make memtrace)"

OUT=$(mktemp /tmp/exec_loop.XXXXXX)
trap 'rm -f "$OUT"' EXIT

secs() { # CMD...: the wall time of CMD in seconds (its output in $OUT)
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >"$OUT" 2>&1 || die "failed: $*"
	t1=$(date +%s.%N)
	echo "$t1 - $t0" | bc -l
}
traced() { # the command's time in the last report
	awk '/^duration: / { print $2; exit }' "$OUT"
}
median() { sort -g | awk '{ v[NR] = $1 } END { printf "%.2f", NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

declare -a plain nofollow follow nofollow_cmd follow_cmd
for r in $(seq "$REPS"); do
	plain+=("$(secs sh -c "$LOOP")")
	nofollow+=("$(secs "$MEMTRACE" --as-root --no-follow -- sh -c "$LOOP")")
	nofollow_cmd+=("$(traced)")
	follow+=("$(secs "$MEMTRACE" --as-root -- sh -c "$LOOP")")
	follow_cmd+=("$(traced)")
	printf 'round %d: untraced %.2f s, --no-follow %.2f s (command %.2f s), following %.2f s (command %.2f s)\n' \
		"$r" "${plain[-1]}" "${nofollow[-1]}" "${nofollow_cmd[-1]}" \
		"${follow[-1]}" "${follow_cmd[-1]}"
done
printf 'sh -c (%d x fork+exec /bin/true), median of %d: untraced %s s, --no-follow %s s (command %s s), following %s s (command %s s)\n' \
	"$N" "$REPS" "$(printf '%s\n' "${plain[@]}" | median)" \
	"$(printf '%s\n' "${nofollow[@]}" | median)" \
	"$(printf '%s\n' "${nofollow_cmd[@]}" | median)" \
	"$(printf '%s\n' "${follow[@]}" | median)" \
	"$(printf '%s\n' "${follow_cmd[@]}" | median)"
