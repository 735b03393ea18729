// SPDX-License-Identifier: GPL-2.0-or-later
/* check_account.c - the accounting core driven by synthetic event streams (times in ns). */
#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fortstat/account.h"
#include "fortstat/calib.h"

#define T 100 /* the thread id used by single-thread tests */

static void count_frame(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	(void)routine;
	(void)slot;
	(void)ret;
	++*(size_t *)arg;
}

/* Depth of thread tid's shadow stack, through acct_frames. */
static size_t acct_depth(const struct acct *a, int tid)
{
	size_t n = 0;

	acct_frames(a, tid, count_frame, &n);
	return n;
}

/* Pop the frames whose slot lies below sp, as the tracer does (longjmp); returns how many. */
static size_t acct_unwind_to(struct acct *a, int tid, uint64_t sp, acct_time_t t)
{
	uint64_t slot;
	size_t n = 0;

	while (acct_top(a, tid, NULL, &slot, NULL) == 0 && slot < sp &&
	       acct_leave(a, tid, t, NULL) == 0)
		n++;
	return n;
}

/* The arc caller -> callee, or NULL. */
static const struct acct_arc *find_arc(const struct acct *a, uint32_t caller, uint32_t callee)
{
	size_t n, i;
	const struct acct_arc *arcs = acct_arcs(a, &n);

	for (i = 0; i < n; i++)
		if (arcs[i].caller == caller && arcs[i].callee == callee)
			return &arcs[i];
	return NULL;
}

START_TEST(test_empty)
{
	struct acct *a = acct_new(3);
	uint64_t ret = 42;
	size_t n = 99;

	ck_assert_uint_eq(acct_n_routines(a), 3);
	ck_assert_int_eq(acct_leave(a, T, 10, &ret), -1);
	ck_assert_uint_eq(ret, 42);
	ck_assert_int_eq(acct_chain(a, T, 1, 10), -1);
	ck_assert_uint_eq(acct_unwind_to(a, T, 1000, 10), 0);
	ck_assert_uint_eq(acct_depth(a, T), 0);
	ck_assert_int_eq(acct_top(a, T, NULL, NULL, NULL), -1);
	acct_thread_exit(a, T, 10);
	acct_finish(a, 10, true);
	acct_arcs(a, &n);
	ck_assert_uint_eq(n, 0);
	ck_assert_uint_eq(acct_total_self(a), 0);
	ck_assert_uint_eq(acct_total_calls(a), 0);
	acct_free(a);
	acct_free(NULL);
}
END_TEST

/* main(0) -> a(1) -> b(2): self times by clock switching, inclusive totals. */
START_TEST(test_nesting)
{
	struct acct *a = acct_new(3);
	const struct acct_routine *r = acct_routines(a);
	uint64_t ret = 0;
	uint32_t top;
	uint64_t slot, tret;

	acct_enter(a, T, 0, 0x1000, 0xa0, 100);
	acct_enter(a, T, 1, 0x0ff0, 0xa1, 130);
	acct_enter(a, T, 2, 0x0fe0, 0xa2, 200);
	ck_assert_uint_eq(acct_depth(a, T), 3);
	ck_assert_int_eq(acct_top(a, T, &top, &slot, &tret), 0);
	ck_assert_uint_eq(top, 2);
	ck_assert_uint_eq(slot, 0x0fe0);
	ck_assert_uint_eq(tret, 0xa2);
	ck_assert_int_eq(acct_leave(a, T, 250, &ret), 0);
	ck_assert_uint_eq(ret, 0xa2);
	ck_assert_int_eq(acct_leave(a, T, 260, &ret), 0);
	ck_assert_uint_eq(ret, 0xa1);
	ck_assert_int_eq(acct_leave(a, T, 300, &ret), 0);
	ck_assert_uint_eq(ret, 0xa0);
	ck_assert_uint_eq(acct_depth(a, T), 0);

	r = acct_routines(a);
	ck_assert_uint_eq(r[0].self, 30 + 40);
	ck_assert_uint_eq(r[1].self, 70 + 10);
	ck_assert_uint_eq(r[2].self, 50);
	ck_assert_uint_eq(r[0].total, 200);
	ck_assert_uint_eq(r[1].total, 130);
	ck_assert_uint_eq(r[2].total, 50);
	ck_assert_uint_eq(r[0].calls, 1);
	ck_assert_uint_eq(r[1].calls, 1);
	ck_assert_uint_eq(r[2].calls, 1);
	ck_assert_uint_eq(r[0].calls_made, 1);
	ck_assert_uint_eq(r[1].calls_made, 1);
	ck_assert_uint_eq(r[2].calls_made, 0);
	ck_assert(!r[0].incomplete && !r[1].incomplete && !r[2].incomplete);
	ck_assert_uint_eq(acct_total_self(a), 200);
	ck_assert_uint_eq(acct_total_calls(a), 3);
	/* after the last return nothing more is credited */
	ck_assert_int_eq(acct_leave(a, T, 1000, &ret), -1);
	ck_assert_uint_eq(acct_total_self(a), 200);
	acct_free(a);
}
END_TEST

/* main -> r -> r -> r: calls 3, inclusive time counted once. */
START_TEST(test_recursion)
{
	struct acct *a = acct_new(2);
	const struct acct_routine *r = acct_routines(a);
	const struct acct_arc *arc;

	acct_enter(a, T, 0, 1000, 1, 0);
	acct_enter(a, T, 1, 990, 2, 10);
	acct_enter(a, T, 1, 980, 3, 20);
	acct_enter(a, T, 1, 970, 4, 30);
	ck_assert_int_eq(acct_leave(a, T, 40, NULL), 0);
	ck_assert_int_eq(acct_leave(a, T, 50, NULL), 0);
	ck_assert_int_eq(acct_leave(a, T, 60, NULL), 0);
	ck_assert_int_eq(acct_leave(a, T, 100, NULL), 0);
	r = acct_routines(a);
	ck_assert_uint_eq(r[1].calls, 3);
	ck_assert_uint_eq(r[1].calls_made, 2);
	ck_assert_uint_eq(r[1].self, 50);
	ck_assert_uint_eq(r[1].total, 50);
	ck_assert_uint_eq(r[0].self, 50);
	ck_assert_uint_eq(r[0].total, 100);
	arc = find_arc(a, 1, 1);
	ck_assert_ptr_nonnull(arc);
	ck_assert_uint_eq(arc->calls, 2);
	ck_assert_uint_eq(arc->time, 0); /* inner activations are not outermost */
	arc = find_arc(a, 0, 1);
	ck_assert_ptr_nonnull(arc);
	ck_assert_uint_eq(arc->calls, 1);
	ck_assert_uint_eq(arc->time, 50);
	/* a second, separate outermost activation adds again */
	acct_enter(a, T, 1, 990, 2, 200);
	acct_leave(a, T, 207, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[1].total, 57);
	acct_free(a);
}
END_TEST

/*
 * FORTSTAT's figure 1: A calls B calls C calls D; only A and D are timed, so
 * the tracer sees events for A and D only. B and C's time is A's.
 */
START_TEST(test_fortstat_abcd)
{
	enum { A, D };
	struct acct *a = acct_new(2);
	const struct acct_routine *r = acct_routines(a);
	int i;

	acct_enter(a, T, A, 5000, 1, 0);
	/* A runs 100, B and C (untimed) run, then D is called 5 times */
	for (i = 0; i < 5; i++) {
		acct_enter(a, T, D, 4000, 2, 1000 + i * 1000);
		acct_leave(a, T, 1000 + i * 1000 + 300, NULL);
	}
	acct_leave(a, T, 7000, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[D].calls, 5);
	ck_assert_uint_eq(r[D].self, 5 * 300);
	ck_assert_uint_eq(r[A].calls, 1);
	ck_assert_uint_eq(r[A].calls_made, 5);
	ck_assert_uint_eq(r[A].self, 7000 - 1500);
	ck_assert_uint_eq(r[A].total, 7000);
	ck_assert_uint_eq(find_arc(a, A, D)->calls, 5);
	ck_assert_uint_eq(find_arc(a, A, D)->time, 1500);
	ck_assert_uint_eq(find_arc(a, ACCT_NONE, A)->calls, 1);
	ck_assert_uint_eq(find_arc(a, ACCT_NONE, A)->time, 7000);
	acct_free(a);
}
END_TEST

