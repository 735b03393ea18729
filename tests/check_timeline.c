// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_timeline.c - the timeline (--timeline) on synthetic event streams:
 * what the books record as calls close, the threshold, the bound, the
 * order by track, and the Chrome trace-event JSON written from it.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/books.h"
#include "fortstat/chrome.h"
#include "fortstat/symtab.h"
#include "fortstat/timeline.h"

#define CPU CLOCK_KIND_CPU
#define WALL CLOCK_KIND_WALL

static struct stamp at(acct_time_t cpu, acct_time_t wall)
{
	struct stamp s = {{0}};

	s.t[CPU] = cpu;
	s.t[WALL] = wall;
	return s;
}

static void enter(struct books *b, int tid, uint32_t r, acct_time_t cpu, acct_time_t wall)
{
	struct stamp s = at(cpu, wall);

	books_enter(b, tid, r, 0x7000, 0x401000, &s);
}

static void leave(struct books *b, int tid, acct_time_t cpu, acct_time_t wall)
{
	struct stamp s = at(cpu, wall);

	ck_assert_int_eq(books_leave(b, tid, &s, NULL), 0);
}

static void ck_event(const struct tl_event *e, uint32_t group, int tid, uint32_t r, acct_time_t t0,
		     acct_time_t t1, bool incomplete)
{
	ck_assert_uint_eq(e->group, group);
	ck_assert_int_eq(e->tid, tid);
	ck_assert_uint_eq(e->routine, r);
	ck_assert_uint_eq(e->t0, t0);
	ck_assert_uint_eq(e->t1, t1);
	ck_assert_int_eq(e->incomplete, incomplete);
}

/*
 * Each call as it closes, on the wall clock (never the CPU clock), the
 * books' group; a frame still open at the finish is incomplete.
 */
START_TEST(test_books_record)
{
	struct timeline *tl = timeline_new(0, 100);
	struct books *b = books_new(3, true, true);
	uint32_t g = books_record(b, tl);

	ck_assert_uint_eq(g, 0);
	ck_assert_uint_eq(books_timeline_group(b), 0);
	enter(b, 7, 0, 10, 1000);
	enter(b, 7, 1, 20, 1100);
	leave(b, 7, 30, 1300);
	enter(b, 8, 2, 5, 1150); /* another thread */
	leave(b, 8, 6, 1160);
	enter(b, 7, 2, 40, 1400);
	leave(b, 7, 50, 1450);
	ck_assert_uint_eq(tl->n, 3);
	ck_event(&tl->v[0], 0, 7, 1, 1100, 1300, false);
	ck_event(&tl->v[1], 0, 8, 2, 1150, 1160, false);
	ck_event(&tl->v[2], 0, 7, 2, 1400, 1450, false);
	books_finish(b, 2000);
	ck_assert_uint_eq(tl->n, 4);
	ck_event(&tl->v[3], 0, 7, 0, 1000, 2000, true);
	ck_assert_uint_eq(tl->short_calls + tl->late_calls, 0);
	books_free(b);
	timeline_free(tl);
}
END_TEST

/* A tail call closes the frame's first routine as a call of its own. */
START_TEST(test_chain)
{
	struct timeline *tl = timeline_new(0, 100);
	struct books *b = books_new(3, true, false);
	struct stamp s = at(0, 200);

	books_record(b, tl);
	enter(b, 7, 0, 0, 100);
	ck_assert_int_eq(books_chain(b, 7, 1, &s), 0);
	leave(b, 7, 0, 350);
	ck_assert_uint_eq(tl->n, 2);
	ck_event(&tl->v[0], 0, 7, 0, 100, 200, false);
	ck_event(&tl->v[1], 0, 7, 1, 200, 350, false);
	books_free(b);
	timeline_free(tl);
}
END_TEST

/*
 * Books made like recording ones record as a group of their own; a copy
 * (a snapshot's) records nothing, nor do count-only books.
 */
START_TEST(test_like_dup_count_only)
{
	struct timeline *tl = timeline_new(0, 100);
	struct books *b = books_new(2, true, false), *c, *d, *k;

	books_record(b, tl);
	c = books_new_like(b, 2);
	ck_assert_uint_eq(books_timeline_group(c), 1);
	enter(c, 9, 1, 0, 500);
	leave(c, 9, 0, 600);
	ck_assert_uint_eq(tl->n, 1);
	ck_event(&tl->v[0], 1, 9, 1, 500, 600, false);
	enter(b, 7, 0, 0, 100);
	d = books_snapshot(b, 900); /* closes main as incomplete in the copy only */
	ck_assert_uint_eq(tl->n, 1);
	ck_assert_uint_eq(books_timeline_group(d), UINT32_MAX);
	books_free(d);
	k = books_new(2, false, false);
	books_record(k, tl);
	books_count(k, 7, 0);
	books_finish(k, 1000);
	ck_assert_uint_eq(tl->n, 1);
	books_free(k);
	books_free(c);
	books_free(b);
	timeline_free(tl);
}
END_TEST

