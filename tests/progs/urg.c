/*
 * urg.c: a program with a SIGURG handler of its own, for the hold at ld.so's
 * hook (memtrace takes a SIGURG the hook sends, and only that one).
 *
 *   1. with SIGURG blocked, dlopens argv[1] (ld.so's hook runs; no hold can
 *      be taken then) and unblocks it: no SIGURG must arrive;
 *   2. sends itself urgent data on a loopback TCP connection it owns (the
 *      kernel's SIGURG, si_code SI_KERNEL like the hook's) and dlopens
 *      argv[2]: exactly one SIGURG must reach the handler.
 *
 * Prints "urg BLOCKED OOB" (expected "urg 0 1") and exits 0.
 */
#include <arpa/inet.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static volatile sig_atomic_t urgs;

static void on_urg(int sig)
{
	(void)sig;
	urgs++;
}

/* Urgent data to ourselves: 0, or -1 when the socket calls fail. */
static int oob_to_self(void)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int l = socket(AF_INET, SOCK_STREAM, 0), c, s;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&a, sizeof(a)) || listen(l, 1) ||
	    getsockname(l, (struct sockaddr *)&a, &len))
		return -1;
	c = socket(AF_INET, SOCK_STREAM, 0);
	if (c < 0 || connect(c, (struct sockaddr *)&a, sizeof(a)))
		return -1;
	s = accept(l, NULL, NULL);
	if (s < 0 || fcntl(s, F_SETOWN, getpid()))
		return -1;
	if (send(c, "!", 1, MSG_OOB) != 1)
		return -1;
	for (int i = 0; i < 200 && !urgs; i++) {
		struct timespec ts = { 0, 10 * 1000 * 1000 };

		nanosleep(&ts, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t urg;
	int blocked;

	if (argc < 3)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_urg;
	sigaction(SIGURG, &sa, NULL);
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	sigprocmask(SIG_BLOCK, &urg, NULL);
	if (!dlopen(argv[1], RTLD_NOW))
		return 1;
	sigprocmask(SIG_UNBLOCK, &urg, NULL);
	blocked = urgs;
	if (oob_to_self())
		return 3;
	if (!dlopen(argv[2], RTLD_NOW))
		return 1;
	printf("urg %d %d\n", blocked, (int)urgs - blocked);
	return 0;
}
