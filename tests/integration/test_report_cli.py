"""What a new user runs into with reports and the command line (issue 24):
compound durations (`--at 2h30m`, as README shows), the moment a recording's
interval profile is labelled with, `--count N` writing N reports in all,
`-o x.json` writes JSON, `-o x.html` refused in one line, `memtrace report` of a file that is no
profile naming what it tried, `--raw` of a saved profile, a Go program's
note, the completion of `--folded=`, the man page and the README."""

import glob
import os
import re
import shutil
import subprocess

import mtlib
from mtlib import check, check_eq, test
from programs import BY_NAME, totals

MAN = os.path.join(mtlib.ROOT, "doc", "memtrace.1")
README = os.path.join(mtlib.ROOT, "README.md")
COMPLETION = os.path.join(mtlib.ROOT, "completions", "memtrace")
GO_PROFILE = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "heap.pb.gz")


def leaks_profile():
    out = os.path.join(mtlib.TMPDIR, "reportcli.leaks.pb.gz")
    if not os.path.exists(out):
        res = mtlib.run_memtrace(["--pprof", out, "--", mtlib.prog_path("leaks")])
        check_eq(res.rc, 0, "memtrace --pprof -- leaks", mtlib.tail(res.stderr))
    return out


@test("reportcli.compound_durations")
def _durations():
    d = os.path.join(mtlib.TMPDIR, "reportcli.rec")
    shutil.rmtree(d, ignore_errors=True)
    res = mtlib.run_memtrace(["--record", d, "-o", "/dev/null", "--", mtlib.prog_path("leaks")])
    check_eq(res.rc, 0, "memtrace --record -- leaks", mtlib.tail(res.stderr))
    # README: `memtrace report DIR --at 2h30m`: understood, and past the end.
    late = mtlib.run_memtrace(["report", d, "--at", "2h30m"])
    line = mtlib.check_one_line_error(late, "report DIR --at 2h30m", mention=("no profile",))
    check("9000.00 s" in line, "2h30m is not 9000 s: %r" % line)
    late = mtlib.run_memtrace(["report", d, "--at", "1m30.5s"])
    line = mtlib.check_one_line_error(late, "report DIR --at 1m30.5s", mention=("no profile",))
    check("90.50 s" in line, "1m30.5s is not 90.5 s: %r" % line)
    for bad in ("30m2h", "1s1s", "2h30", "h", "1.5x", "-1s"):
        res = mtlib.run_memtrace(["report", d, "--at", bad])
        mtlib.check_one_line_error(res, "--at %s" % bad, mention=("invalid value",))


@test("reportcli.recording_moment_label")
def _moment():
    """report DIR --at 0.7s picks an interval's profile: its moment line
    says --at, not '--at peak' (the interval's highest is not the trace's
    peak)."""
    d = os.path.join(mtlib.TMPDIR, "reportcli.rec.phases")
    shutil.rmtree(d, ignore_errors=True)
    res = mtlib.run_memtrace(["--record", d, "-i", "0.5", "--keep", "0", "-o", "/dev/null",
                              "--", mtlib.prog_path("phases")])
    check_eq(res.rc, 0, "memtrace --record -i 0.5 -- phases", mtlib.tail(res.stderr))
    res = mtlib.run_memtrace(["report", d, "--at", "0.7s"])
    check_eq(res.rc, 0, "report DIR --at 0.7s", res.stderr)
    m = re.search(r"^moment: (.*)$", res.stdout, re.M)
    check(m, "no moment line", mtlib.tail(res.stdout, 20))
    check(m.group(1).endswith("(--at)") and "peak" not in m.group(1), "moment line: %r" % m.group(0))
    res = mtlib.run_memtrace(["report", d, "--at", "peak"])
    m = re.search(r"^moment: (.*)$", res.stdout, re.M)
    check(m and m.group(1).endswith("(--at peak)"), "--at peak: moment line %r" % (m and m.group(0)))


