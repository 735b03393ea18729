// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ccalls.c - bench/golang's C workload, gocalls.go in C: main calls step N
 * times, step runs K rounds of arithmetic and calls leaf (2N calls). It
 * prints the calls, a checksum, and what its loop took by its own clocks:
 * wall and the process's CPU time (ns), then the process's CPU time.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#if defined(__clang__)
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noipa))
#endif

static long long ns(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t.tv_sec * 1000000000LL + t.tv_nsec;
}

NOINLINE unsigned long leaf(unsigned long x)
{
	return x * 2654435761u + 1;
}

NOINLINE unsigned long step(unsigned long x, int k)
{
	for (int i = 0; i < k; i++)
		x = x * 6364136223846793005ul + 1442695040888963407ul;
	return leaf(x) ^ (x >> 3);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? strtol(argv[1], NULL, 10) : 750000;
	int k = argc > 2 ? atoi(argv[2]) : 100;
	unsigned long sum = 0;
	long long w0 = ns(CLOCK_MONOTONIC), c0 = ns(CLOCK_PROCESS_CPUTIME_ID), w, c;

	for (long i = 0; i < n; i++)
		sum += step(sum + (unsigned long)i, k);
	w = ns(CLOCK_MONOTONIC) - w0;
	c = ns(CLOCK_PROCESS_CPUTIME_ID) - c0;
	printf("calls %ld checksum %016lx loop_wall_ns %lld loop_cpu_ns %lld cpu_ns %lld\n", 2 * n,
	       sum, w, c, ns(CLOCK_PROCESS_CPUTIME_ID));
	return 0;
}
