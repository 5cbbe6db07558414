"""pprof's views in memtrace report, against go tool pprof on the same profile.

One profile of `sh -c 'leaks; inline; shapes'` (several processes, inlined
frames, C++ names, unresolved frames of dash), written by memtrace --pprof.

  views.pprof.*     memtrace report --json with a view (--focus, --ignore,
                    --hide, --show, --show-from, --tagfocus, --tagignore and
                    combinations): every named function's flat and cum, for
                    inuse_space and alloc_objects, equal to go tool pprof
                    -top with the same filter on the same file
  views.text        the text report under a view: its table = the JSON's,
                    the header's totals = what the view keeps, a 'view:' line
  views.list        --list: each line's flat and cum = go tool pprof -list's,
                    source text shown; a missing source file: the lines with
                    values alone
  views.json        the JSON document: schema fields, totals = sum of stacks,
                    functions' flat sum = total, processes
  views.live        a live trace with --focus: only the focused stacks
  views.errors      a bad regex, a view matching nothing (said), --list
                    matching nothing: one-line messages

Expected numbers come from go tool pprof (and programs.py), never from memtrace.
"""

import functools
import json
import os
import re

import mtlib
from mtlib import check, check_eq, test
from programs import PROGRAMS

from test_outputs import go_bin, go_env

LEAKS = next(p for p in PROGRAMS if p.name == "leaks")
UNRESOLVED = re.compile(r"\+0x[0-9a-f]+$")


@functools.lru_cache(maxsize=None)
def profile():
    """(path of the profile, {comm: pid}) of sh -c 'leaks; inline; shapes'."""
    out = os.path.join(mtlib.TMPDIR, "views.pb.gz")
    cmd = "; ".join(mtlib.prog_path(p) for p in ("leaks", "inline", "shapes"))
    res = mtlib.run_memtrace(["--pprof", out, "--", "sh", "-c", cmd])
    check_eq(res.rc, 0, "memtrace --pprof -- sh -c ...", mtlib.tail(res.stderr))
    data = json_of(out, [])
    pids = {p["comm"]: p["pid"] for p in data["processes"]}
    check(set(pids) >= {"leaks", "inline", "shapes"}, "processes of the profile: %s" % pids)
    return out, pids


def report(args, rc=0):
    res = mtlib.run_memtrace(["report", profile()[0]] + list(args))
    if rc is not None:
        check_eq(res.rc, rc, "memtrace report %s: exit status" % " ".join(args), mtlib.tail(res.stderr))
    return res


def report_json(args):
    return json_of(profile()[0], args)


def json_of(path, args):
    res = mtlib.run_memtrace(["report", path, "--json"] + list(args))
    check_eq(res.rc, 0, "memtrace report --json %s: exit status" % " ".join(args), mtlib.tail(res.stderr))
    try:
        return json.loads(res.stdout)
    except ValueError as e:
        raise mtlib.Fail("--json %s: not JSON: %s" % (" ".join(args), e), mtlib.tail(res.stdout))


def ours(data, metric):
    """{function: (flat, cum)} of the named functions of a --json document."""
    out = {}
    for f in data["functions"]:
        if UNRESOLVED.search(f["name"]):
            continue
        fl, cu = out.get(f["name"], (0, 0))
        out[f["name"]] = (fl + f["flat"][metric], cu + f["cum"][metric])
    return {k: v for k, v in out.items() if v != (0, 0)}


def go_top(args, metric):
    """{function: (flat, cum)} of go tool pprof -top (named functions)."""
    argv = [go_bin(), "tool", "pprof", "-symbolize=none", "-top", "-nodecount=1000000",
            "-nodefraction=0", "-edgefraction=0", "-unit=B", "-sample_index=" + metric] + \
        list(args) + [profile()[0]]
    res = mtlib.run(argv, env=go_env(), timeout=120)
    check_eq(res.rc, 0, "%s: exit status" % " ".join(argv), mtlib.tail(res.stderr))
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split()
        if len(parts) < 6 or not parts[1].endswith("%") or not parts[4].endswith("%"):
            continue
        # pprof marks inlined functions: "f (inline)", "f (partial-inline)".
        name = re.sub(r" \((partial-)?inline\)$", "", " ".join(parts[5:]))
        if name.startswith("[") and name.endswith("]"):
            continue  # an unresolved module: pprof merges its addresses
        val = lambda t: int(t[:-1]) if t.endswith("B") else int(float(t))
        out[name] = (val(parts[0]), val(parts[3]))
    return {k: v for k, v in out.items() if v != (0, 0)}, res.stdout


