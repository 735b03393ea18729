// SPDX-License-Identifier: GPL-2.0-or-later
/* check_books.c - the books of both clocks, gross and net, on synthetic event streams (ns). */
#include <check.h>
#include <stdlib.h>

#include "fortstat/books.h"

#define T 7 /* the thread id */
#define CPU CLOCK_KIND_CPU
#define WALL CLOCK_KIND_WALL

static struct stamp at(acct_time_t cpu, acct_time_t wall)
{
	struct stamp s = {{0}};

	s.t[CPU] = cpu;
	s.t[WALL] = wall;
	return s;
}

static acct_time_t self_of(const struct books *b, enum clock_kind c, bool net, uint32_t r)
{
	return acct_routines(books_acct(b, c, net))[r].self;
}

/* Each clock's books get their own clock's times from the one stamp. */
START_TEST(test_two_clocks)
{
	struct books *b = books_new(2, true, false);
	struct stamp s;
	uint64_t ret = 0;

	s = at(100, 1000);
	books_enter(b, T, 0, 0x7000, 0x401000, &s);
	s = at(150, 1200);
	books_enter(b, T, 1, 0x6ff0, 0x401100, &s);
	s = at(180, 1500);
	ck_assert_int_eq(books_leave(b, T, &s, &ret), 0);
	ck_assert_uint_eq(ret, 0x401100);
	s = at(200, 2000);
	ck_assert_int_eq(books_leave(b, T, &s, &ret), 0);
	ck_assert_uint_eq(ret, 0x401000);
	ck_assert_uint_eq(self_of(b, CPU, false, 0), 70);
	ck_assert_uint_eq(self_of(b, CPU, false, 1), 30);
	ck_assert_uint_eq(self_of(b, WALL, false, 0), 700);
	ck_assert_uint_eq(self_of(b, WALL, false, 1), 300);
	ck_assert_ptr_null(books_acct(b, CPU, true));
	ck_assert_ptr_null(books_acct(b, WALL, true));
	ck_assert_ptr_ne(books_acct(b, CPU, false), books_acct(b, WALL, false));
	ck_assert_uint_eq(books_total_calls(b), 2);
	ck_assert(books_timed(b));
	books_free(b);
}
END_TEST

/* A stop's cost leaves the routine it fell in, on each clock by its own amount. */
START_TEST(test_net)
{
	struct books *b = books_new(2, true, true);
	struct stamp s;

	s = at(1000, 10000);
	books_enter(b, T, 0, 0x7000, 1, &s);
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){40, 400});
	s = at(1100, 11000);
	books_enter(b, T, 1, 0x6ff0, 2, &s); /* 0 ran 100/1000 gross, 60/600 net */
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){40, 400});
	s = at(1200, 12000);
	books_leave(b, T, &s, NULL); /* 1 ran 100/1000 gross, 60/600 net */
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){40, 400});
	s = at(1300, 13000);
	books_leave(b, T, &s, NULL);
	ck_assert_uint_eq(self_of(b, CPU, false, 0), 200);
	ck_assert_uint_eq(self_of(b, CPU, true, 0), 120);
	ck_assert_uint_eq(self_of(b, CPU, true, 1), 60);
	ck_assert_uint_eq(self_of(b, WALL, false, 1), 1000);
	ck_assert_uint_eq(self_of(b, WALL, true, 0), 1200);
	ck_assert_uint_eq(self_of(b, WALL, true, 1), 600);
	books_free(b);
}
END_TEST

/* Net times never go backwards, whatever a stop is said to have cost. */
START_TEST(test_net_monotonic)
{
	struct books *b = books_new(1, true, true);
	struct stamp s;

	s = at(1000, 1000);
	books_enter(b, T, 0, 0x7000, 1, &s);
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){5000, 5000});
	s = at(1100, 1100);
	books_leave(b, T, &s, NULL);
	ck_assert_uint_eq(self_of(b, CPU, true, 0), 0);
	ck_assert_uint_eq(self_of(b, WALL, true, 0), 0);
	/* a negative cost is no cost */
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){-5000, -5000});
	s = at(9000, 9000);
	books_enter(b, T, 0, 0x7000, 1, &s);
	s = at(9100, 9100);
	books_leave(b, T, &s, NULL);
	ck_assert_uint_eq(self_of(b, CPU, true, 0), 100);
	books_free(b);
}
END_TEST

