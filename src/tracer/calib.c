// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * calib.c - measure the per-stop overhead (FTN4TRA's f1 and f2) by timing an
 * empty routine, called from a driver loop, through the real tracer.
 *
 * The calibration child is fortstat's own executable, exec'ed with
 * FORTSTAT_CALIBRATE_CHILD set: a constructor runs the driver loop once
 * untraced (its own cost, W) and once through the patched routines, then
 * exits before main. With n calls: the empty routine's self time is n*f1
 * (plus nothing: it does no work), and the driver's is W + n*f2. For a Go
 * program's probes, a pair shaped as Go's code is measured too (calib_go).
 */
#include "fortstat/calib.h"
#include "fortstat/books.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fortstat/account.h"
#include "fortstat/evabi.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"

#define CALIB_ENV "FORTSTAT_CALIBRATE_CHILD"
#define CALIB_CALLS 1000 /* calls per batch, measured */
#define CALIB_WARM 300	 /* calls per batch before, through other patched routines */
/*
 * In-process probes: a batch's events fit in the ring (no stop among the
 * calls measured), and the calls before go once round it, so that none of
 * the ring's pages is touched first by a measured call: a page's first
 * write faults (about a microsecond), which 1,000 calls measured once
 * spread as 8 ns an event, 60 % more than an event costs.
 */
#define CALIB_PROBE_CALLS 5000
#define CALIB_PROBE_WARM (PROBE_RING_N / 2 + 2000)
#define CALIB_MIN_BATCHES 3
#define CALIB_BUDGET_S 0.09 /* stop adding batches past this (each takes ~30 ms) */

/*
 * A driver that calls an empty routine n times. Exported so that the
 * routines have symbols; noipa keeps the calls real. Each starts with a
 * 5-byte nop so that it gets the same entry patch as most routines of
 * programs (the jmp to a stub, see insn.h).
 */
#define CALIB_PROLOGUE __asm__ volatile(".byte 0x0f, 0x1f, 0x44, 0x00, 0x00")
#define CALIB_PAIR(callee, driver)                                                                 \
	void callee(void);                                                                         \
	void driver(int n);                                                                        \
	__attribute__((noinline, noipa)) void callee(void)                                         \
	{                                                                                          \
		CALIB_PROLOGUE;                                                                    \
	}                                                                                          \
	__attribute__((noinline, noipa)) void driver(int n)                                        \
	{                                                                                          \
		CALIB_PROLOGUE;                                                                    \
		for (int i = 0; i < n; i++)                                                        \
			callee();                                                                  \
	}

/* The pair measured. */
CALIB_PAIR(fortstat_calib_empty, fortstat_calib_driver)

/*
 * The same code again, patched but not measured: the first stops of a new
 * child cost more and vary more (cold caches and kernel paths); batches of
 * 500 calls measured from the start spread by +-10%, after these calls by
 * about +-2%.
 */
CALIB_PAIR(fortstat_calib_warm_empty, fortstat_calib_warm)

/*
 * In-process probes: the same again, its callee counted from the start
 * (RT_COUNTED): what a call through the count path costs its caller.
 */
CALIB_PAIR(fortstat_calib_counted, fortstat_calib_count_driver)

/* The same code, never patched: what the driver costs without fortstat. */
CALIB_PAIR(fortstat_calib_empty_raw, fortstat_calib_driver_raw)

/*
 * In-process probes: the flat loop is a probe's best case (one stub, the
 * trampoline's call always to the same place). A program's calls go round
 * many routines: on sqlite3, sorted by the routines its drains saw, a timed
 * call cost 13 ns more than the flat loop's, as did a fixture calling 64
 * leaves in a random order (8 leaves: none). So the calls are measured
 * again going round CALIB_ROUND empty callees, each of its own stub, picked
 * by a fixed pseudo-random sequence through a table: timed (round_*), their
 * count path (count_*), and never patched (raw_*, the loop's own cost
 * with the same table calls and their mispredictions).
 */
#define CALIB_ROUND 64
#define CALIB_ROUND_WARM 2000 /* calls before, through the same stubs (cold code) */
#define CALIB_CALLEE(name)                                                                         \
	void name(void);                                                                           \
	__attribute__((noinline, noipa)) void name(void)                                           \
	{                                                                                          \
		CALIB_PROLOGUE;                                                                    \
	}
