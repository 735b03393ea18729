// SPDX-License-Identifier: GPL-2.0-or-later
/* accuracy.c - benchmark workload: routines of known self time (0.2 us to 5 ms) and their truth. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#if defined(__clang__)
#define TIMED __attribute__((noinline))
#else
#define TIMED __attribute__((noinline, noipa))
#endif

#define ROUNDS 10	       /* the workload is interleaved in this many rounds */
#define TRUTH_REPS 31	       /* batches per routine in truth mode; the median counts */
#define TRUTH_BATCH_NS 1000000 /* nominal work in one truth batch */
#define CAL_NS 20000000	       /* nominal length of one calibration pass */

unsigned long sink; /* every routine's result ends here */

/*
 * The work: a chain of dependent multiply-adds (a 64-bit LCG step, about 4 cycles).
 * The empty asm hides x from the optimiser, so the loop can be neither removed
 * nor turned into a closed form.
 */
static inline __attribute__((always_inline)) unsigned long spin(unsigned long n, unsigned long x)
{
	for (unsigned long i = 0; i < n; i++) {
		x = x * 6364136223846793005UL + 1442695040888963407UL;
		__asm__ volatile("" : "+r"(x));
	}
	return x;
}

/* Nominal self time of each routine in ns; outer's is its own work only. */
enum { R_200NS, R_1US, R_5US, R_20US, R_100US, R_1MS, R_5MS, R_OUTER, NR };

static const struct {
	const char *name;
	long ns;    /* nominal self time per call */
	long calls; /* calls in the standard workload (scale 100 %) */
} rt[NR] = {
    [R_200NS] = {"spin_200ns", 200, 150000}, [R_1US] = {"spin_1us", 1000, 30000},
    [R_5US] = {"spin_5us", 5000, 6000}, /* and 2 per call of outer */
    [R_20US] = {"spin_20us", 20000, 2000},   [R_100US] = {"spin_100us", 100000, 400},
    [R_1MS] = {"spin_1ms", 1000000, 40},     [R_5MS] = {"spin_5ms", 5000000, 10},
    [R_OUTER] = {"outer", 50000, 800},
};

static unsigned long iters[NR];

#define SPIN_ROUTINE(fn, idx)                                                                      \
	TIMED void fn(void)                                                                        \
	{                                                                                          \
		sink = spin(iters[idx], sink);                                                     \
	}

SPIN_ROUTINE(spin_200ns, R_200NS)
SPIN_ROUTINE(spin_1us, R_1US)
SPIN_ROUTINE(spin_5us, R_5US)
SPIN_ROUTINE(spin_20us, R_20US)
SPIN_ROUTINE(spin_100us, R_100US)
SPIN_ROUTINE(spin_1ms, R_1MS)
SPIN_ROUTINE(spin_5ms, R_5MS)

/* Nested: its own work, split around two calls of a timed routine. */
TIMED void outer(void)
{
	sink = spin(iters[R_OUTER] / 2, sink);
	spin_5us();
	sink = spin(iters[R_OUTER] - iters[R_OUTER] / 2, sink);
	spin_5us();
}

static void (*const fn[NR])(void) = {
    spin_200ns, spin_1us, spin_5us, spin_20us, spin_100us, spin_1ms, spin_5ms, outer,
};

static inline double now(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return v[n / 2];
}

/* Print spin iterations per microsecond on this CPU: the median of 5 passes. */
static int calibrate(void)
{
	double rate[5];
	unsigned long n = CAL_NS / 1000 * 1000; /* guess: 1000 iterations a us */

	for (int i = 0; i < 5; i++) {
		double t0 = now(CLOCK_THREAD_CPUTIME_ID);

		sink = spin(n, sink);
		rate[i] = n * 1000.0 / (now(CLOCK_THREAD_CPUTIME_ID) - t0);
		n = rate[i] * (CAL_NS / 1000);
	}
	printf("%.0f\n", median(rate, 5));
	return 0;
}

/*
 * Untraced truth: every routine timed in batches of about 1 ms of work on the
 * thread's CPU clock and on CLOCK_MONOTONIC at once, batches interleaved over
 * the routines; per-call time is the median batch over the batch size.
 * outer's self time is its own per-call time minus two calls of spin_5us.
 */