/* Threads keep their own stops' cost. */
START_TEST(test_net_threads)
{
	struct books *b = books_new(1, true, true);
	struct stamp s;

	s = at(0, 0);
	books_enter(b, 1, 0, 0x7000, 1, &s);
	books_enter(b, 2, 0, 0x8000, 1, &s);
	books_stop_cost(b, 1, (double[FS_N_CLOCKS]){30, 30});
	s = at(100, 100);
	books_leave(b, 1, &s, NULL);
	books_leave(b, 2, &s, NULL);
	ck_assert_uint_eq(self_of(b, CPU, true, 0), 70 + 100);
	ck_assert_uint_eq(self_of(b, CPU, false, 0), 200);
	books_free(b);
}
END_TEST

/*
 * All the overhead taken off the clocks: a stop at the root (the untimed
 * code that calls the routines) counts as one inside a routine does; CPU
 * summed over threads, wall the most one thread was delayed; none without
 * net books.
 */
START_TEST(test_overhead_all)
{
	struct books *b = books_new(1, true, true), *g = books_new(1, true, false);
	double o[FS_N_CLOCKS];
	struct stamp s;

	books_stop_cost(b, 1, (double[FS_N_CLOCKS]){25, 30}); /* at the root */
	s = at(100, 100);
	books_enter(b, 1, 0, 0x7000, 1, &s);
	books_stop_cost(b, 1, (double[FS_N_CLOCKS]){10, 12});
	books_stop_cost(b, 2, (double[FS_N_CLOCKS]){7, 50});
	s = at(200, 200);
	books_leave(b, 1, &s, NULL);
	books_overhead(b, o);
	ck_assert(o[CPU] == 25 + 10 + 7);
	ck_assert(o[WALL] == 50);
	/* of it, the routine's gross less net: only the stop inside it */
	ck_assert_uint_eq(self_of(b, CPU, false, 0) - self_of(b, CPU, true, 0), 10);
	books_stop_cost(g, 1, (double[FS_N_CLOCKS]){25, 30});
	books_overhead(g, o);
	ck_assert(o[CPU] == 0 && o[WALL] == 0);
	books_free(b);
	books_free(g);
}
END_TEST

/* Count-only books: one state of counts for either clock, no net, no times. */
START_TEST(test_count_only)
{
	struct books *b = books_new(3, false, true), *c;

	books_count(b, T, 2);
	books_count(b, T, 2);
	ck_assert(!books_timed(b));
	ck_assert_ptr_eq(books_acct(b, CPU, false), books_acct(b, WALL, false));
	ck_assert_ptr_null(books_acct(b, CPU, true));
	ck_assert_uint_eq(acct_routines(books_acct(b, WALL, false))[2].calls, 2);
	c = books_new_like(b, 5);
	ck_assert(!books_timed(c));
	ck_assert_uint_eq(books_n_routines(c), 5);
	books_free(c);
	books_free(b);
}
END_TEST

/* Like books: same kind; growing reaches every state. */
START_TEST(test_like_grow)
{
	struct books *b = books_new(1, true, true), *c = books_new_like(b, 2);
	struct stamp s = at(0, 0);

	ck_assert_ptr_nonnull(books_acct(c, WALL, true));
	books_grow(c, 4);
	books_enter(c, T, 3, 0x7000, 1, &s);
	s = at(10, 20);
	books_leave(c, T, &s, NULL);
	for (int k = 0; k < FS_N_CLOCKS; k++) {
		ck_assert_uint_eq(acct_n_routines(books_acct(c, (enum clock_kind)k, false)), 4);
		ck_assert_uint_eq(acct_n_routines(books_acct(c, (enum clock_kind)k, true)), 4);
	}
	ck_assert_uint_eq(self_of(c, WALL, true, 3), 20);
	books_free(c);
	books_free(b);
}
END_TEST

/* Frames, tail chains and the end: the wall books close at the end, the others at the last stamp.
 */