/* Shorter than the threshold: counted, not kept; exactly the threshold: kept. */
START_TEST(test_threshold)
{
	struct timeline *tl = timeline_new(100, 100);

	timeline_add(tl, 0, 7, 0, 1000, 1099, false);
	timeline_add(tl, 0, 7, 1, 1000, 1100, false);
	timeline_add(tl, 0, 7, 2, 2000, 1000, false); /* backwards: zero long */
	ck_assert_uint_eq(tl->n, 1);
	ck_assert_uint_eq(tl->v[0].routine, 1);
	ck_assert_uint_eq(tl->short_calls, 2);
	ck_assert(!timeline_full(tl));
	timeline_free(tl);
}
END_TEST

static void count_full(const struct timeline *tl, void *arg)
{
	ck_assert_uint_eq(tl->late_calls, 1);
	++*(int *)arg;
}

/*
 * The bound: the first max_events kept, the rest counted, the first one's
 * exit kept, on_full told once.
 */
START_TEST(test_bound)
{
	struct timeline *tl = timeline_new(0, 3);
	int told = 0;

	tl->on_full = count_full;
	tl->full_arg = &told;

	for (uint32_t i = 0; i < 5; i++)
		timeline_add(tl, 0, 7, i, 100 * i, 100 * i + 50, false);
	ck_assert_uint_eq(tl->n, 3);
	ck_assert_uint_eq(tl->late_calls, 2);
	ck_assert_uint_eq(tl->full_at, 350);
	ck_assert(timeline_full(tl));
	timeline_add(tl, 0, 7, 1, 10, 5, false); /* short ones are counted as short still */
	ck_assert_uint_eq(tl->short_calls, 0);
	ck_assert_uint_eq(tl->late_calls, 3);
	ck_assert_int_eq(told, 1);
	timeline_free(tl);
}
END_TEST

/*
 * By group, thread, entry, then the longer first, then the one that closed
 * last first: an enclosing call before the calls inside it.
 */
START_TEST(test_sort)
{
	struct timeline *tl = timeline_new(0, 100);

	timeline_add(tl, 1, 5, 9, 0, 10, false);
	timeline_add(tl, 0, 8, 3, 100, 200, false);
	timeline_add(tl, 0, 7, 2, 120, 130, false); /* D inside B, closed first */
	timeline_add(tl, 0, 7, 1, 100, 150, false); /* B */
	timeline_add(tl, 0, 7, 4, 160, 160, false); /* the same instant twice: */
	timeline_add(tl, 0, 7, 5, 160, 160, false); /* 5 closed last, encloses 4 */
	timeline_add(tl, 0, 7, 0, 100, 300, false); /* A encloses all, same entry as B */
	timeline_sort(tl);
	ck_assert_uint_eq(tl->n, 7);
	ck_event(&tl->v[0], 0, 7, 0, 100, 300, false);
	ck_event(&tl->v[1], 0, 7, 1, 100, 150, false);
	ck_event(&tl->v[2], 0, 7, 2, 120, 130, false);
	ck_event(&tl->v[3], 0, 7, 5, 160, 160, false);
	ck_event(&tl->v[4], 0, 7, 4, 160, 160, false);
	ck_event(&tl->v[5], 0, 8, 3, 100, 200, false);
	ck_event(&tl->v[6], 1, 5, 9, 0, 10, false);
	timeline_free(tl);
}
END_TEST

/* A symtab of routines named by names[] (display names). */
static void fake_symtab(struct symtab *st, struct routine *r, char **names, size_t n)
{
	memset(st, 0, sizeof(*st));
	memset(r, 0, n * sizeof(*r));
	for (size_t i = 0; i < n; i++)
		r[i].display = names[i];
	st->r = r;
	st->n = n;
}

static char *write_json(struct timeline *tl, const struct chrome_proc *procs, size_t n)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(mem);
	ck_assert_int_eq(chrome_write(mem, tl, procs, n), 0);
	fclose(mem);
	return buf;
}

/*
 * The JSON, whole: processes and threads named, the calls of each thread
 * in nesting order with ts and dur in microseconds (ns as decimals), the
 * incomplete one said, a routine past its table and a group of no process
 * left out, the counts in otherData.
 */