/* main -> a, a tail-calls b (same slot), b tail-calls a again: one leave closes. */
START_TEST(test_tail_chain)
{
	enum { M, A, B };
	struct acct *a = acct_new(3);
	const struct acct_routine *r = acct_routines(a);
	uint64_t ret = 0, slot = 0;
	uint32_t top = 0;

	acct_enter(a, T, M, 1000, 0x10, 0);
	acct_enter(a, T, A, 990, 0x20, 10);
	ck_assert_int_eq(acct_chain(a, T, B, 30), 0);
	ck_assert_uint_eq(acct_depth(a, T), 2);
	ck_assert_int_eq(acct_top(a, T, &top, &slot, &ret), 0);
	ck_assert_uint_eq(top, B);
	ck_assert_uint_eq(slot, 990);
	ck_assert_uint_eq(ret, 0x20);
	ck_assert_int_eq(acct_chain(a, T, A, 70), 0);
	ck_assert_int_eq(acct_leave(a, T, 75, &ret), 0);
	ck_assert_uint_eq(ret, 0x20);
	ck_assert_uint_eq(acct_depth(a, T), 1);
	acct_leave(a, T, 100, NULL);

	r = acct_routines(a);
	ck_assert_uint_eq(r[A].calls, 2);
	ck_assert_uint_eq(r[B].calls, 1);
	/* tail calls are not calls made: they never return to the caller (no f2) */
	ck_assert_uint_eq(r[A].calls_made, 0);
	ck_assert_uint_eq(r[B].calls_made, 0);
	ck_assert_uint_eq(r[M].calls_made, 1);
	ck_assert_uint_eq(r[A].self, 20 + 5);
	ck_assert_uint_eq(r[B].self, 40);
	ck_assert_uint_eq(r[M].self, 10 + 25);
	ck_assert_uint_eq(r[A].total, 20 + 5);
	ck_assert_uint_eq(r[B].total, 40);
	ck_assert_uint_eq(r[M].total, 100);
	ck_assert_uint_eq(find_arc(a, M, A)->calls, 1);
	ck_assert_uint_eq(find_arc(a, M, A)->time, 20);
	ck_assert_uint_eq(find_arc(a, A, B)->calls, 1);
	ck_assert_uint_eq(find_arc(a, A, B)->time, 40);
	ck_assert_uint_eq(find_arc(a, B, A)->calls, 1);
	ck_assert_uint_eq(find_arc(a, B, A)->time, 5);
	ck_assert_uint_eq(acct_total_calls(a), 4);
	acct_free(a);
}
END_TEST

/* A routine that tail-calls itself (a loop through its entry): counted, time once. */
START_TEST(test_self_chain)
{
	struct acct *a = acct_new(1);
	const struct acct_routine *r = acct_routines(a);

	acct_enter(a, T, 0, 500, 1, 0);
	acct_chain(a, T, 0, 10);
	acct_chain(a, T, 0, 20);
	acct_leave(a, T, 30, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[0].calls, 3);
	ck_assert_uint_eq(r[0].calls_made, 0); /* tail calls: no return-side stop */
	ck_assert_uint_eq(r[0].self, 30);
	ck_assert_uint_eq(r[0].total, 30);
	ck_assert_uint_eq(find_arc(a, 0, 0)->calls, 2);
	acct_free(a);
}
END_TEST

static void collect(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	uint64_t **p = arg;

	*(*p)++ = routine;
	*(*p)++ = slot;
	*(*p)++ = ret;
}

/* longjmp from depth 4 back into main's frame: three frames go. */
START_TEST(test_unwind)
{
	struct acct *a = acct_new(4);
	const struct acct_routine *r = acct_routines(a);
	uint64_t got[12], *p = got;
	uint32_t top;

	acct_enter(a, T, 0, 1000, 0xa0, 0);
	acct_enter(a, T, 1, 900, 0xa1, 10);
	acct_enter(a, T, 2, 800, 0xa2, 20);
	acct_enter(a, T, 3, 700, 0xa3, 30);
	acct_frames(a, T, collect, &p);
	ck_assert_int_eq(p - got, 12);
	ck_assert_uint_eq(got[0], 0);
	ck_assert_uint_eq(got[1], 1000);
	ck_assert_uint_eq(got[2], 0xa0);
	ck_assert_uint_eq(got[9], 3);
	ck_assert_uint_eq(got[10], 700);
	ck_assert_uint_eq(got[11], 0xa3);

	/* sp at or below every slot: nothing is gone */
	ck_assert_uint_eq(acct_unwind_to(a, T, 700, 35), 0);
	ck_assert_uint_eq(acct_depth(a, T), 4);
	/* main's code runs again with sp above the three slots */
	ck_assert_uint_eq(acct_unwind_to(a, T, 950, 50), 3);
	ck_assert_uint_eq(acct_depth(a, T), 1);
	ck_assert_int_eq(acct_top(a, T, &top, NULL, NULL), 0);
	ck_assert_uint_eq(top, 0);
	acct_leave(a, T, 80, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[3].self, 20);
	ck_assert_uint_eq(r[3].total, 20);
	ck_assert_uint_eq(r[2].total, 30);
	ck_assert_uint_eq(r[1].total, 40);
	ck_assert_uint_eq(r[0].self, 10 + 30);
	ck_assert_uint_eq(r[0].total, 80);
	ck_assert(!r[1].incomplete && !r[2].incomplete && !r[3].incomplete);
	acct_free(a);
}
END_TEST

/* exit() from inside: main and sub stay open until finish; they are INCOMPLETE. */
START_TEST(test_finish_incomplete)
{
	struct acct *a = acct_new(3);
	const struct acct_routine *r = acct_routines(a);

	acct_enter(a, T, 0, 1000, 1, 0);
	acct_enter(a, T, 1, 900, 2, 10);
	acct_leave(a, T, 20, NULL);
	acct_enter(a, T, 2, 900, 2, 30);
	/* per-thread clock: close at the thread's last time, ignore the later t */
	acct_finish(a, 500, false);
	ck_assert_uint_eq(acct_depth(a, T), 0);
	r = acct_routines(a);
	ck_assert(r[0].incomplete);
	ck_assert(!r[1].incomplete);
	ck_assert(r[2].incomplete);
	ck_assert_uint_eq(r[0].total, 30);
	ck_assert_uint_eq(r[2].total, 0);
	ck_assert_uint_eq(r[0].self, 20);
	ck_assert_uint_eq(r[2].self, 0);
	acct_free(a);

	/* shared (wall) clock: close at the later t */
	a = acct_new(3);
	r = acct_routines(a);
	acct_enter(a, T, 0, 1000, 1, 0);
	acct_enter(a, T, 2, 900, 2, 30);
	acct_finish(a, 500, true);
	r = acct_routines(a);
	ck_assert(r[0].incomplete && r[2].incomplete);
	ck_assert_uint_eq(r[2].self, 470);
	ck_assert_uint_eq(r[2].total, 470);
	ck_assert_uint_eq(r[0].total, 500);
	/* shared t earlier than the thread's last: the last time wins */
	acct_free(a);
	a = acct_new(1);
	r = acct_routines(a);
	acct_enter(a, T, 0, 1000, 1, 300);
	acct_finish(a, 100, true);
	r = acct_routines(a);
	ck_assert_uint_eq(r[0].total, 0);
	ck_assert(r[0].incomplete);
	acct_free(a);
}
END_TEST

START_TEST(test_thread_exit)
{
	struct acct *a = acct_new(2);
	const struct acct_routine *r = acct_routines(a);

	acct_enter(a, 7, 0, 1000, 1, 0);
	acct_enter(a, 7, 1, 990, 2, 100);
	acct_thread_exit(a, 7, 160);
	ck_assert_uint_eq(acct_depth(a, 7), 0);
	r = acct_routines(a);
	ck_assert(r[0].incomplete && r[1].incomplete);
	ck_assert_uint_eq(r[1].self, 60);
	ck_assert_uint_eq(r[1].total, 60);
	ck_assert_uint_eq(r[0].total, 160);
	/* the tid may be reused by a new thread: a fresh stack */
	acct_enter(a, 7, 1, 500, 3, 1000);
	acct_leave(a, 7, 1010, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[1].self, 70);
	ck_assert_uint_eq(r[1].total, 70);
	ck_assert_uint_eq(r[1].calls, 2);
	ck_assert_uint_eq(find_arc(a, ACCT_NONE, 1)->calls, 1);
	acct_finish(a, 2000, true);
	r = acct_routines(a);
	ck_assert_uint_eq(r[0].total, 160);
	acct_free(a);
}
END_TEST

/*
 * While one thread has had events, the program's results are copied from
 * it when read (solo_sync): read midway, events after the read, a second
 * thread (from then on both are kept on every event): the program's
 * routines, arcs and contexts are always the sum of its threads'.
 */
static void assert_program_is_sum(const struct acct *a)
{
	size_t n_arcs, n_nodes;
	const struct acct_routine *r = acct_routines(a);
	const struct acct_arc *arcs = acct_arcs(a, &n_arcs);
	const struct acct_node *nodes = acct_nodes(a, &n_nodes);
	uint64_t calls = 0, arc_calls = 0, node_calls = 0;
	acct_time_t self = 0, arc_self = 0, node_self = 0, total1 = 0;

	for (size_t i = 0; i < acct_n_threads(a); i++) {
		struct acct_thread_info t;

		ck_assert_int_eq(acct_thread(a, i, &t), 0);
		for (size_t k = 0; k < acct_n_routines(a); k++) {
			calls += t.r[k].calls;
			self += t.r[k].self;
		}
		total1 += t.r[1].total;
		for (size_t k = 0; k < t.n_arcs; k++) {
			arc_calls += t.arcs[k].calls;
			arc_self += t.arcs[k].self;
		}
		for (size_t k = 0; k < t.n_nodes; k++) {
			node_calls += t.nodes[k].calls;
			node_self += t.nodes[k].self;
		}
	}
	ck_assert_uint_eq(acct_total_calls(a), calls);
	ck_assert_uint_eq(acct_total_self(a), self);
	ck_assert_uint_eq(r[1].total, total1);
	for (size_t k = 0; k < n_arcs; k++) {
		arc_calls -= arcs[k].calls;
		arc_self -= arcs[k].self;
	}
	for (size_t k = 0; k < n_nodes; k++) {
		node_calls -= nodes[k].calls;
		node_self -= nodes[k].self;
	}
	ck_assert_uint_eq(arc_calls, 0);
	ck_assert_uint_eq(arc_self, 0);
	ck_assert_uint_eq(node_calls, 0);
	ck_assert_uint_eq(node_self, 0);
}

