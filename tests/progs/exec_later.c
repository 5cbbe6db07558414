/*
 * exec_later.c: N children (argv[1], default 8) forked at once, each
 * waiting in read() on a pipe, without allocating, until the parent has
 * slept DELAY_MS (long enough for memtrace's scan of /proc to see them
 * under the parent's name), then exec'ing /bin/true, which allocates
 * nothing either.  Every child must be reported as "true".
 * Only syscalls: no stdio, no malloc.
 */
#include <stdlib.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define DELAY_MS 1500

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 8;
	struct timespec ts = { DELAY_MS / 1000, (DELAY_MS % 1000) * 1000000L };
	int fds[2];
	char c;

	if (pipe(fds))
		return 1;
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			close(fds[1]);
			if (read(fds[0], &c, 1) < 0) /* EOF: the parent closed it */
				_exit(2);
			execl("/bin/true", "true", (char *)NULL);
			_exit(127);
		}
	}
	close(fds[0]);
	while (nanosleep(&ts, &ts))
		;
	close(fds[1]); /* every child's read returns */
	for (int i = 0; i < n; i++)
		wait(NULL);
	return 0;
}