static int truth(void)
{
	static double cpu[NR][TRUTH_REPS], wall[NR][TRUTH_REPS];
	double c[NR], w[NR], cm[NR] = {0}, wm[NR] = {0};

	for (int r = 0; r < NR; r++) /* warm up */
		fn[r]();
	for (int k = 0; k < TRUTH_REPS; k++) {
		for (int r = 0; r < NR; r++) {
			long b = rt[r].ns >= TRUTH_BATCH_NS ? 1 : TRUTH_BATCH_NS / rt[r].ns;
			double c0 = now(CLOCK_THREAD_CPUTIME_ID), w0 = now(CLOCK_MONOTONIC);

			for (long i = 0; i < b; i++)
				fn[r]();
			wall[r][k] = (now(CLOCK_MONOTONIC) - w0) / b;
			cpu[r][k] = (now(CLOCK_THREAD_CPUTIME_ID) - c0) / b;
			cm[r] += cpu[r][k] / TRUTH_REPS;
			wm[r] += wall[r][k] / TRUTH_REPS;
		}
	}
	for (int r = 0; r < NR; r++) {
		c[r] = median(cpu[r], TRUTH_REPS);
		w[r] = median(wall[r], TRUTH_REPS);
	}
	c[R_OUTER] -= 2 * c[R_5US];
	w[R_OUTER] -= 2 * w[R_5US];
	cm[R_OUTER] -= 2 * cm[R_5US];
	wm[R_OUTER] -= 2 * wm[R_5US];
	/*
	 * The means beside the medians: a traced run's time is a sum over all
	 * its calls, batches that were preempted (the wall clock) or disturbed
	 * included; the paired measure compares it with the mean.
	 */
	printf("# routine calls cpu_ns_per_call wall_ns_per_call cpu_mean_ns wall_mean_ns\n");
	for (int r = 0; r < NR; r++)
		printf("%s %ld %.1f %.1f %.1f %.1f\n", rt[r].name,
		       rt[r].calls + (r == R_5US ? 2 * rt[R_OUTER].calls : 0), c[r], w[r], cm[r],
		       wm[r]);
	return 0;
}

/*
 * The workload: every routine's calls, scaled by pct/100, spread over ROUNDS
 * rounds. Prints the calls and a checksum; on stderr the process's CPU time
 * and main's elapsed time (the untraced total, when run untraced).
 */
static int run(long pct, double w0)
{
	long calls = 0;

	for (int k = 0; k < ROUNDS; k++)
		for (int r = 0; r < NR; r++) {
			/* at least one call a round */
			long n = (rt[r].calls * pct + 100 * ROUNDS - 1) / (100 * ROUNDS);

			for (long i = 0; i < n; i++)
				fn[r]();
			calls += n * (r == R_OUTER ? 3 : 1);
		}
	printf("calls %ld  checksum %016lx\n", calls, sink);
	fprintf(stderr, "process cpu_s %.6f main wall_s %.6f\n",
		now(CLOCK_PROCESS_CPUTIME_ID) / 1e9, (now(CLOCK_MONOTONIC) - w0) / 1e9);
	return 0;
}

/* ACCURACY_IDLE_THREAD=1: a second thread that only waits (the program is no longer
 * single-threaded). */
static void *idle_thread(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

int main(int argc, char **argv)
{
	double w0 = now(CLOCK_MONOTONIC);
	unsigned long iters_per_us; /* spin iterations a microsecond, from calibrate */
	long pct = argc > 3 ? strtol(argv[3], NULL, 10) : 100;

	if (argc > 1 && !strcmp(argv[1], "calibrate"))
		return calibrate();
	if (argc < 3 || (strcmp(argv[1], "truth") && strcmp(argv[1], "run")) || pct <= 0) {
		fprintf(stderr, "usage: accuracy calibrate | truth ITERS_PER_US | run ITERS_PER_US "
				"[PERCENT]\n");
		return 2;
	}
	iters_per_us = strtoul(argv[2], NULL, 10);
	if (!iters_per_us)
		iters_per_us = 1;
	for (int r = 0; r < NR; r++)
		iters[r] = (rt[r].ns * iters_per_us + 500) / 1000;
	if (getenv("ACCURACY_IDLE_THREAD") && !strcmp(argv[1], "run")) {
		pthread_t t;

		if (pthread_create(&t, NULL, idle_thread, NULL))
			return 2;
	}
	return !strcmp(argv[1], "truth") ? truth() : run(pct, w0);
}