#define CALIB_CALLEES8(p, a)                                                                       \
	CALIB_CALLEE(p##a##0)                                                                      \
	CALIB_CALLEE(p##a##1)                                                                      \
	CALIB_CALLEE(p##a##2)                                                                      \
	CALIB_CALLEE(p##a##3)                                                                      \
	CALIB_CALLEE(p##a##4)                                                                      \
	CALIB_CALLEE(p##a##5)                                                                      \
	CALIB_CALLEE(p##a##6)                                                                      \
	CALIB_CALLEE(p##a##7)
#define CALIB_CALLEES(p)                                                                           \
	CALIB_CALLEES8(p, 0)                                                                       \
	CALIB_CALLEES8(p, 1)                                                                       \
	CALIB_CALLEES8(p, 2)                                                                       \
	CALIB_CALLEES8(p, 3)                                                                       \
	CALIB_CALLEES8(p, 4)                                                                       \
	CALIB_CALLEES8(p, 5)                                                                       \
	CALIB_CALLEES8(p, 6)                                                                       \
	CALIB_CALLEES8(p, 7)
#define CALIB_TAB8(p, a) p##a##0, p##a##1, p##a##2, p##a##3, p##a##4, p##a##5, p##a##6, p##a##7,
/* clang-format folds the list differently at each pass */
/* clang-format off */
#define CALIB_TAB(p)                                                                               \
	{                                                                                          \
		CALIB_TAB8(p, 0) CALIB_TAB8(p, 1) CALIB_TAB8(p, 2) CALIB_TAB8(p, 3)                \
		CALIB_TAB8(p, 4) CALIB_TAB8(p, 5) CALIB_TAB8(p, 6) CALIB_TAB8(p, 7)                \
	}
/* clang-format on */
/* The driver: n calls of tab's callees, in the same order every time. */
#define CALIB_ROUND_DRIVER(driver, tab)                                                            \
	void driver(int n);                                                                        \
	__attribute__((noinline, noipa)) void driver(int n)                                        \
	{                                                                                          \
		unsigned r = 12345;                                                                \
		CALIB_PROLOGUE;                                                                    \
		for (int i = 0; i < n; i++) {                                                      \
			r = r * 1103515245u + 12345u;                                              \
			tab[(r >> 16) % CALIB_ROUND]();                                            \
		}                                                                                  \
	}
CALIB_CALLEES(fortstat_calib_round_)
CALIB_CALLEES(fortstat_calib_rcount_)
CALIB_CALLEES(fortstat_calib_rraw_)
static void (*const round_tab[CALIB_ROUND])(void) = CALIB_TAB(fortstat_calib_round_);
static void (*const rcount_tab[CALIB_ROUND])(void) = CALIB_TAB(fortstat_calib_rcount_);
static void (*const rraw_tab[CALIB_ROUND])(void) = CALIB_TAB(fortstat_calib_rraw_);
CALIB_ROUND_DRIVER(fortstat_calib_round_driver, round_tab)
CALIB_ROUND_DRIVER(fortstat_calib_round_warm, round_tab)
CALIB_ROUND_DRIVER(fortstat_calib_rcount_driver, rcount_tab)
CALIB_ROUND_DRIVER(fortstat_calib_rcount_warm, rcount_tab)
CALIB_ROUND_DRIVER(fortstat_calib_rraw_driver, rraw_tab)

/*
 * A Go program's probes (no hook; an exit probe over each routine's
 * epilogue, golang.c) are measured on pairs shaped as Go's code, R14
 * holding a goroutine whose stack bounds hold every SP (only g.stack.hi is
 * read: the depth). The callee: a 5-byte entry, then an epilogue and ret
 * that a jmp covers, int3 padding after; the driver keeps RBX (callee-saved
 * in C) and ends as the callee does; go_call sets R14 around the driver.
 */
uint64_t fortstat_calib_fake_g[4] = {0, 0x7ffffffff000ull, 0, 0};
#define CALIB_GO_PAIR(callee, driver)                                                              \
	void callee(void);                                                                         \
	void driver(int n);                                                                        \
	__asm__(".pushsection .text\n.globl " #callee "\n.type " #callee ",@function\n" #callee    \
		":\n"                                                                              \
		".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"                                             \
		"add $0, %rsp\nret\n.size " #callee ", .-" #callee "\n"                            \
		".byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n"                           \
		".globl " #driver "\n.type " #driver ",@function\n" #driver ":\n"                  \
		".byte 0x0f, 0x1f, 0x44, 0x00, 0x00\n"                                             \
		"push %rbx\nmov %edi, %ebx\n"                                                      \
		"1: test %ebx, %ebx\njz 2f\ncall " #callee "\ndec %ebx\njmp 1b\n"                  \
		"2: pop %rbx\nadd $0, %rsp\nret\n.size " #driver ", .-" #driver "\n"               \
		".byte 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc\n.popsection\n")

/* go_call(n, driver): driver(n) with R14 the goroutine, as Go calls (R14 kept for C) */
void fortstat_calib_go_call(int n, void (*driver)(int));
__asm__(".pushsection .text\n.globl fortstat_calib_go_call\n"
	".type fortstat_calib_go_call,@function\n"
	"fortstat_calib_go_call:\npush %r14\nlea fortstat_calib_fake_g(%rip), %r14\n"
	"call *%rsi\npop %r14\nret\n.size fortstat_calib_go_call, .-fortstat_calib_go_call\n"
	".popsection\n");

CALIB_GO_PAIR(fortstat_calib_go_empty, fortstat_calib_go_driver);
CALIB_GO_PAIR(fortstat_calib_go_warm_empty, fortstat_calib_go_warm);
CALIB_GO_PAIR(fortstat_calib_go_empty_raw, fortstat_calib_go_driver_raw);

static uint64_t now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The raw driver's loop on clock id, less what reading the clock adds to
 * an interval (two reads back to back): the least of three. The thread's
 * CPU clock is a system call: 3.5 us of 11 were once the reads', and f2
 * came out 0.7 ns short a call.
 */
static uint64_t raw_loop_ns(clockid_t id, int n, bool go, bool round)
{
	uint64_t best = UINT64_MAX;

	for (int k = 0; k < 3; k++) {
		uint64_t a = now_ns(id), b = now_ns(id), c, d;

		if (go)
			fortstat_calib_go_call(n, fortstat_calib_go_driver_raw);
		else if (round)
			fortstat_calib_rraw_driver(n);
		else
			fortstat_calib_driver_raw(n);
		c = now_ns(id);
		d = c - b > b - a ? (c - b) - (b - a) : 0;
		if (d < best)
			best = d;
	}
	return best;
}

/* In the calibration child, before main: run the loops and report W. */
__attribute__((constructor)) static void calib_child(void)
{
	const char *env = getenv(CALIB_ENV);
	uint64_t w[4] = {0, 0, 0, 0}; /* the flat loop's cpu, wall; the round one's */
	int n, fd, warm, go = 0, round = 0;

	if (!env || sscanf(env, "%d,%d,%d,%d,%d", &n, &fd, &warm, &go, &round) < 3)
		return;
	/* warm up caches and the page tables */
	if (go)
		fortstat_calib_go_call(n, fortstat_calib_go_driver_raw);
	else
		fortstat_calib_driver_raw(n);
	w[0] = raw_loop_ns(CLOCK_THREAD_CPUTIME_ID, n, go, false);
	w[1] = raw_loop_ns(CLOCK_MONOTONIC, n, go, false);
	/*
	 * A loop of a few microseconds runs on the CPU throughout: its CPU
	 * time is its elapsed time. The CPU clock's read still adds some
	 * (2.8 us more than the wall's 4.8 once): the wall's stands for both.
	 */
	if (w[0] > w[1])
		w[0] = w[1];
	if (round) {
		fortstat_calib_rraw_driver(n);
		w[2] = raw_loop_ns(CLOCK_THREAD_CPUTIME_ID, n, false, true);
		w[3] = raw_loop_ns(CLOCK_MONOTONIC, n, false, true);
		if (w[2] > w[3])
			w[2] = w[3];
	}
	if (write(fd, w, sizeof(w)) != (ssize_t)sizeof(w))
		_exit(1);
	if (go) { /* Go's probes: f1, f2 alone */
		fortstat_calib_go_call(warm, fortstat_calib_go_warm);
		fortstat_calib_go_call(n, fortstat_calib_go_driver);
		_exit(0);
	}
	fortstat_calib_warm(warm);
	fortstat_calib_driver(n);
	fortstat_calib_count_driver(n); /* untimed but with the probes */
	if (round) {
		/*
		 * A stop (its SIGURG ignored) drains the ring before the warm
		 * calls and before the measured ones: none stops among them.
		 */
		raise(SIGURG);
		fortstat_calib_round_warm(CALIB_ROUND_WARM);
		fortstat_calib_rcount_warm(CALIB_ROUND_WARM);
		raise(SIGURG);
		fortstat_calib_round_driver(n);
		fortstat_calib_rcount_driver(n);
	}
	_exit(0);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/*
 * The median of v[0..n), v left as it is: the resid below pairs each
 * batch's figures (f1, f2 and the same stops' cost, batch by batch), which
 * sorting each row in place had shuffled apart.
 */
static double median(const double *v, size_t n)
{
	double w[CALIB_MAX_BATCHES];

	if (n > CALIB_MAX_BATCHES)
		n = CALIB_MAX_BATCHES;
	if (!n)
		return 0;
	memcpy(w, v, n * sizeof(*w));
	qsort(w, n, sizeof(*w), cmp_double);
	return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

/* acct_spread of v[0..n), v left as it is (the resid is taken from it after). */
static double spread_of(const double *v, size_t n)
{
	double w[CALIB_MAX_BATCHES];

	if (n > CALIB_MAX_BATCHES)
		n = CALIB_MAX_BATCHES;
	memcpy(w, v, n * sizeof(*w));
	return acct_spread(w, n);
}

static long find_routine(const struct symtab *st, const char *name)
{
	for (size_t i = 0; i < st->n; i++)
		for (size_t k = 0; k < st->r[i].n_names; k++)
			if (!strcmp(st->r[i].names[k], name))
				return (long)i;
	return -1;
}

/* The round calls' routines in the symbol table (calib_round_find). */
struct round_ix {
	long callee[CALIB_ROUND], counted[CALIB_ROUND];
	long driver, warm, count_driver, count_warm;
};

/*
 * The round calls' routines found and selected (the counted ones to be
 * counted from the start): 0, or -ENOENT when one is missing.
 */
static int calib_round_find(struct symtab *st, struct round_ix *rx)
{
	static const char *const pre[2] = {"fortstat_calib_round_", "fortstat_calib_rcount_"};
	int found = 0;

	for (int k = 0; k < CALIB_ROUND; k++)
		rx->callee[k] = rx->counted[k] = -1;
	rx->driver = find_routine(st, "fortstat_calib_round_driver");
	rx->warm = find_routine(st, "fortstat_calib_round_warm");
	rx->count_driver = find_routine(st, "fortstat_calib_rcount_driver");
	rx->count_warm = find_routine(st, "fortstat_calib_rcount_warm");
	if (rx->driver < 0 || rx->warm < 0 || rx->count_driver < 0 || rx->count_warm < 0)
		return -ENOENT;
	/* the callees are named PREFIX and two octal digits */
	for (size_t i = 0; i < st->n; i++)
		for (size_t m = 0; m < st->r[i].n_names; m++)
			for (int c = 0; c < 2; c++) {
				const char *nm = st->r[i].names[m];
				size_t l = strlen(pre[c]);
				long *slot = c ? rx->counted : rx->callee;
				int k;

				if (strncmp(nm, pre[c], l) || strlen(nm) != l + 2 || nm[l] < '0' ||
				    nm[l] > '7' || nm[l + 1] < '0' || nm[l + 1] > '7')
					continue;
				k = (nm[l] - '0') * 8 + (nm[l + 1] - '0');
				if (slot[k] < 0)
					found++;
				slot[k] = (long)i;
			}
	if (found != 2 * CALIB_ROUND)
		return -ENOENT;
	for (int k = 0; k < CALIB_ROUND; k++) {
		st->r[rx->callee[k]].flags |= RT_SELECTED;
		st->r[rx->counted[k]].flags |= RT_SELECTED | RT_COUNTED;
	}
	st->r[rx->driver].flags |= RT_SELECTED;
	st->r[rx->warm].flags |= RT_SELECTED;
	st->r[rx->count_driver].flags |= RT_SELECTED;
	st->r[rx->count_warm].flags |= RT_SELECTED;
	return 0;
}

/* Calls a batch measures, and calls before them: in-process probes time many more. */
static int calib_calls(const struct trace_opts *o, int *warm)
{
	bool probes = o->probes && !o->probe_stops;

	*warm = probes ? CALIB_PROBE_WARM : CALIB_WARM;
	return probes ? CALIB_PROBE_CALLS : CALIB_CALLS;
}

/* f1, f2 from one accounting state; w is the driver's untraced cost on its clock. */
static int calib_factors(const struct acct *acct, long ie, long id, uint64_t w, int calls,
			 double *f1, double *f2)
{
	const struct acct_routine *r = acct_routines(acct);

	if (r[ie].calls != (uint64_t)calls || r[id].calls != 1)
		return -EIO;
	*f1 = (double)r[ie].self / calls;
	*f2 = ((double)r[id].self - (double)w) / calls;
	if (*f2 < 0)
		*f2 = 0;
	return 0;
}

/*
 * The count path's cost a call, from the count driver's self time (one
 * call: its loop W, the n counted calls, and its own probe's f1).
 */
static void count_factor(const struct acct *acct, long icd, uint64_t w, int calls, double f1,
			 double *c)
{
	const struct acct_routine *r = acct_routines(acct);
	double v = ((double)r[icd].self - (double)w - f1) / calls;

	*c = r[icd].calls == 1 && v > 0 ? v : 0;
}

/*
 * The round calls' f1 (the callees' self time a call: the warm calls'
 * too, their stubs' cold code spread as a program's is), f2 (the driver's
 * self less the raw loop's, a call) and the count path's (the count
 * driver's self less the raw loop's and its own probe's f1, a call).
 */
static int round_factors(const struct acct *acct, const struct round_ix *rx, uint64_t w, int calls,
			 double *f1, double *f2, double *c)
{
	const struct acct_routine *r = acct_routines(acct);
	double self = 0;
	uint64_t n = 0;

	for (int k = 0; k < CALIB_ROUND; k++) {
		self += (double)r[rx->callee[k]].self;
		n += r[rx->callee[k]].calls;
	}
	if (n != (uint64_t)calls + CALIB_ROUND_WARM || r[rx->driver].calls != 1 ||
	    r[rx->count_driver].calls != 1)
		return -EIO;
	*f1 = self / (double)n;
	*f2 = ((double)r[rx->driver].self - (double)w) / calls;
	if (*f2 < 0)
		*f2 = 0;
	*c = ((double)r[rx->count_driver].self - (double)w - *f1) / calls;
	if (*c < 0)
		*c = 0;
	return 0;
}

/*
 * One batch: returns 0 and the batch's f1, f2 on the chosen clock (f[0],
 * f[1]) and on the other (f[2], f[3]); what its stops were measured to
 * cost a segment on each (f[4], f[5]; 0 when not measured); the count
 * path's (f[6], f[7]); with rx, the round calls' f1, f2 (f[8], f[9]; the
 * other clock's f[10], f[11]) and count path (f[12], f[13]).
 */
static int calib_batch(const struct trace_opts *o, struct symtab *st, long ie, long id, long icd,
		       const struct round_ix *rx, double f[CALIB_FIGURES])
{
	static char name[] = "fortstat-calibrate";
	char *argv[] = {name, NULL};
	struct trace_result res;
	struct books *books;
	uint64_t w[4] = {0, 0, 0, 0}; /* cpu, wall; the round loop's */
	int wall = o->clock == CLOCK_KIND_WALL;
	char env[64];
	int p[2], err, warm, calls = calib_calls(o, &warm);

	if (pipe(p) < 0)
		return -errno;
	snprintf(env, sizeof(env), "%d,%d,%d,%d,%d", calls, p[1], warm, o->go_calib ? 1 : 0,
		 rx ? 1 : 0);
	setenv(CALIB_ENV, env, 1);
	books = books_new(st->n, true, false);
	err = trace_run("/proc/self/exe", argv, st, books, NULL, NULL, o, NULL, &res);
	unsetenv(CALIB_ENV);
	close(p[1]);
	if (!err && (read(p[0], w, sizeof(w)) != (ssize_t)sizeof(w) || res.exit_status != 0))
		err = -EIO;
	close(p[0]);
	if (!err)
		err = calib_factors(books_acct(books, o->clock, false), ie, id, w[wall], calls,
				    &f[0], &f[1]);
	if (!err)
		err = calib_factors(
		    books_acct(books, !wall ? CLOCK_KIND_WALL : CLOCK_KIND_CPU, false), ie, id,
		    w[!wall], calls, &f[2], &f[3]);
	f[4] = wall ? res.seg_wall_ns : res.seg_cpu_ns;
	f[5] = wall ? res.seg_cpu_ns : res.seg_wall_ns;
	for (int k = 6; k < CALIB_FIGURES; k++)
		f[k] = 0;
	/* the driver's segments hold its loop too (w, the untraced loop, a call) */
	f[14] = res.seg_u_ns[1];
	f[15] = res.seg_u_ns[0] > (double)w[1] / calls ? res.seg_u_ns[0] - (double)w[1] / calls : 0;
	if (!err && icd >= 0) {
		count_factor(books_acct(books, o->clock, false), icd, w[wall], calls, f[0], &f[6]);
		count_factor(books_acct(books, !wall ? CLOCK_KIND_WALL : CLOCK_KIND_CPU, false),
			     icd, w[!wall], calls, f[2], &f[7]);
	}
	if (!err && rx)
		err = round_factors(books_acct(books, o->clock, false), rx, w[2 + wall], calls,
				    &f[8], &f[9], &f[12]);
	if (!err && rx)
		err = round_factors(
		    books_acct(books, !wall ? CLOCK_KIND_WALL : CLOCK_KIND_CPU, false), rx,
		    w[2 + !wall], calls, &f[10], &f[11], &f[13]);
	books_free(books);
	return err;
}

/*
 * A Go program's probes: f1 and f2 (and their spreads) measured again on
 * the Go-shaped pair (CALIB_GO_PAIR), through Go's entry and exit probes
 * (o->go_calib: golang.c probes it as Go's code); the rest stays C's. Left
 * as C's when it fails (said with -v).
 */
static void calib_go(const struct trace_opts *o, struct calib *out)
{
	double f[4][CALIB_MAX_BATCHES], one[CALIB_FIGURES];
	struct trace_opts oc = *o;
	struct symtab st;
	long ie, id, iwe, iw;
	size_t b = 0;
	int verbose = fs_verbose, err = symtab_load("/proc/self/exe", &st);

	if (err)
		return;
	ie = find_routine(&st, "fortstat_calib_go_empty");
	id = find_routine(&st, "fortstat_calib_go_driver");
	iwe = find_routine(&st, "fortstat_calib_go_warm_empty");
	iw = find_routine(&st, "fortstat_calib_go_warm");
	if (ie < 0 || id < 0 || iwe < 0 || iw < 0) {
		symtab_free(&st);
		return;
	}
	for (size_t i = 0; i < st.n; i++)
		st.r[i].flags &= ~(unsigned)RT_SELECTED;
	st.r[ie].flags |= RT_SELECTED;
	st.r[id].flags |= RT_SELECTED;
	st.r[iwe].flags |= RT_SELECTED;
	st.r[iw].flags |= RT_SELECTED;
	oc.go_calib = true;
	fs_verbose = 0;
	while (b < CALIB_MIN_BATCHES + 2 && !(err = calib_batch(&oc, &st, ie, id, -1, NULL, one))) {
		for (int k = 0; k < 4; k++)
			f[k][b] = one[k];
		b++;
	}
	fs_verbose = verbose;
	symtab_free(&st);
	if (b < CALIB_MIN_BATCHES) {
		fs_info(1, "calibration of Go's probes failed (%s): C's stand",
			strerror(err < 0 ? -err : EIO));
		return;
	}
	fs_info(1,
		"calibration of Go's probes: f1 %.4f f2 %.4f us (C's %.4f %.4f), median of %zu "
		"batches",
		median(f[0], b) / 1e3, median(f[1], b) / 1e3, out->f1_ns / 1e3, out->f2_ns / 1e3,
		b);
	out->f1_ns = median(f[0], b);
	out->f2_ns = median(f[1], b);
	out->alt_f1_ns = median(f[2], b);
	out->alt_f2_ns = median(f[3], b);
	out->df1_ns = spread_of(f[0], b);
	out->df2_ns = spread_of(f[1], b);
	out->alt_df1_ns = spread_of(f[2], b);
	out->alt_df2_ns = spread_of(f[3], b);
}

void calib_summarise(const double f[CALIB_FIGURES][CALIB_MAX_BATCHES], size_t b, struct calib *out)
{
	if (b > CALIB_MAX_BATCHES)
		b = CALIB_MAX_BATCHES;
	out->batches = b;
	out->f1_ns = median(f[0], b);
	out->f2_ns = median(f[1], b);
	out->alt_f1_ns = median(f[2], b);
	out->alt_f2_ns = median(f[3], b);
	out->seg_ns = median(f[4], b);
	out->alt_seg_ns = median(f[5], b);
	out->count_ns = median(f[6], b);
	out->alt_count_ns = median(f[7], b);
	out->round_f1_ns = median(f[8], b);
	out->round_f2_ns = median(f[9], b);
	out->alt_round_f1_ns = median(f[10], b);
	out->alt_round_f2_ns = median(f[11], b);
	out->round_count_ns = median(f[12], b);
	out->alt_round_count_ns = median(f[13], b);
	out->u_callee_ns = median(f[14], b);
	out->u_caller_ns = median(f[15], b);
	out->df1_ns = spread_of(f[0], b);
	out->df2_ns = spread_of(f[1], b);
	out->alt_df1_ns = spread_of(f[2], b);
	out->alt_df2_ns = spread_of(f[3], b);
	/*
	 * The run weighs the flat and round figures by a guess (how many
	 * routines a window's calls went round, drain.c): a call's cost is
	 * known to half their gap at best, beside the batches' spread.
	 */
	if (out->round_f1_ns > 0 && out->round_f2_ns > 0) {
		out->df1_ns = hypot(out->df1_ns, (out->round_f1_ns - out->f1_ns) / 2);
		out->df2_ns = hypot(out->df2_ns, (out->round_f2_ns - out->f2_ns) / 2);
	}
	if (out->alt_round_f1_ns > 0 && out->alt_round_f2_ns > 0) {
		out->alt_df1_ns =
		    hypot(out->alt_df1_ns, (out->alt_round_f1_ns - out->alt_f1_ns) / 2);
		out->alt_df2_ns =
		    hypot(out->alt_df2_ns, (out->alt_round_f2_ns - out->alt_f2_ns) / 2);
	}
	/*
	 * What the run's measurement leaves out (the stub's own instructions,
	 * caches the stop disturbed): per batch, the mean of f1 and f2 less
	 * what the same stops were measured to cost; the median.
	 */
	if (out->seg_ns > 0 && out->alt_seg_ns > 0) {
		double u[2][CALIB_MAX_BATCHES];

		for (size_t i = 0; i < b; i++) {
			u[0][i] = (f[0][i] + f[1][i]) / 2 - f[4][i];
			u[1][i] = (f[2][i] + f[3][i]) / 2 - f[5][i];
		}
		out->resid_ns = median(u[0], b);
		out->alt_resid_ns = median(u[1], b);
		out->dresid_ns = spread_of(u[0], b);
		out->alt_dresid_ns = spread_of(u[1], b);
	}
}

int calib_run(const struct trace_opts *o, int parallel_runtime, struct calib *out)
{
	double f[CALIB_FIGURES][CALIB_MAX_BATCHES], one[CALIB_FIGURES];
	struct trace_opts oc = *o;
	struct symtab st;
	uint64_t t0 = now_ns(CLOCK_MONOTONIC);
	int verbose = fs_verbose, err;
	long ie, id, iwe, iw, icd = -1, ic = -1;
	struct round_ix rx;
	bool round = false;
	size_t b = 0;

	memset(out, 0, sizeof(*out));
	err = symtab_load("/proc/self/exe", &st);
	if (err)
		return err > -1000 ? err : -ENOEXEC;
	ie = find_routine(&st, "fortstat_calib_empty");
	id = find_routine(&st, "fortstat_calib_driver");
	iwe = find_routine(&st, "fortstat_calib_warm_empty");
	iw = find_routine(&st, "fortstat_calib_warm");
	if (ie < 0 || id < 0 || iwe < 0 || iw < 0) {
		symtab_free(&st);
		return -ENOENT;
	}
	for (size_t i = 0; i < st.n; i++)
		st.r[i].flags &= ~(unsigned)RT_SELECTED;
	st.r[ie].flags |= RT_SELECTED;
	st.r[id].flags |= RT_SELECTED;
	st.r[iwe].flags |= RT_SELECTED;
	st.r[iw].flags |= RT_SELECTED;
	if (o->probes && !o->probe_stops) {
		icd = find_routine(&st, "fortstat_calib_count_driver");
		ic = find_routine(&st, "fortstat_calib_counted");
		if (icd >= 0 && ic >= 0) {
			st.r[icd].flags |= RT_SELECTED;
			st.r[ic].flags |= RT_SELECTED | RT_COUNTED;
			round = calib_round_find(&st, &rx) == 0;
		} else {
			icd = -1;
		}
	}
	oc.sample_hz = 0; /* the stops' cost alone: a sample costs the program, not a stop */
	/* The same placement as the program will get. */
	if (o->pin == PIN_AUTO && parallel_runtime)
		oc.pin = PIN_NEVER;
	oc.count_only = false;
	oc.exitkill = true;    /* fortstat's own child */
	oc.on_snapshot = NULL; /* fortstat's own run: no live report */
	oc.on_progress = NULL;
	memset(oc.probe_count_ns, 0, sizeof(oc.probe_count_ns)); /* measured here */
	memset(oc.seg_resid_ns, 0, sizeof(oc.seg_resid_ns));	 /* likewise */
	oc.n_libs = 0; /* the calibration child's libraries are not the program's */
	fs_verbose = 0;
	while (b < CALIB_MAX_BATCHES) {
		err = calib_batch(&oc, &st, ie, id, icd, round ? &rx : NULL, one);
		if (err)
			break;
		for (int k = 0; k < CALIB_FIGURES; k++)
			f[k][b] = one[k];
		b++;
		if (b >= CALIB_MIN_BATCHES &&
		    (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9 > CALIB_BUDGET_S)
			break;
	}
	fs_verbose = verbose;
	for (size_t i = 0; i < b; i++)
		fs_info(3,
			"calibration batch %zu: f1 %.3f f2 %.3f us (other clock %.3f %.3f); "
			"stops measured %.3f us a segment (other clock %.3f); count path %.4f us "
			"(other clock %.4f); round calls f1 %.3f f2 %.3f count path %.4f us "
			"(other clock %.3f %.3f %.4f)",
			i, f[0][i] / 1e3, f[1][i] / 1e3, f[2][i] / 1e3, f[3][i] / 1e3,
			f[4][i] / 1e3, f[5][i] / 1e3, f[6][i] / 1e3, f[7][i] / 1e3, f[8][i] / 1e3,
			f[9][i] / 1e3, f[12][i] / 1e3, f[10][i] / 1e3, f[11][i] / 1e3,
			f[13][i] / 1e3);
	symtab_free(&st);
	if (b < CALIB_MIN_BATCHES)
		return err ? err : -EIO;
	calib_summarise((const double(*)[CALIB_MAX_BATCHES])f, b, out);
	out->calls = (size_t)calib_calls(o, &(int){0});
	if (o->go_program && o->probes && !o->probe_stops)
		calib_go(&oc, out);
	out->seconds = (double)(now_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	return 0;
}

int calib_use_measured(struct calib *cal, int wall, uint64_t n, double cpu_ns, double wall_ns)
{
	double k = wall ? wall_ns : cpu_ns, k2 = wall ? cpu_ns : wall_ns;
	int used = 0;

	if (n < CALIB_SEG_MIN || !cal->batches)
		return 0;
	if (k > 0 && cal->seg_ns > 0) {
		cal->f1_ns = cal->f2_ns = k + cal->resid_ns > 0 ? k + cal->resid_ns : 0;
		cal->df1_ns = cal->df2_ns = cal->dresid_ns;
		used = 1;
	}
	if (k2 > 0 && cal->alt_seg_ns > 0) {
		cal->alt_f1_ns = cal->alt_f2_ns =
		    k2 + cal->alt_resid_ns > 0 ? k2 + cal->alt_resid_ns : 0;
		cal->alt_df1_ns = cal->alt_df2_ns = cal->alt_dresid_ns;
	}
	return used;
}
