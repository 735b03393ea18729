// SPDX-License-Identifier: GPL-2.0-or-later
/* check_trust.c - Check suite for the report's warning (trust.h) and the -l it suggests (names.h).
 */
#include "fortstat/trust.h"
#include "fortstat/names.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static char *sqlite_needed[] = {"libsqlite3.so.0", "libreadline.so.8", "libz.so.1", "libc.so.6"};
static char *xz_needed[] = {"liblzma.so.5", "libc.so.6"};
static char *gzip_needed[] = {"libc.so.6"};
static char *sys_needed[] = {"libm.so.6",      "libpthread.so.0",      "libdl.so.2",
			     "libstdc++.so.6", "ld-linux-x86-64.so.2", "libgcc_s.so.1",
			     "libc.so.6",      "libpcre2-8.so.0"};

/* A timed, corrected run of 1 s with nothing to say: each test changes what it tests. */
static struct trust_facts base(void)
{
	return (struct trust_facts){.timed = true,
				    .correct = true,
				    .probes = true,
				    .total_s = 1.0,
				    .unaccounted_s = 0.1,
				    .overhead_s = 0.2,
				    .calls = 1000,
				    .program = "/usr/bin/prog"};
}

/* A stripped program, most of its time unaccounted (share u), with its DT_NEEDED and the -l given.
 */
static void stripped(struct trust_facts *f, double u, const char *program, char **needed,
		     size_t n_needed, const char **libs, size_t n_libs)
{
	f->unaccounted_s = u;
	f->stripped = true;
	f->program = program;
	f->needed = needed;
	f->n_needed = n_needed;
	f->libs = libs;
	f->n_libs = n_libs;
}

static void judge(const struct trust_facts *f, struct trust *t)
{
	trust_judge(f, t);
	/* the line and the flags agree */
	ck_assert_int_eq(t->warning != NULL,
			 t->overhead_high || t->unaccounted_high || t->nothing_counted);
}

START_TEST(test_quiet)
{
	struct trust_facts f = base();
	struct trust t;

	judge(&f, &t);
	ck_assert_ptr_null(t.warning);
	ck_assert_double_eq_tol(t.overhead_pct, 20.0, 1e-9);
	ck_assert_double_eq_tol(t.unaccounted_pct, 10.0, 1e-9);
	trust_free(&t);
}
END_TEST

/* (a): above 100 % warns, exactly 100 % does not. */
START_TEST(test_overhead_boundary)
{
	struct trust_facts f = base();
	struct trust t;

	f.overhead_s = 1.0;
	judge(&f, &t);
	ck_assert(!t.overhead_high);
	ck_assert_double_eq_tol(t.overhead_pct, 100.0, 1e-9);
	ck_assert_ptr_null(t.warning);
	trust_free(&t);

	f.overhead_s = 1.000001;
	judge(&f, &t);
	ck_assert(t.overhead_high);
	ck_assert_ptr_nonnull(
	    strstr(t.warning, "the overhead removed is 100 % of the program's time"));
	trust_free(&t);

	f.overhead_s = 3.4;
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, "the overhead removed is 340 % of"));
	ck_assert_ptr_null(strstr(t.warning, "unaccounted"));
	trust_free(&t);
}
END_TEST

/* (a)'s way forward: the traps, the calls that trapped, or the probes' own cost. */
START_TEST(test_overhead_hints)
{
	struct trust_facts f = base();
	struct trust t;

	f.overhead_s = 2.0;
	f.probes = false;
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, "every call is a ptrace stop with the traps"));
	trust_free(&t);

	f.probes = true;
	f.trap_calls = 123456;
	f.trap_cost_s = 1.5; /* most of the overhead */
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, ": 123456 calls went through the traps"));
	ck_assert_ptr_nonnull(strstr(t.warning, "exclude those routines with -x"));
	trust_free(&t);

	f.trap_cost_s = 0.5; /* a quarter: the probes' own cost */
	judge(&f, &t);
	ck_assert_ptr_null(strstr(t.warning, "went through the traps"));
	ck_assert_ptr_nonnull(strstr(t.warning, "--throttle"));
	trust_free(&t);
}
END_TEST

/* (a) only when the overhead was removed, with times, and of at least TRUST_MIN_S. */
START_TEST(test_overhead_not_removed)
{
	struct trust_facts f = base();
	struct trust t;

	f.total_s = 0.001;
	f.overhead_s = 0.99 * TRUST_MIN_S; /* 990 %, but a few hundred stops */
	judge(&f, &t);
	ck_assert(!t.overhead_high);
	ck_assert_double_eq_tol(t.overhead_pct, 990.0, 1e-6);
	trust_free(&t);
	f.overhead_s = TRUST_MIN_S;
	judge(&f, &t);
	ck_assert(t.overhead_high);
	trust_free(&t);
	f.total_s = 1.0;

	f.overhead_s = 5.0;
	f.correct = false;
	judge(&f, &t);
	ck_assert(!t.overhead_high);
	ck_assert_ptr_null(t.warning);
	trust_free(&t);

	f.correct = true;
	f.total_s = 0;
	judge(&f, &t);
	ck_assert(!t.overhead_high);
	ck_assert(isnan(t.overhead_pct));
	ck_assert(isnan(t.unaccounted_pct));
	ck_assert_ptr_null(t.warning);
	trust_free(&t);
}
END_TEST