START_TEST(test_solo_then_shared)
{
	struct acct *a = acct_new_lanes(3, 2);
	struct acct *l1;

	acct_enter(a, 1, 0, 1000, 1, 0);
	acct_enter(a, 1, 1, 990, 2, 10);
	acct_leave(a, 1, 30, NULL);
	ck_assert_uint_eq(acct_routines(a)[1].self, 20); /* read midway */
	assert_program_is_sum(a);
	acct_enter(a, 1, 1, 990, 2, 40); /* after the read, before the second thread */
	acct_enter(a, 1, 2, 980, 3, 45);
	acct_leave(a, 1, 49, NULL);
	acct_leave(a, 1, 50, NULL);
	acct_enter(a, 2, 1, 2000, 1, 1000); /* the second thread */
	acct_enter(a, 1, 1, 990, 2, 60);
	acct_leave(a, 2, 1007, NULL);
	acct_leave(a, 1, 61, NULL);
	ck_assert_uint_eq(acct_routines(a)[1].calls, 4);
	ck_assert_uint_eq(acct_routines(a)[1].self, 20 + 6 + 7 + 1);
	ck_assert_uint_eq(acct_routines(a)[0].calls_made, 3);
	assert_program_is_sum(a);
	l1 = acct_lane(a, 1); /* lane 1 had the same times here */
	ck_assert_uint_eq(acct_routines(l1)[1].self, 34);
	assert_program_is_sum(l1);
	acct_free(l1);
	acct_free(a);
}
END_TEST

/* Threads interleaved, each with its own clock: no cross-crediting. */
START_TEST(test_threads)
{
	struct acct *a = acct_new(3);
	const struct acct_routine *r = acct_routines(a);
	int tid;

	/* thread 1 (clock from 0), thread 2 (clock from 1000000) */
	acct_enter(a, 1, 0, 1000, 1, 0);
	acct_enter(a, 2, 1, 2000, 1, 1000000);
	acct_enter(a, 1, 2, 990, 1, 50);
	acct_enter(a, 2, 2, 1990, 1, 1000010);
	acct_leave(a, 1, 80, NULL);
	acct_leave(a, 2, 1000100, NULL);
	acct_leave(a, 2, 1000200, NULL);
	acct_leave(a, 1, 100, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[0].self, 50 + 20);
	ck_assert_uint_eq(r[1].self, 10 + 100);
	ck_assert_uint_eq(r[2].self, 30 + 90);
	ck_assert_uint_eq(r[2].calls, 2);
	ck_assert_uint_eq(r[2].total, 120);
	ck_assert_uint_eq(find_arc(a, 0, 2)->calls, 1);
	ck_assert_uint_eq(find_arc(a, 1, 2)->calls, 1);
	ck_assert_uint_eq(find_arc(a, 1, 2)->time, 90);

	/* the same routine active in two threads at once: inclusive time per thread */
	acct_enter(a, 3, 2, 100, 1, 0);
	acct_enter(a, 4, 2, 100, 1, 0);
	acct_leave(a, 3, 10, NULL);
	acct_leave(a, 4, 30, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[2].total, 160);

	/* many threads, arbitrary tids, all open, then finish */
	for (tid = 0; tid < 5000; tid++)
		acct_enter(a, tid * 7919 + 100000, 1, 100, 1, (acct_time_t)tid);
	for (tid = 0; tid < 5000; tid++)
		acct_enter(a, tid * 7919 + 100000, 2, 90, 1, (acct_time_t)tid + 2);
	for (tid = 0; tid < 5000; tid++)
		ck_assert_uint_eq(acct_depth(a, tid * 7919 + 100000), 2);
	acct_finish(a, 0, false);
	r = acct_routines(a);
	ck_assert_uint_eq(r[1].calls, 5001);
	ck_assert_uint_eq(r[1].self, 110 + 5000 * 2);
	ck_assert(r[1].incomplete && r[2].incomplete);
	acct_free(a);
}
END_TEST

/* acct_count: call counted, caller's calls made, arc; no frame, no clock. */
START_TEST(test_count)
{
	struct acct *a = acct_new(3);
	const struct acct_routine *r = acct_routines(a);

	acct_count(a, T, 0); /* unknown thread: root arc */
	ck_assert_uint_eq(acct_depth(a, T), 0);
	acct_enter(a, T, 1, 1000, 1, 0);
	acct_count(a, T, 2);
	acct_count(a, T, 2);
	ck_assert_uint_eq(acct_depth(a, T), 1);
	acct_leave(a, T, 100, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[0].calls, 1);
	ck_assert_uint_eq(r[2].calls, 2);
	ck_assert_uint_eq(r[2].self, 0);
	ck_assert_uint_eq(r[2].total, 0);
	ck_assert_uint_eq(r[1].calls_made, 2);
	ck_assert_uint_eq(r[1].self, 100);
	ck_assert_uint_eq(find_arc(a, ACCT_NONE, 0)->calls, 1);
	ck_assert_uint_eq(find_arc(a, 1, 2)->calls, 2);
	ck_assert_uint_eq(find_arc(a, 1, 2)->time, 0);
	ck_assert_uint_eq(acct_total_calls(a), 4);
	acct_free(a);
}
END_TEST

/* acct_count_n: n calls at once (counted in-process) as n acct_count; 0 is nothing. */
START_TEST(test_count_n)
{
	struct acct *a = acct_new(3), *b = acct_new(3);

	acct_enter(a, T, 1, 1000, 1, 0);
	acct_enter(b, T, 1, 1000, 1, 0);
	acct_count_n(a, T, 2, 7, false);
	acct_count_n(a, T, 0, 0, false);
	for (int i = 0; i < 7; i++)
		acct_count(b, T, 2);
	ck_assert_uint_eq(acct_routines(a)[2].calls, 7);
	ck_assert_uint_eq(acct_routines(a)[0].calls, 0);
	ck_assert_uint_eq(acct_routines(a)[1].calls_made, acct_routines(b)[1].calls_made);
	ck_assert_uint_eq(find_arc(a, 1, 2)->calls, 7);
	ck_assert_uint_eq(acct_total_calls(a), acct_total_calls(b));
	/* spontaneous: the root's arc, the open frame's calls made unchanged */
	acct_count_n(a, T, 2, 3, true);
	ck_assert_uint_eq(find_arc(a, ACCT_NONE, 2)->calls, 3);
	ck_assert_uint_eq(acct_routines(a)[1].calls_made, 7);
	ck_assert_uint_eq(acct_routines(a)[2].calls, 10);
	acct_free(a);
	acct_free(b);
}
END_TEST

/* A clock going backwards never makes time negative. */
START_TEST(test_clock_backwards)
{
	struct acct *a = acct_new(2);
	const struct acct_routine *r = acct_routines(a);

	acct_enter(a, T, 0, 1000, 1, 100);
	acct_enter(a, T, 1, 990, 1, 90); /* earlier than last: zero elapsed */
	acct_leave(a, T, 95, NULL);
	acct_leave(a, T, 150, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[0].self, 50);
	ck_assert_uint_eq(r[1].self, 0);
	ck_assert_uint_eq(r[1].total, 0);
	ck_assert_uint_eq(r[0].total, 50);
	acct_free(a);
}
END_TEST

