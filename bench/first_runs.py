#!/usr/bin/env python3
"""first_runs.py PROFILE.json PIDS REPORT.txT [MEMTRACE.err]: the
per-program figures of scripts/first_runs.sh.

PROFILE.json is `memtrace report heap.pb.gz --json` of a system-wide
trace; PIDS has one line "NAME PID MS" per program the script ran (MS:
its wall time under tracing);
REPORT.txt is the trace's text report (its header's `truncated stacks:`
line, for every process traced).  For each program, over the stacks of
its pid: allocations, bytes, and the bytes whose stack reaches main.
MEMTRACE.err is memtrace -v's stderr: its "truncated stacks by process"
lines say which of the header's truncated stacks are each program's
(its pid's: the shell's moment between fork and exec included), and
which are other processes' (the machine's, memtrace's own helpers...).

A stack reaches main when it has a frame `main` or
`__libc_start_call_main` (glibc's caller of main: the frame under it is
main even in a stripped executable whose main has no name).  A stack
that does not is either whole, ending at an outermost frame (`_start`,
through ld.so's or libc's calls of the constructors; a thread's
`clone3`/`clone`/`start_thread`), or cut short: its outermost frame is
none of these.  A stack with a frame in no mapping memtrace knows
(`[unknown]+0xADDRESS`: the process was gone before its mappings were
read) cannot be placed: counted apart, as `unknown`.  Stacks with a frame in the shell (the moment between
the shell's fork and its exec of the program, counted under the same
pid) are left out and counted apart.

Prints a table, then one line per program for scripts:
  first_runs program=NAME pid=N ms=N comm=C allocs=N bytes=N main_bytes=N
             main_pct=P whole_bytes=N cut_allocs=N cut_bytes=N
             unknown_allocs=N unknown_bytes=N shell_allocs=N
             truncated=N trunc_reasons="bad stack 1"
and one line for the trace's header:
  first_runs truncated=N reasons="no table 2, depth 1" others=N
"""
import json
import re
import sys

MAIN = {"main", "__libc_start_call_main"}
# _dl_start_user: ld.so's code after _start, reached by a jump, that
# calls the constructors (_dl_init): their stacks end there.
OUTERMOST = {"_start", "_dl_start_user", "clone3", "__clone3", "clone", "__clone", "start_thread"}
SHELLS = ("/usr/bin/bash", "/bin/bash")


def classify(frames):
    """'main', 'whole' (an outermost frame, not main), 'unknown' (not
    main, and a frame memtrace could not place in any mapping: the
    process was gone before its mappings were read) or 'cut'."""
    names = [f.get("function") or "" for f in frames]
    if any(n in MAIN for n in names):
        return "main"
    if names and names[-1] in OUTERMOST:
        return "whole"
    if any(n.startswith("[unknown]") for n in names):
        return "unknown"
    return "cut"


def root_of(frames):
    if not frames:
        return "(no frame)"
    f = frames[-1]
    return f.get("function") or "?"


def truncated_by_pid(path):
    """{pid: (comm, total, "reason n, ...")} of memtrace -v's lines."""
    out = {}
    if not path:
        return out
    with open(path, errors="replace") as f:
        for line in f:
            m = re.match(r"memtrace:   pid (\d+) \(([^)]*)\): (.*)$", line.rstrip("\n"))
            if m:
                total = sum(int(p.rpartition(" ")[2]) for p in m.group(3).split(", "))
                out[int(m.group(1))] = (m.group(2), total, m.group(3))
    return out


