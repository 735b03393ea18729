// SPDX-License-Identifier: GPL-2.0-or-later
/* check_calib.c - Check suite for the calibration's summary of its batches (calib.h). */
#include "fortstat/calib.h"
#include "fortstat/calibcache.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/*
 * Three batches whose figures are not in order: the medians are each
 * row's, the resid pairs each batch's f1, f2 with the same batch's stops
 * (per batch 1, 18, 5: median 5), and the rows are left as they were.
 * Sorting each row in place first gave 8 (pairs 10-2, 20-9, 30-25).
 */
START_TEST(test_summarise_pairs_batches)
{
	double f[CALIB_FIGURES][CALIB_MAX_BATCHES] = {
	    {10, 20, 30}, {10, 20, 30}, {12, 24, 36}, {12, 24, 36},
	    {9, 2, 25},	  {11, 3, 30},	{4, 6, 5},    {5, 7, 6},
	};
	double before[CALIB_FIGURES][CALIB_MAX_BATCHES];
	struct calib c;

	memset(&c, 0, sizeof(c));
	memcpy(before, f, sizeof(f));
	calib_summarise((const double(*)[CALIB_MAX_BATCHES])f, 3, &c);
	ck_assert_uint_eq(c.batches, 3);
	ck_assert_double_eq(c.f1_ns, 20);
	ck_assert_double_eq(c.f2_ns, 20);
	ck_assert_double_eq(c.alt_f1_ns, 24);
	ck_assert_double_eq(c.seg_ns, 9);
	ck_assert_double_eq(c.alt_seg_ns, 11);
	ck_assert_double_eq(c.count_ns, 5);
	ck_assert_double_eq(c.alt_count_ns, 6);
	ck_assert_double_eq(c.resid_ns, 5);	/* 10-9, 20-2, 30-25 */
	ck_assert_double_eq(c.alt_resid_ns, 6); /* 12-11, 24-3, 36-30 */
	ck_assert_mem_eq(f, before, sizeof(f));
}
END_TEST

/* An even number of batches: the mean of the middle two. No stops measured: no resid. */
START_TEST(test_summarise_even_no_seg)
{
	double f[CALIB_FIGURES][CALIB_MAX_BATCHES] = {{40, 10, 30, 20}, {1, 2, 3, 4}};
	struct calib c;

	memset(&c, 0, sizeof(c));
	calib_summarise((const double(*)[CALIB_MAX_BATCHES])f, 4, &c);
	ck_assert_double_eq(c.f1_ns, 25);
	ck_assert_double_eq(c.f2_ns, 2.5);
	ck_assert_double_eq(c.seg_ns, 0);
	ck_assert_double_eq(c.resid_ns, 0);
	ck_assert_double_eq(c.dresid_ns, 0);
}
END_TEST

/* More batches than there is room for: only the room's are read. */
START_TEST(test_summarise_bounded)
{
	double f[CALIB_FIGURES][CALIB_MAX_BATCHES];
	struct calib c;

	for (int k = 0; k < CALIB_FIGURES; k++)
		for (int i = 0; i < CALIB_MAX_BATCHES; i++)
			f[k][i] = i + 1;
	memset(&c, 0, sizeof(c));
	calib_summarise((const double(*)[CALIB_MAX_BATCHES])f, 1000, &c);
	ck_assert_uint_eq(c.batches, CALIB_MAX_BATCHES);
	ck_assert_double_eq(c.f1_ns, (CALIB_MAX_BATCHES + 1) / 2);
}
END_TEST

/* A kept calibration reads back bit for bit; lines that are not sane do not. */
START_TEST(test_cache_line_round_trip)
{
	struct calib c = {.f1_ns = 27.123456789,
			  .f2_ns = 31.5,
			  .alt_f1_ns = 1.0 / 3,
			  .resid_ns = -186.362,
			  .alt_resid_ns = -0.5,
			  .seg_ns = 5949.37,
			  .count_ns = 2.25,
			  .seconds = 0.17,
			  .batches = 4,
			  .calls = 5000},
		     back;
	uint64_t key;
	double t;
	char *line = calib_cache_line(0xfedcba9876543210ull, 1795708226.912, &c), *bad;

	ck_assert_int_eq(calib_cache_parse(line, &key, &t, &back), 0);
	ck_assert(key == 0xfedcba9876543210ull);
	ck_assert(t > 1795708226.91 && t < 1795708226.92);
	ck_assert_int_eq(memcmp(&c, &back, sizeof(c)), 0);
	/* cut anywhere: not taken */
	for (size_t n = 0; n < strlen(line); n++) {
		bad = strndup(line, n);
		ck_assert_msg(calib_cache_parse(bad, &key, &t, &back) < 0, "cut at %zu taken", n);
		free(bad);
	}
	/* a cost over 10 ms, a negative cost, too many batches, a word more */
	c.f2_ns = 2e7;
	bad = calib_cache_line(1, 1, &c);
	ck_assert_int_lt(calib_cache_parse(bad, &key, &t, &back), 0);
	free(bad);
	c.f2_ns = -1;
	bad = calib_cache_line(1, 1, &c);
	ck_assert_int_lt(calib_cache_parse(bad, &key, &t, &back), 0);
	free(bad);
	c.f2_ns = 1;
	c.batches = CALIB_MAX_BATCHES + 1;
	bad = calib_cache_line(1, 1, &c);
	ck_assert_int_lt(calib_cache_parse(bad, &key, &t, &back), 0);
	free(bad);
	bad = malloc(strlen(line) + 8);
	strcpy(bad, line);
	strcat(bad, " 0x1p+0");
	ck_assert_int_lt(calib_cache_parse(bad, &key, &t, &back), 0);
	free(bad);
	free(line);
}
END_TEST

static Suite *calib_suite(void)
{
	Suite *s = suite_create("calib");
	TCase *tc = tcase_create("summarise");

	tcase_add_test(tc, test_summarise_pairs_batches);
	tcase_add_test(tc, test_summarise_even_no_seg);
	tcase_add_test(tc, test_summarise_bounded);
	tcase_add_test(tc, test_cache_line_round_trip);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(calib_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