def go_args(views):
    """memtrace's --opt X as go tool pprof's -opt=X."""
    out = []
    for opt, val in views:
        out.append("-%s=%s" % (opt.lstrip("-").replace("-", "_"), val))
    return out


def mt_args(views):
    out = []
    for opt, val in views:
        out += [opt, val]
    return out


def compare(views):
    for metric in ("inuse_space", "alloc_objects"):
        got = ours(report_json(mt_args(views) + ["--metric", metric]), metric)
        want, text = go_top(go_args(views), metric)
        diff = {k: (got.get(k), want.get(k)) for k in set(got) | set(want) if got.get(k) != want.get(k)}
        check(not diff, "%s %s: (memtrace, go tool pprof) differ for %d functions: %s" % (
            " ".join(mt_args(views)), metric, len(diff), sorted(diff.items())[:6]), text)
        check(want or views == [("--focus", "^nomatch$")], "go tool pprof shows nothing for %s" % views, text)


def pid_of(comm):
    return profile()[1][comm]


CASES = {
    "none": lambda: [],
    "focus": lambda: [("--focus", "leak_")],
    "focus_file": lambda: [("--focus", r"shapes\.cpp")],
    "focus_module": lambda: [("--focus", "libstdc")],
    "ignore": lambda: [("--ignore", "depth5|calloc")],
    "hide": lambda: [("--hide", "^depth|main")],
    "hide_leaf": lambda: [("--hide", "^leak_three$")],
    "show": lambda: [("--show", "leak|depth")],
    "show_from": lambda: [("--show-from", "depth3_b|depth5_c")],
    "show_from_inlined": lambda: [("--show-from", "inl_alloc|call_init")],
    "show_from_module": lambda: [("--show-from", "ld-linux")],
    "tagfocus_comm": lambda: [("--tagfocus", "comm=leaks|shapes")],
    "tagfocus_nokey": lambda: [("--tagfocus", "comm:inl")],
    "tagfocus_pid": lambda: [("--tagfocus", "pid=%d" % pid_of("leaks"))],
    "tagfocus_range": lambda: [("--tagfocus", "pid=%d:" % pid_of("inline"))],
    "tagfocus_unit": lambda: [("--tagfocus", ":%dkb" % pid_of("inline"))],
    "tagignore": lambda: [("--tagignore", "comm=sh")],
    "combined": lambda: [("--focus", "main"), ("--ignore", "calloc"), ("--hide", "depth3"),
                         ("--show-from", "main"), ("--tagignore", "comm=shapes")],
}

for _name, _views in CASES.items():
    def _mk(name=_name, views=_views):
        @test("views.pprof." + name)
        def _t():
            compare(views())
    _mk()


@test("views.text")
def _text():
    views = ["--focus", "leak_|depth", "--hide", "depth3_b"]
    res = report(views + ["-n", "1000", "--unit", "B"])
    rep = mtlib.parse_report(res.stdout)
    check_eq(rep.header.get("view"), "focus=leak_|depth hide=depth3_b", "the header's view line", res.stdout)
    data = report_json(views)
    want = ours(data, "inuse_space")
    got = {r.function: (r.flat, r.cum) for r in rep.rows if not UNRESOLVED.search(r.function)}
    got = {k: v for k, v in got.items() if v != (0, 0)}
    check_eq(got, want, "text table = --json functions under the same view", res.stdout)
    # The leaking functions of leaks, exactly, and nothing else in use.
    leaking = {f: v.inuse_space for f, v in LEAKS.funcs.items()
               if v.inuse_space and re.search("leak_|depth", f)}
    check_eq({f: got.get(f, (0, 0))[0] for f in leaking}, leaking, "flat of leaks' leak_ functions", res.stdout)
    check_eq(rep.inuse[0], sum(leaking.values()), "header in use = what the view keeps", res.stdout)
    check("depth3_b" not in got, "hidden depth3_b still in the table", res.stdout)