/* A million frames deep, then back: amortised growth, no recursion in the code. */
START_TEST(test_deep)
{
	enum { N = 1000000 };
	struct acct *a = acct_new(2);
	const struct acct_routine *r = acct_routines(a);
	struct timespec t0, t1;
	uint64_t ret;
	double secs;
	long i;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	acct_enter(a, T, 0, (uint64_t)N * 16 + 16, 0, 0);
	for (i = 0; i < N; i++)
		acct_enter(a, T, 1, (uint64_t)(N - i) * 16, (uint64_t)i, (acct_time_t)i + 1);
	ck_assert_uint_eq(acct_depth(a, T), N + 1);
	for (i = N - 1; i >= 0; i--) {
		/* no ck_assert in the loop: each one costs Check a write to its pipe */
		if (acct_leave(a, T, (acct_time_t)(2 * N - i), &ret) != 0)
			ck_abort_msg("no frame at depth %ld", i);
		if (ret != (uint64_t)i)
			ck_abort_msg("wrong return address at depth %ld", i);
	}
	acct_leave(a, T, 2 * N + 1, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	r = acct_routines(a);
	ck_assert_uint_eq(r[1].calls, N);
	ck_assert_uint_eq(r[1].calls_made, N - 1);
	ck_assert_uint_eq(r[0].calls_made, 1);
	ck_assert_uint_eq(r[1].self, 2 * N - 1);
	ck_assert_uint_eq(r[1].total, 2 * N - 1);
	ck_assert_uint_eq(r[0].self, 2);
	ck_assert_uint_eq(r[0].total, 2 * N + 1);
	ck_assert_uint_eq(find_arc(a, 1, 1)->calls, N - 1);
	ck_assert_msg(secs < 2.0, "a million frames took %.2f s", secs);

	/* again, then unwind all of them in one go */
	for (i = 0; i < N; i++)
		acct_enter(a, T, 1, (uint64_t)(N - i) * 16, 0, 3 * N);
	ck_assert_uint_eq(acct_unwind_to(a, T, UINT64_MAX, 3 * N + 10), N);
	r = acct_routines(a);
	ck_assert_uint_eq(r[1].total, 2 * N - 1 + 10);
	acct_free(a);
}
END_TEST

START_TEST(test_net)
{
	/* no correction: exact, even for huge values */
	ck_assert_uint_eq(acct_net(UINT64_MAX, 10, 10, 0, 0), UINT64_MAX);
	ck_assert_uint_eq(acct_net(1000, 3, 2, 0, 0), 1000);
	ck_assert_uint_eq(acct_net(1000, 3, 2, 100, 50), 1000 - 300 - 100);
	/* fractional factors round to the nearest ns */
	ck_assert_uint_eq(acct_net(1000, 3, 0, 0.4, 0), 999);	 /* 998.8 */
	ck_assert_uint_eq(acct_net(1000, 1, 1, 0.2, 0.2), 1000); /* 999.6 */
	ck_assert_uint_eq(acct_net(1000, 7, 0, 0.1, 0), 999);	 /* 999.3 */
	/* clamp at zero */
	ck_assert_uint_eq(acct_net(1000, 10, 0, 100, 0), 0);
	ck_assert_uint_eq(acct_net(1000, 10, 1, 100, 0.5), 0);
	ck_assert_uint_eq(acct_net(0, 1, 1, 1, 1), 0);
	ck_assert_uint_eq(acct_net(5, 0, 1000000, 0, 1e3), 0);
	/* f2 alone */
	ck_assert_uint_eq(acct_net(4800, 0, 2, 0, 2300), 200);
}
END_TEST

/*
 * How sure the correction is: a factor's spread over batches (1.4826 times
 * the median absolute deviation), what it makes of a routine's correction,
 * and when that is too large against the routine's time.
 */
START_TEST(test_uncertainty)
{
	double none[1] = {5}, odd[5] = {100, 104, 96, 102, 250}, even[4] = {10, 12, 14, 30};
	double same[3] = {7, 7, 7}, nan3[3] = {1, NAN, 3};

	ck_assert_double_eq(acct_spread(none, 0), 0);
	ck_assert_double_eq(acct_spread(none, 1), 0); /* one batch: no spread known */
	ck_assert_double_eq(acct_spread(same, 3), 0);
	ck_assert_double_eq(acct_spread(nan3, 3), 0);
	/* median 102; deviations 0 2 2 6 148: their median 2; the odd batch moves nothing */
	ck_assert_double_eq_tol(acct_spread(odd, 5), 1.4826 * 2, 1e-9);
	/* median 13; deviations 1 1 3 17: their median 2 */
	ck_assert_double_eq_tol(acct_spread(even, 4), 1.4826 * 2, 1e-9);

	/* linear in the calls: one error of f1 or f2 in every call charged it */
	ck_assert_double_eq(acct_net_uncertainty(0, 0, 5, 5), 0);
	ck_assert_double_eq(acct_net_uncertainty(1000, 0, 0.5, 9), 500);
	ck_assert_double_eq(acct_net_uncertainty(1000, 10, 0.5, 20), 700);
	ck_assert_double_eq(acct_net_uncertainty(3, 2, -1, -2), 7);
	ck_assert_double_eq(acct_net_uncertainty(UINT64_MAX, 0, INFINITY, 0), 0);

	/* over 10 % of the net time is marked; exactly 10 % is not */
	ck_assert(!acct_uncertain(1000, 100));
	ck_assert(acct_uncertain(1000, 100.5));
	ck_assert(!acct_uncertain(1000, 0));
	ck_assert(acct_uncertain(0, 1)); /* all its time was removed */
	ck_assert(!acct_uncertain(0, 0));
	ck_assert(!acct_uncertain(0, NAN));
	/* a 0.2 us routine, 150,000 calls (30 ms), f1 known to 25 ns: 3.75 ms, marked */
	ck_assert(acct_uncertain(30000000, acct_net_uncertainty(150000, 0, 25, 25)));
	/* ... to 2 ns (the probes): 0.3 ms, 1 %: not */
	ck_assert(!acct_uncertain(30000000, acct_net_uncertainty(150000, 0, 2, 2)));
}
END_TEST

/*
 * The stops' cost measured in a run: 1000 segments of 4000 ns, 10 whose
 * thread was preempted while the program ran (-5000: the CPU clock ran
 * less than the TSC), 5 past the histogram (100 us).
 */
START_TEST(test_ovh)
{
	struct acct_ovh *h = calloc(1, sizeof(*h));
	uint64_t n;

	ck_assert_ptr_nonnull(h);
	ck_assert_double_eq(acct_ovh_median(h), 0);
	ck_assert_double_eq(acct_ovh_estimate(h, true), 0);
	ck_assert_double_eq(acct_ovh_estimate(h, false), 0);
	for (int i = 0; i < 1000; i++)
		acct_ovh_add(h, 4000);
	for (int i = 0; i < 10; i++)
		acct_ovh_add(h, -5000);
	for (int i = 0; i < 5; i++)
		acct_ovh_add(h, 100000);
	ck_assert_uint_eq(h->n, 1015);
	ck_assert_uint_eq(h->below, 10);
	ck_assert_uint_eq(h->above, 5);
	/* 4000 falls in bin 500, whose centre is 4004 */
	ck_assert_double_eq(acct_ovh_median(h), 4004);
	ck_assert_double_eq_tol(acct_ovh_mean_from(h, 2002, &n), (1000 * 4004.0 + 500000) / 1005,
				1e-9);
	ck_assert_uint_eq(n, 1005);
	/* only the 5 big ones from 10 us on */
	ck_assert_double_eq_tol(acct_ovh_mean_from(h, 10000, &n), 100000, 1e-9);
	ck_assert_uint_eq(n, 5);
	/* CPU clock: the preempted segments are not the stops' cost */
	ck_assert_double_eq_tol(acct_ovh_estimate(h, true), (1000 * 4004.0 + 500000) / 1005, 1e-9);
	/* wall clock: the exact mean of everything */
	ck_assert_double_eq_tol(acct_ovh_estimate(h, false),
				(1000 * 4000.0 - 50000 + 500000) / 1015, 1e-9);
	/* a median among the big ones: their mean */
	memset(h, 0, sizeof(*h));
	acct_ovh_add(h, 70000);
	acct_ovh_add(h, 90000);
	acct_ovh_add(h, 80000);
	ck_assert_double_eq_tol(acct_ovh_median(h), 80000, 1e-9);
	free(h);
}
END_TEST

/* f1 and f2 from the run's own measure of its stops, plus the calibration's residue. */
START_TEST(test_use_measured)
{
	struct calib c0 = {.f1_ns = 4600,
			   .f2_ns = 4550,
			   .alt_f1_ns = 9700,
			   .alt_f2_ns = 9650,
			   .batches = 5,
			   .seg_ns = 4500,
			   .alt_seg_ns = 9600,
			   .resid_ns = 20,
			   .alt_resid_ns = -10};
	struct calib c = c0;

	/* too few segments: the calibration stands */
	ck_assert_int_eq(calib_use_measured(&c, 0, CALIB_SEG_MIN - 1, 4400, 9300), 0);
	ck_assert_double_eq(c.f1_ns, 4600);
	ck_assert_double_eq(c.alt_f2_ns, 9650);
	/* CPU clock chosen: its measure + residue on it, the wall's on the other */
	ck_assert_int_eq(calib_use_measured(&c, 0, CALIB_SEG_MIN, 4400, 9300), 1);
	ck_assert_double_eq(c.f1_ns, 4420);
	ck_assert_double_eq(c.f2_ns, 4420);
	ck_assert_double_eq(c.alt_f1_ns, 9290);
	ck_assert_double_eq(c.alt_f2_ns, 9290);
	/* wall clock chosen: the figures swap roles */
	c = c0;
	c.seg_ns = 9600;
	c.resid_ns = -10;
	c.alt_seg_ns = 4500;
	c.alt_resid_ns = 20;
	ck_assert_int_eq(calib_use_measured(&c, 1, 50000, 4400, 9300), 1);
	ck_assert_double_eq(c.f1_ns, 9290);
	ck_assert_double_eq(c.alt_f2_ns, 4420);
	/* the CPU clock not measured (no per-thread clock): it keeps its calibration */
	c = c0;
	ck_assert_int_eq(calib_use_measured(&c, 0, 50000, 0, 9300), 0);
	ck_assert_double_eq(c.f1_ns, 4600);
	ck_assert_double_eq(c.alt_f1_ns, 9290);
	/* a calibration that measured nothing: nothing to add to */
	c = c0;
	c.seg_ns = c.alt_seg_ns = 0;
	ck_assert_int_eq(calib_use_measured(&c, 0, 50000, 4400, 9300), 0);
	ck_assert_double_eq(c.f2_ns, 4550);
	/* never below zero */
	c = c0;
	c.resid_ns = -30;
	ck_assert_int_eq(calib_use_measured(&c, 0, 50000, 10, 9300), 1);
	ck_assert_double_eq(c.f1_ns, 0);
	/* no calibration at all */
	c = c0;
	c.batches = 0;
	ck_assert_int_eq(calib_use_measured(&c, 0, 50000, 4400, 9300), 0);
}
END_TEST

/* Arcs: calls and inclusive times along each, contiguous array. */
START_TEST(test_arcs)
{
	enum { M, A, B };
	struct acct *a = acct_new(3);
	const struct acct_arc *arcs;
	size_t n, i;
	uint64_t sum = 0;
	int k;

	acct_enter(a, T, M, 1000, 0, 0);
	for (k = 0; k < 4; k++) {
		acct_enter(a, T, A, 900, 0, 100 * k + 10);
		acct_enter(a, T, B, 800, 0, 100 * k + 20);
		acct_leave(a, T, 100 * k + 25, NULL);
		acct_leave(a, T, 100 * k + 40, NULL);
	}
	acct_enter(a, T, B, 900, 0, 500);
	acct_leave(a, T, 600, NULL);
	acct_leave(a, T, 700, NULL);
	arcs = acct_arcs(a, &n);
	ck_assert_uint_eq(n, 4);
	for (i = 0; i < n; i++)
		sum += arcs[i].calls;
	ck_assert_uint_eq(sum, acct_total_calls(a));
	ck_assert_uint_eq(find_arc(a, ACCT_NONE, M)->time, 700);
	ck_assert_uint_eq(find_arc(a, M, A)->calls, 4);
	ck_assert_uint_eq(find_arc(a, M, A)->time, 4 * 30);
	ck_assert_uint_eq(find_arc(a, A, B)->calls, 4);
	ck_assert_uint_eq(find_arc(a, A, B)->time, 4 * 5);
	ck_assert_uint_eq(find_arc(a, M, B)->calls, 1);
	ck_assert_uint_eq(find_arc(a, M, B)->time, 100);
	ck_assert_ptr_null(find_arc(a, B, A));
	acct_free(a);

	/* many distinct arcs: the index grows */
	a = acct_new(300);
	for (k = 0; k < 300; k++) {
		acct_enter(a, T, (uint32_t)k, 1000, 0, (acct_time_t)k * 10);
		acct_enter(a, T, (uint32_t)(299 - k), 900, 0, (acct_time_t)k * 10 + 1);
		acct_leave(a, T, (acct_time_t)k * 10 + 4, NULL);
		acct_leave(a, T, (acct_time_t)k * 10 + 5, NULL);
	}
	acct_arcs(a, &n);
	ck_assert_uint_eq(n, 600);
	for (k = 0; k < 300; k++) {
		ck_assert_uint_eq(find_arc(a, (uint32_t)k, (uint32_t)(299 - k))->calls, 1);
		ck_assert_uint_eq(find_arc(a, (uint32_t)k, (uint32_t)(299 - k))->time, 3);
	}
	acct_free(a);
}
END_TEST

/* The node of the tree whose path from the root is routines r[0..n), or NULL. */
static const struct acct_node *find_node(const struct acct_node *v, size_t nv, const uint32_t *r,
					 size_t n)
{
	uint32_t at = 0;
	size_t i, k;

	for (k = 0; k < n; k++) {
		for (i = 1; i < nv; i++)
			if (v[i].parent == at && v[i].routine == r[k])
				break;
		if (i == nv)
			return NULL;
		at = (uint32_t)i;
	}
	return &v[at];
}

/*
 * Calling-context trees: exact stacks with self time and calls; a tail call
 * is a sibling; recursion is folded into its first activation; the program's
 * tree merges the threads'; each thread keeps its own results.
 */
START_TEST(test_contexts)
{
	enum { M, A, B, C };
	struct acct *a = acct_new(4);
	const struct acct_node *v, *x;
	struct acct_thread_info ti;
	size_t n, i;
	acct_time_t sum = 0;
	uint64_t calls = 0;

	/* thread 1: M -> A -> B (10 ns), A chains to C (5 ns), M -> B -> B -> B */
	acct_enter(a, 1, M, 1000, 0, 0);
	acct_enter(a, 1, A, 900, 0, 10);
	acct_enter(a, 1, B, 800, 0, 20);
	acct_leave(a, 1, 30, NULL);
	acct_chain(a, 1, C, 40);
	acct_leave(a, 1, 45, NULL);
	acct_enter(a, 1, B, 900, 0, 50);
	acct_enter(a, 1, B, 800, 0, 51);
	acct_enter(a, 1, B, 700, 0, 52);
	acct_leave(a, 1, 60, NULL);
	acct_leave(a, 1, 61, NULL);
	acct_leave(a, 1, 62, NULL);
	acct_count(a, 1, C);
	acct_leave(a, 1, 100, NULL);
	/* thread 2: M -> A -> B, 1000 ns in B */
	acct_enter(a, 2, M, 1000, 0, 0);
	acct_enter(a, 2, A, 900, 0, 0);
	acct_enter(a, 2, B, 800, 0, 0);
	acct_leave(a, 2, 1000, NULL);
	acct_leave(a, 2, 1000, NULL);
	acct_leave(a, 2, 1000, NULL);

	v = acct_nodes(a, &n);
	ck_assert_uint_eq(n, 6); /* root, M, M;A, M;A;B, M;C (chain and count), M;B */
	for (i = 1; i < n; i++) {
		ck_assert_uint_lt(v[i].parent, i);
		sum += v[i].self;
		calls += v[i].calls;
	}
	ck_assert_uint_eq(v[0].routine, ACCT_NONE);
	ck_assert_uint_eq(sum, acct_total_self(a));
	ck_assert_uint_eq(calls, acct_total_calls(a));
	x = find_node(v, n, (uint32_t[]){M, A, B}, 3);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->self, 10 + 1000);
	ck_assert_uint_eq(x->calls, 2);
	x = find_node(v, n, (uint32_t[]){M, C}, 2); /* chained: sibling of A under M */
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->self, 5);
	ck_assert_uint_eq(x->calls, 2); /* the chain and the count */
	ck_assert_ptr_null(find_node(v, n, (uint32_t[]){M, A, C}, 3));
	x = find_node(v, n, (uint32_t[]){M, B}, 2); /* recursion folded */
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->calls, 3);
	ck_assert_uint_eq(x->self, 12);
	ck_assert_ptr_null(find_node(v, n, (uint32_t[]){M, B, B}, 3));
	x = find_node(v, n, (uint32_t[]){M}, 1);
	ck_assert_uint_eq(x->calls_made, 3 + 1); /* A, B, the count of C */

	ck_assert_uint_eq(acct_n_threads(a), 2);
	ck_assert_int_eq(acct_thread(a, 2, &ti), -1);
	ck_assert_int_eq(acct_thread(a, 1, &ti), 0);
	ck_assert_int_eq(ti.tid, 2);
	ck_assert_uint_eq(ti.r[B].calls, 1);
	ck_assert_uint_eq(ti.r[B].self, 1000);
	ck_assert_uint_eq(ti.r[M].total, 1000);
	ck_assert_uint_eq(ti.n_nodes, 4);
	ck_assert_uint_eq(ti.n_arcs, 3);
	ck_assert_int_eq(acct_thread(a, 0, &ti), 0);
	ck_assert_int_eq(ti.tid, 1);
	ck_assert_uint_eq(ti.r[B].calls, 4);
	ck_assert_uint_eq(ti.r[B].total, 10 + 12);
	ck_assert_uint_eq(ti.r[M].total, 100);
	ck_assert_uint_eq(acct_routines(a)[M].total, 1100);
	ck_assert_uint_eq(acct_routines(a)[B].calls, 5);
	acct_free(a);
}
END_TEST

