// SPDX-License-Identifier: GPL-2.0-or-later
/* check_lines.c - Check suite for samples to timed routines and source lines (lines.h). */
#include "fortstat/lines.h"

#include <check.h>
#include <stdlib.h>

/*
 * A synthetic image: routine 7 at [0x1000, 0x1100), routine 3 at
 * [0x1200, 0x1280), untimed code between; lines of a.c and b.h.
 */
static void image(struct line_table *lt, struct lines_extent x[2])
{
	uint32_t a, b;

	*lt = (struct line_table){0};
	a = line_table_file(lt, "a.c");
	b = line_table_file(lt, "b.h");
	/* out of order: line_table_sort puts them right */
	line_table_add(lt, 0x1040, 12, a); /* the hot loop of routine 7 */
	line_table_add(lt, 0x1000, 10, a);
	line_table_add(lt, 0x1060, 13, a);
	line_table_add(lt, 0x1080, 5, b); /* inlined from a header */
	line_table_add(lt, 0x10a0, 0, 0); /* a sequence ends: no line until 0x1200 */
	line_table_add(lt, 0x1200, 30, a);
	line_table_add(lt, 0x1200, 0, 0); /* an end at the next one's start: the line wins */
	line_table_add(lt, 0x1240, 31, a);
	line_table_sort(lt);
	x[0] = (struct lines_extent){0x1200, 0x1280, 3};
	x[1] = (struct lines_extent){0x1000, 0x1100, 7};
	lines_extents_sort(x, 2);
}

START_TEST(test_extent_find)
{
	struct lines_extent x[2];
	struct line_table lt;

	image(&lt, x);
	ck_assert_int_eq(lines_extent_find(x, 2, 0xfff), -1);
	ck_assert_int_eq(x[lines_extent_find(x, 2, 0x1000)].routine, 7);
	ck_assert_int_eq(x[lines_extent_find(x, 2, 0x10ff)].routine, 7);
	ck_assert_int_eq(lines_extent_find(x, 2, 0x1100), -1); /* hi is outside */
	ck_assert_int_eq(lines_extent_find(x, 2, 0x11ff), -1);
	ck_assert_int_eq(x[lines_extent_find(x, 2, 0x127f)].routine, 3);
	ck_assert_int_eq(lines_extent_find(x, 2, 0x1280), -1);
	ck_assert_int_eq(lines_extent_find(x, 0, 0x1000), -1);
	line_table_free(&lt);
}
END_TEST

START_TEST(test_line_find)
{
	struct lines_extent x[2];
	struct line_table lt;

	image(&lt, x);
	ck_assert_ptr_null(line_table_find(&lt, 0xfff));
	ck_assert_uint_eq(line_table_find(&lt, 0x1000)->line, 10);
	ck_assert_uint_eq(line_table_find(&lt, 0x103f)->line, 10);
	ck_assert_uint_eq(line_table_find(&lt, 0x1040)->line, 12);
	ck_assert_uint_eq(line_table_find(&lt, 0x1090)->line, 5);
	ck_assert_uint_eq(line_table_find(&lt, 0x10c0)->line, 0);
	ck_assert_uint_eq(line_table_find(&lt, 0x1200)->line, 30);
	ck_assert_uint_eq(line_table_find(&lt, 0x9999)->line, 31);
	ck_assert_ptr_null(line_table_find(NULL, 0x1000));
	line_table_free(&lt);
}
END_TEST

/* Samples to routines and lines: sums per line, the hottest first, outside counted. */
START_TEST(test_attribute)
{
	const struct lines_sample s[] = {
	    {0x1044, 50}, {0x1050, 30}, /* routine 7, line 12: 80 */
	    {0x1000, 5},		/* routine 7, line 10 */
	    {0x1064, 5},		/* routine 7, line 13 */
	    {0x1088, 7},		/* routine 7, b.h:5 */
	    {0x10c0, 2},		/* routine 7, no line */
	    {0x1150, 11}, {0x5000, 4},	/* untimed code: outside */
	    {0x1250, 9},  {0x1200, 1},	/* routine 3: lines 31 and 30 */
	};
	struct lines_extent x[2];
	struct line_table lt;
	struct lines_count *c;
	size_t n = 0;
	uint64_t out = 0;

	image(&lt, x);
	c = lines_attribute(s, sizeof(s) / sizeof(*s), x, 2, &lt, &n, &out);
	ck_assert_uint_eq(out, 15);
	ck_assert_uint_eq(n, 7);
	/* routine 3 first (by index), its hottest line first */
	ck_assert_uint_eq(c[0].routine, 3);
	ck_assert_uint_eq(c[0].line, 31);
	ck_assert_uint_eq(c[0].n, 9);
	ck_assert_uint_eq(c[1].line, 30);
	ck_assert_uint_eq(c[1].n, 1);
	ck_assert_uint_eq(c[2].routine, 7);
	ck_assert_uint_eq(c[2].line, 12);
	ck_assert_str_eq(lt.files[c[2].file], "a.c");
	ck_assert_uint_eq(c[2].n, 80);
	ck_assert_uint_eq(c[3].line, 5);
	ck_assert_str_eq(lt.files[c[3].file], "b.h");
	ck_assert_uint_eq(c[3].n, 7);
	/* 5 and 5: by line */
	ck_assert_uint_eq(c[4].line, 10);
	ck_assert_uint_eq(c[5].line, 13);
	ck_assert_uint_eq(c[6].line, 0);
	ck_assert_uint_eq(c[6].file, UINT32_MAX);
	ck_assert_uint_eq(c[6].n, 2);
	free(c);
	line_table_free(&lt);
}
END_TEST

/* No line table (no DWARF): a routine's samples at no line; no sample: nothing. */
START_TEST(test_attribute_no_lines)
{
	const struct lines_sample s[] = {{0x1044, 3}, {0x1250, 4}, {0x1044, 2}};
	struct lines_extent x[2];
	struct line_table lt;
	struct lines_count *c;
	size_t n = 9;
	uint64_t out = 9;

	image(&lt, x);
	c = lines_attribute(s, 3, x, 2, NULL, &n, &out);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(out, 0);
	ck_assert_uint_eq(c[0].routine, 3);
	ck_assert_uint_eq(c[0].n, 4);
	ck_assert_uint_eq(c[1].routine, 7);
	ck_assert_uint_eq(c[1].n, 5);
	ck_assert_uint_eq(c[1].line, 0);
	free(c);
	ck_assert_ptr_null(lines_attribute(s, 0, x, 2, &lt, &n, &out));
	ck_assert_uint_eq(n, 0);
	ck_assert_ptr_null(lines_attribute(s, 3, x, 0, &lt, &n, &out));
	ck_assert_uint_eq(out, 9);
	line_table_free(&lt);
}
END_TEST

static Suite *lines_suite(void)
{
	Suite *s = suite_create("lines");
	TCase *tc = tcase_create("lines");

	tcase_add_test(tc, test_extent_find);
	tcase_add_test(tc, test_line_find);
	tcase_add_test(tc, test_attribute);
	tcase_add_test(tc, test_attribute_no_lines);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(lines_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