LIST_RE = re.compile(r"^\s*(\S+)\s+(\S+)\s+(\d+):(.*)$")


def list_rows(text):
    """{(routine, line): (flat, cum)} and the lines' texts of a -list output."""
    rows, texts, routine = {}, {}, None
    for line in text.splitlines():
        if line.startswith("ROUTINE"):
            routine = line.split("======================== ", 1)[1].split(" in ")[0]
            continue
        m = LIST_RE.match(line)
        if m and routine:
            val = lambda t: 0 if t == "." else (int(t[:-1]) if t.endswith("B") else int(float(t)))
            rows[(routine, int(m.group(3)))] = (val(m.group(1)), val(m.group(2)))
            texts[(routine, int(m.group(3)))] = m.group(4)
    return rows, texts


@test("views.list")
def _list():
    regex = "leak_three|depth3_a|inl_alloc"
    res = report(["--list", regex, "--unit", "B"])
    got, texts = list_rows(res.stdout)
    argv = [go_bin(), "tool", "pprof", "-symbolize=none", "-unit=B", "-sample_index=inuse_space",
            "-list=" + regex, profile()[0]]
    gres = mtlib.run(argv, env=go_env(), timeout=120)
    check_eq(gres.rc, 0, "go tool pprof -list", mtlib.tail(gres.stderr))
    want, wtexts = list_rows(gres.stdout)
    valued = {k: v for k, v in want.items() if v != (0, 0)}
    check(valued, "go tool pprof -list shows no value", gres.stdout)
    check_eq({k: got.get(k) for k in valued}, valued, "--list: flat and cum per line", res.stdout)
    extra = {k: v for k, v in got.items() if v != (0, 0) and k not in valued}
    check(not extra, "--list: values on lines go tool pprof leaves empty: %s" % extra, res.stdout)
    shown = [t for k, t in texts.items() if k[0] == "leak_three" and "LEAK_THREE" in t]
    check(shown, "--list shows no source text of leak_three", res.stdout)
    # A view applies to --list too.
    res = report(["--list", regex, "--unit", "B", "--ignore", "depth3"])
    got, _ = list_rows(res.stdout)
    check(not any(v != (0, 0) for k, v in got.items() if k[0] != "inl_alloc"),
          "--ignore depth3: leak_three's lines still have values", res.stdout)


@test("views.list_no_source")
def _list_no_source():
    # A profile whose source files are gone: read back from a copy whose
    # frames point nowhere is not possible, so run from a program compiled
    # from a temporary copy of leaks.c, then remove the copy.
    src = os.path.join(mtlib.TMPDIR, "views_leaks.c")
    exe = os.path.join(mtlib.TMPDIR, "views_leaks")
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "progs", "leaks.c")) as f:
        code = f.read()
    with open(src, "w") as f:
        f.write(code)
    res = mtlib.run(["gcc", "-O0", "-g", "-fno-omit-frame-pointer", "-o", exe, src])
    check_eq(res.rc, 0, "gcc", res.stderr)
    pb = os.path.join(mtlib.TMPDIR, "views_nosrc.pb.gz")
    res = mtlib.run_memtrace(["--pprof", pb, "--", exe])
    check_eq(res.rc, 0, "memtrace --pprof", mtlib.tail(res.stderr))
    os.unlink(src)
    res = mtlib.run_memtrace(["report", pb, "--list", "^leak_three$", "--unit", "B"])
    check_eq(res.rc, 0, "report --list, source gone", mtlib.tail(res.stderr))
    check("source not available" in res.stdout, "no word that the source is missing", res.stdout)
    rows, _ = list_rows(res.stdout)
    check_eq(sum(v[0] for v in rows.values()), LEAKS.funcs["leak_three"].inuse_space,
             "flat of leak_three's lines, source gone", res.stdout)
    check(all(v != (0, 0) for v in rows.values()), "lines without values listed", res.stdout)


