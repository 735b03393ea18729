// SPDX-License-Identifier: GPL-2.0-or-later
/* check_profile.c - the report model from synthetic books on both clocks: net, formula, gross. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/books.h"
#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"

#define CPU CLOCK_KIND_CPU
#define WALL CLOCK_KIND_WALL

enum { R_MAIN, R_WORK, R_LEAF, R_ANON, N_R };

static char *n_main[] = {"main"};
static char *n_work[] = {"work_", "work_alias_"};
static char *n_leaf[] = {"leaf"};

static struct routine routines[N_R] = {
    [R_MAIN] = {0x1000, 0x10, n_main, 1, NULL, "m.c", 3, RT_MAINLINE | RT_SELECTED, NULL},
    [R_WORK] = {0x1100, 0x10, n_work, 2, "work", "w.f90", 7, RT_SELECTED, "libw.so"},
    [R_LEAF] = {0x1200, 0x10, n_leaf, 1, NULL, NULL, 0, RT_SELECTED, NULL},
    [R_ANON] = {0x1300, 0x10, NULL, 0, NULL, NULL, 0, 0, NULL},
};

static struct symtab st = {.path = "./p", .r = routines, .n = N_R};

/* f1, f2 per clock (ns) */
static const double F1[FS_N_CLOCKS] = {[CPU] = 100, [WALL] = 300};
static const double F2[FS_N_CLOCKS] = {[CPU] = 50, [WALL] = 200};

/*
 * Thread 1: main [0] calls work [1000..10000] which calls leaf
 * [3000..4000], then work again [12000..15000]; main still runs at the end
 * (20000). Thread 2: leaf [0..500]. Times t/div + add.
 *   CPU (div 1, add 0): self main 8000, work 11000, leaf 1000 + 500.
 */
static struct acct *events(acct_time_t mul, acct_time_t div, acct_time_t add)
{
	struct acct *a = acct_new(N_R);

#define T(x) ((acct_time_t)(x)*mul / div + add)
	acct_enter(a, 1, R_MAIN, 0x7000, 0x10, T(0));
	acct_enter(a, 1, R_WORK, 0x6f00, 0x20, T(1000));
	acct_enter(a, 1, R_LEAF, 0x6e00, 0x30, T(3000));
	acct_leave(a, 1, T(4000), NULL);
	acct_leave(a, 1, T(10000), NULL);
	acct_enter(a, 2, R_LEAF, 0x5000, 0x40, T(0));
	acct_leave(a, 2, T(500), NULL);
	acct_enter(a, 1, R_WORK, 0x6f00, 0x20, T(12000));
	acct_leave(a, 1, T(15000), NULL);
	acct_finish(a, T(20000), true);
#undef T
	return a;
}

static const struct profile_facts facts = {.label = "./p [pid 42]",
					   .pid = 42,
					   .exit_status = 3,
					   .total_s = {[CPU] = 2e-5, [WALL] = 4e-5},
					   .note = "a note"};

/* The profile of the CPU events, the wall ones (twice as long, +100), and optional net states. */
static struct profile *build(bool correct, bool with_net)
{
	struct acct *g[FS_N_CLOCKS] = {events(1, 1, 0), events(2, 1, 100)};
	struct acct *n[FS_N_CLOCKS] = {NULL, NULL};
	struct profile *p = profile_new(NULL, F1, F2, 0, correct);

	if (with_net) {
		n[CPU] = events(1, 2, 0);
		n[WALL] = events(1, 1, 100);
	}
	ck_assert_int_eq(profile_add_accts(p, &facts, &st, (const struct acct *const *)g,
					   (const struct acct *const *)n),
			 0);
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		acct_free(g[c]);
		acct_free(n[c]);
	}
	return p;
}