def main():
    prof_path, pids_path, report_path = sys.argv[1:4]
    cuts = truncated_by_pid(sys.argv[4] if len(sys.argv) > 4 else None)
    with open(prof_path) as f:
        prof = json.load(f)
    progs = []
    with open(pids_path) as f:
        for line in f:
            name, pid, ms = (line.split() + ["0"])[:3]
            progs.append((name, int(pid), int(ms)))
    by_pid = {}
    for s in prof.get("stacks", []):
        by_pid.setdefault(s.get("pid", 0), []).append(s)
    comms = {p["pid"]: p.get("comm", "?") for p in prof.get("processes", [])}

    rows = []
    for name, pid, ms in progs:
        r = {"program": name, "pid": pid, "ms": ms, "comm": comms.get(pid, "-"), "allocs": 0, "bytes": 0,
             "main_bytes": 0, "whole_bytes": 0, "cut_allocs": 0, "cut_bytes": 0,
             "shell_allocs": 0, "unknown_allocs": 0, "unknown_bytes": 0,
             "cut_roots": {}}
        for s in by_pid.get(pid, []):
            frames = s.get("frames", [])
            v = s["values"]
            if any((fr.get("module") or "") in SHELLS for fr in frames):
                r["shell_allocs"] += v["alloc_objects"]
                continue
            r["allocs"] += v["alloc_objects"]
            r["bytes"] += v["alloc_space"]
            kind = classify(frames)
            if kind == "main":
                r["main_bytes"] += v["alloc_space"]
            elif kind == "whole":
                r["whole_bytes"] += v["alloc_space"]
            elif kind == "unknown":
                r["unknown_allocs"] += v["alloc_objects"]
                r["unknown_bytes"] += v["alloc_space"]
            else:
                r["cut_allocs"] += v["alloc_objects"]
                r["cut_bytes"] += v["alloc_space"]
                root = "%s (%s)" % (root_of(frames), (frames[-1].get("module") or "?").rsplit("/", 1)[-1]
                                    if frames else "?")
                c = r["cut_roots"].setdefault(root, [0, 0])
                c[0] += v["alloc_objects"]
                c[1] += v["alloc_space"]
        r["main_pct"] = 100.0 * r["main_bytes"] / r["bytes"] if r["bytes"] else 0.0
        r["trunc"], r["trunc_reasons"] = cuts.get(pid, ("", 0, ""))[1:]
        rows.append(r)

    trunc, reasons = "?", ""
    with open(report_path) as f:
        for line in f:
            m = re.match(r"truncated stacks: (\d+)(?: \((.*)\))?$", line.rstrip("\n"))
            if m:
                trunc, reasons = m.group(1), m.group(2) or ""
                break

    fmt = "%-8s %7s %6s %8s %10s %8s %10s %8s %10s %8s %10s %6s %6s"
    print(fmt % ("", "", "", "", "", "", "not main", "cut", "", "unknown", "", "shell", "trunc"))
    print(fmt % ("program", "pid", "ms", "allocs", "bytes", "main%", "whole B", "allocs", "bytes",
                 "allocs", "bytes", "allocs", "stacks"))
    for r in rows:
        print(fmt % (r["program"], r["pid"], r["ms"], r["allocs"], r["bytes"], "%.2f%%" % r["main_pct"],
                     r["whole_bytes"], r["cut_allocs"], r["cut_bytes"], r["unknown_allocs"],
                     r["unknown_bytes"], r["shell_allocs"], r["trunc"]))
    for r in rows:
        for root, (n, b) in sorted(r["cut_roots"].items(), key=lambda kv: -kv[1][1])[:5]:
            print("  %s: cut short at %s: %d allocations, %d bytes" % (r["program"], root, n, b))
    for r in rows:
        if r["trunc"]:
            print("  %s: truncated stacks: %s" % (r["program"], r["trunc_reasons"]))
    print("truncated stacks (every process traced, from the header): %s%s" % (
        trunc, " (%s)" % reasons if reasons else ""))
    mine = {r["pid"] for r in rows}
    others = sorted(((t, pid, c, why) for pid, (c, t, why) in cuts.items() if pid not in mine),
                    reverse=True)
    if others:
        print("  of other processes: %d, the most: %s" % (
            sum(o[0] for o in others),
            "; ".join("%s[%d] %s" % (c, pid, why) for _, pid, c, why in others[:5])))
    for r in rows:
        print("first_runs program=%s pid=%d ms=%d comm=%s allocs=%d bytes=%d main_bytes=%d main_pct=%.2f "
              "whole_bytes=%d cut_allocs=%d cut_bytes=%d unknown_allocs=%d unknown_bytes=%d shell_allocs=%d "
              'truncated=%d trunc_reasons="%s"' % (
                  r["program"], r["pid"], r["ms"], r["comm"], r["allocs"], r["bytes"], r["main_bytes"],
                  r["main_pct"], r["whole_bytes"], r["cut_allocs"], r["cut_bytes"],
                  r["unknown_allocs"], r["unknown_bytes"], r["shell_allocs"], r["trunc"],
                  r["trunc_reasons"]))
    print('first_runs truncated=%s reasons="%s" others=%d' % (
        trunc, reasons, sum(o[0] for o in others)))


if __name__ == "__main__":
    main()