@test("reportcli.count_one")
def _count_one():
    """--count 1 -i 0.2: one report, the final one, and no numbered file."""
    d = os.path.join(mtlib.TMPDIR, "reportcli.count")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    w = mtlib.start_waiter()
    try:
        res = mtlib.run_memtrace(["-p", str(w.pid), "-i", "0.2", "--count", "1",
                                  "--pprof", os.path.join(d, "h.pb.gz"), "--text"], timeout=60)
    finally:
        mtlib.kill_quietly(w)
    check_eq(res.rc, 0, "memtrace --count 1", res.stderr)
    check_eq(sorted(os.listdir(d)), ["h.pb.gz"], "files of --count 1")
    check_eq(res.stdout.count("heap profile\n"), 1, "text reports on stdout with --count 1", res.stdout[:1500])


@test("reportcli.output_extension", needs=("memtrace",))
def _json():
    """-o picks the format by the name: x.json writes JSON (the --json
    schema), x.html (a format memtrace does not write) is refused in one
    line naming the formats, and writes nothing."""
    import json
    out = os.path.join(mtlib.TMPDIR, "reportcli.x.html")
    res = mtlib.run_memtrace(["report", GO_PROFILE, "-o", out])
    mtlib.check_one_line_error(res, "-o x.html", mention=(".html",))
    check("pb.gz" in res.stderr and ".svg" in res.stderr and ".json" in res.stderr,
          "the error does not name the formats: %r" % res.stderr)
    check(not os.path.exists(out), "-o x.html wrote a file")
    js = os.path.join(mtlib.TMPDIR, "reportcli.x.json")
    res = mtlib.run_memtrace(["report", GO_PROFILE, "-o", js])
    check_eq(res.rc, 0, "-o x.json", res.stderr)
    with open(js) as f:
        doc = json.load(f)
    check(isinstance(doc, dict) and doc.get("functions"), "-o x.json: no functions in %r" % str(doc)[:300])
    # A name for text, and the explicit format, still work.
    txt = os.path.join(mtlib.TMPDIR, "reportcli.x.txt")
    res = mtlib.run_memtrace(["report", GO_PROFILE, "-o", txt])
    check_eq(res.rc, 0, "-o x.txt", res.stderr)
    res = mtlib.run_memtrace(["report", GO_PROFILE, "--text", "-o", out])
    check_eq(res.rc, 0, "--text -o x.html (the format named)", res.stderr)


@test("reportcli.not_a_profile", needs=("memtrace",))
def _passwd():
    res = mtlib.run_memtrace(["report", "/etc/passwd"])
    line = mtlib.check_one_line_error(res, "report /etc/passwd", mention=("not a heap profile",))
    for fmt in ("pprof", "tcmalloc", "jemalloc", "Go"):
        check(fmt in line, "the error does not say %s was tried: %r" % (fmt, line))


@test("reportcli.raw_of_saved")
def _raw():
    """--raw of a saved profile: each sample with its totals and addresses;
    the sums are the trace's (programs.py)."""
    t = totals(BY_NAME["leaks"])
    out = os.path.join(mtlib.TMPDIR, "reportcli.raw.txt")
    res = mtlib.run_memtrace(["report", leaks_profile(), "--raw=" + out])
    check_eq(res.rc, 0, "report FILE --raw=F", res.stderr)
    with open(out) as f:
        text = f.read()
    stacks = re.findall(r"^stack \d+ pid \d+: allocated (\d+) bytes in (\d+) objects, "
                        r"freed (\d+) bytes in (\d+) objects$", text, re.M)
    check(stacks, "no stack lines", text[:1000])
    sums = [sum(int(s[k]) for s in stacks) for k in range(4)]
    check_eq(sums, [t["alloc_space"], t["alloc_objects"], t["alloc_space"] - t["inuse_space"],
                    t["alloc_objects"] - t["inuse_objects"]], "allocated/freed over the stacks", text[:1500])
    check(re.search(r"^  ip #0 +0x[0-9a-f]+  leaks\+0x[0-9a-f]+$", text, re.M), "no ip line in leaks", text[:1500])
    check(re.search(r"^  frame #0 +leak_one ", text, re.M), "no frame leak_one", text[:3000])


