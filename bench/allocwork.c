// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * allocwork.c - bench/alloc's workload: churn(N) makes N blocks of 64
 * bytes and frees each (N allocations, 2N allocator calls). Prints N.
 */
#include <stdio.h>
#include <stdlib.h>

static void *volatile sink;

__attribute__((noinline)) void churn(long n)
{
	for (long i = 0; i < n; i++) {
		void *p = malloc(64);

		sink = p;
		free(p);
	}
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000;

	churn(n);
	printf("allocations %ld\n", n);
	return 0;
}