/* What a routine is, and the section's facts, copied: the profile owns them. */
START_TEST(test_facts)
{
	struct profile *p = build(true, false);
	const struct profile_section *sec;

	ck_assert_uint_eq(p->n_sections, 1);
	sec = &p->sections[0];
	ck_assert_str_eq(sec->label, "./p [pid 42]");
	ck_assert_ptr_ne(sec->label, facts.label);
	ck_assert_int_eq(sec->pid, 42);
	ck_assert_int_eq(sec->exit_status, 3);
	ck_assert_str_eq(sec->note, "a note");
	ck_assert(sec->clock_known[CPU] && sec->clock_known[WALL]);
	ck_assert_double_eq(sec->total_s[WALL], 4e-5);
	ck_assert_uint_eq(sec->n_routines, N_R);
	ck_assert_str_eq(sec->routines[R_WORK].name, "work");
	ck_assert_str_eq(sec->routines[R_WORK].module, "libw.so");
	ck_assert_uint_eq(sec->routines[R_WORK].n_aliases, 2);
	ck_assert_str_eq(sec->routines[R_WORK].aliases[1], "work_alias_");
	ck_assert_str_eq(sec->routines[R_WORK].file, "w.f90");
	ck_assert_int_eq(sec->routines[R_WORK].line, 7);
	ck_assert_str_eq(sec->routines[R_LEAF].name, "leaf");
	ck_assert_str_eq(sec->routines[R_ANON].name, "0x1300");
	ck_assert(sec->routines[R_MAIN].mainline && !sec->routines[R_WORK].mainline);
	ck_assert(sec->routines[R_LEAF].selected && !sec->routines[R_ANON].selected);
	ck_assert_ptr_null(p->argv);
	profile_free(p);
}
END_TEST

/* Gross times on both clocks, and FTN4TRA's formula for the shown ones without net states. */
START_TEST(test_formula)
{
	struct profile *p = build(true, false);
	const struct profile_stats *r = p->sections[0].all.r;

	ck_assert_uint_eq(r[R_MAIN].calls, 1);
	ck_assert_uint_eq(r[R_MAIN].calls_made, 2);
	ck_assert_uint_eq(r[R_WORK].calls, 2);
	ck_assert_uint_eq(r[R_WORK].calls_made, 1);
	ck_assert_uint_eq(r[R_LEAF].calls, 2);
	ck_assert(r[R_MAIN].incomplete && !r[R_WORK].incomplete);
	ck_assert_uint_eq(r[R_MAIN].gross_self[CPU], 8000);
	ck_assert_uint_eq(r[R_WORK].gross_self[CPU], 11000);
	ck_assert_uint_eq(r[R_LEAF].gross_self[CPU], 1500);
	ck_assert_uint_eq(r[R_MAIN].gross_total[CPU], 20000);
	ck_assert_uint_eq(r[R_MAIN].gross_self[WALL], 16000);
	ck_assert_uint_eq(r[R_WORK].gross_self[WALL], 22000);
	ck_assert_uint_eq(r[R_WORK].gross_total[WALL], 24000);
	/* net = gross - entries*f1 - calls_made*f2, each clock its own factors */
	ck_assert_uint_eq(r[R_MAIN].self[CPU], 8000 - 100 - 2 * 50);
	ck_assert_uint_eq(r[R_WORK].self[CPU], 11000 - 2 * 100 - 50);
	ck_assert_uint_eq(r[R_LEAF].self[CPU], 1500 - 2 * 100);
	ck_assert_uint_eq(r[R_MAIN].self[WALL], 16000 - 300 - 2 * 200);
	ck_assert_uint_eq(r[R_WORK].self[WALL], 22000 - 2 * 300 - 200);
	ck_assert_int_eq(r[R_WORK].overhead[CPU], 250);
	ck_assert_int_eq(r[R_WORK].overhead[WALL], 800);
	/* inclusive: every entry and call made inside main's activation (4 entries, 3 calls) */
	ck_assert_uint_eq(r[R_MAIN].total[CPU], 20000 - 4 * 100 - 3 * 50);
	profile_free(p);
}
END_TEST

