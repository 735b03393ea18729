// SPDX-License-Identifier: GPL-2.0-or-later
/* floor.c - cost of one bare ptrace stop (int3 -> waitpid -> PTRACE_CONT), the floor for fortstat.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCHES 5
#define DEFAULT_STOPS 20000

enum placement { UNPINNED, PINNED, CROSS };

static void die(const char *what)
{
	perror(what);
	exit(2);
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static void pin_to(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		die("sched_setaffinity");
}

static void __attribute__((noreturn)) child(long n, enum placement where)
{
	if (where == CROSS)
		pin_to(1);
	if (ptrace(PTRACE_TRACEME, 0, NULL, NULL))
		die("PTRACE_TRACEME");
	raise(SIGSTOP);
	for (long i = 0; i < n; i++)
		__asm__ volatile("int3" ::: "memory");
	_exit(0);
}

/* One batch of n stops; returns microseconds per stop. */
static double batch(long n, enum placement where, int regs)
{
	struct user_regs_struct r;
	double t0, t1;
	int status;
	pid_t pid;

	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0)
		child(n, where);

	/* The initial SIGSTOP: not timed. */
	if (waitpid(pid, &status, 0) < 0 || !WIFSTOPPED(status))
		die("waitpid (SIGSTOP)");
	if (ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)PTRACE_O_EXITKILL))
		die("PTRACE_SETOPTIONS");
	if (ptrace(PTRACE_CONT, pid, NULL, NULL))
		die("PTRACE_CONT");

	t0 = now_us();
	for (long i = 0; i < n; i++) {
		if (waitpid(pid, &status, 0) < 0)
			die("waitpid");
		if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
			fprintf(stderr, "floor: unexpected status %#x\n", status);
			exit(2);
		}
		if (regs) {
			if (ptrace(PTRACE_GETREGS, pid, NULL, &r))
				die("PTRACE_GETREGS");
			if (ptrace(PTRACE_SETREGS, pid, NULL, &r))
				die("PTRACE_SETREGS");
		}
		if (ptrace(PTRACE_CONT, pid, NULL, NULL))
			die("PTRACE_CONT");
	}
	t1 = now_us();

	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status))
		die("waitpid (exit)");
	return (t1 - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median_of_batches(long n, enum placement where, int regs)
{
	double v[BATCHES];

	for (int i = 0; i < BATCHES; i++)
		v[i] = batch(n, where, regs);
	qsort(v, BATCHES, sizeof(v[0]), cmp_double);
	return v[BATCHES / 2];
}

static void usage(void)
{
	fprintf(stderr,
		"usage: floor [-n STOPS] [-r] unpinned|pinned|cross\n"
		"  prints microseconds per stop, median of %d batches\n"
		"  -r  also PTRACE_GETREGS + PTRACE_SETREGS at each stop\n",
		BATCHES);
	exit(2);
}

int main(int argc, char **argv)
{
	long n = DEFAULT_STOPS;
	enum placement where;
	int regs = 0, opt;

	while ((opt = getopt(argc, argv, "n:r")) != -1) {
		switch (opt) {
		case 'n':
			n = strtol(optarg, NULL, 10);
			if (n <= 0)
				usage();
			break;
		case 'r':
			regs = 1;
			break;
		default:
			usage();
		}
	}
	if (optind + 1 != argc)
		usage();
	if (!strcmp(argv[optind], "unpinned"))
		where = UNPINNED;
	else if (!strcmp(argv[optind], "pinned"))
		where = PINNED;
	else if (!strcmp(argv[optind], "cross"))
		where = CROSS;
	else
		usage();

	if (where == CROSS && sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		printf("n/a\n");
		return 0;
	}
	if (where == PINNED || where == CROSS)
		pin_to(0);

	printf("%.2f\n", median_of_batches(n, where, regs));
	return 0;
}