/* (b): more than half warns, exactly half does not. */
START_TEST(test_unaccounted_boundary)
{
	struct trust_facts f = base();
	struct trust t;

	f.unaccounted_s = 0.5;
	judge(&f, &t);
	ck_assert(!t.unaccounted_high);
	ck_assert_ptr_null(t.warning);
	trust_free(&t);

	f.unaccounted_s = 0.500001;
	judge(&f, &t);
	ck_assert(t.unaccounted_high);
	ck_assert_ptr_nonnull(strstr(t.warning, "50.0 % of the program's time is unaccounted"));
	/* a program with symbols: the start-up, threads, -l, --all */
	ck_assert_ptr_nonnull(strstr(t.warning, "--all"));
	ck_assert_ptr_null(strstr(t.warning, "stripped"));
	trust_free(&t);

	f.pid = 99; /* -p: what ran at the attach is not timed */
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, "at the attach are not timed (active at attach)"));
	trust_free(&t);
}
END_TEST

/* (b) for a program with symbols: not for a short start-up, unless stripped. */
START_TEST(test_unaccounted_floor)
{
	struct trust_facts f = base();
	struct trust t;

	f.overhead_s = 0;
	f.total_s = 0.0012;
	f.unaccounted_s = 0.0009; /* 75 %, under TRUST_MIN_S */
	judge(&f, &t);
	ck_assert(!t.unaccounted_high);
	ck_assert_ptr_null(t.warning);
	trust_free(&t);

	f.total_s = 2 * TRUST_MIN_S;
	f.unaccounted_s = TRUST_MIN_S; /* exactly half */
	judge(&f, &t);
	ck_assert(!t.unaccounted_high);
	trust_free(&t);
	f.total_s = 1.9 * TRUST_MIN_S;
	judge(&f, &t);
	ck_assert(t.unaccounted_high);
	trust_free(&t);

	f.total_s = 0.0012;
	f.unaccounted_s = 0.0009;
	f.stripped = true;
	judge(&f, &t);
	ck_assert(t.unaccounted_high);
	trust_free(&t);
}
END_TEST

/* A stripped program without -l: its own library first (sqlite3, xz), then the others. */
START_TEST(test_stripped_hint)
{
	struct trust_facts f = base();
	struct trust t;

	f.unaccounted_s = 0.99;
	f.stripped = true;
	f.program = "/usr/bin/sqlite3";
	f.needed = sqlite_needed;
	f.n_needed = 4;
	judge(&f, &t);
	ck_assert_str_eq(t.warning,
			 "99.0 % of the program's time is unaccounted (outside every timed "
			 "routine): /usr/bin/sqlite3 has no symbol table of its own (stripped): "
			 "time its libraries' routines with -l, e.g. fortstat -l libsqlite3 "
			 "/usr/bin/sqlite3 (its other libraries: libreadline, libz, libc)");
	trust_free(&t);

	f.program = "/usr/bin/xz [pid 77]"; /* -f's label */
	f.needed = xz_needed;
	f.n_needed = 2;
	judge(&f, &t);
	ck_assert_ptr_nonnull(
	    strstr(t.warning, "e.g. fortstat -l liblzma /usr/bin/xz (its other libraries: libc)"));
	trust_free(&t);

	f.pid = 4242; /* -p */
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, "e.g. fortstat -p 4242 -l liblzma (its other"));
	trust_free(&t);
}
END_TEST

/* With -l given: the next library after them; all of them given: no -l left to try. */
START_TEST(test_stripped_libs_given)
{
	const char *libs[] = {"libc"};
	const char *sq[] = {"libsqlite3", "libc"};
	struct trust_facts f = base();
	struct trust t;

	stripped(&f, 0.98, "/usr/bin/gzip", gzip_needed, 1, libs, 1);
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, "-l times every library it names: its own code "
						"can be timed only in a build with symbols"));
	ck_assert_ptr_null(strstr(t.warning, "e.g."));
	trust_free(&t);

	f.program = "sqlite3";
	f.needed = sqlite_needed;
	f.n_needed = 4;
	f.libs = sq;
	f.n_libs = 2;
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, "e.g. fortstat -l libsqlite3 -l libc -l "
						"libreadline sqlite3 (its other libraries: libz)"));
	trust_free(&t);
}
END_TEST

/*
 * A program that started processes fortstat did not follow (no -f: gcc
 * runs cc1 and as): -f is the first way forward, with the -l given, then
 * the stripped program's; never for an attached process, nor when nothing
 * is unaccounted.
 */
