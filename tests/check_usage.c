// SPDX-License-Identifier: GPL-2.0-or-later
/* check_usage.c - Check suite for user and system time, utilisation and concurrency (usage.h). */
#include "fortstat/usage.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>

/* A stat line of a thread whose name holds spaces and parentheses. */
static const char *stat_line = "4242 (a (b) c) S 1 4242 4242 0 -1 4194560 120 0 0 0 "
			       "731 29 0 0 20 0 1 0 5316 12345 678 18446744073709551615\n";

START_TEST(test_parse_stat)
{
	uint64_t ut = 1, st = 1;

	ck_assert_int_eq(usage_parse_stat(stat_line, &ut, &st), 0);
	ck_assert_uint_eq(ut, 731);
	ck_assert_uint_eq(st, 29);
}
END_TEST

START_TEST(test_parse_stat_bad)
{
	uint64_t ut = 7, st = 7;

	ck_assert_int_eq(usage_parse_stat("", &ut, &st), -1);
	ck_assert_int_eq(usage_parse_stat("12 (x) S 1 2 3", &ut, &st), -1); /* too short */
	ck_assert_int_eq(usage_parse_stat("12 (x) S 1 2 3 4 5 6 7 8 9 10 -3 4\n", &ut, &st), -1);
	ck_assert_int_eq(usage_parse_stat("12 (x) S 1 2 3 4 5 6 7 8 9 10 7x 4\n", &ut, &st), -1);
	ck_assert_int_eq(usage_parse_stat("12 x S 1 2 3 4 5 6 7 8 9 10 11 12", &ut, &st), -1);
	/* the last field may end the string */
	ck_assert_int_eq(usage_parse_stat("12 (x) S 1 2 3 4 5 6 7 8 9 10 11 12", &ut, &st), 0);
	ck_assert_uint_eq(ut, 11);
	ck_assert_uint_eq(st, 12);
}
END_TEST

START_TEST(test_split_ratio)
{
	/* 1 s of CPU from 75 user ticks and 25 system ticks: 0.75 / 0.25 */
	struct usage_reading a = {.run_ns = 500, .utime = 5, .stime = 5};
	struct usage_reading b = {.run_ns = 1000000500, .utime = 80, .stime = 30};
	struct usage_split s = usage_between(&a, &b);

	ck_assert_uint_eq(s.user_ns, 750000000);
	ck_assert_uint_eq(s.sys_ns, 250000000);
}
END_TEST

START_TEST(test_split_one_sided)
{
	struct usage_reading a = {.run_ns = 0, .utime = 0, .stime = 0};
	struct usage_reading u = {.run_ns = 30000000, .utime = 3, .stime = 0};
	struct usage_reading k = {.run_ns = 30000000, .utime = 0, .stime = 2};
	struct usage_reading none = {.run_ns = 4000000, .utime = 0, .stime = 0};
	struct usage_split s;

	s = usage_between(&a, &u);
	ck_assert_uint_eq(s.user_ns, 30000000);
	ck_assert_uint_eq(s.sys_ns, 0);
	s = usage_between(&a, &k);
	ck_assert_uint_eq(s.user_ns, 0);
	ck_assert_uint_eq(s.sys_ns, 30000000);
	/* under a tick: the kernel calls it user time, and so does fortstat */
	s = usage_between(&a, &none);
	ck_assert_uint_eq(s.user_ns, 4000000);
	ck_assert_uint_eq(s.sys_ns, 0);
}
END_TEST

START_TEST(test_split_backwards)
{
	struct usage_reading a = {.run_ns = 900, .utime = 9, .stime = 9};
	struct usage_reading b = {.run_ns = 100, .utime = 1, .stime = 1};
	struct usage_split s = usage_between(&a, &b);

	ck_assert_uint_eq(s.user_ns, 0);
	ck_assert_uint_eq(s.sys_ns, 0);
}
END_TEST

START_TEST(test_split_large)
{
	/* a day of CPU time in ns times many ticks would overflow 64 bits */
	struct usage_reading a = {0, 0, 0};
	struct usage_reading b = {
	    .run_ns = 86400ull * 1000000000ull, .utime = 8640000 - 1, .stime = 1};
	struct usage_split s = usage_between(&a, &b);

	ck_assert_uint_eq(s.user_ns + s.sys_ns, b.run_ns);
	ck_assert_uint_eq(s.sys_ns, 10000000); /* one tick's share: 10 ms */
}
END_TEST

START_TEST(test_concurrency)
{
	/* CONVEX's Doloop 1: 1.688 s of CPU in 1.006 s of wall time */
	ck_assert(fabs(usage_concurrency(1.6880030, 1.0057740) - 1.6783) < 1e-4);
	ck_assert(isnan(usage_concurrency(1.0, 0.0)));
	ck_assert(isnan(usage_concurrency(1.0, -1.0)));
	ck_assert(usage_concurrency(0.0, 2.0) == 0.0);
}
END_TEST

START_TEST(test_utilisation)
{
	/* two busy threads on two CPUs: 100 %; one: 50 % */
	ck_assert(fabs(usage_utilisation(2.0, 1.0, 2) - 100.0) < 1e-9);
	ck_assert(fabs(usage_utilisation(1.0, 1.0, 2) - 50.0) < 1e-9);
	/* csh's example: 1.01u 1.35s in 3 s on one CPU would be 78.7 % */
	ck_assert(fabs(usage_utilisation(2.36, 3.0, 1) - 78.6667) < 1e-3);
	ck_assert(isnan(usage_utilisation(1.0, 0.0, 2)));
	ck_assert(isnan(usage_utilisation(1.0, 1.0, 0)));
}
END_TEST

START_TEST(test_wait)
{
	ck_assert_uint_eq(usage_wait_ns(300000000, 120000), 299880000);
	ck_assert_uint_eq(usage_wait_ns(5, 5), 0);
	ck_assert_uint_eq(usage_wait_ns(5, 7), 0);
}
END_TEST

static Suite *usage_suite(void)
{
	Suite *s = suite_create("usage");
	TCase *tc = tcase_create("usage");

	tcase_add_test(tc, test_parse_stat);
	tcase_add_test(tc, test_parse_stat_bad);
	tcase_add_test(tc, test_split_ratio);
	tcase_add_test(tc, test_split_one_sided);
	tcase_add_test(tc, test_split_backwards);
	tcase_add_test(tc, test_split_large);
	tcase_add_test(tc, test_concurrency);
	tcase_add_test(tc, test_utilisation);
	tcase_add_test(tc, test_wait);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(usage_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
