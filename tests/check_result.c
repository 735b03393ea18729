// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_result.c - the result builder (result.c) on synthetic process
 * states: the end of a run closes the books in place and hands the
 * threads' times over, a snapshot closes a copy and leaves the run's books
 * open; how each process ended (exit, signal, still running), -f's
 * sections and their names, the notes.
 */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/books.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "tracer/stop.h"
#include "tracer/tracer.h"
#include "tracer/proc.h"
#include "tracer/result.h"
#include "tracer/session.h"

#define SEC 1000000000ull

static struct trace_opts opts;
static struct symtab st;
static struct tracer tr;

/* A process state: leader pid, started at wall0, two routines, one frame open since wall0. */
static struct pstate *add_proc(pid_t pid, uint64_t wall0)
{
	struct pstate init = {.st = &st, .memfd = -1, .leader = pid, .wall0 = wall0};
	struct stamp s = {.t = {[CLOCK_KIND_CPU] = 0, [CLOCK_KIND_WALL] = wall0}};
	size_t i;

	init.books = books_new(2, true, false);
	books_enter(init.books, pid, 1, 0x7000, 0x401000, &s);
	i = ps_add(&tr, &init); /* may move tr.procs */
	return tr.procs[i];
}

static void ended(struct pstate *ps, int status, uint64_t wall1)
{
	ps->ended = true;
	ps->status = status;
	ps->wall1 = wall1;
}

static void setup(void)
{
	memset(&opts, 0, sizeof(opts));
	memset(&st, 0, sizeof(st));
	memset(&tr, 0, sizeof(tr));
	tr.o = &opts;
	tr.mem_fd = -1;
	tr.page_fd = -1;
}

static void teardown(void)
{
	/* the program's books are the caller's (main's) at the end, as in a run */
	books_free(tr.procs[0]->books);
	tracer_free(&tr);
}

START_TEST(test_end)
{
	struct trace_result res = {0};
	struct pstate *p0 = add_proc(100, 1 * SEC), *p1 = add_proc(101, 2 * SEC);
	struct trace_thread_usage *tu = calloc(1, sizeof(*tu));

	tu->tid = 100;
	tu->user_ns = 7;
	p0->tu = tu;
	p0->n_tu = p0->cap_tu = 1;
	p0->cpu_total_ns = 0.5e9;
	p0->n_trap_calls = 12;
	ended(p0, 3 << 8, 4 * SEC); /* exit(3) */
	ended(p1, SIGSEGV, 3 * SEC);
	p1->path = strdup("/bin/child");
	tr.status = p0->status;
	tr.program = 100;
	tr.n_refused = 2;

	result_build(&tr, "/bin/prog", 9 * SEC, false, &res, NULL);
	ck_assert_int_eq(res.exit_status, 3);
	ck_assert_int_eq(res.term_signal, 0);
	ck_assert(!res.snapshot && !res.running);
	/* an ended process's wall time ends at its end, not at the build's now */
	ck_assert_double_eq_tol(res.total_s[CLOCK_KIND_WALL], 3.0, 1e-9);
	ck_assert_double_eq_tol(res.total_s[CLOCK_KIND_CPU], 0.5, 1e-9);
	ck_assert_uint_eq(res.trap_calls, 12);
	ck_assert_uint_eq(res.n_refused, 2);
	/* the threads' times handed over, not copied */
	ck_assert_ptr_eq(res.usage.threads, tu);
	ck_assert_uint_eq(res.usage.n, 1);
	ck_assert_ptr_null(p0->tu);
	/* the books closed in place: the open frame INCOMPLETE at the process's end */
	ck_assert_int_ne(books_top(p0->books, 100, &(uint32_t){0}, &(uint64_t){0}, &(uint64_t){0}),
			 0);
	ck_assert_uint_eq(books_self(p0->books, CLOCK_KIND_WALL, false, 1), 3 * SEC);
	/* -f: the other process, killed, with its own name and books */
	ck_assert_uint_eq(res.n_sections, 1);
	ck_assert_int_eq(res.sections[0].pid, 101);
	ck_assert_int_eq(res.sections[0].term_signal, SIGSEGV);
	ck_assert_int_eq(res.sections[0].exit_status, 128 + SIGSEGV);
	ck_assert_str_eq(res.sections[0].note, "killed by signal 11 (SIGSEGV)");
	ck_assert_str_eq(res.sections[0].path, "/bin/child");
	ck_assert_ptr_eq(res.sections[0].books, p1->books);
	ck_assert_double_eq_tol(res.sections[0].total_s[CLOCK_KIND_WALL], 1.0, 1e-9);
	trace_result_free(&res); /* frees the child's books */
	free(p1->path);
	p1->path = NULL;
}
END_TEST