START_TEST(test_frames_finish)
{
	struct books *b = books_new(3, true, true);
	struct stamp s = at(10, 100);
	uint32_t r;
	uint64_t slot, ret;

	books_enter(b, T, 0, 0x7000, 0x1111, &s);
	s = at(20, 200);
	books_enter(b, T, 1, 0x6ff0, 0x2222, &s);
	s = at(30, 300);
	ck_assert_int_eq(books_chain(b, T, 2, &s), 0);
	ck_assert_int_eq(books_top(b, T, &r, &slot, &ret), 0);
	ck_assert_uint_eq(r, 2);
	ck_assert_uint_eq(slot, 0x6ff0);
	ck_assert_uint_eq(ret, 0x2222);
	s = at(40, 400);
	books_thread_exit(b, 99, &s); /* another thread: nothing of T's closes */
	ck_assert_int_eq(books_top(b, T, &r, NULL, NULL), 0);
	s = at(50, 500);
	books_count(b, T, 1);
	books_enter(b, T, 1, 0x6fe0, 0x3333, &s);
	books_finish(b, 900);
	ck_assert(acct_routines(books_acct(b, CPU, false))[0].incomplete);
	/* the CPU books close at T's last stamp (50), the wall's at 900 */
	ck_assert_uint_eq(acct_routines(books_acct(b, CPU, false))[1].self, 10);
	ck_assert_uint_eq(acct_routines(books_acct(b, WALL, false))[1].self, 100 + 400);
	ck_assert_uint_eq(acct_routines(books_acct(b, CPU, false))[1].calls, 3);
	books_free(b);
}
END_TEST

/* Feed events [from, to) of one stream: two threads, nesting, a chain, a count. */
static void feed(struct books *b, int from, int to)
{
	static const struct {
		char kind; /* e enter, l leave, c chain, n count, x thread exit */
		int tid;
		uint32_t r;
		acct_time_t cpu, wall;
	} ev[] = {
	    {'e', T, 0, 10, 100}, {'e', T, 1, 20, 200}, {'e', 8, 2, 5, 210},  {'n', T, 2, 0, 0},
	    {'c', T, 2, 30, 300}, {'l', 8, 0, 9, 320},	{'e', T, 1, 40, 400}, {'l', T, 0, 45, 450},
	    {'l', T, 0, 50, 500}, {'e', 8, 1, 12, 520}, {'x', 8, 0, 14, 540}, {'l', T, 0, 60, 600},
	};

	for (int i = from; i < to; i++) {
		struct stamp s = at(ev[i].cpu, ev[i].wall);

		switch (ev[i].kind) {
		case 'e':
			books_enter(b, ev[i].tid, ev[i].r, 0x7000 - 16 * (uint64_t)i,
				    0x1000 + (uint64_t)i, &s);
			break;
		case 'l':
			books_leave(b, ev[i].tid, &s, NULL);
			break;
		case 'c':
			books_chain(b, ev[i].tid, ev[i].r, &s);
			break;
		case 'n':
			books_count(b, ev[i].tid, ev[i].r);
			break;
		default:
			books_thread_exit(b, ev[i].tid, &s);
			break;
		}
	}
}

/* Two accounting states hold the same results: routines, arcs, contexts, threads. */
static void same_acct(const struct acct *x, const struct acct *y)
{
	size_t nx, ny;
	const struct acct_arc *ax = acct_arcs(x, &nx), *ay = acct_arcs(y, &ny);
	const struct acct_node *cx, *cy;

	ck_assert_uint_eq(acct_n_routines(x), acct_n_routines(y));
	for (size_t i = 0; i < acct_n_routines(x); i++) {
		const struct acct_routine *rx = &acct_routines(x)[i], *ry = &acct_routines(y)[i];

		ck_assert_uint_eq(rx->calls, ry->calls);
		ck_assert_uint_eq(rx->calls_made, ry->calls_made);
		ck_assert_uint_eq(rx->self, ry->self);
		ck_assert_uint_eq(rx->total, ry->total);
		ck_assert_int_eq(rx->incomplete, ry->incomplete);
	}
	ck_assert_uint_eq(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		ck_assert_uint_eq(ax[i].calls, ay[i].calls);
		ck_assert_uint_eq(ax[i].time, ay[i].time);
		ck_assert_uint_eq(ax[i].self, ay[i].self);
	}
	cx = acct_nodes(x, &nx);
	cy = acct_nodes(y, &ny);
	ck_assert_uint_eq(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		ck_assert_uint_eq(cx[i].calls, cy[i].calls);
		ck_assert_uint_eq(cx[i].self, cy[i].self);
	}
	ck_assert_uint_eq(acct_n_threads(x), acct_n_threads(y));
	for (size_t i = 0; i < acct_n_threads(x); i++) {
		struct acct_thread_info tx, ty;

		acct_thread(x, i, &tx);
		acct_thread(y, i, &ty);
		ck_assert_int_eq(tx.tid, ty.tid);
		ck_assert_uint_eq(tx.n_arcs, ty.n_arcs);
		ck_assert_uint_eq(tx.n_nodes, ty.n_nodes);
		for (size_t r = 0; r < acct_n_routines(x); r++) {
			ck_assert_uint_eq(tx.r[r].calls, ty.r[r].calls);
			ck_assert_uint_eq(tx.r[r].self, ty.r[r].self);
		}
	}
}