START_TEST(test_chrome_json)
{
	static char n0[] = "main", n1[] = "work", n2[] = "q\"uote";
	char *names[] = {n0, n1, n2};
	struct routine r[3];
	struct symtab st;
	struct timeline *tl = timeline_new(1000, 100);
	struct chrome_proc procs[2];
	char *json;
	const char *want =
	    "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n"
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":40,\"tid\":0,"
	    "\"args\":{\"name\":\"/bin/prog\"}},\n"
	    "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":41,\"tid\":0,"
	    "\"args\":{\"name\":\"/bin/prog\"}},\n"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":40,\"tid\":40,"
	    "\"args\":{\"name\":\"prog\"}},\n"
	    "{\"ph\":\"X\",\"name\":\"main\",\"ts\":1.000,\"dur\":9.000,\"pid\":40,\"tid\":40,"
	    "\"args\":{\"incomplete\":true}},\n"
	    "{\"ph\":\"X\",\"name\":\"work\",\"ts\":2.500,\"dur\":1.234,\"pid\":40,\"tid\":40},\n"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":40,\"tid\":42,"
	    "\"args\":{\"name\":\"thread 42\"}},\n"
	    "{\"ph\":\"X\",\"name\":\"q\\\"uote\",\"ts\":3.000,\"dur\":1.000,\"pid\":40,\"tid\":42}"
	    ",\n"
	    "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":41,\"tid\":1073741827,"
	    "\"args\":{\"name\":\"goroutine 4\"}},\n"
	    "{\"ph\":\"X\",\"name\":\"work\",\"ts\":123456789.000,\"dur\":0.001,\"pid\":41,"
	    "\"tid\":1073741827}\n"
	    "],\"otherData\":{\"tool\":\"fortstat\",\"clock\":\"CLOCK_MONOTONIC\","
	    "\"min_us\":1.000,\"max_calls\":100,\"calls\":4,\"short_calls\":1,"
	    "\"calls_left_out\":0,\"note\":null}}\n";

	fake_symtab(&st, r, names, 3);
	tl->min_ns = 1; /* the goroutine's 1 ns call is kept, */
	timeline_add(tl, 0, 40, 1, 2500, 3734, false);
	timeline_add(tl, 0, 42, 2, 3000, 4000, false);
	timeline_add(tl, 0, 40, 0, 1000, 10000, true);
	timeline_add(tl, 1, ACCT_GOROUTINE0 + 3, 1, 123456789000, 123456789001, false);
	timeline_add(tl, 0, 40, 3, 5000, 6000, false); /* no routine 3: left out */
	timeline_add(tl, 2, 40, 0, 5000, 6000, false); /* no process of group 2 */
	timeline_add(tl, 0, 40, 0, 5000, 5000, false); /* too short */
	tl->min_ns = 1000;
	procs[0] = (struct chrome_proc){0, 40, "/bin/prog", &st};
	procs[1] = (struct chrome_proc){1, 41, "/bin/prog", &st};
	json = write_json(tl, procs, 2);
	ck_assert_str_eq(json, want);
	free(json);
	timeline_free(tl);
}
END_TEST

/*
 * The bound reached: an instant event at the first call left out and a
 * note; an image exec'ed in the same process names it "A -> B".
 */
START_TEST(test_chrome_full_exec)
{
	static char n0[] = "f";
	char *names[] = {n0};
	struct routine r[1];
	struct symtab st;
	struct timeline *tl = timeline_new(0, 2);
	struct chrome_proc procs[2];
	char *json;

	fake_symtab(&st, r, names, 1);
	timeline_add(tl, 0, 40, 0, 1000, 2000, false);
	timeline_add(tl, 1, 40, 0, 3000, 4000, false);
	timeline_add(tl, 1, 40, 0, 5000, 6000, false);
	procs[0] = (struct chrome_proc){0, 40, "/bin/sh", &st};
	procs[1] = (struct chrome_proc){1, 40, "/bin/prog", &st};
	json = write_json(tl, procs, 2);
	ck_assert_ptr_nonnull(strstr(json,
				     "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":40,"
				     "\"tid\":0,\"args\":{\"name\":\"/bin/sh -> /bin/prog\"}},\n"
				     "{\"ph\":\"M\",\"name\":\"thread_name\""));
	ck_assert_ptr_null(strstr(json, "\"process_name\",\"pid\":40,\"tid\":0,"
					"\"args\":{\"name\":\"/bin/prog\"}"));
	/* its thread named once, by the first image */
	ck_assert_ptr_nonnull(strstr(json, "\"thread_name\",\"pid\":40,\"tid\":40,"
					   "\"args\":{\"name\":\"sh\"}}"));
	ck_assert_ptr_null(strstr(json, "\"args\":{\"name\":\"prog\"}"));
	ck_assert_ptr_nonnull(strstr(json,
				     "{\"ph\":\"i\",\"s\":\"g\",\"name\":\"fortstat: timeline "
				     "full\",\"ts\":6.000,\"pid\":40,\"tid\":0,"
				     "\"args\":{\"calls_left_out\":1}}\n],"));
	ck_assert_ptr_nonnull(strstr(json,
				     "\"calls\":2,\"short_calls\":0,\"calls_left_out\":1,"
				     "\"note\":\"the bound of 2 calls was reached: the 1 calls "
				     "that ended later are left out\"}}\n"));
	free(json);
	timeline_free(tl);
}
END_TEST

static Suite *timeline_suite(void)
{
	Suite *s = suite_create("timeline");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_books_record);
	tcase_add_test(tc, test_chain);
	tcase_add_test(tc, test_like_dup_count_only);
	tcase_add_test(tc, test_threshold);
	tcase_add_test(tc, test_bound);
	tcase_add_test(tc, test_sort);
	tcase_add_test(tc, test_chrome_json);
	tcase_add_test(tc, test_chrome_full_exec);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(timeline_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
