// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * spin.c - for bench/sample: spin() computes N million steps of a
 * recurrence (no call, no system call), then the program prints its own
 * CPU time as the kernel counts it (CLOCK_PROCESS_CPUTIME_ID: the
 * scheduler's runtime, what fortstat's CPU clock reads), in ns.
 * Usage: spin [MILLIONS]
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile double sink;

__attribute__((noinline)) static double spin(long n)
{
	double s = 0;

	for (long i = 0; i < n; i++)
		s = s * 1.0000001 + (double)(i & 7);
	return s;
}

int main(int argc, char **argv)
{
	long m = argc > 1 ? atol(argv[1]) : 100;
	struct timespec t;

	sink = spin(m * 1000000L);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	printf("%lld\n", (long long)t.tv_sec * 1000000000LL + t.tv_nsec);
	return 0;
}
