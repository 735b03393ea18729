// SPDX-License-Identifier: GPL-2.0-or-later
/* check_throttle.c - TAU's throttle rule (throttle.h) on its edges. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "fortstat/throttle.h"

/* fortstat's default: 100,000 calls under 10 us each */
#define CALLS 100000
#define MAX_NS 10000.0

START_TEST(test_count)
{
	/* cheap calls: due from the CALLS-th on, not before */
	ck_assert(!throttle_due(0, 0, CALLS, MAX_NS));
	ck_assert(!throttle_due(CALLS - 1, 0, CALLS, MAX_NS));
	ck_assert(throttle_due(CALLS, 0, CALLS, MAX_NS));
	ck_assert(throttle_due(CALLS + 1, 5000 * (uint64_t)(CALLS + 1), CALLS, MAX_NS));
	ck_assert(throttle_due(UINT64_MAX, 0, CALLS, MAX_NS));
	/* CALLS 1: the first call decides */
	ck_assert(!throttle_due(0, 0, 1, MAX_NS));
	ck_assert(throttle_due(1, 9999, 1, MAX_NS));
}
END_TEST

START_TEST(test_mean)
{
	/* the mean a call against USEC: under it due, at it or over not */
	ck_assert(throttle_due(CALLS, (uint64_t)CALLS * 10000 - 1, CALLS, MAX_NS));
	ck_assert(!throttle_due(CALLS, (uint64_t)CALLS * 10000, CALLS, MAX_NS));
	ck_assert(!throttle_due(CALLS, (uint64_t)CALLS * 10001, CALLS, MAX_NS));
	/* past CALLS the mean is over every call so far */
	ck_assert(throttle_due(4 * CALLS, (uint64_t)CALLS * 30000, CALLS, MAX_NS));
	ck_assert(!throttle_due(2 * CALLS, (uint64_t)CALLS * 30000, CALLS, MAX_NS));
	/* a fractional bound (USEC 0.25) */
	ck_assert(throttle_due(8, 1999, 8, 250.0));
	ck_assert(!throttle_due(8, 2000, 8, 250.0));
	/* a time that does not fit a double exactly stays in range */
	ck_assert(!throttle_due(CALLS, UINT64_MAX, CALLS, MAX_NS));
	ck_assert(throttle_due(UINT64_MAX, UINT64_MAX / 2, CALLS, MAX_NS));
}
END_TEST

START_TEST(test_off)
{
	/* --no-throttle (CALLS 0): never, whatever the counts */
	ck_assert(!throttle_due(0, 0, 0, MAX_NS));
	ck_assert(!throttle_due(UINT64_MAX, 0, 0, MAX_NS));
	/* no bound above zero: never */
	ck_assert(!throttle_due(CALLS, 0, CALLS, 0.0));
	ck_assert(!throttle_due(CALLS, 0, CALLS, -1.0));
	ck_assert(!throttle_due(CALLS, 0, CALLS, NAN));
}
END_TEST

/* The trap path: the mean may miss the bound by twice the stop's estimated cost. */
START_TEST(test_trap)
{
	/* a stop of 5 us: due under 10 + 2 x 5 us a call, not at it */
	ck_assert(throttle_due_trap(CALLS, (uint64_t)CALLS * 19999, CALLS, MAX_NS, 5000.0));
	ck_assert(!throttle_due_trap(CALLS, (uint64_t)CALLS * 20000, CALLS, MAX_NS, 5000.0));
	/* a mean the plain rule refuses */
	ck_assert(!throttle_due(CALLS, (uint64_t)CALLS * 15000, CALLS, MAX_NS));
	ck_assert(throttle_due_trap(CALLS, (uint64_t)CALLS * 15000, CALLS, MAX_NS, 5000.0));
	/* no estimate (NaN, 0, below 0): the plain rule */
	ck_assert(!throttle_due_trap(CALLS, (uint64_t)CALLS * 15000, CALLS, MAX_NS, NAN));
	ck_assert(!throttle_due_trap(CALLS, (uint64_t)CALLS * 15000, CALLS, MAX_NS, 0.0));
	ck_assert(!throttle_due_trap(CALLS, (uint64_t)CALLS * 15000, CALLS, MAX_NS, -3000.0));
	ck_assert(throttle_due_trap(CALLS, (uint64_t)CALLS * 9999, CALLS, MAX_NS, NAN));
	/* the count still first; USEC 0 or NaN: none, whatever the stop */
	ck_assert(!throttle_due_trap(CALLS - 1, 0, CALLS, MAX_NS, 5000.0));
	ck_assert(!throttle_due_trap(CALLS, 0, CALLS, 0.0, 5000.0));
	ck_assert(!throttle_due_trap(CALLS, 0, CALLS, NAN, 5000.0));
	ck_assert(!throttle_due_trap(CALLS, 0, 0, MAX_NS, 5000.0));
}
END_TEST

static Suite *throttle_suite(void)
{
	Suite *s = suite_create("throttle");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_count);
	tcase_add_test(tc, test_mean);
	tcase_add_test(tc, test_off);
	tcase_add_test(tc, test_trap);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(throttle_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
