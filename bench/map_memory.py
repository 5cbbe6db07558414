#!/usr/bin/env python3
"""map_memory.py OUT CMD...: run CMD (a memtrace) and sample the kernel
memory of its BPF maps every 50 ms until it exits: the sum of the memlock
lines of /proc/PID/fdinfo of its map descriptors (every map memtrace makes
is open there, the unwind tables' chunks too).  Writes to OUT one line
"maps_bytes_first=N maps_bytes_max=N nmaps=N rc=N": the first sample
taken once the maps stopped changing after the start (the idle trace,
when CMD traces an idle process), and the largest seen.  Exits with CMD's
status.  For scripts/bench.sh."""
import os
import subprocess
import sys
import time


def maps_memlock(pid):
    total = n = 0
    fddir = "/proc/%d/fd" % pid
    try:
        fds = os.listdir(fddir)
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(os.path.join(fddir, fd)) != "anon_inode:bpf-map":
                continue
            with open("/proc/%d/fdinfo/%s" % (pid, fd)) as f:
                for line in f:
                    if line.startswith("memlock:"):
                        total += int(line.split()[1])
                        n += 1
        except (OSError, ValueError):
            continue
    return total, n


def main():
    out, cmd = sys.argv[1], sys.argv[2:]
    p = subprocess.Popen(cmd)
    first = None
    last = None
    steady = 0
    peak = (0, 0)
    while p.poll() is None:
        got = maps_memlock(p.pid)
        if got and got[1]:
            peak = max(peak, got)
            # Idle: the same figure three samples running, once there are maps.
            steady = steady + 1 if got == last else 0
            if first is None and steady >= 3:
                first = got
            last = got
        time.sleep(0.05)
    rc = p.wait()
    first = first or last or (0, 0)
    with open(out, "w") as f:
        f.write("maps_bytes_first=%d maps_bytes_max=%d nmaps=%d rc=%d\n"
                % (first[0], peak[0], peak[1], rc))
    sys.exit(rc)


main()