/* With net states kept, the shown times are theirs, not the formula's. */
START_TEST(test_net)
{
	struct profile *p = build(true, true);
	const struct profile_set *all = &p->sections[0].all;
	const struct profile_stats *r = all->r;
	size_t k;

	ck_assert_uint_eq(r[R_WORK].self[CPU], 5500);
	ck_assert_uint_eq(r[R_MAIN].self[CPU], 4000);
	ck_assert_uint_eq(r[R_WORK].total[CPU], 6000);
	ck_assert_uint_eq(r[R_WORK].self[WALL], 11000);
	ck_assert_uint_eq(r[R_WORK].gross_self[WALL], 22000);
	ck_assert_int_eq(r[R_WORK].overhead[CPU], 5500);
	/* arcs: the net arcs' times */
	for (k = 0; k < all->n_arcs; k++)
		if (all->arcs[k].caller == R_MAIN && all->arcs[k].callee == R_WORK)
			break;
	ck_assert_uint_lt(k, all->n_arcs);
	ck_assert_uint_eq(all->arcs[k].calls, 2);
	ck_assert_double_eq_tol(all->arcs[k].self_s[CPU], 5.5e-6, 1e-15);
	ck_assert_double_eq_tol(all->arcs[k].time_s[CPU], 6e-6, 1e-15);
	ck_assert_double_eq_tol(all->arcs[k].self_s[WALL], 11e-6, 1e-15);
	profile_free(p);
}
END_TEST

/* --no-correct: gross times shown, net states unused, the overhead only estimated. */
START_TEST(test_gross)
{
	struct profile *p = build(false, true);
	const struct profile_set *all = &p->sections[0].all;
	const struct profile_stats *r = all->r;
	size_t k;

	ck_assert_uint_eq(r[R_WORK].self[CPU], 11000);
	ck_assert_uint_eq(r[R_WORK].total[WALL], 24000);
	ck_assert_int_eq(r[R_WORK].overhead[CPU], 250); /* the formula's estimate */
	for (k = 0; k < all->n_nodes; k++)
		if (all->nodes[k].routine == R_WORK)
			ck_assert_uint_eq(all->nodes[k].self[CPU], 11000);
	profile_free(p);
}
END_TEST

/* Arcs and calling contexts with the formula: the arc's share, scaled as the callee's. */
START_TEST(test_arcs_nodes)
{
	struct profile *p = build(true, false);
	const struct profile_set *all = &p->sections[0].all;
	size_t k, seen = 0;

	for (k = 0; k < all->n_arcs; k++) {
		const struct profile_arc *a = &all->arcs[k];

		if (a->caller == PROFILE_NONE && a->callee == R_MAIN) {
			ck_assert_double_eq_tol(a->self_s[CPU], 7.8e-6, 1e-15);
			seen++;
		} else if (a->caller == R_MAIN && a->callee == R_WORK) {
			ck_assert_double_eq_tol(a->self_s[CPU], 10.75e-6, 1e-15);
			ck_assert_double_eq_tol(a->self_s[WALL], 21.2e-6, 1e-15);
			seen++;
		} else if (a->callee == R_LEAF && a->caller == R_WORK) {
			/* 1000 of leaf's 1500 gross, scaled by 1300/1500 */
			ck_assert_double_eq_tol(a->self_s[CPU], 1000e-9 * 1300 / 1500, 1e-15);
			seen++;
		}
	}
	ck_assert_uint_eq(seen, 3);
	ck_assert_uint_eq(all->n_arcs, 4); /* and the root's call of leaf in thread 2 */
	ck_assert_uint_eq(all->nodes[0].parent, PROFILE_NONE);
	ck_assert_uint_eq(all->nodes[0].routine, PROFILE_NONE);
	for (k = 1; k < all->n_nodes; k++) {
		const struct profile_node *x = &all->nodes[k];

		ck_assert_uint_lt(x->parent, k);
		if (x->routine == R_LEAF && x->parent != 0) {
			ck_assert_uint_eq(x->calls, 1);
			ck_assert_uint_eq(x->self[CPU], 1000 - 100);
			ck_assert_uint_eq(x->self[WALL], 2000 - 300);
		}
	}
	profile_free(p);
}
END_TEST

/* Each thread's results on both clocks, in order of first event. */
START_TEST(test_threads)
{
	struct profile *p = build(true, true);
	const struct profile_section *sec = &p->sections[0];

	ck_assert_uint_eq(sec->n_threads, 2);
	ck_assert_int_eq(sec->all.tid, 0);
	ck_assert_int_eq(sec->threads[0].tid, 1);
	ck_assert_int_eq(sec->threads[1].tid, 2);
	ck_assert_uint_eq(sec->threads[0].r[R_LEAF].calls, 1);
	ck_assert_uint_eq(sec->threads[1].r[R_LEAF].calls, 1);
	ck_assert_uint_eq(sec->threads[1].r[R_WORK].calls, 0);
	ck_assert_uint_eq(sec->threads[1].r[R_LEAF].gross_self[CPU], 500);
	ck_assert_uint_eq(sec->threads[1].r[R_LEAF].gross_self[WALL], 1000);
	ck_assert_uint_eq(sec->threads[1].r[R_LEAF].self[CPU], 250);  /* net state: t/2 */
	ck_assert_uint_eq(sec->threads[1].r[R_LEAF].self[WALL], 500); /* net state: t+100 */
	ck_assert_uint_eq(sec->threads[0].r[R_WORK].self[CPU], 5500);
	profile_free(p);
}
END_TEST