static void same_books(const struct books *x, const struct books *y)
{
	for (int k = 0; k < FS_N_CLOCKS; k++)
		for (int net = 0; net < 2; net++) {
			const struct acct *ax = books_acct(x, (enum clock_kind)k, net);
			const struct acct *ay = books_acct(y, (enum clock_kind)k, net);

			ck_assert_int_eq(!ax, !ay);
			if (ax)
				same_acct(ax, ay);
		}
}

/* a and b alike now, in their overhead and once finished at wall + 100; both freed */
static void same_to_the_end(struct books *a, struct books *b, acct_time_t wall)
{
	double oa[FS_N_CLOCKS], ob[FS_N_CLOCKS];

	same_books(a, b);
	books_overhead(a, oa);
	books_overhead(b, ob);
	ck_assert_double_eq(oa[CPU], ob[CPU]);
	ck_assert_double_eq(oa[WALL], ob[WALL]);
	books_finish(a, wall + 100);
	books_finish(b, wall + 100);
	same_books(a, b);
	books_free(a);
	books_free(b);
}

/*
 * A snapshot at every point of a stream is what finishing there would give,
 * and taking it changes nothing: the books fed on end as if it never was.
 */
START_TEST(test_snapshot)
{
	const double cost[FS_N_CLOCKS] = {1, 3};

	for (int cut = 0; cut <= 12; cut++) {
		struct books *b = books_new(3, true, true), *ref = books_new(3, true, true);
		struct books *snap, *ended = books_new(3, true, true);

		books_stop_cost(b, T, cost);
		books_stop_cost(ref, T, cost);
		books_stop_cost(ended, T, cost);
		feed(b, 0, cut);
		feed(ended, 0, cut);
		snap = books_snapshot(b, 1000);
		books_finish(ended, 1000);
		same_books(snap, ended);
		if (cut >= 2 &&
		    cut < 8) /* routine 0 of T still runs: INCOMPLETE as of the snapshot */
			ck_assert(acct_routines(books_acct(snap, CPU, false))[0].incomplete);
		/* the live books went on untouched */
		ck_assert(!acct_routines(books_acct(b, CPU, false))[0].incomplete || cut > 12);
		books_free(snap);
		feed(b, cut, 12);
		feed(ref, 0, 12);
		books_finish(b, 2000);
		books_finish(ref, 2000);
		same_books(b, ref);
		books_free(b);
		books_free(ref);
		books_free(ended);
	}
	/* count-only books: one state of counts */
	{
		struct books *b = books_new(3, false, false), *snap;

		books_count(b, T, 1);
		snap = books_snapshot(b, 5);
		books_count(b, T, 1);
		ck_assert_uint_eq(books_total_calls(snap), 1);
		ck_assert_uint_eq(books_total_calls(b), 2);
		ck_assert(!books_timed(snap));
		books_free(snap);
		books_free(b);
	}
}
END_TEST

