// SPDX-License-Identifier: GPL-2.0-or-later
/* work.c - benchmark workload: N calls each to two tiny routines, leaf via mid. */
#include <stdio.h>
#include <stdlib.h>

#define DEFAULT_CALLS 200000

#if defined(__clang__)
#define TINY __attribute__((noinline))
#else
#define TINY __attribute__((noinline, noipa))
#endif

static volatile unsigned long sink;

TINY unsigned long leaf(unsigned long x)
{
	return x * 2654435761u + 1;
}

TINY unsigned long mid(unsigned long x)
{
	return leaf(x) ^ (x >> 3);
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : DEFAULT_CALLS;
	unsigned long sum = 0;

	if (n <= 0) {
		fprintf(stderr, "usage: work [CALLS]\n");
		return 2;
	}
	for (long i = 0; i < n; i++)
		sum += mid(sum + i);
	sink = sum;
	printf("calls %ld  checksum %016lx\n", 2 * n, sum);
	return 0;
}