/*
 * Calls counted away from the stack (spontaneous: throttled routines) go to
 * the root's child of their routine, which a routine's record keeps: the
 * same node as a call from an empty stack, made by either first; a routine
 * on the stack is counted at its open activation (recursion folded), not
 * there; another thread has its own. Many routines, so that the
 * direct-mapped contexts cannot hold them all.
 */
START_TEST(test_root_contexts)
{
	enum { NR = 20000 };
	struct acct *a = acct_new(NR);
	const struct acct_node *v, *x;
	size_t n;

	for (uint32_t r = 0; r < NR; r++) /* root;r made by a count, every routine */
		acct_count_n(a, 1, r, 1, true);
	acct_enter(a, 1, 7, 1000, 0, 0); /* root;7 now entered from the empty stack */
	acct_count_n(a, 1, 7, 2, true);	 /* 7 open: at its activation, root;7 */
	acct_enter(a, 1, 8, 900, 0, 5);
	acct_count_n(a, 1, 9, 4, true);	 /* not under 7;8: at root;9 */
	acct_count_n(a, 1, 9, 1, false); /* from the stack: 7;8;9 */
	acct_enter(a, 1, 9, 800, 0, 6);
	acct_count_n(a, 1, 9, 1, true); /* 9 open: at 7;8;9, not root;9 */
	acct_leave(a, 1, 6, NULL);
	acct_leave(a, 1, 6, NULL);
	acct_leave(a, 1, 7, NULL);
	for (uint32_t r = 0; r < NR; r++) /* each again: the same root;r */
		acct_count_n(a, 1, r, 1, true);
	acct_enter(a, 1, 8, 800, 0, 10); /* an entry from the empty stack: root;8 too */
	acct_leave(a, 1, 11, NULL);
	acct_count_n(a, 2, 9, 3, true); /* thread 2's own root;9, merged into the program's */

	v = acct_nodes(a, &n);
	ck_assert_uint_eq(n, 1 + NR + 2); /* root, root;r, 7;8 and 7;8;9 (none new for 2) */
	x = find_node(v, n, (uint32_t[]){7}, 1);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->calls, 1 + 1 + 2 + 1);
	ck_assert_uint_eq(x->calls_made, 1);
	x = find_node(v, n, (uint32_t[]){8}, 1);
	ck_assert_uint_eq(x->calls, 1 + 1 + 1);
	x = find_node(v, n, (uint32_t[]){9}, 1);
	ck_assert_uint_eq(x->calls, 1 + 4 + 1 + 3);
	x = find_node(v, n, (uint32_t[]){7, 8, 9}, 3);
	ck_assert_ptr_nonnull(x);
	ck_assert_uint_eq(x->calls, 1 + 1 + 1);
	ck_assert_ptr_null(find_node(v, n, (uint32_t[]){7, 7}, 2));
	x = find_node(v, n, (uint32_t[]){NR - 1}, 1);
	ck_assert_uint_eq(x->calls, 2);
	ck_assert_uint_eq(acct_routines(a)[9].calls, 1 + 4 + 1 + 1 + 1 + 1 + 3);
	ck_assert_uint_eq(acct_total_calls(a), 2 * NR + 4 + 2 + 4 + 1 + 1 + 3); /* 4 entries */
	acct_free(a);
}
END_TEST