START_TEST(test_not_followed)
{
	const char *libs[] = {"libc"};
	struct trust_facts f = base();
	struct trust t;

	f.not_followed = 2;
	judge(&f, &t);
	ck_assert_ptr_null(t.warning); /* 10 % unaccounted: nothing to say */
	trust_free(&t);

	stripped(&f, 0.9, "/usr/bin/gcc [pid 42]", gzip_needed, 1, libs, 1);
	judge(&f, &t);
	ck_assert_str_eq(t.warning,
			 "90.0 % of the program's time is unaccounted (outside every timed "
			 "routine): it started 2 processes that fortstat did not follow (their "
			 "time is in no report): -f follows them, e.g. fortstat -f -l libc "
			 "/usr/bin/gcc; /usr/bin/gcc has no symbol table of its own (stripped) "
			 "and -l times every library it names: its own code can be timed only in "
			 "a build with symbols");
	trust_free(&t);

	f.not_followed = 1;
	f.stripped = false;
	f.libs = NULL;
	f.n_libs = 0;
	judge(&f, &t);
	ck_assert_ptr_nonnull(strstr(t.warning, ": it started 1 process that fortstat did not "
						"follow (its time is in no report): -f follows "
						"them, e.g. fortstat -f /usr/bin/gcc; it ran "
						"before main"));
	trust_free(&t);

	f.pid = 42; /* -p: it was not launched by fortstat, -f is no way forward */
	judge(&f, &t);
	ck_assert_ptr_null(strstr(t.warning, "-f"));
	trust_free(&t);
}
END_TEST

/* Both at once: one line, both reasons, both ways forward. */
START_TEST(test_both)
{
	struct trust_facts f = base();
	struct trust t;

	f.overhead_s = 1.5;
	f.unaccounted_s = 0.6;
	f.probes = false;
	judge(&f, &t);
	ck_assert(t.overhead_high && t.unaccounted_high);
	ck_assert_ptr_null(strchr(t.warning, '\n'));
	ck_assert_ptr_nonnull(strstr(t.warning, "150 % of the program's time (its times are small "
						"differences of large estimates); 60.0 %"));
	ck_assert_ptr_nonnull(strstr(t.warning, "with the traps"));
	ck_assert_ptr_nonnull(strstr(t.warning, "--all"));
	trust_free(&t);
}
END_TEST

/* -c: no times; a stripped program none of whose routines was counted gets the hint. */
START_TEST(test_count_only)
{
	struct trust_facts f = base();
	struct trust t;

	f.timed = false;
	f.overhead_s = 9; /* meaningless without times */
	f.unaccounted_s = 1;
	judge(&f, &t);
	ck_assert_ptr_null(t.warning);
	trust_free(&t);

	f.calls = 0;
	f.stripped = true;
	f.program = "/usr/bin/git";
	f.needed = sys_needed;
	f.n_needed = 8;
	judge(&f, &t);
	ck_assert(t.nothing_counted);
	ck_assert_ptr_nonnull(strstr(t.warning, "no call of a timed routine was counted: "));
	ck_assert_ptr_nonnull(strstr(t.warning, "e.g. fortstat -l libpcre2-8 /usr/bin/git (its "
						"other libraries: libc)"));
	trust_free(&t);
}
END_TEST

/* names_suggest_libs: own libraries in order, the system's never, libc last, -l matched out. */
START_TEST(test_suggest)
{
	const char *given[] = {"libsql*"};
	char *out[8];
	size_t n;

	n = names_suggest_libs(sys_needed, 8, NULL, 0, out, 8);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(out[0], "libpcre2-8");
	ck_assert_str_eq(out[1], "libc");
	free(out[0]);
	free(out[1]);

	n = names_suggest_libs(sqlite_needed, 4, given, 1, out, 2);
	ck_assert_uint_eq(n, 2); /* max */
	ck_assert_str_eq(out[0], "libreadline");
	ck_assert_str_eq(out[1], "libz");
	free(out[0]);
	free(out[1]);

	n = names_suggest_libs(NULL, 0, NULL, 0, out, 8); /* nothing known: libc */
	ck_assert_uint_eq(n, 1);
	ck_assert_str_eq(out[0], "libc");
	free(out[0]);
	given[0] = "libc";
	ck_assert_uint_eq(names_suggest_libs(gzip_needed, 1, given, 1, out, 8), 0);
}
END_TEST

static Suite *trust_suite(void)
{
	Suite *s = suite_create("trust");
	TCase *tc = tcase_create("judge");

	tcase_add_test(tc, test_quiet);
	tcase_add_test(tc, test_overhead_boundary);
	tcase_add_test(tc, test_overhead_hints);
	tcase_add_test(tc, test_overhead_not_removed);
	tcase_add_test(tc, test_unaccounted_boundary);
	tcase_add_test(tc, test_unaccounted_floor);
	tcase_add_test(tc, test_stripped_hint);
	tcase_add_test(tc, test_stripped_libs_given);
	tcase_add_test(tc, test_not_followed);
	tcase_add_test(tc, test_both);
	tcase_add_test(tc, test_count_only);
	tcase_add_test(tc, test_suggest);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(trust_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