START_TEST(test_end_killed)
{
	struct trace_result res = {0};
	struct pstate *p0 = add_proc(100, 1 * SEC);

	ended(p0, SIGKILL, 2 * SEC);
	tr.status = SIGKILL;
	tr.program = 100;
	snprintf(tr.note, sizeof(tr.note), "a note of the run's");
	result_build(&tr, "/bin/prog", 9 * SEC, false, &res, NULL);
	ck_assert_int_eq(res.term_signal, SIGKILL);
	ck_assert_int_eq(res.exit_status, 128 + SIGKILL);
	ck_assert_str_eq(res.note, "program killed by signal 9 (SIGKILL)");
	ck_assert_uint_eq(res.n_sections, 0);
	trace_result_free(&res);
}
END_TEST

START_TEST(test_snapshot)
{
	struct trace_result res = {0};
	struct pstate *p0 = add_proc(100, 1 * SEC), *p1 = add_proc(101, 2 * SEC);
	struct books *main_books = NULL;
	struct trace_thread_usage tu = {.tid = 100, .user_ns = 7};
	uint32_t r;
	uint64_t slot, ret;

	p0->tu = malloc(sizeof(tu));
	*p0->tu = tu;
	p0->n_tu = p0->cap_tu = 1;
	p0->n_patches = 0;
	ended(p1, 5 << 8, 3 * SEC);
	tr.program = 100;
	opts.pid = 100; /* -p */
	tr.att.active = "main";

	result_build(&tr, "/bin/prog", 5 * SEC, true, &res, &main_books);
	ck_assert(res.snapshot && res.started && res.running && res.attached);
	ck_assert_int_eq(res.pid, 100);
	ck_assert_double_eq_tol(res.snapshot_s, 4.0, 1e-9);
	ck_assert_double_eq_tol(res.total_s[CLOCK_KIND_WALL], 4.0, 1e-9);
	ck_assert_str_eq(res.note,
			 "snapshot after 4.000 s: still running (its running clocks INCOMPLETE)");
	ck_assert_str_eq(res.active, "main");
	ck_assert_ptr_ne(res.active, tr.att.active);
	/* a copy of the threads' times: the run keeps its own */
	ck_assert_uint_eq(res.usage.n, 1);
	ck_assert_ptr_ne(res.usage.threads, p0->tu);
	ck_assert_uint_eq(res.usage.threads[0].user_ns, 7);
	ck_assert_uint_eq(p0->n_tu, 1);
	/* a finished copy of the books; the run's frame stays open */
	ck_assert_ptr_nonnull(main_books);
	ck_assert_ptr_ne(main_books, p0->books);
	ck_assert_uint_eq(books_self(main_books, CLOCK_KIND_WALL, false, 1), 4 * SEC);
	ck_assert_int_eq(books_top(p0->books, 100, &r, &slot, &ret), 0);
	ck_assert_uint_eq(r, 1);
	/* the ended child: its exit, its end, its name (the program's path) */
	ck_assert_uint_eq(res.n_sections, 1);
	ck_assert(!res.sections[0].running);
	ck_assert_int_eq(res.sections[0].exit_status, 5);
	ck_assert_str_eq(res.sections[0].path, "/bin/prog");
	ck_assert_ptr_ne(res.sections[0].books, p1->books);
	ck_assert(!res.sections[0].own_st);
	ck_assert_double_eq_tol(res.sections[0].total_s[CLOCK_KIND_WALL], 1.0, 1e-9);
	books_free(main_books);
	trace_result_free(&res);
	books_free(p1->books);
}
END_TEST

START_TEST(test_end_codes)
{
	int code = -1;

	ck_assert_int_eq(stop_term_signal(SIGKILL), SIGKILL);
	ck_assert_int_eq(stop_term_signal(3 << 8), 0);
	ck_assert_int_eq(stop_term_signal(0x7f | (SIGSTOP << 8)), 0); /* stopped: no end */
	ck_assert(stop_exit_code(3 << 8, &code));
	ck_assert_int_eq(code, 3);
	code = -1;
	ck_assert(!stop_exit_code(SIGKILL, &code));
	ck_assert_int_eq(code, -1);
	ck_assert(!stop_exit_code(0x7f | (SIGSTOP << 8), &code));
}
END_TEST

static Suite *result_suite(void)
{
	Suite *s = suite_create("result");
	TCase *tc = tcase_create("build");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_end);
	tcase_add_test(tc, test_end_killed);
	tcase_add_test(tc, test_snapshot);
	suite_add_tcase(s, tc);
	tc = tcase_create("codes");
	tcase_add_test(tc, test_end_codes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(result_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