/* The view of a profile on the clock the report options choose. */
static char *render(const struct profile *p, enum report_format fmt, enum clock_kind c)
{
	struct report_opts opts = {.format = fmt, .sort = SORT_NAME, .clock = c};
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(report_write(f, p, 0, &opts), 0);
	fclose(f);
	return buf;
}

START_TEST(test_clock_choice)
{
	struct profile *p = build(true, false);
	char *cpu = render(p, FMT_CSV, CPU), *wall = render(p, FMT_CSV, WALL);
	char *jc = render(p, FMT_JSON, CPU), *jw = render(p, FMT_JSON, WALL);
	char *tw = render(p, FMT_TABLE, WALL);

	ck_assert_ptr_nonnull(strstr(cpu, "\nwork,2,0.000010750,"));
	ck_assert_ptr_nonnull(strstr(wall, "\nwork,2,0.000021200,"));
	ck_assert_ptr_nonnull(strstr(jc, "\"clock\": \"cpu\""));
	ck_assert_ptr_nonnull(strstr(jw, "\"clock\": \"wall\""));
	ck_assert_ptr_nonnull(strstr(jw, "\"f1_ns\": 300.000"));
	/* both clocks in JSON, the chosen one first */
	ck_assert_ptr_nonnull(strstr(jc, "\"self_s\": 0.000010750, \"gross_self_s\": 0.000011000"));
	ck_assert_ptr_nonnull(strstr(jc, "\"cpu\": {"));
	ck_assert_ptr_nonnull(strstr(jw, "\"cpu\": {"));
	ck_assert(strstr(jc, "\"cpu\": {") < strstr(jc, "\"wall\": {"));
	ck_assert(strstr(jw, "\"wall\": {") < strstr(jw, "\"cpu\": {"));
	ck_assert_ptr_nonnull(strstr(tw, "), wall clock\n"));
	ck_assert_ptr_nonnull(strstr(tw, "f1 0.30 us per entry, f2 0.20 us per call made"));
	ck_assert_ptr_null(strstr(tw, "nan"));
	free(cpu);
	free(wall);
	free(jc);
	free(jw);
	free(tw);
	profile_free(p);
}
END_TEST

/* From the books: both clocks from one stamp; net books over the formula. */
START_TEST(test_books)
{
	struct books *b = books_new(N_R, true, true);
	const double cost[FS_N_CLOCKS] = {[CPU] = 10, [WALL] = 30};
	struct stamp s;
	struct profile *p, *q;
	const struct profile_stats *r;

	s = (struct stamp){{[CPU] = 0, [WALL] = 100}};
	books_enter(b, 1, R_MAIN, 0x7000, 0x10, &s);
	books_stop_cost(b, 1, cost);
	s = (struct stamp){{[CPU] = 1000, [WALL] = 2100}};
	books_enter(b, 1, R_WORK, 0x6f00, 0x20, &s);
	s = (struct stamp){{[CPU] = 4000, [WALL] = 8100}};
	books_leave(b, 1, &s, NULL);
	s = (struct stamp){{[CPU] = 5000, [WALL] = 10100}};
	books_leave(b, 1, &s, NULL);
	books_finish(b, 20000);
	p = profile_new(NULL, F1, F2, 7, true);
	ck_assert_int_eq(profile_add_books(p, &facts, &st, b), 0);
	r = p->sections[0].all.r;
	ck_assert_uint_eq(r[R_MAIN].gross_self[CPU], 2000);
	ck_assert_uint_eq(r[R_MAIN].gross_self[WALL], 4000);
	ck_assert_uint_eq(r[R_WORK].gross_self[WALL], 6000);
	ck_assert_uint_eq(r[R_MAIN].self[CPU], 1990);
	ck_assert_uint_eq(r[R_MAIN].self[WALL], 3970);
	ck_assert_uint_eq(r[R_WORK].self[CPU], 3000);
	ck_assert_int_eq(r[R_MAIN].overhead[WALL], 30);
	ck_assert_uint_eq(p->stops_measured, 7);
	/* --no-correct: gross, and the formula's estimate */
	q = profile_new(NULL, F1, F2, 0, false);
	ck_assert_int_eq(profile_add_books(q, &facts, &st, b), 0);
	r = q->sections[0].all.r;
	ck_assert_uint_eq(r[R_MAIN].self[CPU], 2000);
	ck_assert_int_eq(r[R_MAIN].overhead[CPU], 150);
	profile_free(q);
	profile_free(p);
	books_free(b);
}
END_TEST