/*
 * A parent that calls more routines in turn than the direct-mapped
 * contexts hold (their slots taken over by each other): each context still
 * counts its own calls and time; a second thread has its own.
 */
START_TEST(test_contexts_many)
{
	enum { NR = 40000, ROUNDS = 6 };
	struct acct *a = acct_new(NR + 1);
	const struct acct_node *v, *x;
	acct_time_t t = 0;
	size_t n;

	acct_enter(a, 1, NR, 1000, 0, t++);
	for (int k = 0; k < ROUNDS; k++)
		for (uint32_t r = 0; r < NR; r++) {
			acct_enter(a, 1, (r * 7919u) % NR, 900, 0, t);
			t += 1 + r % 3;
			acct_leave(a, 1, t++, NULL);
		}
	acct_leave(a, 1, t, NULL);
	acct_enter(a, 2, NR, 1000, 0, 0);
	acct_enter(a, 2, 5, 900, 0, 1);
	acct_leave(a, 2, 2, NULL);
	acct_leave(a, 2, 3, NULL);

	v = acct_nodes(a, &n);
	ck_assert_uint_eq(n, 2 + NR);
	for (uint32_t r = 0; r < NR; r++) {
		x = find_node(v, n, (uint32_t[]){NR, (r * 7919u) % NR}, 2);
		ck_assert_ptr_nonnull(x);
		ck_assert_uint_eq(x->calls, ROUNDS + ((r * 7919u) % NR == 5));
		ck_assert_uint_eq(x->self, ROUNDS * (1 + r % 3) + ((r * 7919u) % NR == 5));
	}
	x = find_node(v, n, (uint32_t[]){NR}, 1);
	ck_assert_uint_eq(x->calls_made, (uint64_t)ROUNDS * NR + 1);
	ck_assert_uint_eq(acct_total_calls(a), (uint64_t)ROUNDS * NR + 3);
	acct_free(a);
}
END_TEST

/*
 * Inclusive time's overhead counts: the entries and calls made inside the
 * outermost activations, so that net inclusive = sum of the nets inside.
 */
START_TEST(test_total_counts)
{
	enum { M, A, B };
	struct acct *a = acct_new(3);
	const struct acct_routine *r = acct_routines(a);
	const struct acct_arc *arc;

	acct_enter(a, T, M, 1000, 0, 0);
	acct_enter(a, T, A, 900, 0, 10);
	acct_enter(a, T, B, 800, 0, 20);
	acct_leave(a, T, 30, NULL);
	acct_enter(a, T, B, 800, 0, 40);
	acct_leave(a, T, 50, NULL);
	acct_leave(a, T, 60, NULL);
	acct_leave(a, T, 70, NULL);
	r = acct_routines(a);
	ck_assert_uint_eq(r[A].total_entries, 3); /* A, B, B */
	ck_assert_uint_eq(r[A].total_calls_made, 2);
	ck_assert_uint_eq(r[M].total_entries, 4);
	ck_assert_uint_eq(r[M].total_calls_made, 3);
	ck_assert_uint_eq(r[B].total_entries, 2);
	ck_assert_uint_eq(r[B].total_calls_made, 0);
	arc = find_arc(a, A, B);
	ck_assert_uint_eq(arc->self, 20);
	ck_assert_uint_eq(arc->time, 20);
	ck_assert_uint_eq(find_arc(a, M, A)->self, 30);
	acct_free(a);
}
END_TEST

/* Out-of-range routine indices are ignored, never written. */
START_TEST(test_bad_routine)
{
	struct acct *a = acct_new(2);

	acct_enter(a, T, 2, 100, 0, 0);
	acct_count(a, T, 5);
	ck_assert_uint_eq(acct_depth(a, T), 0);
	acct_enter(a, T, 1, 100, 0, 0);
	ck_assert_int_eq(acct_chain(a, T, 9, 5), -1);
	ck_assert_uint_eq(acct_total_calls(a), 1);
	acct_free(a);
}
END_TEST

/* Two states hold the same results: counts, times, arcs, contexts, threads. */
static void same_results(const struct acct *x, const struct acct *y)
{
	size_t nx, ny;
	const struct acct_routine *rx = acct_routines(x), *ry = acct_routines(y);
	const struct acct_arc *ax = acct_arcs(x, &nx), *ay;
	const struct acct_node *vx, *vy;
	struct acct_thread_info tx, ty;

	ck_assert_uint_eq(acct_n_routines(x), acct_n_routines(y));
	for (size_t i = 0; i < acct_n_routines(x); i++) {
		ck_assert_uint_eq(rx[i].calls, ry[i].calls);
		ck_assert_uint_eq(rx[i].calls_made, ry[i].calls_made);
		ck_assert_uint_eq(rx[i].self, ry[i].self);
		ck_assert_uint_eq(rx[i].total, ry[i].total);
		ck_assert_int_eq(rx[i].incomplete, ry[i].incomplete);
		ck_assert_uint_eq(rx[i].total_entries, ry[i].total_entries);
		ck_assert_uint_eq(rx[i].total_calls_made, ry[i].total_calls_made);
	}
	ay = acct_arcs(y, &ny);
	ck_assert_uint_eq(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		ck_assert_uint_eq(ax[i].caller, ay[i].caller);
		ck_assert_uint_eq(ax[i].callee, ay[i].callee);
		ck_assert_uint_eq(ax[i].calls, ay[i].calls);
		ck_assert_uint_eq(ax[i].time, ay[i].time);
		ck_assert_uint_eq(ax[i].self, ay[i].self);
	}
	vx = acct_nodes(x, &nx);
	vy = acct_nodes(y, &ny);
	ck_assert_uint_eq(nx, ny);
	for (size_t i = 0; i < nx; i++) {
		ck_assert_uint_eq(vx[i].routine, vy[i].routine);
		ck_assert_uint_eq(vx[i].calls, vy[i].calls);
		ck_assert_uint_eq(vx[i].self, vy[i].self);
	}
	ck_assert_uint_eq(acct_n_threads(x), acct_n_threads(y));
	for (size_t i = 0; acct_thread(x, i, &tx) == 0; i++) {
		ck_assert_int_eq(acct_thread(y, i, &ty), 0);
		ck_assert_int_eq(tx.tid, ty.tid);
		ck_assert_uint_eq(tx.n_arcs, ty.n_arcs);
		ck_assert_uint_eq(tx.n_nodes, ty.n_nodes);
		for (size_t j = 0; j < acct_n_routines(x); j++) {
			ck_assert_uint_eq(tx.r[j].self, ty.r[j].self);
			ck_assert_uint_eq(tx.r[j].total, ty.r[j].total);
		}
		for (size_t j = 0; j < tx.n_arcs; j++)
			ck_assert_uint_eq(tx.arcs[j].self, ty.arcs[j].self);
		for (size_t j = 0; j < tx.n_nodes; j++)
			ck_assert_uint_eq(tx.nodes[j].self, ty.nodes[j].self);
	}
}

/*
 * Lanes: one 4-lane state fed a random stream (calls, returns, recursion,
 * tail chains, counts, clocks going backwards, a thread's exit, a routine
 * added late, the end) with a different time on each lane holds, lane by
 * lane (acct_lane), exactly what four one-lane states fed each lane's times
 * hold; a copy taken midway (acct_dup) goes on the same.
 */