/* A copy closed thread by thread at a later stamp: its running frames end there. */
START_TEST(test_dup_close_now)
{
	struct books *b = books_new(2, true, true), *c;
	struct stamp s = at(10, 100);

	books_enter(b, T, 0, 0x7000, 0x1111, &s);
	s = at(20, 200);
	books_enter(b, T, 1, 0x6ff0, 0x2222, &s);
	c = books_dup(b);
	s = at(70, 900); /* the thread's clocks at the snapshot, no stop since 20 */
	books_thread_exit(c, T, &s);
	books_finish(c, 900);
	ck_assert_uint_eq(acct_routines(books_acct(c, CPU, false))[1].self, 50);
	ck_assert_uint_eq(acct_routines(books_acct(c, WALL, false))[1].self, 700);
	ck_assert_uint_eq(acct_routines(books_acct(c, CPU, true))[1].self, 50);
	ck_assert(acct_routines(books_acct(c, CPU, false))[1].incomplete);
	ck_assert(acct_routines(books_acct(c, WALL, true))[0].incomplete);
	/* b still runs both frames */
	ck_assert_uint_eq(acct_routines(books_acct(b, CPU, false))[1].self, 0);
	ck_assert_int_eq(books_top(b, T, NULL, NULL, NULL), 0);
	s = at(80, 1000);
	ck_assert_int_eq(books_leave(b, T, &s, NULL), 0);
	ck_assert_uint_eq(acct_routines(books_acct(b, CPU, false))[1].self, 60);
	ck_assert(!acct_routines(books_acct(b, CPU, false))[1].incomplete);
	books_free(c);
	books_free(b);
}
END_TEST

/*
 * books_calls and books_self read one routine where it is up to date: the
 * only thread's results before the program's copy is made (each read must
 * not copy every routine), the program's with two threads.
 */
START_TEST(test_calls_self_uncopied)
{
	struct books *b = books_new(3, true, true);
	struct stamp s;

	for (int i = 0; i < 5; i++) {
		s = at(100 * i, 1000 * i);
		books_enter(b, T, 1, 0x7000, 1, &s);
		s = at(100 * i + 30, 1000 * i + 300);
		books_leave(b, T, &s, NULL);
	}
	/* nothing read the program's results yet: they lag behind the thread's */
	ck_assert_uint_eq(books_calls(b, 1), 5);
	ck_assert_uint_eq(books_calls(b, 0), 0);
	ck_assert_uint_eq(books_calls(b, 3), 0); /* out of range */
	ck_assert_uint_eq(books_self(b, CPU, false, 1), 150);
	ck_assert_uint_eq(books_self(b, WALL, false, 1), 1500);
	s = at(1000, 10000);
	books_enter(b, T, 1, 0x7000, 1, &s);
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){10, 100}); /* a stop inside it */
	s = at(1040, 10400);
	books_leave(b, T, &s, NULL);
	ck_assert_uint_eq(books_calls(b, 1), 6);
	ck_assert_uint_eq(books_self(b, CPU, false, 1), 190);
	ck_assert_uint_eq(books_self(b, CPU, true, 1), 180); /* less the stop's 10 */
	ck_assert_uint_eq(books_self(b, WALL, true, 1), 1800);
	/* the same as the whole lanes say */
	ck_assert_uint_eq(acct_routines(books_acct(b, CPU, false))[1].calls, 6);
	ck_assert_uint_eq(self_of(b, CPU, true, 1), 180);
	/* a second thread: the program's results are the sum */
	s = at(50, 500);
	books_enter(b, T + 1, 1, 0x9000, 1, &s);
	books_count_n(b, T + 1, 2, 7, true);
	s = at(70, 700);
	books_leave(b, T + 1, &s, NULL);
	ck_assert_uint_eq(books_calls(b, 1), 7);
	ck_assert_uint_eq(books_calls(b, 2), 7);
	ck_assert_uint_eq(books_self(b, CPU, false, 1), 210);
	ck_assert_uint_eq(books_self(b, WALL, false, 1), 2100);
	books_free(b);
}
END_TEST

/* retaddr.c's way: frames below sp closed; the top frame's slot then, or false: none. */
static bool unwind_top(struct books *b, int tid, uint64_t sp, const struct stamp *s, uint64_t *top)
{
	uint64_t slot;

	while (books_top(b, tid, NULL, &slot, NULL) == 0) {
		if (slot >= sp) {
			*top = slot;
			return true;
		}
		books_leave(b, tid, s, NULL);
	}
	return false;
}

/* An entry (a tail call when chained) and a return as entry_recorded and return_recorded take them.
 */
static void long_entry(struct books *b, int tid, uint32_t r, uint64_t slot, bool chained,
		       const struct stamp *s)
{
	uint64_t top;

	if (chained) {
		if (unwind_top(b, tid, slot, s, &top) && top == slot)
			books_chain(b, tid, r, s);
		else
			books_count(b, tid, r);
		return;
	}
	unwind_top(b, tid, slot + 1, s, &top);
	books_enter(b, tid, r, slot, 0x1000 + slot, s);
}

