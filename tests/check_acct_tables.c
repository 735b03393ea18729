// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_acct_tables.c - the accounting's indexed tables on their own
 * (src/core/acct_tables.h): arcs by (caller, callee) and calling-context
 * trees by (parent, routine), their growth, lanes and deep copies.
 */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/acct_tables.h"

/* More entries than either table's first allocation (32 arcs, 16 nodes). */
#define MANY 300

START_TEST(test_arcs_index)
{
	struct arcset s = {.lanes = 3};
	size_t i, j;

	ck_assert_uint_eq(arcset_get(&s, ACCT_NONE, 0), 0);
	ck_assert_uint_eq(arcset_get(&s, 0, 1), 1);
	ck_assert_uint_eq(arcset_get(&s, 1, 0), 2); /* (a, b) and (b, a) are two arcs */
	ck_assert_uint_eq(arcset_get(&s, 0, 1), 1);
	ck_assert_uint_eq(s.n, 3);
	ck_assert_uint_eq(s.v[0].caller, ACCT_NONE);
	ck_assert_uint_eq(s.v[0].callee, 0);
	ck_assert_uint_eq(s.v[2].caller, 1);
	ck_assert_uint_eq(s.v[2].callee, 0);
	/* times written stay with their arc through the growth */
	s.v[1].calls = 7;
	s.v[1].time = 70;
	s.lt[1].l[1].total = 71;
	for (i = 0; i < MANY; i++) {
		j = arcset_get(&s, (uint32_t)i + 2, (uint32_t)i);
		ck_assert_uint_eq(j, i + 3);
		ck_assert_uint_eq(s.v[j].calls, 0);
		ck_assert_uint_eq(s.lt[j].l[0].self, 0);
		ck_assert_uint_eq(s.lt[j].l[1].total, 0);
		s.v[j].calls = i;
	}
	ck_assert_uint_eq(s.n, MANY + 3);
	ck_assert_uint_eq(arcset_get(&s, 0, 1), 1);
	ck_assert_uint_eq(s.v[1].calls, 7);
	ck_assert_uint_eq(s.v[1].time, 70);
	ck_assert_uint_eq(s.lt[1].l[1].total, 71);
	ck_assert_uint_eq(arcset_get(&s, 150 + 2, 150), 153);
	ck_assert_uint_eq(s.v[153].calls, 150);
	ck_assert_uint_eq(s.n, MANY + 3);
	ck_assert_uint_eq((uintptr_t)s.lt % ACCT_LINE, 0); /* an arc's lanes: one line */
	ck_assert_uint_eq((uintptr_t)s.v % ACCT_LINE, 0);  /* an arc: half of one */
	ck_assert_uint_eq(sizeof(*s.lt), ACCT_LINE);
	arcset_free(&s);
}
END_TEST

START_TEST(test_arcs_dup)
{
	struct arcset s = {.lanes = 2}, d;

	arcset_get(&s, 4, 5);
	s.v[0].calls = 3;
	s.lt[0].l[0].self = 30;
	arcset_dup(&d, &s);
	d.v[0].calls = 9;
	d.lt[0].l[0].self = 90;
	ck_assert_uint_eq(arcset_get(&d, 6, 7), 1); /* a new arc in the copy alone */
	ck_assert_uint_eq(s.v[0].calls, 3);
	ck_assert_uint_eq(s.lt[0].l[0].self, 30);
	ck_assert_uint_eq(s.n, 1);
	ck_assert_uint_eq(arcset_get(&s, 6, 7), 1);
	ck_assert_uint_eq(s.v[1].calls, 0);
	ck_assert_uint_eq(arcset_get(&d, 4, 5), 0);
	ck_assert_uint_eq(d.v[0].calls, 9);
	arcset_free(&s);
	arcset_free(&d);
}
END_TEST

