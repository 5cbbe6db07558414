#!/usr/bin/env bash
# Run every memtrace test and print one line per test:
#   PASS name | FAIL name: reason | SKIP name: reason
# and, as the very last line, "N passed, N failed, N skipped" (CI counts it).
#
#   scripts/run-tests.sh              unit tests, then integration tests
#   scripts/run-tests.sh PATTERN...   only the integration tests whose name
#                                     contains a PATTERN (no unit tests)
#
# (a) unit tests: every executable in build/tests/unit/ (NAME and NAME-asan,
#     cmocka, built by `make unit-bins`), run with CMOCKA_MESSAGE_OUTPUT=tap:
#     each "ok N" passes, each "not ok N" fails; a binary that exits non-zero
#     (crash, sanitizer report, time limit) without a "not ok" is one failure.
# (b) integration tests: tests/integration/run.py (needs ./memtrace from
#     `make memtrace` and the programs of `make tests-progs`, built here).
#
# Exit status: non-zero if anything failed, or if MEMTRACE_REQUIRE_BPF is set
# and anything was skipped (a machine that should run BPF but could not).
# Environment: MEMTRACE (binary to test), MEMTRACE_REQUIRE_BPF,
# MEMTRACE_TEST_TIMEOUT (seconds per memtrace/valgrind run, default 120),
# UNIT_TIMEOUT (seconds per unit-test binary, default 120).
set -uo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.." || exit 2

PASSED=0
FAILED=0
SKIPPED=0
UNIT_DIR=${MEMTRACE_UNIT_DIR:-build/tests/unit}
UNIT_TIMEOUT=${UNIT_TIMEOUT:-120}

PYTHON=/usr/bin/python3
[ -x "$PYTHON" ] || PYTHON=python3

pass() { echo "PASS $1"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1"; FAILED=$((FAILED + 1)); }

# Indented tail of a log, shown under a failure.
show() { tail -n "${2:-30}" "$1" | sed 's/^/    /'; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/memtrace-run-tests.XXXXXX") || exit 2
trap 'rm -rf "$TMP"' EXIT

run_unit_binary() {
	local bin=$1 name log rc n_ok=0 n_bad=0 line
	name=unit/$(basename "$bin")
	log=$TMP/$(basename "$bin").log
	# In a subshell whose stderr is discarded: no "Segmentation fault" job
	# message from bash; the binary's own output goes to the log.
	(CMOCKA_MESSAGE_OUTPUT=tap timeout -k 5 "$UNIT_TIMEOUT" "$bin" >"$log" 2>&1 </dev/null; exit $?) 2>/dev/null
	rc=$?
	while IFS= read -r line; do
		if [[ $line =~ ^ok\ [0-9]+(\ -\ (.*))?$ ]]; then
			pass "$name/${BASH_REMATCH[2]:-?}"
			n_ok=$((n_ok + 1))
		elif [[ $line =~ ^not\ ok\ [0-9]+(\ -\ (.*))?$ ]]; then
			fail "$name/${BASH_REMATCH[2]:-?}: not ok"
			n_bad=$((n_bad + 1))
		fi
	done <"$log"
	if [ "$n_bad" -gt 0 ]; then
		show "$log"
	elif [ "$rc" -ne 0 ]; then
		local why="exit status $rc"
		[ "$rc" -eq 124 ] && why="killed after ${UNIT_TIMEOUT}s"
		[ "$rc" -gt 128 ] && [ "$rc" -ne 124 ] && why="killed by signal $((rc - 128))"
		fail "$name: $why with no failed test (crash, sanitizer or leak report?)"
		show "$log"
	elif [ "$n_ok" -eq 0 ]; then
		fail "$name: no test results (no 'ok N' lines in its TAP output)"
		show "$log"
	fi
}

run_unit_tests() {
	local bins=() f
	if [ -d "$UNIT_DIR" ]; then
		for f in "$UNIT_DIR"/*; do
			[ -f "$f" ] && [ -x "$f" ] && bins+=("$f")
		done
	fi
	if [ ${#bins[@]} -eq 0 ]; then
		fail "unit: no unit tests built ($UNIT_DIR has no binaries; make unit-bins)"
		return
	fi
	for f in "${bins[@]}"; do
		run_unit_binary "$f"
	done
}

build_progs() {
	local log=$TMP/progs.log
	if ! command -v make >/dev/null 2>&1; then
		return
	fi
	if ! make --no-print-directory tests-progs >"$log" 2>&1; then
		fail "build.tests-progs: make tests-progs failed"
		show "$log"
	fi
}

run_integration() {
	local line rc="" finished=""
	# Read the runner's lines as they come, counting the verdicts.
	while IFS= read -r line; do
		case $line in
		"PASS "*) PASSED=$((PASSED + 1)) ;;
		"FAIL "*) FAILED=$((FAILED + 1)) ;;
		"SKIP "*) SKIPPED=$((SKIPPED + 1)) ;;
		"# integration: "*) finished=1 ;;
		"# run.py exit status "*) rc=${line##* }; continue ;;
		esac
		echo "$line"
	done < <("$PYTHON" tests/integration/run.py "$@" 2>&1; echo "# run.py exit status $?")
	if [ -z "$finished" ]; then
		fail "integration: tests/integration/run.py stopped before the end (exit status ${rc:-?})"
	fi
}

if [ $# -eq 0 ]; then
	echo "# unit tests ($UNIT_DIR)"
	run_unit_tests
fi
echo "# integration tests (tests/integration)"
build_progs
run_integration "$@"

echo "$PASSED passed, $FAILED failed, $SKIPPED skipped"
if [ "$FAILED" -gt 0 ]; then
	exit 1
fi
if [ -n "${MEMTRACE_REQUIRE_BPF:-}" ] && [ "$SKIPPED" -gt 0 ]; then
	exit 1
fi
exit 0
