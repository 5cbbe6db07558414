"""make install (PREFIX, DESTDIR), the man page and bash completion.

  install.files     make install DESTDIR=... PREFIX=/usr puts the binary, the
                    man page and the completion where PREFIX says; the
                    installed binary runs; make uninstall removes them
  install.man       man -l renders doc/memtrace.1 without a warning; every
                    option of --help is in it, in doc/usage.md and in the
                    bash completion
  install.complete  the completion, run by bash, offers options and their
                    values
"""

import os
import re
import shutil
import stat

import mtlib
from mtlib import check, check_eq, test

MAN = os.path.join(mtlib.ROOT, "doc", "memtrace.1")
COMPLETION = os.path.join(mtlib.ROOT, "completions", "memtrace")
USAGE = os.path.join(mtlib.ROOT, "doc", "usage.md")


def help_options():
    res = mtlib.run_memtrace(["--help"])
    check_eq(res.rc, 0, "memtrace --help")
    opts = res.stdout.split("\nExamples:")[0]  # not the examples' own options
    longs = set(re.findall(r"(?<![\w-])(--[a-z][a-z-]+)", opts))
    shorts = set(re.findall(r"^\s+(-[a-zA-Z]),", opts, re.M))
    check(len(longs) > 20 and len(shorts) > 5, "cannot find the options in --help", res.stdout)
    return longs, shorts


@test("install.files", needs=("memtrace",))
def _files():
    dest = os.path.join(mtlib.TMPDIR, "destdir")
    shutil.rmtree(dest, ignore_errors=True)
    make = ["make", "-s", "-C", mtlib.ROOT, "DESTDIR=" + dest, "PREFIX=/usr"]
    res = mtlib.run(make + ["install"], timeout=600)
    check_eq(res.rc, 0, "make install", mtlib.tail(res.stderr))
    want = {"usr/bin/memtrace": 0o755, "usr/share/man/man1/memtrace.1": 0o644,
            "usr/share/bash-completion/completions/memtrace": 0o644}
    got = {}
    for root, _, files in os.walk(dest):
        for f in files:
            p = os.path.join(root, f)
            got[os.path.relpath(p, dest)] = stat.S_IMODE(os.stat(p).st_mode)
    check_eq(got, want, "files installed under DESTDIR (path: mode)")
    res = mtlib.run([os.path.join(dest, "usr/bin/memtrace"), "--version"])
    check(res.rc == 0 and res.stdout.startswith("memtrace "), "installed memtrace --version", res.stdout + res.stderr)
    res = mtlib.run(make + ["uninstall"])
    check_eq(res.rc, 0, "make uninstall", res.stderr)
    left = [os.path.join(r, f) for r, _, fs in os.walk(dest) for f in fs]
    check_eq(left, [], "files left by make uninstall")


@test("install.man", needs=("memtrace",))
def _man():
    man = mtlib.which("man")
    check(man, "man is not installed (man-db; scripts/install-deps.sh)")
    res = mtlib.run([man, "--warnings", "-l", MAN], env=dict(os.environ, MANWIDTH="80", MAN_KEEP_FORMATTING="0",
                                                                 MANPAGER="cat", PAGER="cat"))
    check_eq(res.rc, 0, "man -l doc/memtrace.1", res.stderr)
    check_eq(res.stderr.strip(), "", "man --warnings -l: warnings")
    text = re.sub(r".\x08", "", res.stdout).replace("\u2010", "-").replace("\u2212", "-")
    check("NAME" in text and "memtrace report" in text, "the rendered page lacks NAME or report", text[:500])
    longs, shorts = help_options()
    with open(USAGE) as f:
        usage = f.read()
    with open(COMPLETION) as f:
        completion = f.read()
    for where, body in (("the man page", text), ("doc/usage.md", usage), ("the bash completion", completion)):
        missing = sorted(o for o in longs if not re.search(re.escape(o) + r"(?![\w-])", body))
        check(not missing, "options of --help missing from %s: %s" % (where, " ".join(missing)))
    missing = sorted(o for o in shorts if not re.search(r"(?<![\w-])" + re.escape(o) + r"\b", text))
    check(not missing, "short options of --help missing from the man page: %s" % " ".join(missing))


def complete(words):
    """COMPREPLY of the completion for the command line WORDS (the last is
    the word being completed)."""
    # With bash-completion's helpers when installed (as the user has them).
    script = '[ -r /usr/share/bash-completion/bash_completion ] && ' \
             '. /usr/share/bash-completion/bash_completion; ' \
             'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); ' \
             'COMP_LINE="$*"; COMP_POINT=${#COMP_LINE}; _memtrace; printf "%s\\n" "${COMPREPLY[@]}"'
    res = mtlib.run(["bash", "-c", script, "bash", COMPLETION] + list(words))
    check_eq(res.rc, 0, "bash completion of %r" % words, res.stderr)
    return sorted(l for l in res.stdout.splitlines() if l)


@test("install.complete", needs=())
def _complete():
    check(mtlib.which("bash"), "bash is missing")
    check_eq(complete(["memtrace", "--me"]), ["--metric"], "completion of --me")
    check_eq(complete(["memtrace", "--metric", ""]),
             sorted(["inuse_space", "inuse_objects", "alloc_space", "alloc_objects"]), "values of --metric")
    check_eq(complete(["memtrace", "--unit", "K"]), ["KiB"], "values of --unit")
    check_eq(complete(["memtrace", "rep"]), ["report"], "the report command")
    longs, _ = help_options()
    check_eq(sorted(o for o in complete(["memtrace", "--"]) if o.startswith("--") and o != "--"),
             sorted(longs), "options offered for '--' vs --help")