@test("reportcli.go_note")
def _go():
    from test_outputs import go_bin, go_env
    go = go_bin()
    exe = os.path.join(mtlib.TMPDIR, "reportcli.goheap")
    if not os.path.exists(exe):
        src = os.path.join(mtlib.ROOT, "tests", "data", "goheap", "main.go")
        res = mtlib.run([go, "build", "-trimpath", "-o", exe, src], env=go_env(), timeout=300)
        check_eq(res.rc, 0, "go build goheap", mtlib.tail(res.stderr))
    res = mtlib.run_memtrace(["--", exe, os.path.join(mtlib.TMPDIR, "reportcli.go.pb.gz")])
    line = mtlib.check_one_line_error(res, "memtrace -- a Go program", mention=("Go program",))
    check("not with malloc" in line and "/debug/pprof/heap" in line, "the note: %r" % line)


def complete_line(line):
    """COMPREPLY for LINE as bash gives it (COMP_WORDS split at "=")."""
    words = re.findall(r"=|[^\s=]+", line)
    if line.endswith(" ") or line.endswith("="):
        words.append("")
    script = '[ -r /usr/share/bash-completion/bash_completion ] && ' \
             '. /usr/share/bash-completion/bash_completion; ' \
             'source "$1"; COMP_LINE="$2"; shift 2; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); ' \
             'COMP_POINT=${#COMP_LINE}; _memtrace; printf "%s\\n" "${COMPREPLY[@]}"'
    d = os.path.join(mtlib.TMPDIR, "reportcli.complete")
    os.makedirs(d, exist_ok=True)
    for name in ("abc.folded", "abd.txt"):
        open(os.path.join(d, name), "w").close()
    res = subprocess.run(["bash", "-c", script, "bash", COMPLETION, line] + words, cwd=d,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=30)
    check_eq(res.returncode, 0, "bash completion of %r" % line, res.stderr)
    return sorted(l for l in res.stdout.splitlines() if l)


@test("reportcli.complete_equals", needs=())
def _complete():
    for opt in ("--folded", "--text", "--leaks", "--raw"):
        got = complete_line("memtrace %s=ab" % opt)
        check(got in (["abc.folded", "abd.txt"], ["%s=abc.folded" % opt, "%s=abd.txt" % opt]),
              "completion after %s=ab: %r" % (opt, got))
    check_eq(complete_line("memtrace --folded=ab"), complete_line("memtrace --folded=ab"), "stable")
    check_eq(complete_line("memtrace --text ab"), [], "--text takes no separate FILE")


@test("reportcli.man_and_readme", needs=())
def _man():
    man = mtlib.which("man")
    check(man, "man is not installed")
    res = mtlib.run([man, "-l", MAN], env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0",
                                                MANPAGER="cat", PAGER="cat"))
    text = re.sub(r".\x08", "", res.stdout).replace("\u2010", "-").replace("\u2212", "-")
    text = re.sub(r"-\n\s+", "-", text)
    flat = " ".join(text.split())
    check("Pmalloc" not in flat, "the man page renders --symbol-prefix as 'Pmalloc'")
    check("je_malloc" in flat, "the man page does not show a prefixed name (je_malloc)")
    m = re.search(r"EXIT STATUS (.*?) ENVIRONMENT", flat)
    check(m and "127" in m.group(1), "EXIT STATUS does not list 127", m and m.group(1))
    check("q or Enter" in flat, "the man page does not say q or Enter stops tracing")
    check("DEBUGINFOD_URLS" in flat and "--preserve-env=DEBUGINFOD_URLS" in flat,
          "the man page does not document DEBUGINFOD_URLS and sudo --preserve-env")
    with open(README) as f:
        readme = f.read()
    check("--preserve-env=DEBUGINFOD_URLS" in readme, "README does not say how to keep DEBUGINFOD_URLS under sudo")