START_TEST(test_lanes)
{
	struct acct *m = acct_new_lanes(6, 4), *one[4], *mid = NULL, *mid1[4];
	acct_time_t clk[3][4] = {{0}};
	unsigned seed = 12345;
	const bool shared[4] = {false, true, false, true};
	const acct_time_t end[4] = {0, 9000000, 0, 9000000};

	ck_assert_int_eq(acct_lanes(m), 4);
	for (int k = 0; k < 4; k++)
		one[k] = acct_new(6);
	for (int i = 0; i < 20000; i++) {
		int tid = 1 + (int)(rand_r(&seed) % 3), op = (int)(rand_r(&seed) % 100);
		uint32_t r = (uint32_t)(rand_r(&seed) % (i < 10000 ? 6 : 8));
		acct_time_t t[4];

		if (i == 10000) {
			acct_grow(m, 8);
			for (int k = 0; k < 4; k++)
				acct_grow(one[k], 8);
		}
		for (int k = 0; k < 4; k++) {
			/* lane 2 steps back now and then, as a net clock never does */
			if (k == 2 && op < 3 && clk[tid - 1][k] > 50)
				clk[tid - 1][k] -= 50;
			else
				clk[tid - 1][k] += 1 + rand_r(&seed) % (k + 1) * 37;
			t[k] = clk[tid - 1][k];
		}
		if (op < 45) {
			acct_enter_t(m, tid, r, 1000 - (uint64_t)i, 7, t);
			for (int k = 0; k < 4; k++)
				acct_enter(one[k], tid, r, 1000 - (uint64_t)i, 7, t[k]);
		} else if (op < 88) {
			uint64_t rm = 0, r1 = 0;
			int rc = acct_leave_t(m, tid, t, &rm);

			for (int k = 0; k < 4; k++) {
				ck_assert_int_eq(acct_leave(one[k], tid, t[k], &r1), rc);
				ck_assert_uint_eq(r1, rm);
			}
		} else if (op < 94) {
			int rc = acct_chain_t(m, tid, r, t);

			for (int k = 0; k < 4; k++)
				ck_assert_int_eq(acct_chain(one[k], tid, r, t[k]), rc);
		} else if (op < 99) {
			acct_count_n(m, tid, r, 3, op & 1);
			for (int k = 0; k < 4; k++)
				acct_count_n(one[k], tid, r, 3, op & 1);
		} else {
			acct_thread_exit_t(m, tid, t);
			for (int k = 0; k < 4; k++)
				acct_thread_exit(one[k], tid, t[k]);
		}
		if (i == 15000) {
			mid = acct_dup(m);
			for (int k = 0; k < 4; k++)
				mid1[k] = acct_dup(one[k]);
		}
	}
	acct_finish_t(m, end, shared);
	acct_finish_t(mid, end, shared);
	for (int k = 0; k < 4; k++) {
		struct acct *lk = acct_lane(m, k), *mk = acct_lane(mid, k);

		acct_finish(one[k], end[k], shared[k]);
		acct_finish(mid1[k], end[k], shared[k]);
		same_results(lk, one[k]);
		same_results(mk, mid1[k]);
		for (uint32_t r = 0; r < 8; r++)
			ck_assert_uint_eq(acct_lane_self(m, k, r), acct_routines(one[k])[r].self);
		ck_assert_uint_gt(acct_total_self(lk), 0);
		acct_free(lk);
		acct_free(mk);
		acct_free(one[k]);
		acct_free(mid1[k]);
	}
	acct_free(m);
	acct_free(mid);
}
END_TEST

START_TEST(test_grow)
{
	struct acct *a = acct_new(2);
	const struct acct_routine *r;
	struct acct_thread_info ti;
	uint64_t ret;

	/* A thread inside routine 1 when routines 2..4 appear (a library loads). */
	acct_enter(a, T, 0, 1000, 11, 0);
	acct_enter(a, T, 1, 900, 22, 10);
	acct_grow(a, 5);
	acct_grow(a, 3); /* never shrinks */
	ck_assert_uint_eq(acct_n_routines(a), 5);
	acct_enter(a, T, 4, 800, 33, 20);
	acct_enter(a, T, 4, 700, 44, 25); /* recursion in a new routine */
	ck_assert_int_eq(acct_leave(a, T, 30, &ret), 0);
	ck_assert_uint_eq(ret, 44);
	ck_assert_int_eq(acct_leave(a, T, 40, &ret), 0);
	ck_assert_int_eq(acct_leave(a, T, 50, &ret), 0);
	ck_assert_int_eq(acct_leave(a, T, 60, &ret), 0);
	/* a thread that starts after the growth */
	acct_enter(a, T + 1, 3, 600, 55, 100);
	ck_assert_int_eq(acct_leave(a, T + 1, 107, &ret), 0);
	r = acct_routines(a);
	r = acct_routines(a);
	ck_assert_uint_eq(r[4].calls, 2);
	ck_assert_uint_eq(r[4].self, 20);
	ck_assert_uint_eq(r[4].total, 20); /* recursion counted once */
	ck_assert_uint_eq(r[1].self, 10 + 10);
	ck_assert_uint_eq(r[1].total, 40);
	ck_assert_uint_eq(r[2].calls, 0);
	ck_assert_uint_eq(r[3].calls, 1);
	ck_assert_uint_eq(r[3].self, 7);
	ck_assert_int_eq(acct_thread(a, 0, &ti), 0);
	r = acct_routines(a);
	ck_assert_uint_eq(ti.r[4].calls, 2);
	ck_assert_uint_eq(ti.r[2].calls, 0);
	acct_free(a);
}
END_TEST

/*
 * One routine's results read while one thread alone has had events (kept
 * in the thread's, the program's lagging behind) and after a second thread
 * joins: acct_routine_calls and acct_lane_self as acct_routines says.
 */
START_TEST(test_solo_reads)
{
	struct acct *a = acct_new_lanes(3, 2);
	acct_time_t t0[2] = {0, 0}, t1[2] = {10, 100}, t2[2] = {15, 150};

	acct_enter_t(a, T, 1, 0x10, 0x20, t0);
	acct_count_n(a, T, 2, 5, false);
	acct_leave_t(a, T, t1, NULL);
	ck_assert_uint_eq(acct_routine_calls(a, 1), 1);
	ck_assert_uint_eq(acct_routine_calls(a, 2), 5);
	ck_assert_uint_eq(acct_lane_self(a, 0, 1), 10);
	ck_assert_uint_eq(acct_lane_self(a, 1, 1), 100);
	ck_assert_uint_eq(acct_routine_calls(a, 3), 0); /* out of range */
	ck_assert_uint_eq(acct_lane_self(a, 2, 1), 0);
	ck_assert_uint_eq(acct_lane_self(a, -1, 1), 0);
	ck_assert_uint_eq(acct_lane_self(a, 0, 3), 0);
	/* a second thread: both counted, read alone and as a whole */
	acct_enter_t(a, T + 1, 1, 0x10, 0x20, t1);
	acct_leave_t(a, T + 1, t2, NULL);
	ck_assert_uint_eq(acct_routine_calls(a, 1), 2);
	ck_assert_uint_eq(acct_routine_calls(a, 2), 5);
	ck_assert_uint_eq(acct_lane_self(a, 0, 1), 15);
	ck_assert_uint_eq(acct_lane_self(a, 1, 1), 150);
	ck_assert_uint_eq(acct_routines(a)[1].calls, 2);
	ck_assert_uint_eq(acct_routines(a)[1].self, 15);
	acct_free(a);
}
END_TEST

struct closed {
	size_t n;
	int tid[8];
	uint32_t routine[8];
	acct_time_t in[8], out[8];
	bool incomplete[8];
};

static void closed_call(void *arg, int tid, uint32_t routine, acct_time_t t_enter,
			acct_time_t t_exit, bool incomplete)
{
	struct closed *c = arg;

	ck_assert_uint_lt(c->n, 8);
	c->tid[c->n] = tid;
	c->routine[c->n] = routine;
	c->in[c->n] = t_enter;
	c->out[c->n] = t_exit;
	c->incomplete[c->n] = incomplete;
	c->n++;
}

static void closed_is(const struct closed *c, size_t i, uint32_t routine, acct_time_t in,
		      acct_time_t out, bool incomplete)
{
	ck_assert_int_eq(c->tid[i], T);
	ck_assert_uint_eq(c->routine[i], routine);
	ck_assert_uint_eq(c->in[i], in);
	ck_assert_uint_eq(c->out[i], out);
	ck_assert_int_eq(c->incomplete[i], incomplete);
}

/*
 * The recorder: told of each activation as it closes (a return, the frame
 * a tail call replaces, the frames the finish closes), on its lane; not of
 * counted calls; not copied by acct_dup; removed with NULL.
 */
