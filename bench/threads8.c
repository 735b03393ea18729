// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * threads8.c [CALLS] - benchmark workload for bench/threads: 8 threads, each
 * calling mid() CALLS/2 times (default 500,000), which calls leaf(): CALLS
 * timed calls a thread (10^6 by default), 8 x CALLS in all. Each thread
 * prints its checksum, so that a wrong result shows.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define NTHREADS 8
#define TINY __attribute__((noinline, noipa))

static long half = 500000;

TINY unsigned long leaf(unsigned long x)
{
	return x * 2654435761u + 1;
}

TINY unsigned long mid(unsigned long x)
{
	return leaf(x) ^ (x >> 3);
}

static void *worker(void *arg)
{
	unsigned long sum = (unsigned long)(size_t)arg;

	for (long i = 0; i < half; i++)
		sum += mid(sum + (unsigned long)i);
	return (void *)(size_t)sum;
}

int main(int argc, char **argv)
{
	pthread_t t[NTHREADS];
	unsigned long all = 0;

	if (argc > 1)
		half = strtol(argv[1], NULL, 10) / 2;
	if (half <= 0) {
		fprintf(stderr, "usage: threads8 [CALLS a thread, even]\n");
		return 2;
	}
	for (size_t i = 0; i < NTHREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i)) {
			perror("pthread_create");
			return 1;
		}
	for (size_t i = 0; i < NTHREADS; i++) {
		void *r;

		pthread_join(t[i], &r);
		all ^= (unsigned long)(size_t)r;
	}
	printf("threads %d  calls %ld  checksum %016lx\n", NTHREADS, NTHREADS * 2 * half, all);
	return 0;
}
