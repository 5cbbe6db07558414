"""The source layout that doc/design.md describes (no tracing, no build).

  layout.folders     src/loader and src/report are a folder per part, as
                     doc/design.md's "Layout" lists them, and the document
                     names every folder there is
  layout.one_way     an #include runs from a folder to one of a lower layer
                     (or within its folder), never up or sideways, and
                     src/report never includes src/loader: read from the
                     #include lines, headers found by name as the Makefile's
                     -I per folder finds them
  layout.no_dead     every function a header of src/loader or src/report
                     declares is used somewhere (tests included), beyond its
                     definition
"""

import glob
import os
import re

import mtlib
from mtlib import check, test

SRC = os.path.join(mtlib.ROOT, "src")
DESIGN = os.path.join(mtlib.ROOT, "doc", "design.md")

# Top layer first.  A file may include headers of its own folder and of
# any folder of a LATER row; folders of one row do not include each other.
LAYERS = {
    "loader": [
        ["cli"],
        ["serve"],
        ["outputs"],
        ["tracer"],
        ["follow"],
        ["unwind"],
        ["attach"],
        ["registry", "bpf"],
        ["options"],
        ["common"],
    ],
    "report": [
        ["writers", "compare"],
        ["readers"],
        ["symbols"],
        ["model"],
    ],
}
# The loader uses the reporter, never the other way round.
TREE_RANK = {"loader": 0, "report": 1}
RANK = {(t, d): i for t, rows in LAYERS.items() for i, row in enumerate(rows) for d in row}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(top, pattern):
    return sorted(glob.glob(os.path.join(top, "**", pattern), recursive=True))


def place(path):
    """(tree, folder) of PATH under src/: folder None at the tree's root."""
    rel = os.path.relpath(path, SRC).split(os.sep)
    return rel[0], (rel[1] if len(rel) > 2 else None)


@test("layout.folders", needs=())
def _folders():
    with open(DESIGN) as f:
        doc = f.read()
    for tree, rows in LAYERS.items():
        top = os.path.join(SRC, tree)
        want = sorted(d for row in rows for d in row)
        have = sorted(d for d in os.listdir(top) if os.path.isdir(os.path.join(top, d)))
        check(have == want, "src/%s's folders are not the parts of the layout" % tree,
              "have %s, want %s" % (have, want))
        for d in have:
            check(glob.glob(os.path.join(top, d, "*.[ch]")), "src/%s/%s/ is empty" % (tree, d))
        missing = [d for d in have if "src/%s/%s/" % (tree, d) not in doc]
        check(not missing, "doc/design.md does not describe src/%s/ folders" % tree, str(missing))


@test("layout.one_way", needs=())
def _one_way():
    files = [f for t in LAYERS for f in sources(os.path.join(SRC, t), "*.[ch]")]
    headers = {}
    for h in files:
        if h.endswith(".h"):
            headers.setdefault(os.path.basename(h), []).append(h)
    dup = {k: v for k, v in headers.items() if len(v) > 1}
    check(not dup, "two headers share a name (-I per folder cannot tell them apart)", str(dup))
    bad = []
    for src in files:
        here = place(src)
        with open(src) as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            for h in headers.get(os.path.basename(name), []):
                there = place(h)
                if there == here:
                    continue
                if there[0] != here[0]:
                    ok = TREE_RANK[there[0]] > TREE_RANK[here[0]]
                elif here[1] is None or there[1] is None:
                    continue  # a file not yet placed in a folder
                else:
                    ok = RANK[there] > RANK[here]
                if not ok:
                    bad.append("%s includes %s" % (os.path.relpath(src, mtlib.ROOT),
                                                   os.path.relpath(h, mtlib.ROOT)))
    check(not bad, "%d include(s) run up or sideways between folders" % len(bad),
          "\n".join(bad))


@test("layout.no_dead", needs=())
def _no_dead():
    roots = [os.path.join(SRC, t) for t in LAYERS]
    files = [f for r in roots for f in sources(r, "*.[ch]")]
    files += sources(os.path.join(mtlib.ROOT, "tests", "unit"), "*.c")
    files += sources(os.path.join(mtlib.ROOT, "tests", "unit"), "*.cpp")
    text = {}
    for f in files:
        with open(f, errors="replace") as fh:
            text[f] = fh.read()
    decl = re.compile(r"^(?!static)[a-z][\w \*]*?\b(mt_\w+)\(", re.M)
    dead = []
    for h in [f for f in files if f.endswith(".h") and f.startswith(tuple(roots))]:
        for name in sorted(set(decl.findall(text[h]))):
            word = re.compile(r"\b%s\b" % name)
            uses = sum(len(word.findall(t)) for f, t in text.items() if f != h)
            if uses < 2:  # its definition alone
                dead.append("%s: %s" % (os.path.relpath(h, mtlib.ROOT), name))
    check(not dead, "%d function(s) declared but never used" % len(dead), "\n".join(dead))
