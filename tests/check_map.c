// SPDX-License-Identifier: GPL-2.0-or-later
/* check_map.c - the open-addressing map against a plain array, with deletions. */
#include <check.h>
#include <stdlib.h>

#include "fortstat/map.h"

START_TEST(test_basic)
{
	struct u64map m = {0}, d;
	uint64_t v = 0;

	ck_assert_int_eq(u64map_get(&m, 5, &v), 0);
	ck_assert_int_eq(u64map_del(&m, 5), 0);
	u64map_put(&m, 5, 50);
	u64map_put(&m, 5, 51);
	ck_assert_uint_eq(m.n, 1);
	ck_assert_int_eq(u64map_get(&m, 5, &v), 1);
	ck_assert_uint_eq(v, 51);
	ck_assert_int_eq(u64map_get(&m, 0, &v), 0);
	u64map_dup(&d, &m);
	ck_assert_int_eq(u64map_del(&m, 5), 1);
	ck_assert_int_eq(u64map_get(&m, 5, NULL), 0);
	ck_assert_int_eq(u64map_get(&d, 5, NULL), 1);
	u64map_free(&m);
	u64map_free(&d);
	ck_assert_uint_eq(m.cap, 0);
}
END_TEST

/* Random puts and deletions against a reference; colliding keys (multiples of the size) too. */
START_TEST(test_random)
{
	enum { N = 4096 };
	static uint64_t ref[N]; /* key i+1 (or i*4096+1) -> value, 0: absent */
	struct u64map m = {0};
	unsigned seed = 12345;

	for (int step = 0; step < 200000; step++) {
		size_t i;
		uint64_t k, v;

		seed = seed * 1103515245u + 12345u;
		i = (seed >> 8) % N;
		k = (_i % 2 ? (uint64_t)i * 4096 : (uint64_t)i) + 1;
		if ((seed >> 4) % 3) {
			v = ((uint64_t)seed << 1) | 1;
			u64map_put(&m, k, v);
			ref[i] = v;
		} else {
			ck_assert_int_eq(u64map_del(&m, k), ref[i] != 0);
			ref[i] = 0;
		}
	}
	for (size_t i = 0; i < N; i++) {
		uint64_t k = (_i % 2 ? (uint64_t)i * 4096 : (uint64_t)i) + 1, v = 0;

		ck_assert_int_eq(u64map_get(&m, k, &v), ref[i] != 0);
		if (ref[i])
			ck_assert_uint_eq(v, ref[i]);
	}
	u64map_free(&m);
}
END_TEST

static Suite *map_suite(void)
{
	Suite *s = suite_create("map");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_basic);
	tcase_add_loop_test(tc, test_random, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(map_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