START_TEST(test_cct_tree)
{
	struct cct c = {0};
	bool created;
	uint32_t a, b, a2, prev;

	cct_init(&c, 4);
	ck_assert_uint_eq(c.n, 1);
	ck_assert_uint_eq(c.v[0].parent, ACCT_NONE);
	ck_assert_uint_eq(c.v[0].routine, ACCT_NONE);
	ck_assert_uint_eq(c.x[0].arc, SIZE_MAX);
	a = cct_child(&c, 0, 10, &created);
	ck_assert(created);
	ck_assert_uint_eq(a, 1);
	ck_assert_uint_eq(c.v[a].parent, 0);
	ck_assert_uint_eq(c.v[a].routine, 10);
	ck_assert_uint_eq(c.x[a].child, 0);
	ck_assert_uint_eq(c.x[a].arc, SIZE_MAX);
	ck_assert_uint_eq(c.x[a].tarc, SIZE_MAX);
	b = cct_child(&c, a, 11, &created);
	ck_assert(created);
	ck_assert_uint_eq(b, 2);
	/* the same routine under another parent is another context */
	a2 = cct_child(&c, b, 10, &created);
	ck_assert(created);
	ck_assert_uint_eq(a2, 3);
	ck_assert_uint_eq(cct_child(&c, 0, 10, &created), a);
	ck_assert(!created);
	c.v[a].calls = 5;
	c.x[a].self[2] = 55;
	/* a chain deeper than the first allocation: every parent before its child */
	prev = a2;
	for (uint32_t i = 0; i < MANY; i++) {
		uint32_t n = cct_child(&c, prev, 100 + i, &created);

		ck_assert(created);
		ck_assert_uint_gt(n, prev);
		ck_assert_uint_eq(c.v[n].parent, prev);
		ck_assert_uint_eq(c.x[n].self[0], 0);
		ck_assert_uint_eq(c.x[n].self[2], 0);
		prev = n;
	}
	ck_assert_uint_eq(c.n, MANY + 4);
	ck_assert_uint_eq(c.v[a].calls, 5);
	ck_assert_uint_eq(c.x[a].self[2], 55);
	ck_assert_uint_eq((uintptr_t)c.x % ACCT_LINE, 0);
	ck_assert_uint_eq((uintptr_t)c.v % ACCT_LINE, 0);
	ck_assert_uint_eq(sizeof(*c.x), ACCT_LINE);
	ck_assert_uint_eq(cct_child(&c, a, 11, &created), b);
	ck_assert(!created);
	cct_free(&c);
}
END_TEST

START_TEST(test_cct_merged_dup)
{
	struct cct c = {0}, d;
	bool created;
	uint32_t a;

	cct_init(&c, 2);
	a = cct_child(&c, 0, 3, &created);
	c.v[a].self = 40;
	c.x[a].self[0] = 42;
	cct_dup(&d, &c);
	ck_assert_uint_eq((uintptr_t)d.x % ACCT_LINE, 0); /* a node's record: one line */
	ck_assert_uint_eq(d.x[a].self[0], 42);
	d.v[a].self = 41;
	d.x[a].self[0] = 43;
	ck_assert_uint_eq(c.x[a].self[0], 42);
	ck_assert_uint_eq(cct_child(&d, a, 4, &created), 2);
	ck_assert(created);
	ck_assert_uint_eq(c.v[a].self, 40);
	ck_assert_uint_eq(c.n, 2);
	ck_assert_uint_eq(cct_child(&c, a, 4, &created), 2); /* made again in c: not shared */
	ck_assert(created);
	ck_assert_uint_eq(cct_child(&d, 0, 3, &created), a);
	ck_assert(!created);
	cct_free(&c);
	cct_free(&d);
}
END_TEST

static Suite *acct_tables_suite(void)
{
	Suite *s = suite_create("acct_tables");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_arcs_index);
	tcase_add_test(tc, test_arcs_dup);
	tcase_add_test(tc, test_cct_tree);
	tcase_add_test(tc, test_cct_merged_dup);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(acct_tables_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
