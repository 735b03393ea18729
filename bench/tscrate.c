// SPDX-License-Identifier: GPL-2.0-or-later
/* tscrate.c - the TSC's rate in GHz, measured against CLOCK_MONOTONIC over 0.2 s. */
#include <stdio.h>
#include <time.h>
#include <x86intrin.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(void)
{
	double t0 = now(), t1;
	unsigned long long c0 = __rdtsc(), c1;
	struct timespec nap = {0, 200000000};

	nanosleep(&nap, NULL);
	c1 = __rdtsc();
	t1 = now();
	printf("%.3f\n", (double)(c1 - c0) / (t1 - t0) / 1e9);
	return 0;
}
