"""What the option texts say an option does (no tracing).

- option_texts.max_stacks_segments: --max-stacks bounds the per-stack
  totals and the stack segments (2 per N, 23 frames each: bpf/memleak.h,
  src/loader/tracer/bpf_load.c), not a number of distinct stacks: a
  deep stack takes several segments.  --help, the man page and
  doc/usage.md say so, and none says "distinct stacks" any more.
"""

import os
import re

import mtlib
from mtlib import check, check_eq, test


def _entry(text, start, stop):
    """The text of TEXT from the line matching START to the next matching STOP."""
    m = re.search(start, text, re.M)
    if not m:
        return None
    rest = text[m.end():]
    n = re.search(stop, rest, re.M)
    return " ".join((m.group(0) + (rest[:n.start()] if n else rest)).split())


@test("option_texts.max_stacks_segments", needs=("memtrace",))
def _max_stacks_segments():
    res = mtlib.run_memtrace(["--help"])
    check_eq(res.rc, 0, "memtrace --help", res.stderr)
    with open(os.path.join(mtlib.ROOT, "doc", "memtrace.1"), encoding="utf-8") as f:
        man = f.read()
    with open(os.path.join(mtlib.ROOT, "doc", "usage.md"), encoding="utf-8") as f:
        usage = f.read()
    texts = {
        "--help": _entry(res.stdout, r"^\s+--max-stacks N.*$", r"^\s+--\w"),
        "doc/memtrace.1": _entry(man, r"^\.BR \\-\\-max\\-stacks.*$", r"^\.(TP|SH)"),
        "doc/usage.md": _entry(usage, r"^\s+--max-stacks N.*$", r"^\s+--\w"),
    }
    for where, text in texts.items():
        check(text is not None, "%s does not describe --max-stacks" % where)
        check("segment" in text and "23 frames" in text,
              "%s does not say that --max-stacks bounds stack segments of 23 frames: %r" % (where, text))
        check("distinct stacks" not in text.lower(),
              "%s still says 'distinct stacks': %r" % (where, text))
