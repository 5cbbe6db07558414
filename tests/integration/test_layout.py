"""The source layout that doc/design.md describes (no tracing, no build).

  layout.folders     src/loader is a folder per part, as doc/design.md's
                     "Source layout" lists them, and the document names every
                     folder there is
  layout.one_way     an #include runs from a folder to one of a lower layer
                     (or within its folder), never up or sideways: read from
                     the #include lines, headers found by name as the
                     Makefile's -I per folder finds them
  layout.no_dead     every function a header of src/loader or src/report
                     declares is used somewhere (tests included), beyond its
                     definition
"""

import glob
import os
import re

import mtlib
from mtlib import check, test

LOADER = os.path.join(mtlib.ROOT, "src", "loader")
DESIGN = os.path.join(mtlib.ROOT, "doc", "design.md")

# Top layer first.  A file may include headers of its own folder and of
# any folder of a LATER row; folders of one row do not include each other.
LAYERS = [
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
]
RANK = {d: i for i, row in enumerate(LAYERS) for d in row}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources(top, pattern):
    return sorted(glob.glob(os.path.join(top, "**", pattern), recursive=True))


def folder_of(path):
    """The part (first folder under src/loader) of PATH, or None at the root."""
    rel = os.path.relpath(path, LOADER).split(os.sep)
    return rel[0] if len(rel) > 1 else None


@test("layout.folders", needs=())
def _folders():
    have = sorted(d for d in os.listdir(LOADER) if os.path.isdir(os.path.join(LOADER, d)))
    check(have == sorted(RANK), "src/loader's folders are not the parts of the layout",
          "have %s, want %s" % (have, sorted(RANK)))
    for d in have:
        check(glob.glob(os.path.join(LOADER, d, "*.[ch]")), "src/loader/%s/ is empty" % d)
    with open(DESIGN) as f:
        doc = f.read()
    missing = [d for d in have if "src/loader/%s/" % d not in doc]
    check(not missing, "doc/design.md does not describe src/loader/ folders", str(missing))


@test("layout.one_way", needs=())
def _one_way():
    headers = {}
    for h in sources(LOADER, "*.h"):
        headers.setdefault(os.path.basename(h), []).append(h)
    dup = {k: v for k, v in headers.items() if len(v) > 1}
    check(not dup, "two loader headers share a name (-I per folder cannot tell them apart)", str(dup))
    bad = []
    for src in sources(LOADER, "*.[ch]"):
        here = folder_of(src)
        if here is None:
            continue  # a file not yet placed in a folder
        with open(src) as f:
            text = f.read()
        for name in INCLUDE.findall(text):
            for h in headers.get(os.path.basename(name), []):
                there = folder_of(h)
                if there is None or there == here:
                    continue
                if RANK.get(there, -1) <= RANK.get(here, -1):
                    bad.append("%s includes %s" % (os.path.relpath(src, mtlib.ROOT),
                                                   os.path.relpath(h, mtlib.ROOT)))
    check(not bad, "%d include(s) run up or sideways between loader folders" % len(bad),
          "\n".join(bad))


@test("layout.no_dead", needs=())
def _no_dead():
    roots = [os.path.join(mtlib.ROOT, "src", p) for p in ("loader", "report")]
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