static void long_return(struct books *b, int tid, uint64_t slot, const struct stamp *s)
{
	uint64_t top;

	if (unwind_top(b, tid, slot, s, &top) && top == slot)
		books_leave(b, tid, s, NULL);
}

/*
 * The probe's events in one call each (books_probe_enter, books_probe_leave,
 * the long way when they say so) give exactly the books the long way gives:
 * a random stream of two threads' entries, tail calls and returns, their
 * slots at, above and below the top frame's (frames left by longjmp), a
 * routine out of range, clocks that stall, and costs that catch the net
 * clocks up (their floor).
 */
START_TEST(test_probe_events)
{
	static const double cost[FS_N_CLOCKS] = {7, 11};
	struct books *x = books_new(6, true, true), *y = books_new(6, true, true);
	uint64_t seed = 12345;
	acct_time_t cpu[2] = {1000, 1000}, wall = 5000;
	int depth[2] = {0, 0};
	int fast = 0;
	struct stamp s0 = at(10, 10);

	/* a thread whose first event is of a routine out of range: none made */
	books_stop_cost(x, 300, cost);
	long_entry(x, 300, 6, 0x9000, false, &s0);
	ck_assert(books_probe_enter(y, 300, 6, 0x9000, 0x1000, false, &s0, cost));
	for (int i = 0; i < 20000; i++) {
		uint64_t rnd, slot;
		int k, tid, d;
		uint32_t r;
		struct stamp s;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		rnd = seed >> 33;
		k = (int)(rnd & 1);
		tid = 100 + k;
		r = (uint32_t)((rnd >> 1) % 7); /* 6: out of range */
		cpu[k] += (rnd >> 4) % 4 ? (rnd >> 6) % 40 : 0;
		wall += (rnd >> 12) % 50;
		s = at(cpu[k], wall);
		d = depth[k] + (int)((rnd >> 18) % 5) - 2; /* the top's slot, or one near it */
		if (d < 0)
			d = 0;
		slot = 0x8000 - 16 * (uint64_t)d;
		switch ((rnd >> 21) % 8) {
		case 0:
		case 1:
		case 2: /* a call: its slot below the top's, usually */
			slot = 0x8000 - 16 * (uint64_t)(d + 1);
			books_stop_cost(x, tid, cost);
			long_entry(x, tid, r, slot, false, &s);
			if (books_probe_enter(y, tid, r, slot, 0x1000 + slot, false, &s, cost))
				fast++;
			else
				long_entry(y, tid, r, slot, false, &s);
			depth[k] = d + 1;
			break;
		case 3: /* a tail call */
			books_stop_cost(x, tid, cost);
			long_entry(x, tid, r, slot, true, &s);
			if (books_probe_enter(y, tid, r, slot, 0, true, &s, cost))
				fast++;
			else
				long_entry(y, tid, r, slot, true, &s);
			break;
		default: /* a return */
			books_stop_cost(x, tid, cost);
			long_return(x, tid, slot, &s);
			if (books_probe_leave(y, tid, slot, &s, cost))
				fast++;
			else
				long_return(y, tid, slot, &s);
			depth[k] = d > 0 ? d - 1 : 0;
			break;
		}
	}
	ck_assert_int_gt(fast, 10000); /* the usual case is the usual one */
	ck_assert_int_lt(fast, 20000); /* and the long way was taken too */
	same_to_the_end(x, y, wall);
}
END_TEST

/* A run of one thread's events into z (books_probe_run), the refused ones the long way. */
static size_t run_into(struct books *z, int tid, const struct acct_pev *ev, size_t n,
		       const double cost[3][FS_N_CLOCKS])
{
	size_t s = 0, i, refused = 0;

	while (s < n) {
		struct stamp st;

		i = s + books_probe_run(z, tid, ev + s, n - s, cost);
		if (i >= n)
			break;
		st = at(ev[i].t[0], ev[i].t[1]);
		if (ev[i].kind == ACCT_PEV_LEAVE)
			long_return(z, tid, ev[i].slot, &st);
		else
			long_entry(z, tid, ev[i].routine, ev[i].slot, ev[i].kind == ACCT_PEV_CHAIN,
				   &st);
		refused++;
		s = i + 1;
	}
	return refused;
}