@test("views.json")
def _json():
    data = report_json([])
    for key in ("format", "schema_version", "memtrace_version", "header", "metric", "total",
                "processes", "functions", "stacks"):
        check(key in data, "--json: no %r" % key, json.dumps(data)[:2000])
    check_eq((data["format"], data["schema_version"]), ("memtrace-profile", 1), "format and version")
    for m in ("alloc_objects", "alloc_space", "inuse_objects", "inuse_space"):
        check_eq(sum(s["values"][m] for s in data["stacks"]), data["total"][m], "sum of stacks' %s" % m)
        check_eq(sum(f["flat"][m] for f in data["functions"]), data["total"][m], "sum of flat %s" % m)
    h = data["header"]
    check_eq(h["in_use"]["bytes"], data["total"]["inuse_space"], "header in use = total")
    check_eq(h["allocated"]["objects"], data["total"]["alloc_objects"], "header allocated objects = total")
    leaks_pid = pid_of("leaks")
    three = [s for s in data["stacks"] if s["pid"] == leaks_pid and s["frames"]
             and s["frames"][0]["function"] == "leak_three"]
    check_eq(len(three), 1, "leak_three's stacks")
    names = [f["function"] for f in three[0]["frames"]]
    check_eq(names[:4], ["leak_three", "depth3_b", "depth3_a", "main"], "leak_three's stack, leaf first")
    check_eq(three[0]["values"]["inuse_space"], LEAKS.funcs["leak_three"].inuse_space, "leak_three's bytes")
    check(three[0]["frames"][0]["file"].endswith("leaks.c") and three[0]["frames"][0]["line"] > 0,
          "leak_three's file:line: %r" % three[0]["frames"][0])
    # -o FILE.json picks the format.
    out = os.path.join(mtlib.TMPDIR, "views.json")
    res = mtlib.run_memtrace(["report", profile()[0], "-o", out])
    check_eq(res.rc, 0, "report -o FILE.json", res.stderr)
    with open(out) as f:
        check_eq(json.load(f)["total"], data["total"], "-o FILE.json's totals")


@test("views.live")
def _live():
    out = os.path.join(mtlib.TMPDIR, "views.live.json")
    res = mtlib.run_memtrace(["--focus", "leak_three|leak_five", "--json=" + out, "--",
                              mtlib.prog_path("leaks")])
    check_eq(res.rc, 0, "memtrace --focus --json -- leaks", mtlib.tail(res.stderr))
    with open(out) as f:
        data = json.load(f)
    flat = {k: v[0] for k, v in ours(data, "inuse_space").items() if v[0]}
    want = {f: LEAKS.funcs[f].inuse_space for f in ("leak_three", "leak_five")}
    check_eq(flat, want, "flat in use under --focus in a live trace")
    check_eq(data["header"]["view"], "focus=leak_three|leak_five", "the header's view")


@test("views.errors")
def _errors():
    res = report(["--focus", "a("], rc=None)
    mtlib.check_one_line_error(res, "--focus a(", ("--focus",))
    check_eq(res.rc, 2, "bad regex: exit status", res.stderr)
    res = report(["--tagfocus", "comm=x("], rc=None)
    mtlib.check_one_line_error(res, "--tagfocus comm=x(", ("--tagfocus",))
    res = report(["--focus", "^nomatch$"])
    check("--focus '^nomatch$' matched no samples" in res.stderr, "no word that --focus matched nothing",
          res.stderr)
    res = report(["--list", "^nomatch$"], rc=None)
    mtlib.check_one_line_error(res, "--list ^nomatch$", ("no function",))
    check(res.rc != 0, "--list matching nothing: exit status 0", res.stderr)