START_TEST(test_recorder)
{
	struct acct *a = acct_new_lanes(4, 2), *d;
	struct closed c = {0};
	acct_time_t t[6][2] = {{0, 0}, {1, 10}, {2, 20}, {3, 30}, {4, 40}, {9, 90}};
	bool shared[2] = {true, true};

	acct_set_recorder(a, 1, closed_call, &c);
	acct_enter_t(a, T, 1, 0x10, 0x20, t[0]);
	acct_enter_t(a, T, 2, 0x18, 0x28, t[1]);
	ck_assert_int_eq(acct_chain_t(a, T, 3, t[2]), 0);
	ck_assert_int_eq(acct_leave_t(a, T, t[3], NULL), 0);
	acct_count(a, T, 2);
	acct_enter_t(a, T, 1, 0x18, 0x28, t[4]);
	ck_assert_uint_eq(c.n, 2);
	closed_is(&c, 0, 2, 10, 20, false);
	closed_is(&c, 1, 3, 20, 30, false);
	d = acct_dup(a);
	acct_finish_t(d, t[5], shared); /* the copy's closing frames are not told */
	ck_assert_uint_eq(c.n, 2);
	acct_free(d);
	acct_finish_t(a, t[5], shared);
	ck_assert_uint_eq(c.n, 4);
	closed_is(&c, 2, 1, 40, 90, true); /* the top first */
	closed_is(&c, 3, 1, 0, 90, true);
	/* a lane out of range is lane 0 */
	acct_set_recorder(a, 2, closed_call, &c);
	acct_enter_t(a, T, 2, 0x10, 0x20, t[5]);
	acct_leave(a, T, 12, NULL);
	ck_assert_uint_eq(c.n, 5);
	closed_is(&c, 4, 2, 9, 12, false);
	acct_set_recorder(a, 0, NULL, NULL);
	acct_enter(a, T, 2, 0x10, 0x20, 13);
	acct_leave(a, T, 14, NULL);
	ck_assert_uint_eq(c.n, 5);
	acct_free(a);
}
END_TEST

/* Results r, arcs and nodes of `after` are those of `before` renumbered by map. */
static void same_renumbered(const struct acct_routine *r0, const struct acct_arc *a0, size_t na0,
			    const struct acct_node *v0, size_t nv0, const struct acct_routine *r1,
			    const struct acct_arc *a1, size_t na1, const struct acct_node *v1,
			    size_t nv1, const uint32_t *map, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (map[i] == ACCT_NONE) {
			ck_assert_uint_eq(r0[i].calls, 0);
			ck_assert_uint_eq(r0[i].self, 0);
			continue;
		}
		ck_assert_uint_eq(r1[map[i]].calls, r0[i].calls);
		ck_assert_uint_eq(r1[map[i]].calls_made, r0[i].calls_made);
		ck_assert_uint_eq(r1[map[i]].self, r0[i].self);
		ck_assert_uint_eq(r1[map[i]].total, r0[i].total);
	}
	ck_assert_uint_eq(na1, na0);
	for (size_t k = 0; k < na0; k++) {
		ck_assert_uint_eq(a1[k].caller,
				  a0[k].caller == ACCT_NONE ? ACCT_NONE : map[a0[k].caller]);
		ck_assert_uint_eq(a1[k].callee, map[a0[k].callee]);
		ck_assert_uint_eq(a1[k].calls, a0[k].calls);
		ck_assert_uint_eq(a1[k].time, a0[k].time);
	}
	ck_assert_uint_eq(nv1, nv0);
	for (size_t k = 0; k < nv0; k++) {
		ck_assert_uint_eq(v1[k].parent, v0[k].parent);
		ck_assert_uint_eq(v1[k].routine,
				  v0[k].routine == ACCT_NONE ? ACCT_NONE : map[v0[k].routine]);
		ck_assert_uint_eq(v1[k].calls, v0[k].calls);
		ck_assert_uint_eq(v1[k].self, v0[k].self);
	}
}

/*
 * A finished state kept small (-f: an ended process): of 40 routines the 4
 * used stay, in order, with the program's and each thread's results, arcs
 * and contexts renumbered; a routine only counted, or only a caller, is
 * used. Events after it go on with the new numbers. Refused with a frame
 * open or a recorder set.
 */
START_TEST(test_compact)
{
	enum { N = 40, M = 3, A = 9, B = 17, C = 30 };
	struct acct *a = acct_new_lanes(N, 2), *b;
	struct acct_thread_info t0, t1;
	const struct acct_arc *a0, *a1;
	const struct acct_node *v0, *v1;
	size_t na0, na1, nv0, nv1;
	uint32_t map[N];
	acct_time_t t[2];

#define AT(x) (t[0] = (x), t[1] = 2 * (x), t)
	acct_enter_t(a, 1, M, 1000, 0, AT(0));
	acct_enter_t(a, 1, A, 900, 0, AT(10));
	acct_enter_t(a, 1, B, 800, 0, AT(20));
	acct_leave_t(a, 1, AT(30), NULL);
	acct_chain_t(a, 1, B, AT(40));
	acct_leave_t(a, 1, AT(45), NULL);
	acct_count(a, 1, C);
	acct_leave_t(a, 1, AT(100), NULL);
	acct_enter_t(a, 2, A, 700, 0, AT(0));
	acct_enter_t(a, 2, B, 600, 0, AT(5));
	acct_leave_t(a, 2, AT(50), NULL);
	acct_leave_t(a, 2, AT(60), NULL);
	b = acct_dup(a);

	ck_assert_uint_eq(acct_used(a, map), 4);
	ck_assert_uint_eq(map[M], 0);
	ck_assert_uint_eq(map[A], 1);
	ck_assert_uint_eq(map[B], 2);
	ck_assert_uint_eq(map[C], 3);
	ck_assert_uint_eq(map[0], ACCT_NONE);
	ck_assert_uint_eq(map[N - 1], ACCT_NONE);
	ck_assert(acct_compact(a, map, 4));
	ck_assert_uint_eq(acct_n_routines(a), 4);
	a0 = acct_arcs(b, &na0);
	a1 = acct_arcs(a, &na1);
	v0 = acct_nodes(b, &nv0);
	v1 = acct_nodes(a, &nv1);
	same_renumbered(acct_routines(b), a0, na0, v0, nv0, acct_routines(a), a1, na1, v1, nv1, map,
			N);
	for (size_t i = 0; i < 2; i++) {
		ck_assert_int_eq(acct_thread(b, i, &t0), 0);
		ck_assert_int_eq(acct_thread(a, i, &t1), 0);
		ck_assert_int_eq(t1.tid, t0.tid);
		same_renumbered(t0.r, t0.arcs, t0.n_arcs, t0.nodes, t0.n_nodes, t1.r, t1.arcs,
				t1.n_arcs, t1.nodes, t1.n_nodes, map, N);
	}
	/* the second lane too */
	{
		struct acct *l0 = acct_lane(b, 1), *l1 = acct_lane(a, 1);

		for (size_t i = 0; i < N; i++)
			if (map[i] != ACCT_NONE)
				ck_assert_uint_eq(acct_routines(l1)[map[i]].self,
						  acct_routines(l0)[i].self);
		acct_free(l0);
		acct_free(l1);
	}
	/* on with the new numbers: the same context and arc, one call more */
	acct_enter_t(a, 1, map[M], 1000, 0, AT(200));
	acct_enter_t(a, 1, map[A], 900, 0, AT(210));
	acct_leave_t(a, 1, AT(220), NULL);
	acct_leave_t(a, 1, AT(230), NULL);
	ck_assert_uint_eq(acct_routines(a)[map[A]].calls, acct_routines(b)[A].calls + 1);
	ck_assert_uint_eq(acct_arcs(a, &na1)[0].calls, a0[0].calls + 1);
	acct_nodes(a, &nv1);
	ck_assert_uint_eq(nv1, nv0);
	acct_free(b);
	acct_free(a);

	/* a frame open: refused, nothing changed */
	a = acct_new(N);
	acct_enter(a, 1, M, 1000, 0, 0);
	ck_assert_uint_eq(acct_used(a, map), 1);
	ck_assert(!acct_compact(a, map, 1));
	ck_assert_uint_eq(acct_n_routines(a), N);
	acct_free(a);
#undef AT
}
END_TEST

static Suite *account_suite(void)
{
	Suite *s = suite_create("account");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_empty);
	tcase_add_test(tc, test_nesting);
	tcase_add_test(tc, test_recursion);
	tcase_add_test(tc, test_fortstat_abcd);
	tcase_add_test(tc, test_tail_chain);
	tcase_add_test(tc, test_self_chain);
	tcase_add_test(tc, test_unwind);
	tcase_add_test(tc, test_finish_incomplete);
	tcase_add_test(tc, test_thread_exit);
	tcase_add_test(tc, test_solo_then_shared);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_count);
	tcase_add_test(tc, test_count_n);
	tcase_add_test(tc, test_clock_backwards);
	tcase_add_test(tc, test_deep);
	tcase_add_test(tc, test_net);
	tcase_add_test(tc, test_uncertainty);
	tcase_add_test(tc, test_ovh);
	tcase_add_test(tc, test_use_measured);
	tcase_add_test(tc, test_arcs);
	tcase_add_test(tc, test_bad_routine);
	tcase_add_test(tc, test_contexts);
	tcase_add_test(tc, test_root_contexts);
	tcase_add_test(tc, test_contexts_many);
	tcase_add_test(tc, test_total_counts);
	tcase_add_test(tc, test_grow);
	tcase_add_test(tc, test_lanes);
	tcase_add_test(tc, test_solo_reads);
	tcase_add_test(tc, test_recorder);
	tcase_add_test(tc, test_compact);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(account_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