/*
 * A drained ring's events in runs (books_probe_run, drain.c's way) give
 * exactly the books the long way gives, each event's count-path calls and
 * own cost charged before it: test_probe_events' random stream of two
 * threads, in runs of 1 to 40 events of one thread, a thread's first run
 * beginning with a routine out of range, on books of 4 lanes and of 2.
 */
START_TEST(test_probe_run)
{
	static const double cost[3][FS_N_CLOCKS] = {{3, 5}, {7, 11}, {13, 17}};
	bool net = _i == 0;
	struct books *x = books_new(6, true, net), *z = books_new(6, true, net);
	uint64_t seed = 987654321;
	acct_time_t cpu[2] = {1000, 1000}, wall = 5000;
	int depth[2] = {0, 0};
	struct acct_pev ev[40];
	size_t refused = 0, taken = 0;

	for (int i = 0; i < 20000;) {
		uint64_t rnd;
		int k, tid;
		size_t len, n = 0;

		seed = seed * 6364136223846793005ull + 1442695040888963407ull;
		rnd = seed >> 33;
		k = (int)(rnd & 1);
		tid = 100 + k;
		len = 1 + (rnd >> 1) % 40;
		for (; n < len; n++, i++) {
			struct acct_pev *e = &ev[n];
			struct stamp s;
			uint64_t slot;
			uint32_t r;
			int d;

			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			rnd = seed >> 33;
			r = i == 0 ? 6 : (uint32_t)((rnd >> 1) % 7); /* 6: out of range */
			cpu[k] += (rnd >> 4) % 4 ? (rnd >> 6) % 40 : 0;
			wall += (rnd >> 12) % 50;
			s = at(cpu[k], wall);
			d = depth[k] + (int)((rnd >> 18) % 5) - 2;
			if (d < 0)
				d = 0;
			slot = 0x8000 - 16 * (uint64_t)d;
			*e = (struct acct_pev){.t = {cpu[k], wall},
					       .routine = r,
					       .counted = (rnd >> 24) % 3 ? 0 : (rnd >> 26) % 9};
			/* the long way: the count path's calls, the event's cost, the event */
			books_stop_cost(x, tid,
					(double[FS_N_CLOCKS]){(double)e->counted * cost[0][CPU],
							      (double)e->counted * cost[0][WALL]});
			switch ((rnd >> 21) % 8) {
			case 0:
			case 1:
			case 2:
				slot = 0x8000 - 16 * (uint64_t)(d + 1);
				e->kind = ACCT_PEV_ENTER;
				e->ret = 0x1000 + slot;
				books_stop_cost(x, tid, cost[1]);
				long_entry(x, tid, r, slot, false, &s);
				depth[k] = d + 1;
				break;
			case 3:
				e->kind = ACCT_PEV_CHAIN;
				books_stop_cost(x, tid, cost[1]);
				long_entry(x, tid, r, slot, true, &s);
				break;
			default:
				e->kind = ACCT_PEV_LEAVE;
				books_stop_cost(x, tid, cost[2]);
				long_return(x, tid, slot, &s);
				depth[k] = d > 0 ? d - 1 : 0;
				break;
			}
			e->slot = slot;
		}
		refused += run_into(z, tid, ev, n, cost);
		taken += n;
	}
	ck_assert_uint_gt(refused, 100);       /* the long way was taken, */
	ck_assert_uint_lt(refused, taken / 2); /* and the usual case is the usual one */
	same_to_the_end(x, z, wall);
}
END_TEST

static Suite *books_suite(void)
{
	Suite *s = suite_create("books");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_two_clocks);
	tcase_add_test(tc, test_net);
	tcase_add_test(tc, test_net_monotonic);
	tcase_add_test(tc, test_net_threads);
	tcase_add_test(tc, test_overhead_all);
	tcase_add_test(tc, test_count_only);
	tcase_add_test(tc, test_like_grow);
	tcase_add_test(tc, test_frames_finish);
	tcase_add_test(tc, test_snapshot);
	tcase_add_test(tc, test_dup_close_now);
	tcase_add_test(tc, test_calls_self_uncopied);
	tcase_add_test(tc, test_probe_events);
	tcase_add_loop_test(tc, test_probe_run, 0, 2); /* net books, and gross only */
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(books_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
