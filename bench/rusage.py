"""rusage.py OUT CMD...: runs CMD; writes to OUT the rusage wait4() gives
for it (CMD and every descendant it reaped) and the CLOCK_REALTIME before
the fork and when wait4() returned; exits with CMD's status.  Used by
scripts/bench.sh and scripts/bench_real.sh."""
import os, sys, time
out, argv = sys.argv[1], sys.argv[2:]
start = time.time_ns()
pid = os.fork()
if pid == 0:
    try:
        os.execvp(argv[0], argv)
    finally:
        os._exit(127)
_, status, ru = os.wait4(pid, 0)
end = time.time_ns()
with open(out, "w") as f:
    f.write("user_us=%d sys_us=%d maxrss_kb=%d start_realtime_ns=%d end_realtime_ns=%d\n"
            % (round(ru.ru_utime * 1e6), round(ru.ru_stime * 1e6), ru.ru_maxrss, start, end))
sys.exit(os.waitstatus_to_exitcode(status))
