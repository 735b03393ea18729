// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cpurun.c - for bench/real: run a command and write its wall time and the
 * CPU time (user + system) of it and every child it waited for, in seconds,
 * to a file: "WALL CPU\n". Exits with the command's status.
 * Usage: cpurun FILE COMMAND [ARG]...
 */
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double secs(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

int main(int argc, char **argv)
{
	struct timespec t0, t1;
	struct rusage ru;
	int status;
	pid_t pid;
	FILE *f;

	if (argc < 3) {
		fprintf(stderr, "usage: cpurun FILE COMMAND [ARG]...\n");
		return 2;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid = fork();
	if (pid < 0)
		return perror("fork"), 2;
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror(argv[2]);
		_exit(127);
	}
	if (wait4(pid, &status, 0, &ru) < 0)
		return perror("wait4"), 2;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	/* wait4's rusage covers the child and the children it waited for */
	f = fopen(argv[1], "w");
	if (!f)
		return perror(argv[1]), 2;
	fprintf(f, "%.6f %.6f\n",
		(double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9,
		secs(ru.ru_utime) + secs(ru.ru_stime));
	fclose(f);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
