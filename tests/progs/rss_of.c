/*
 * rss_of.c: rss_of CMD ARGS...: run CMD and print, on standard error, the
 * largest resident set it reached: "rss_of: maxrss_kb=N", then exit with
 * its status.  Not an allocation test program: a small launcher, because
 * a process's ru_maxrss also counts the memory its parent had when it
 * forked (Linux keeps the old image's high-water mark across exec), and
 * the test runner's own Python grows over a long run.
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct rusage ru;
	int status;
	pid_t pid;

	if (argc < 2)
		return 2;
	pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) != pid)
		return 2;
	fprintf(stderr, "rss_of: maxrss_kb=%ld\n", ru.ru_maxrss);
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	return 128 + WTERMSIG(status);
}
