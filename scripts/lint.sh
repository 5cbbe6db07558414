#!/usr/bin/env bash
# Static analysis of memtrace's userspace sources: clang-tidy (checks in
# .clang-tidy) and cppcheck.  Exits non-zero on any finding.
#
#   scripts/lint.sh              lint the .c files of src/loader and src/report
#                                (their subfolders too)
#   scripts/lint.sh FILE.c...    lint just these files
#
# Generated headers (build/memleak.skel.h, build/proto/profile.pb-c.h) are
# built first when missing.
# Silence a reviewed false positive in place with a comment such as
#   // NOLINT(bugprone-xyz)            (clang-tidy)
#   // cppcheck-suppress someId        (cppcheck, on the line above)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

if [ $# -gt 0 ]; then
	srcs=("$@")
else
	shopt -s nullglob
	srcs=(src/loader/*.c src/loader/*/*.c src/report/*.c src/report/*/*.c)
	shopt -u nullglob
fi
if [ ${#srcs[@]} -eq 0 ]; then
	echo "lint: no sources to check" >&2
	exit 0
fi

# The same preprocessor view of the code as the Makefile's build.
defs=(-D_GNU_SOURCE '-DMEMTRACE_VERSION="x"')
incs=(-Ibpf -Isrc)
for d in src/loader src/loader/*/ src/report src/report/*/; do
	[ -d "$d" ] && incs+=("-I${d%/}")
done
incs+=(-Ibuild -Ibuild/proto)

tidy=
for t in clang-tidy-14 clang-tidy; do
	if command -v "$t" >/dev/null 2>&1; then
		tidy=$t
		break
	fi
done
if [ -z "$tidy" ] || ! command -v cppcheck >/dev/null 2>&1; then
	echo "lint: clang-tidy and cppcheck are needed: run scripts/install-deps.sh" >&2
	exit 2
fi

# Generated headers the sources include: the BPF skeleton and the pprof
# protobuf code.  Build the missing ones (the Makefile knows how).
gen=()
for h in build/memleak.skel.h build/proto/profile.pb-c.h; do
	[ -f "$h" ] || gen+=("$h")
done
if [ ${#gen[@]} -gt 0 ] &&
	! make --no-print-directory -s "${gen[@]}" >&2; then
	echo "lint: warning: could not build ${gen[*]}; expect 'file not found'" >&2
fi

# cppcheck does not read system headers (missingIncludeSystem is
# suppressed), so it is told here about the libbpf macros that look like
# statements or loops; unknown, they would stop it with unknownMacro.
cfg=$(mktemp --suffix=.cfg)
trap 'rm -f "$cfg"' EXIT
cat >"$cfg" <<'CFG'
<?xml version="1.0"?>
<def format="2">
  <define name="LIBBPF_OPTS(TYPE, NAME, ...)" value="struct TYPE NAME = { .sz = sizeof(struct TYPE), __VA_ARGS__ }"/>
  <define name="DECLARE_LIBBPF_OPTS" value="LIBBPF_OPTS"/>
  <define name="bpf_object__for_each_program(pos, obj)" value="for ((pos) = bpf_object__next_program((obj), NULL); (pos) != NULL; (pos) = bpf_object__next_program((obj), (pos)))"/>
  <define name="bpf_object__for_each_map(pos, obj)" value="for ((pos) = bpf_object__next_map((obj), NULL); (pos) != NULL; (pos) = bpf_object__next_map((obj), (pos)))"/>
  <define name="PROTOBUF_C__BEGIN_DECLS" value=""/>
  <define name="PROTOBUF_C__END_DECLS" value=""/>
CFG
# protoc-c's output checks the library's version with #error; give cppcheck
# the installed one.
for v in PROTOBUF_C_VERSION_NUMBER PROTOBUF_C_MIN_COMPILER_VERSION; do
	n=$(sed -n "s/^#define $v[[:space:]]*\([0-9][0-9]*\).*/\1/p" \
		/usr/include/protobuf-c/protobuf-c.h 2>/dev/null || true)
	[ -n "$n" ] && echo "  <define name=\"$v\" value=\"$n\"/>" >>"$cfg"
done
echo "</def>" >>"$cfg"

fail=0

# Drop clang-tidy diagnostics located in generated code (build/) or in
# vmlinux/: HeaderFilterRegex cannot do it for clang-analyzer findings whose
# path passes through our sources (e.g. a false "leak" in the libbpf
# skeleton's open function).  Prints what is left; fails if anything is.
filter_tidy() {
	awk -v root="$PWD/" '
		/^[^ ]+:[0-9]+:[0-9]+: (warning|error|note): / {
			if ($0 !~ /: note: /) {
				file = $0
				sub(/:[0-9]+:[0-9]+: .*/, "", file)
				if (index(file, root) == 1)
					file = substr(file, length(root) + 1)
				skip = (file ~ /^(build|vmlinux)\// &&
					$0 !~ /\[clang-diagnostic-error\]$/)
				if (!skip)
					found = 1
			}
		}
		/^[0-9]+ (warnings?|errors?)( and [0-9]+ errors?)? generated\.$/ { next }
		/^Suppressed [0-9]+ warnings/ || /^Use -header-filter=/ { next }
		!skip { print }
		END { exit found ? 1 : 0 }'
}

echo "lint: $tidy on ${#srcs[@]} files" >&2
for f in "${srcs[@]}"; do
	# One file at a time, so that each failure names its file.
	rc=0
	out=$("$tidy" --quiet "$f" -- -std=gnu11 "${defs[@]}" "${incs[@]}" 2>&1) || rc=$?
	[ "$rc" -eq 0 ] && continue
	if ! printf '%s\n' "$out" | filter_tidy >&2; then
		echo "lint: clang-tidy: $f has findings" >&2
		fail=1
	elif ! printf '%s\n' "$out" | grep -q -E '^[^ ]+:[0-9]+:[0-9]+: (warning|error): '; then
		# Failed without a diagnostic: a crash or a bad invocation.
		printf '%s\n' "$out" >&2
		echo "lint: clang-tidy failed on $f (status $rc)" >&2
		fail=1
	fi
done

# cppcheck reads the skeleton's 3.7 MB of embedded BPF object in every
# file that includes it (minutes a file): it is given a copy without those
# bytes, ahead of build/ on its include path; the types are the same.
skel_dir=$(mktemp -d)
trap 'rm -f "$cfg"; rm -rf "$skel_dir"' EXIT
if [ -f build/memleak.skel.h ]; then
	awk 'skip { if (/";$/) { print "\";"; skip = 0 } next }
	     { print } /return \(const void \*\)"\\$/ { skip = 1 }' \
		build/memleak.skel.h >"$skel_dir/memleak.skel.h"
fi

echo "lint: cppcheck on ${#srcs[@]} files" >&2
if ! cppcheck --quiet --language=c --std=c11 -j "$(nproc 2>/dev/null || echo 1)" \
	--enable=warning,performance,portability \
	--error-exitcode=1 --inline-suppr --suppress=missingIncludeSystem \
	--library="$cfg" \
	"${defs[@]}" -I"$skel_dir" "${incs[@]}" "${srcs[@]}"; then
	echo "lint: cppcheck found problems" >&2
	fail=1
fi

if [ "$fail" -ne 0 ]; then
	exit 1
fi
echo "lint: clean" >&2