/* Counts only: one state for both clocks, calls alone. */
START_TEST(test_count_only)
{
	struct books *b = books_new(N_R, false, false);
	struct profile_facts f = facts;
	struct profile *p = profile_new(NULL, NULL, NULL, 0, true);
	char *out;

	books_count(b, 1, R_WORK);
	books_count(b, 1, R_WORK);
	books_count(b, 1, R_LEAF);
	f.count_only = true;
	ck_assert_int_eq(profile_add_books(p, &f, &st, b), 0);
	ck_assert(p->sections[0].count_only);
	ck_assert_uint_eq(p->sections[0].all.r[R_WORK].calls, 2);
	ck_assert_uint_eq(p->sections[0].all.r[R_WORK].self[WALL], 0);
	out = render(p, FMT_TABLE, WALL);
	ck_assert_ptr_nonnull(strstr(out, "(exit status 3), count only\n"));
	ck_assert_ptr_nonnull(strstr(out, "  work                            2\n"));
	free(out);
	profile_free(p);
	books_free(b);
}
END_TEST

/* Several sections; bad arguments are refused. */
START_TEST(test_sections_and_errors)
{
	struct profile *p = build(true, false);
	struct acct *small = acct_new(2), *g[FS_N_CLOCKS] = {NULL, NULL};
	char *argv[] = {"./p", "x", NULL};
	struct profile *q = profile_new(argv, F1, F2, 0, true);
	struct report_opts opts = {.format = FMT_TABLE};

	g[CPU] = small;
	ck_assert_int_eq(profile_add_accts(p, &facts, &st, (const struct acct *const *)g, NULL),
			 -EINVAL);
	g[CPU] = NULL;
	ck_assert_int_eq(profile_add_accts(p, &facts, &st, (const struct acct *const *)g, NULL),
			 -EINVAL);
	ck_assert_uint_eq(p->n_sections, 1);
	ck_assert_int_eq(report_write(stdout, p, 1, &opts), -EINVAL);
	ck_assert_int_eq(report_write_svg(stdout, p, 1, &opts), -EINVAL);
	ck_assert_str_eq(q->argv[1], "x");
	ck_assert_ptr_null(q->argv[2]);
	ck_assert_ptr_ne(q->argv[0], argv[0]);
	/* one clock known: its times, zeros on the other, no clock objects in JSON */
	g[WALL] = acct_new(N_R);
	ck_assert_int_eq(profile_add_accts(q, &facts, &st, (const struct acct *const *)g, NULL), 0);
	ck_assert(!q->sections[0].clock_known[CPU] && q->sections[0].clock_known[WALL]);
	ck_assert_int_eq(profile_add_accts(q, &facts, &st, (const struct acct *const *)g, NULL), 0);
	ck_assert_uint_eq(q->n_sections, 2);
	acct_free(g[WALL]);
	acct_free(small);
	profile_free(q);
	profile_free(p);
	profile_free(NULL);
}
END_TEST

static Suite *profile_suite(void)
{
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_facts);
	tcase_add_test(tc, test_formula);
	tcase_add_test(tc, test_net);
	tcase_add_test(tc, test_gross);
	tcase_add_test(tc, test_arcs_nodes);
	tcase_add_test(tc, test_threads);
	tcase_add_test(tc, test_clock_choice);
	tcase_add_test(tc, test_books);
	tcase_add_test(tc, test_count_only);
	tcase_add_test(tc, test_sections_and_errors);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(profile_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
