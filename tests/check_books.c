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
	struct stamp s = { { 0 } };

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
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){ 40, 400 });
	s = at(1100, 11000);
	books_enter(b, T, 1, 0x6ff0, 2, &s); /* 0 ran 100/1000 gross, 60/600 net */
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){ 40, 400 });
	s = at(1200, 12000);
	books_leave(b, T, &s, NULL); /* 1 ran 100/1000 gross, 60/600 net */
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){ 40, 400 });
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
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){ 5000, 5000 });
	s = at(1100, 1100);
	books_leave(b, T, &s, NULL);
	ck_assert_uint_eq(self_of(b, CPU, true, 0), 0);
	ck_assert_uint_eq(self_of(b, WALL, true, 0), 0);
	/* a negative cost is no cost */
	books_stop_cost(b, T, (double[FS_N_CLOCKS]){ -5000, -5000 });
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
	books_stop_cost(b, 1, (double[FS_N_CLOCKS]){ 30, 30 });
	s = at(100, 100);
	books_leave(b, 1, &s, NULL);
	books_leave(b, 2, &s, NULL);
	ck_assert_uint_eq(self_of(b, CPU, true, 0), 70 + 100);
	ck_assert_uint_eq(self_of(b, CPU, false, 0), 200);
	books_free(b);
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

/* Frames, tail chains and the end: the wall books close at the end, the others at the last stamp. */
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

static Suite *books_suite(void)
{
	Suite *s = suite_create("books");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_two_clocks);
	tcase_add_test(tc, test_net);
	tcase_add_test(tc, test_net_monotonic);
	tcase_add_test(tc, test_net_threads);
	tcase_add_test(tc, test_count_only);
	tcase_add_test(tc, test_like_grow);
	tcase_add_test(tc, test_frames_finish);
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
