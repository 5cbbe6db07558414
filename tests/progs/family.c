/*
 * family.c: processes that start processes, each with exactly known
 * allocations, for `memtrace -- CMD` following what CMD starts.
 *
 *   family fork N   a server: forks N workers (fork), waits for them
 *   family spawn    starts "family leaf" with posix_spawn (vfork + exec)
 *   family tree     a tree three deep: this process forks one child,
 *                   which forks one grandchild
 *   family leaf     the spawned program
 *
 * Every process, whatever its role, does the same two things: it leaks
 * one block whose size says its role (LEAK_* below) and allocates and
 * frees one block of CHURN bytes.  So each one allocated 2 objects of
 * LEAK + CHURN bytes and holds 1 object of LEAK bytes at exit.  Each
 * writes "ROLE PID\n" to stdout (write(2): stdio would allocate).
 * Expected numbers: tests/integration/test_follow.py.
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

#define CHURN 64
#define LEAK_SERVER 1000
#define LEAK_WORKER 200   /* worker i leaks LEAK_WORKER + i */
#define LEAK_SPAWNER 1500
#define LEAK_LEAF 700
#define LEAK_TREE 3000    /* level L of the tree leaks LEAK_TREE + TREE_STEP * L */
#define TREE_STEP 100

extern char **environ;
void *volatile kept;

static void say(const char *role, int n)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "%s%d %d\n", role, n, (int)getpid());

	if (write(1, line, (size_t)len) != len)
		_exit(3);
}

/* The two allocations every process makes. */
NOINLINE void live(size_t leak) /* DEF_LIVE */
{
	kept = malloc(leak); /* LEAK */
	free(malloc(CHURN)); /* CHURN */
}

static int wait_all(void)
{
	int status, bad = 0;

	while (wait(&status) > 0)
		bad |= !WIFEXITED(status) || WEXITSTATUS(status) != 0;
	return bad;
}

static int server(int n)
{
	say("server", 0);
	for (int i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			say("worker", i);
			live(LEAK_WORKER + (size_t)i);
			_exit(0);
		}
	}
	live(LEAK_SERVER);
	return wait_all();
}

static int spawner(const char *self)
{
	char *argv[] = { (char *)self, (char *)"leaf", NULL };
	pid_t pid;

	say("spawner", 0);
	if (posix_spawn(&pid, self, NULL, NULL, argv, environ) != 0)
		return 1;
	live(LEAK_SPAWNER);
	return wait_all();
}

static int tree(int level)
{
	say("tree", level);
	if (level < 2) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0)
			_exit(tree(level + 1));
	}
	live(LEAK_TREE + TREE_STEP * (size_t)level);
	return wait_all();
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "fork") == 0)
		return server(atoi(argv[2]));
	if (argc == 2 && strcmp(argv[1], "spawn") == 0)
		return spawner(argv[0]);
	if (argc == 2 && strcmp(argv[1], "tree") == 0)
		return tree(0);
	if (argc == 2 && strcmp(argv[1], "leaf") == 0) {
		say("leaf", 0);
		live(LEAK_LEAF);
		return 0;
	}
	if (write(2, "usage: family fork N | spawn | tree | leaf\n", 43) < 0)
		return 3;
	return 2;
}
