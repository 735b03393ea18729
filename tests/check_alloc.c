// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_alloc.c - Check suite for storage per routine (alloc.h): which
 * symbols are allocators, what a call did, and the books fed synthetic
 * calls and stacks (self, inclusive, recursion, the peak, the contexts),
 * then the same through books_alloc (books.h) with real frames.
 */
#include "fortstat/alloc.h"
#include "fortstat/books.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>

START_TEST(test_names)
{
	ck_assert_int_eq(alloc_fn_of("malloc"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("__libc_malloc"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("calloc"), ALLOC_CALLOC);
	ck_assert_int_eq(alloc_fn_of("realloc"), ALLOC_REALLOC);
	ck_assert_int_eq(alloc_fn_of("reallocarray"), ALLOC_REALLOCARRAY);
	ck_assert_int_eq(alloc_fn_of("aligned_alloc"), ALLOC_MEMALIGN);
	ck_assert_int_eq(alloc_fn_of("memalign"), ALLOC_MEMALIGN);
	ck_assert_int_eq(alloc_fn_of("posix_memalign"), ALLOC_POSIX_MEMALIGN);
	ck_assert_int_eq(alloc_fn_of("free"), ALLOC_FREE);
	/* operator new, new[], nothrow and aligned; delete's sized, aligned, nothrow forms */
	ck_assert_int_eq(alloc_fn_of("_Znwm"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("_Znam"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("_ZnwmRKSt9nothrow_t"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("_ZnamSt11align_val_t"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("_ZnwmSt11align_val_tRKSt9nothrow_t"), ALLOC_MALLOC);
	ck_assert_int_eq(alloc_fn_of("_ZdlPv"), ALLOC_FREE);
	ck_assert_int_eq(alloc_fn_of("_ZdaPvm"), ALLOC_FREE);
	ck_assert_int_eq(alloc_fn_of("_ZdlPvmSt11align_val_t"), ALLOC_FREE);
	ck_assert_int_eq(alloc_fn_of("_ZdaPvRKSt9nothrow_t"), ALLOC_FREE);
	/* not allocators: look-alikes */
	ck_assert_int_eq(alloc_fn_of("mallocx"), ALLOC_NONE);
	ck_assert_int_eq(alloc_fn_of("_Znwj"), ALLOC_NONE);    /* 32-bit size_t */
	ck_assert_int_eq(alloc_fn_of("_ZnwmPv"), ALLOC_NONE);  /* placement new allocates nothing */
	ck_assert_int_eq(alloc_fn_of("_ZdlPvS_"), ALLOC_NONE); /* placement delete */
	ck_assert_int_eq(alloc_fn_of("free_list"), ALLOC_NONE);
	ck_assert_int_eq(alloc_fn_of(""), ALLOC_NONE);
}
END_TEST

START_TEST(test_call)
{
	uint64_t size, freed;

	ck_assert(alloc_call(ALLOC_MALLOC, (uint64_t[3]){100, 0, 0}, 0x1000, &size, &freed));
	ck_assert_uint_eq(size, 100);
	ck_assert_uint_eq(freed, 0);
	/* a failure makes nothing */
	ck_assert(!alloc_call(ALLOC_MALLOC, (uint64_t[3]){100, 0, 0}, 0, &size, &freed));
	ck_assert(alloc_call(ALLOC_CALLOC, (uint64_t[3]){4, 250, 0}, 0x1000, &size, &freed));
	ck_assert_uint_eq(size, 1000);
	/* n * size overflows: no block, whatever came back */
	ck_assert(!alloc_call(ALLOC_CALLOC, (uint64_t[3]){1ull << 33, 1ull << 33, 0}, 0x1000, &size,
			      &freed));
	/* realloc: the old block freed with a new one made, by realloc(p, 0); a failure keeps it */
	ck_assert(alloc_call(ALLOC_REALLOC, (uint64_t[3]){0x1000, 5000, 0}, 0x2000, &size, &freed));
	ck_assert_uint_eq(size, 5000);
	ck_assert_uint_eq(freed, 0x1000);
	ck_assert(!alloc_call(ALLOC_REALLOC, (uint64_t[3]){0x1000, 0, 0}, 0, &size, &freed));
	ck_assert_uint_eq(freed, 0x1000);
	ck_assert(!alloc_call(ALLOC_REALLOC, (uint64_t[3]){0x1000, 50, 0}, 0, &size, &freed));
	ck_assert_uint_eq(freed, 0);
	ck_assert(alloc_call(ALLOC_REALLOC, (uint64_t[3]){0, 64, 0}, 0x3000, &size, &freed));
	ck_assert_uint_eq(freed, 0);
	ck_assert(alloc_call(ALLOC_REALLOCARRAY, (uint64_t[3]){0, 10, 30}, 0x3000, &size, &freed));
	ck_assert_uint_eq(size, 300);
	ck_assert(!alloc_call(ALLOC_REALLOCARRAY, (uint64_t[3]){0x10, UINT64_MAX, 2}, 0x3000, &size,
			      &freed));
	ck_assert_uint_eq(freed, 0);
	ck_assert(alloc_call(ALLOC_MEMALIGN, (uint64_t[3]){64, 128, 0}, 0x4000, &size, &freed));
	ck_assert_uint_eq(size, 128);
	ck_assert(alloc_call(ALLOC_POSIX_MEMALIGN, (uint64_t[3]){0x7ff0, 64, 4096}, 0x5000, &size,
			     &freed));
	ck_assert_uint_eq(size, 4096);
	ck_assert(!alloc_call(ALLOC_FREE, (uint64_t[3]){0x5000, 0, 0}, 0, &size, &freed));
	ck_assert_uint_eq(freed, 0x5000);
}
END_TEST

/* Routines 0 main, 1 a, 2 b, 3 rec. */
START_TEST(test_books)
{
	struct alloc_books *m = alloc_new(4);
	const struct alloc_routine *r;
	struct alloc_totals t;
	const uint32_t main_a[] = {0, 1}, main_a_b[] = {0, 1, 2}, main_b[] = {0, 2};
	const uint32_t rec3[] = {0, 3, 3, 3};

	/* a: 100 bytes itself; b under a: 1,000 (a's inclusive), freed by b under main */
	alloc_charge(m, main_a, 2, ALLOC_MALLOC, (uint64_t[3]){100, 0, 0}, 0x1000);
	alloc_charge(m, main_a_b, 3, ALLOC_MALLOC, (uint64_t[3]){1000, 0, 0}, 0x2000);
	alloc_charge(m, main_b, 2, ALLOC_FREE, (uint64_t[3]){0x2000, 0, 0}, 0);
	/* the peak: a realloc to 5,000 while 100 are live (the 100-byte block moved) */
	alloc_charge(m, main_b, 2, ALLOC_REALLOC, (uint64_t[3]){0x1000, 5000, 0}, 0x3000);
	/* recursion: counted once in rec's inclusive figures */
	alloc_charge(m, rec3, 4, ALLOC_CALLOC, (uint64_t[3]){2, 4, 0}, 0x4000);
	/* outside any timed routine; a free of a block never seen */
	alloc_charge(m, NULL, 0, ALLOC_MALLOC, (uint64_t[3]){7, 0, 0}, 0x5000);
	alloc_charge(m, main_a, 2, ALLOC_FREE, (uint64_t[3]){0x9000, 0, 0}, 0);
	/* free(NULL) is no free; a failed malloc no allocation */
	alloc_charge(m, main_a, 2, ALLOC_FREE, (uint64_t[3]){0, 0, 0}, 0);
	alloc_charge(m, main_a, 2, ALLOC_MALLOC, (uint64_t[3]){1 << 20, 0, 0}, 0);

	r = alloc_routines(m);
	ck_assert_uint_eq(alloc_n_routines(m), 4);
	ck_assert_uint_eq(r[1].allocs, 1);
	ck_assert_uint_eq(r[1].bytes, 100);
	ck_assert_uint_eq(r[1].frees, 1);
	ck_assert_uint_eq(r[1].allocs_incl, 2);
	ck_assert_uint_eq(r[1].bytes_incl, 1100);
	ck_assert_uint_eq(r[2].allocs, 2);
	ck_assert_uint_eq(r[2].bytes, 6000);
	ck_assert_uint_eq(r[2].frees, 2);
	ck_assert_uint_eq(r[2].allocs_incl, 2);
	ck_assert_uint_eq(r[0].allocs, 0);
	ck_assert_uint_eq(r[0].allocs_incl, 4);
	ck_assert_uint_eq(r[0].bytes_incl, 100 + 1000 + 5000 + 8);
	ck_assert_uint_eq(r[0].frees_incl, 3);
	ck_assert_uint_eq(r[3].allocs, 1);
	ck_assert_uint_eq(r[3].allocs_incl, 1);
	ck_assert_uint_eq(r[3].bytes_incl, 8);
	alloc_totals(m, &t);
	ck_assert_uint_eq(t.allocs, 5);
	ck_assert_uint_eq(t.bytes, 100 + 1000 + 5000 + 8 + 7);
	ck_assert_uint_eq(t.frees, 3);
	ck_assert_uint_eq(t.outside_allocs, 1);
	ck_assert_uint_eq(t.outside_bytes, 7);
	ck_assert_uint_eq(t.unknown_frees, 1);
	ck_assert_uint_eq(t.live, 5000 + 8 + 7);
	ck_assert_uint_eq(t.peak, 5015);
	ck_assert_uint_eq(t.peak_routine, ACCT_NONE); /* the 7 bytes outside reached it last */
	alloc_free_books(m);
}
END_TEST

/* The peak's routine is the one whose allocation reached it, not the last to allocate. */
START_TEST(test_peak_routine)
{
	struct alloc_books *m = alloc_new(3), *c;
	struct alloc_totals t;
	const uint32_t a[] = {1}, b[] = {2};

	alloc_charge(m, a, 1, ALLOC_MALLOC, (uint64_t[3]){1000, 0, 0}, 0x1000);
	alloc_charge(m, b, 1, ALLOC_MALLOC, (uint64_t[3]){10, 0, 0}, 0x2000);
	alloc_charge(m, b, 1, ALLOC_FREE, (uint64_t[3]){0x1000, 0, 0}, 0);
	alloc_charge(m, b, 1, ALLOC_MALLOC, (uint64_t[3]){500, 0, 0}, 0x3000);
	alloc_totals(m, &t);
	ck_assert_uint_eq(t.peak, 1010);
	ck_assert_uint_eq(t.peak_routine, 2);
	ck_assert_uint_eq(t.live, 510);
	/* a copy goes its own way */
	c = alloc_dup(m);
	alloc_charge(c, a, 1, ALLOC_MALLOC, (uint64_t[3]){4000, 0, 0}, 0x4000);
	alloc_totals(c, &t);
	ck_assert_uint_eq(t.peak, 4510);
	ck_assert_uint_eq(t.peak_routine, 1);
	alloc_totals(m, &t);
	ck_assert_uint_eq(t.peak, 1010);
	alloc_free_books(c);
	alloc_free_books(m);
}
END_TEST

START_TEST(test_contexts)
{
	struct alloc_books *m = alloc_new(3);
	const struct alloc_ctx *x;
	size_t n;
	const uint32_t s1[] = {0, 1}, s2[] = {0, 2, 1};

	alloc_charge(m, s1, 2, ALLOC_MALLOC, (uint64_t[3]){10, 0, 0}, 0x10);
	alloc_charge(m, s1, 2, ALLOC_MALLOC, (uint64_t[3]){20, 0, 0}, 0x20);
	alloc_charge(m, s2, 3, ALLOC_MALLOC, (uint64_t[3]){5, 0, 0}, 0x30);
	x = alloc_contexts(m, &n);
	/* root, 0, 0>1, 0>2, 0>2>1 */
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(x[2].routine, 1);
	ck_assert_uint_eq(x[2].parent, 1);
	ck_assert_uint_eq(x[2].allocs, 2);
	ck_assert_uint_eq(x[2].bytes, 30);
	ck_assert_uint_eq(x[4].routine, 1);
	ck_assert_uint_eq(x[4].parent, 3);
	ck_assert_uint_eq(x[4].bytes, 5);
	ck_assert_uint_eq(x[1].allocs, 0);
	alloc_free_books(m);
}
END_TEST

/*
 * Many contexts: the array of them grows while a charge is made (the
 * context made by it counted in the array as it is after: once a pointer
 * into the old one lost it, and fortstat's heap with it).
 */
START_TEST(test_contexts_grow)
{
	struct alloc_books *m = alloc_new(200);
	const struct alloc_ctx *x;
	size_t n;

	for (uint32_t i = 1; i < 200; i++) {
		const uint32_t s[] = {0, i};

		alloc_charge(m, s, 2, ALLOC_MALLOC, (uint64_t[3]){i, 0, 0}, 0x1000 + 16 * i);
	}
	x = alloc_contexts(m, &n);
	ck_assert_uint_eq(n, 201); /* root, 0, and 0>i for each i */
	for (size_t k = 2; k < n; k++) {
		ck_assert_uint_eq(x[k].parent, 1);
		ck_assert_uint_eq(x[k].allocs, 1);
		ck_assert_uint_eq(x[k].bytes, x[k].routine);
	}
	alloc_free_books(m);
}
END_TEST

/* books_alloc charges the thread's open frames; books made like these keep storage too. */
START_TEST(test_books_frames)
{
	struct books *b = books_new(3, true, false), *c;
	const struct alloc_routine *r;
	struct stamp s = {{0, 0}};

	ck_assert_ptr_null(books_alloc_books(b));
	books_alloc(b, 7, ALLOC_MALLOC, (uint64_t[3]){64, 0, 0}, 0x100); /* not kept: ignored */
	books_alloc_keep(b);
	books_enter(b, 7, 0, 0x7ff0, 0x400000, &s);
	books_enter(b, 7, 2, 0x7fe0, 0x400100, &s);
	books_alloc(b, 7, ALLOC_MALLOC, (uint64_t[3]){64, 0, 0}, 0x100);
	books_alloc(b, 8, ALLOC_MALLOC, (uint64_t[3]){32, 0, 0}, 0x200); /* thread 8: no frame */
	r = alloc_routines(books_alloc_books(b));
	ck_assert_uint_eq(r[2].allocs, 1);
	ck_assert_uint_eq(r[2].bytes, 64);
	ck_assert_uint_eq(r[0].allocs, 0);
	ck_assert_uint_eq(r[0].bytes_incl, 64);
	c = books_new_like(b, 3);
	ck_assert_ptr_nonnull(books_alloc_books(c));
	books_free(c);
	c = books_dup(b);
	ck_assert_uint_eq(alloc_routines(books_alloc_books(c))[2].bytes, 64);
	books_free(c);
	books_grow(b, 10);
	ck_assert_uint_eq(alloc_n_routines(books_alloc_books(b)), 10);
	books_free(b);
}
END_TEST

static Suite *alloc_suite(void)
{
	Suite *s = suite_create("alloc");
	TCase *tc = tcase_create("alloc");

	tcase_add_test(tc, test_names);
	tcase_add_test(tc, test_call);
	tcase_add_test(tc, test_books);
	tcase_add_test(tc, test_peak_routine);
	tcase_add_test(tc, test_contexts);
	tcase_add_test(tc, test_contexts_grow);
	tcase_add_test(tc, test_books_frames);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(alloc_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
