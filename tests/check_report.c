// SPDX-License-Identifier: GPL-2.0-or-later
/* check_report.c - every view (table, graph, CSV, JSON, folded, callgrind, SVG) of a synthetic
 * profile against golden files. */
#include <check.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fortstat/account.h"
#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"
#include "../src/report/view.h"

#define GOLDEN SRCDIR "/tests/golden/"

/* ---- the synthetic profile ---- */

enum { R_START, R_MAIN, R_SOLVE, R_F, R_HELPER, R_UNUSED, R_QUOTE, R_EXIT, N_R };

static char *n_start[] = {"_start"};
static char *n_main[] = {"main"};
static char *n_solve[] = {"solve_", "solve_alias_"};
static char *n_f[] = {"_ZN2ns1fEiPKc"};
static char *n_helper[] = {"helper"};
static char *n_unused[] = {"unused_routine"};
static char *n_quote[] = {"say\"hi\"", "back\\slash\ttab", "bad\377byte"};
static char *n_exit[] = {"exit_like"};

static struct routine routines[N_R] = {
    [R_START] = {0x401000, 0x20, n_start, 1, NULL, NULL, 0, RT_HELPER},
    [R_MAIN] = {0x401100, 0x80, n_main, 1, "main", "prog.c", 12, RT_MAINLINE | RT_SELECTED},
    [R_SOLVE] = {0x401200, 0x100, n_solve, 2, "solve", "solve.f90", 3, RT_SELECTED},
    [R_F] = {0x401300, 0x40, n_f, 1, "ns::f(int, char const*)", "f.cc", 7, RT_SELECTED},
    [R_HELPER] = {0x401400, 0x10, n_helper, 1, NULL, "prog.c", 40, 0},
    [R_UNUSED] = {0x401500, 0x10, n_unused, 1, NULL, NULL, 0, RT_SELECTED},
    [R_QUOTE] = {0x401600, 0x10, n_quote, 3, NULL, NULL, 0, RT_SELECTED},
    [R_EXIT] = {0x401700, 0x10, n_exit, 1, NULL, NULL, 0, RT_SELECTED | RT_NORETURN},
};

static struct symtab st = {
    .path = "./prog",
    .r = routines,
    .n = N_R,
    .e_entry = 0x401000,
    .has_symtab = true,
    .has_dwarf = true,
};

static char *prog_argv[] = {"./prog", "in put.dat", "a\"b", NULL};

/*
 * Thread 1: main calls solve 3 times, each solve calls ns::f twice, then
 * main calls exit_like (entry only) and is still running at the end.
 * Thread 2 (its own clock) runs the oddly named routine once.
 *   gross self: main 9 ms, solve 18.75 ms, f 2.25 ms, quote 4 ms, exit_like 0.
 */
/* The profile with every time divided by `div` (the same events). */
static struct acct *profile_div(acct_time_t div)
{
	struct acct *a = acct_new(N_R);
	acct_time_t base;
	int k;

	acct_enter(a, 1, R_MAIN, 0x7ff000, 0x401010, 0);
	for (k = 0; k < 3; k++) {
		base = 1000000 + (acct_time_t)k * 10000000;
		acct_enter(a, 1, R_SOLVE, 0x7fef00, 0x401150, base / div);
		acct_enter(a, 1, R_F, 0x7fee00, 0x401250, (base + 2000000) / div);
		acct_leave(a, 1, (base + 2500000) / div, NULL);
		acct_enter(a, 1, R_F, 0x7fee00, 0x401260, (base + 3000000) / div);
		acct_leave(a, 1, (base + 3250000) / div, NULL);
		acct_leave(a, 1, (base + 7000000) / div, NULL);
	}
	acct_count(a, 1, R_EXIT);
	acct_enter(a, 2, R_QUOTE, 0x7f0000, 0x402000, 100 / div);
	acct_leave(a, 2, 4000100 / div, NULL);
	acct_finish(a, 30000000 / div, true);
	return a;
}

static struct acct *profile(void)
{
	return profile_div(1);
}

/*
 * What the tests say of a run beside its accounting: the facts of a
 * profile's one section and the run's, on the clock `clock` ("cpu" or
 * "wall"); alt, alt_net the other clock's states (NULL: not known).
 */
struct run {
	const char *program;
	char *const *argv;
	int exit_status, term_signal;
	const char *clock;
	bool count_only;
	double total_time_s;
	double f1_ns, f2_ns;
	uint64_t stops_measured;
	bool correct;
	const struct acct *alt, *net, *alt_net;
	double alt_f1_ns, alt_f2_ns;
	double df1_ns, df2_ns; /* their spread on the chosen clock (the other's: none) */
	const char *note;
	bool ranked;
	int rank, size;
	uint64_t lost_stops, lost_records; /* context-switch records lost */
	int lost_tids[PROFILE_LOST_TIDS];
	double ovh_all_s;			  /* the overhead taken off the clocks in all */
	const struct profile_thread_usage *usage; /* NULL: not measured */
	size_t n_usage;
	int n_cpus;
};

/* Build the profile of acct a (the chosen clock's) and run, and write its view (or SVG). */
static int write_run(FILE *f, const struct symtab *s, const struct acct *a, const struct run *run,
		     const struct report_opts *opts, bool svg)
{
	enum clock_kind c =
	    run->clock && !strcmp(run->clock, "wall") ? CLOCK_KIND_WALL : CLOCK_KIND_CPU;
	enum clock_kind o = c == CLOCK_KIND_WALL ? CLOCK_KIND_CPU : CLOCK_KIND_WALL;
	const struct acct *gross[FS_N_CLOCKS], *net[FS_N_CLOCKS];
	double f1[FS_N_CLOCKS], f2[FS_N_CLOCKS], df1[FS_N_CLOCKS] = {0, 0},
						 df2[FS_N_CLOCKS] = {0, 0};
	struct profile_facts facts = {.label = run->program,
				      .exit_status = run->exit_status,
				      .term_signal = run->term_signal,
				      .total_s = {run->total_time_s, run->total_time_s},
				      .count_only = run->count_only,
				      .note = run->note,
				      .overhead_all_s = {run->ovh_all_s, run->ovh_all_s},
				      .cs_lost_windows = run->lost_stops,
				      .cs_lost_records = run->lost_records,
				      .usage = run->usage,
				      .n_usage = run->n_usage,
				      .n_cpus = run->n_cpus};
	struct report_opts ro = *opts;
	struct profile *p;
	int err;

	memcpy(facts.cs_lost_tids, run->lost_tids, sizeof(facts.cs_lost_tids));
	gross[c] = a;
	gross[o] = run->alt;
	net[c] = run->net;
	net[o] = run->alt_net;
	f1[c] = run->f1_ns;
	f2[c] = run->f2_ns;
	f1[o] = run->alt_f1_ns;
	f2[o] = run->alt_f2_ns;
	p = profile_new(run->argv, f1, f2, run->stops_measured, run->correct);
	df1[c] = run->df1_ns;
	df2[c] = run->df2_ns;
	profile_set_spread(p, df1, df2);
	p->ranked = run->ranked;
	p->rank = run->rank;
	p->size = run->size;
	err = profile_add_accts(p, &facts, s, gross, net);
	ro.clock = c;
	if (!err)
		err = svg ? report_write_svg(f, p, 0, &ro) : report_write(f, p, 0, &ro);
	profile_free(p);
	return err;
}

static struct run base_run(void)
{
	struct run run = {
	    .program = "./prog",
	    .argv = prog_argv,
	    .exit_status = 0,
	    .clock = "cpu",
	    .total_time_s = 0.0352,
	    .f1_ns = 1500,
	    .f2_ns = 1000,
	    .df1_ns = 200,
	    .df2_ns = 100,
	    .correct = true,
	};
	return run;
}

/* ---- golden files ---- */

/* The report of the synthetic profile with opts (or the SVG when svg is set). */
static char *render_opts(const struct run *run, const struct report_opts *opts, bool svg,
			 size_t *len)
{
	struct acct *a = profile();
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	ck_assert_ptr_nonnull(f);
	if (svg)
		ck_assert_int_eq(write_run(f, &st, a, run, opts, true), 0);
	else
		ck_assert_int_eq(write_run(f, &st, a, run, opts, false), 0);
	fclose(f);
	acct_free(a);
	return buf;
}

static char *render(const struct run *run, enum report_format fmt, enum report_sort sort,
		    bool zeros, size_t *len)
{
	struct report_opts opts = {.format = fmt, .sort = sort, .zeros = zeros};

	return render_opts(run, &opts, false, len);
}

static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	char *buf = NULL;
	size_t cap = 0, n;
	char tmp[4096];

	if (!f)
		return NULL;
	*len = 0;
	while ((n = fread(tmp, 1, sizeof(tmp), f)) > 0) {
		if (*len + n + 1 > cap) {
			cap = 2 * (*len + n + 1);
			buf = realloc(buf, cap);
			ck_assert_ptr_nonnull(buf);
		}
		memcpy(buf + *len, tmp, n);
		*len += n;
	}
	fclose(f);
	if (!buf)
		buf = calloc(1, 1);
	else
		buf[*len] = '\0';
	return buf;
}

static void write_file(const char *path, const char *buf, size_t len)
{
	FILE *f = fopen(path, "wb");

	ck_assert_msg(f != NULL, "cannot write %s: %s", path, strerror(errno));
	ck_assert_uint_eq(fwrite(buf, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* Compare out with the golden file, or write it when FORTSTAT_UPDATE_GOLDEN=1. */
static void golden(const char *name, const char *out, size_t len)
{
	char path[4096], actual[4096];
	const char *upd = getenv("FORTSTAT_UPDATE_GOLDEN");
	size_t glen = 0;
	char *want;

	snprintf(path, sizeof(path), GOLDEN "%s", name);
	if (upd && !strcmp(upd, "1")) {
		write_file(path, out, len);
		return;
	}
	want = slurp(path, &glen);
	ck_assert_msg(want != NULL, "golden file %s missing (FORTSTAT_UPDATE_GOLDEN=1 writes it)",
		      path);
	if (glen != len || memcmp(want, out, len) != 0) {
		snprintf(actual, sizeof(actual), BUILDDIR "/%s.actual", name);
		write_file(actual, out, len);
		free(want);
		ck_abort_msg("%s differs from %s (diff -u %s %s)", actual, path, path, actual);
	}
	free(want);
}

static void check_golden(const char *name, const struct run *run, enum report_format fmt,
			 enum report_sort sort, bool zeros)
{
	size_t len = 0;
	char *out = render(run, fmt, sort, zeros, &len);

	golden(name, out, len);
	free(out);
}

START_TEST(test_table)
{
	struct run run = base_run();

	check_golden("report.table", &run, FMT_TABLE, SORT_TIME, false);
}
END_TEST

/*
 * Lost context-switch records: a line under the table and three JSON keys,
 * none of it when nothing was lost.
 */
START_TEST(test_switch_loss)
{
	struct run run = base_run();
	size_t len = 0;
	char *out;

	run.lost_stops = 3;
	run.lost_records = 1200;
	run.lost_tids[0] = 101;
	run.lost_tids[1] = 102;
	out = render(&run, FMT_TABLE, SORT_TIME, false, &len);
	ck_assert_ptr_nonnull(strstr(out,
				     "\n  switch records lost           3 stops   (threads 101, "
				     "102: CPU times spread over elapsed time there; 1200 "
				     "records dropped)\n"));
	free(out);
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	ck_assert_ptr_nonnull(strstr(out,
				     "\n  \"switch_records_lost\": 1200,\n  "
				     "\"switch_lost_stops\": 3,\n  \"switch_lost_tids\": [101, "
				     "102],\n"));
	free(out);
	run.lost_stops = run.lost_records = 0;
	run.lost_tids[0] = run.lost_tids[1] = 0;
	out = render(&run, FMT_TABLE, SORT_TIME, false, &len);
	ck_assert_ptr_null(strstr(out, "switch records"));
	free(out);
}
END_TEST

/*
 * The correction's uncertainty: f1 known to within 0.1 ms makes ns::f's
 * (6 calls, 2.241 ms) 0.6 ms, 27 %: marked '~'; solve's (3 calls, 0.3 ms of
 * 18.7) and the quote's (0.1 ms of 4) not; exit_like's (0 s, all removed)
 * is; f2 known to within 1 us adds solve's 6 calls made to its 3 entries.
 * The footer's: 12 calls timed, one f1 and one f2 each: 1.212 ms. Nothing
 * of it with --no-correct.
 */
START_TEST(test_uncertain_rows)
{
	struct run run = base_run();
	size_t len = 0;
	char *out, *f;

	run.df1_ns = 100000;
	run.df2_ns = 1000;
	out = render(&run, FMT_TABLE, SORT_TIME, false, &len);
	ck_assert_ptr_nonnull(strstr(out,
				     "\n  ns::f(int, char const*)            6        0.002241~"
				     "    6.37"));
	ck_assert_ptr_nonnull(
	    strstr(out, "\n  solve                              3        0.018739 "));
	ck_assert_ptr_nonnull(
	    strstr(out, "\n  say\"hi\"                            1        0.003999 "));
	ck_assert_ptr_nonnull(
	    strstr(out, "\n  exit_like                          1        0.000000~"));
	ck_assert_ptr_nonnull(strstr(out, "    0.08 % \u00b1 0.001212 s   (f1 1.50 us"));
	ck_assert_ptr_nonnull(strstr(out,
				     "\n  ~ after a time: what was removed from it is uncertain "
				     "by more than 10 % of it\n"));
	free(out);
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	f = strstr(out, "{\"name\": \"ns::f(int, char const*)\"");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f, "\"self_s\": 0.002241000, \"self_uncertainty_s\": "
					"0.000600000, \"gross_self_s\": "));
	/* solve: 3 calls, 6 calls made */
	f = strstr(out, "{\"name\": \"solve\"");
	ck_assert_ptr_nonnull(f);
	ck_assert_ptr_nonnull(strstr(f, "\"self_uncertainty_s\": 0.000306000, "));
	ck_assert_ptr_nonnull(strstr(out, "\n  \"overhead_uncertainty_s\": 0.001212000,\n"));
	free(out);

	/* no spread known: no '~', no legend, no "+-" */
	run.df1_ns = run.df2_ns = 0;
	out = render(&run, FMT_TABLE, SORT_TIME, false, &len);
	ck_assert_ptr_null(strchr(out, '~'));
	ck_assert_ptr_null(strstr(out, "\u00b1"));
	free(out);

	/* --no-correct: gross times, nothing removed, nothing uncertain */
	run.df1_ns = 100000;
	run.correct = false;
	out = render(&run, FMT_TABLE, SORT_TIME, false, &len);
	ck_assert_ptr_null(strchr(out, '~'));
	ck_assert_ptr_null(strstr(out, "\u00b1"));
	free(out);
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	ck_assert_ptr_null(strstr(out, "\"self_uncertainty_s\": 0.0000001"));
	ck_assert_ptr_nonnull(strstr(out, "\"self_uncertainty_s\": 0.000000000"));
	ck_assert_ptr_nonnull(strstr(out, "\n  \"overhead_uncertainty_s\": 0.000000000,\n"));
	free(out);
}
END_TEST

/*
 * The overhead taken off the clocks outside the timed routines (calls made
 * from untimed code) is removed from the program's time too: the larger of
 * it and the routines' overhead.
 */
START_TEST(test_overhead_all)
{
	struct run run = base_run();
	size_t len = 0;
	char *out, *a, *b;
	double t0, t1, o1;

	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	a = strstr(out, "\"total_time_s\": ");
	ck_assert_ptr_nonnull(a);
	t0 = strtod(a + 16, NULL);
	free(out);
	run.ovh_all_s = 0.01;
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	a = strstr(out, "\"total_time_s\": ");
	b = strstr(out, "\"overhead_s\": ");
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	t1 = strtod(a + 16, NULL);
	o1 = strtod(b + 14, NULL);
	ck_assert_msg(fabs(o1 - 0.01) < 1e-9, "overhead_s %.9f", o1);
	ck_assert_msg(fabs(run.total_time_s - 0.01 - t1) < 1e-9, "total %.9f, was %.9f", t1, t0);
	ck_assert(t1 < t0);
	free(out);
}
END_TEST

/* One rank of an MPI job says which, in the table's header and in JSON. */
START_TEST(test_rank)
{
	struct run run = base_run();
	size_t len = 0;
	char *out;

	run.ranked = true;
	run.rank = 2;
	run.size = 4;
	out = render(&run, FMT_TABLE, SORT_TIME, false, &len);
	ck_assert_ptr_nonnull(strstr(out, "\nfortstat: rank 2 of 4\n"));
	free(out);
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	ck_assert_ptr_nonnull(strstr(out, "\n  \"rank\": 2,\n  \"size\": 4,\n"));
	free(out);
	run.size = 0;
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	ck_assert_ptr_nonnull(strstr(out, "\n  \"rank\": 2,\n  \"size\": null,\n"));
	free(out);
	/* not a rank: neither member */
	run.ranked = false;
	out = render(&run, FMT_JSON, SORT_TIME, false, &len);
	ck_assert_ptr_null(strstr(out, "\"rank\""));
	free(out);
}
END_TEST

START_TEST(test_table_zeros)
{
	struct run run = base_run();

	check_golden("report_zeros.table", &run, FMT_TABLE, SORT_TIME, true);
}
END_TEST

START_TEST(test_table_sort_calls)
{
	struct run run = base_run();

	check_golden("report_calls.table", &run, FMT_TABLE, SORT_CALLS, false);
}
END_TEST

START_TEST(test_table_sort_name)
{
	struct run run = base_run();

	check_golden("report_name.table", &run, FMT_TABLE, SORT_NAME, true);
}
END_TEST

START_TEST(test_table_gross)
{
	struct run run = base_run();

	run.correct = false;
	run.clock = "wall";
	check_golden("report_gross.table", &run, FMT_TABLE, SORT_TIME, false);
}
END_TEST

static struct run killed_count_run(void)
{
	struct run run = base_run();

	run.count_only = true;
	run.exit_status = 137;
	run.term_signal = 9;
	run.note = "program killed by signal 9 (SIGKILL)";
	return run;
}

START_TEST(test_table_count)
{
	struct run run = killed_count_run();

	check_golden("report_count.table", &run, FMT_TABLE, SORT_TIME, false);
}
END_TEST

START_TEST(test_csv)
{
	struct run run = base_run();

	check_golden("report.csv", &run, FMT_CSV, SORT_TIME, true);
}
END_TEST

START_TEST(test_json)
{
	struct run run = base_run();

	check_golden("report.json", &run, FMT_JSON, SORT_TIME, false);
}
END_TEST

START_TEST(test_json_count)
{
	struct run run = killed_count_run();

	check_golden("report_count.json", &run, FMT_JSON, SORT_TIME, false);
}
END_TEST

static void check_golden_opts(const char *name, const struct run *run,
			      const struct report_opts *opts, bool svg)
{
	size_t len = 0;
	char *out = render_opts(run, opts, svg, &len);

	golden(name, out, len);
	free(out);
}

START_TEST(test_table_views)
{
	struct run run = base_run();
	struct report_opts opts = {.format = FMT_TABLE, .inclusive = true, .lines = true};

	check_golden_opts("views_incl_lines.table", &run, &opts, false);
	opts = (struct report_opts){.format = FMT_TABLE, .graph = true};
	check_golden_opts("views_graph.table", &run, &opts, false);
	opts = (struct report_opts){.format = FMT_TABLE, .threads = true, .inclusive = true};
	check_golden_opts("views_threads.table", &run, &opts, false);
	run = killed_count_run();
	opts = (struct report_opts){.format = FMT_TABLE, .graph = true};
	check_golden_opts("views_graph_count.table", &run, &opts, false);
}
END_TEST

START_TEST(test_other_formats)
{
	struct run run = base_run();
	struct report_opts opts = {.format = FMT_FOLDED};

	check_golden_opts("report.folded", &run, &opts, false);
	opts.threads = true;
	check_golden_opts("report_threads.folded", &run, &opts, false);
	opts = (struct report_opts){.format = FMT_CALLGRIND};
	check_golden_opts("report.callgrind", &run, &opts, false);
	opts.threads = true;
	check_golden_opts("report_threads.callgrind", &run, &opts, false);
	opts = (struct report_opts){.format = FMT_CSV, .threads = true};
	check_golden_opts("report_threads.csv", &run, &opts, false);
	opts = (struct report_opts){.format = FMT_JSON, .threads = true};
	check_golden_opts("report_threads.json", &run, &opts, false);
	opts = (struct report_opts){.format = FMT_TABLE};
	check_golden_opts("report.svg", &run, &opts, true);
}
END_TEST

/*
 * User and system time per process and thread (the header, JSON), and
 * --clock=both: the CPU clock's books run at half the wall clock's speed,
 * so every routine waited half its wall time.
 */
START_TEST(test_usage_both)
{
	static const struct profile_thread_usage tu[] = {
	    {.tid = 1, .user_s = 0.4, .sys_s = 0.1, .elapsed_s = 0.5},
	    {.tid = 2, .user_s = 0.2, .sys_s = 0.1, .elapsed_s = 0.6},
	    {.tid = 3, .user_s = 0.0, .sys_s = 0.0, .elapsed_s = 0.1}, /* no timed call */
	};
	struct run run = base_run();
	struct acct *wall = profile();
	struct report_opts opts = {.format = FMT_TABLE, .threads = true, .both = true};
	size_t len;
	char *out;

	run.correct = false;
	run.total_time_s = 0.5;
	run.alt = wall;
	run.usage = tu;
	run.n_usage = 3;
	run.n_cpus = 2;
	/* the books of the chosen clock (cpu) are profile()'s at half speed */
	{
		struct acct *cpu = profile_div(2);
		char *buf = NULL;
		FILE *f = open_memstream(&buf, &len);

		ck_assert_int_eq(write_run(f, &st, cpu, &run, &opts, false), 0);
		fclose(f);
		out = buf;
		/* 0.8 s of CPU in 0.5 s on 2 CPUs: 80 %, 1.6 CPUs kept busy */
		ck_assert_ptr_nonnull(strstr(out, "fortstat: ./prog (exit status 0), cpu and wall "
						  "clocks\nfortstat: user 0.600 s  system 0.200 s  "
						  "elapsed 0.500 s  utilisation 80.0 % of 2 CPUs  "
						  "concurrency 1.60\n"));
		ck_assert_ptr_nonnull(strstr(out, "thread 2\n  user 0.200 s  system 0.100 s  "
						  "elapsed 0.600 s  utilisation 25.0 % of 2 CPUs  "
						  "concurrency 0.50\n"));
		/* solve: 18.75 ms of wall time, half of it on a CPU */
		ck_assert_ptr_nonnull(
		    strstr(out, "0.009375        0.018750        0.009375    50.00"));
		golden("usage_both.table", out, len);
		free(out);
		opts.format = FMT_CSV;
		opts.sort = SORT_WAIT;
		buf = NULL;
		f = open_memstream(&buf, &len);
		ck_assert_int_eq(write_run(f, &st, cpu, &run, &opts, false), 0);
		fclose(f);
		golden("usage_both_wait.csv", buf, len);
		free(buf);
		opts.format = FMT_JSON;
		opts.sort = SORT_TIME;
		buf = NULL;
		f = open_memstream(&buf, &len);
		ck_assert_int_eq(write_run(f, &st, cpu, &run, &opts, false), 0);
		fclose(f);
		ck_assert_ptr_nonnull(strstr(buf,
					     "\"usage\": {\"user_s\": 0.600000000, "
					     "\"system_s\": 0.200000000, \"elapsed_s\": "
					     "0.500000000, \"cpus\": 2, \"utilisation_percent\": "
					     "80.00, \"concurrency\": 1.600}"));
		golden("usage.json", buf, len);
		free(buf);
		acct_free(cpu);
	}
	acct_free(wall);
}
END_TEST

/* Folded stacks add up to the table's TOTAL (in microseconds). */
START_TEST(test_folded_sum)
{
	struct run run = base_run();
	struct report_opts opts = {.format = FMT_FOLDED};
	size_t len;
	char *out = render_opts(&run, &opts, false, &len), *line, *save = NULL;
	unsigned long sum = 0, lines = 0;

	for (line = strtok_r(out, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		sum += strtoul(strrchr(line, ' ') + 1, NULL, 10);
		lines++;
	}
	/* TOTAL 0.033974 s; each line rounds to the nearest microsecond */
	ck_assert_msg(sum + lines >= 33974 && sum <= 33974 + lines, "folded sum %lu", sum);
	free(out);
}
END_TEST

/* The reports parse (JSON with python3 -m json.tool, SVG with xml.etree), when python3 is there. */
START_TEST(test_svg_valid)
{
	char cmd[8192];

	if (system("python3 -c '' >/dev/null 2>&1") != 0) {
		fputs("check_report: python3 missing, SVG not validated\n", stderr);
		return;
	}
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])' "
		 "'%s' 2>&1",
		 GOLDEN "report.svg");
	ck_assert_msg(system(cmd) == 0, "report.svg is not well-formed XML");
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' >/dev/null",
		 GOLDEN "report_threads.json");
	ck_assert_msg(system(cmd) == 0, "report_threads.json is not valid JSON");
}
END_TEST

/* The JSON reports parse (python3 -m json.tool), when python3 is there. */
START_TEST(test_json_valid)
{
	static const char *files[] = {"report.json", "report_count.json", "empty.json"};
	struct report_opts opts = {.format = FMT_JSON};
	struct run run = base_run();
	char path[4096], cmd[8192];
	struct acct *a = acct_new(N_R);
	size_t i;
	FILE *f;

	if (system("python3 -c '' >/dev/null 2>&1") != 0) {
		fputs("check_report: python3 missing, JSON not validated\n", stderr);
		acct_free(a);
		return;
	}
	/* an empty profile: no routines, no arcs */
	snprintf(path, sizeof(path), BUILDDIR "/report-empty.json");
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	run.argv = NULL;
	run.program = NULL;
	ck_assert_int_eq(write_run(f, &st, a, &run, &opts, false), 0);
	fclose(f);
	acct_free(a);
	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		if (i < 2)
			snprintf(path, sizeof(path), GOLDEN "%s", files[i]);
		else
			snprintf(path, sizeof(path), BUILDDIR "/report-empty.json");
		snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' >/dev/null", path);
		ck_assert_msg(system(cmd) == 0, "%s is not valid JSON", path);
	}
}
END_TEST

/* Names that need no quoting stay bare in CSV; the others are RFC 4180 quoted. */
START_TEST(test_csv_quoting)
{
	size_t len;
	char *out =
	    render(&(struct run){.program = "p", .clock = "cpu"}, FMT_CSV, SORT_NAME, false, &len);

	ck_assert_ptr_nonnull(strstr(out, "\n\"ns::f(int, char const*)\",6,"));
	ck_assert_ptr_nonnull(strstr(out, "\n\"say\"\"hi\"\"\",1,"));
	ck_assert_ptr_nonnull(strstr(out, "\nsolve,3,"));
	ck_assert_ptr_null(strstr(out, "helper"));
	ck_assert_ptr_null(strstr(out, "_start"));
	free(out);
}
END_TEST

/* No routine called, no program time: no division by zero, no nan. */
START_TEST(test_empty_profile)
{
	struct report_opts opts = {.format = FMT_TABLE};
	struct run run = {.program = "./p", .clock = "cpu"};
	struct acct *a = acct_new(N_R);
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	ck_assert_int_eq(write_run(f, &st, a, &run, &opts, false), 0);
	fclose(f);
	ck_assert_ptr_null(strstr(buf, "nan"));
	ck_assert_ptr_nonnull(strstr(buf, "  TOTAL"));
	ck_assert_ptr_null(strstr(buf, "main"));
	ck_assert_ptr_null(strstr(buf, "-0.000000"));
	free(buf);
	acct_free(a);
}
END_TEST

/* A routine with no name at all shows as its address; long names widen the column. */
START_TEST(test_names_and_width)
{
	static char longname[] = "a_rather_long_routine_name_that_is_wider_than_the_column";
	static char *nl[] = {longname};
	struct routine r[2] = {
	    {.addr = 0x1000, .size = 1, .flags = RT_SELECTED | RT_MAINLINE},
	    {.addr = 0x2000, .size = 1, .names = nl, .n_names = 1, .flags = RT_SELECTED},
	};
	struct symtab s = {.r = r, .n = 2};
	struct report_opts opts = {.format = FMT_TABLE, .sort = SORT_NAME};
	struct run run = {.program = "./p", .clock = "cpu", .total_time_s = 1};
	struct acct *a = acct_new(2);
	char *buf = NULL, *l1, *l2;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	acct_enter(a, 1, 0, 100, 0, 0);
	acct_enter(a, 1, 1, 90, 0, 250000000);
	acct_leave(a, 1, 500000000, NULL);
	acct_leave(a, 1, 1000000000, NULL);
	ck_assert_int_eq(write_run(f, &s, a, &run, &opts, false), 0);
	fclose(f);
	l1 = strstr(buf, "* 0x1000 ");
	ck_assert_ptr_nonnull(l1);
	l2 = strstr(buf, "  a_rather_long");
	ck_assert_ptr_nonnull(l2);
	/* the columns line up: both rows end at the same column */
	ck_assert_int_eq((int)(strchr(l1, '\n') - l1), (int)(strchr(l2, '\n') - l2));
	ck_assert_ptr_nonnull(strstr(buf, "0.750000    75.00      0.750000\n"));
	ck_assert_ptr_nonnull(strstr(buf, "0.250000    25.00      0.250000\n"));
	free(buf);
	acct_free(a);
}
END_TEST

/* name_shorten: s shortened to width, exactly as expected, and within width columns. */
static void shortens(const char *s, size_t width, const char *want)
{
	char *got = name_shorten(s, width);

	ck_assert_str_eq(got, want);
	ck_assert_uint_le(name_columns(got), width ? width : name_columns(s));
	free(got);
}

/*
 * Real C++ names, perf's way: templates elided to <…> first, parameters to
 * (…) next, the middle cut last; operators, lambdas and anonymous
 * namespaces keep their own characters.
 */
START_TEST(test_shorten)
{
	static const char push[] =
	    "std::vector<double, std::allocator<double> >::push_back(double&&)";
	char *s;

	shortens("main", 20, "main");
	shortens(push, 0, push);
	shortens(push, strlen(push), push);
	shortens(push, 40, "std::vector<…>::push_back(double&&)");
	shortens(push, 30, "std::vector<…>::push_back(…)");
	shortens(push, 20, "std::vect…sh_back(…)");
	/* nested templates: only the outermost brackets stay */
	shortens("std::map<std::string, std::vector<std::pair<int, double> > >::operator[]"
		 "(std::string const&)",
		 50, "std::map<…>::operator[](std::string const&)");
	/* operator< and operator<< are names, not brackets */
	shortens("bool operator<(Point const&, Point const&)", 30, "bool operator<(…)");
	shortens("std::ostream& std::operator<< <std::char_traits<char> >(std::ostream&, char "
		 "const*)",
		 40, "std::ostream& std::operator<< <…>(…)");
	shortens("bool __gnu_cxx::operator!=<double const*, std::vector<double> >(int)", 40,
		 "bool __gnu_cxx::operator!=<…>(int)");
	shortens("my_operator<int>(int)", 19, "my_operator<…>(int)");
	/* lambdas and operator() */
	shortens("main::{lambda(int)#1}::operator()(int) const", 40,
		 "main::{lambda(…)#1}::operator()(…) const");
	/* (anonymous namespace) is not a parameter list */
	shortens("(anonymous namespace)::Worker::run(std::vector<int, std::allocator<int> > "
		 "const&)",
		 45, "(anonymous namespace)::Worker::run(…)");
	/* a cut through an elided <…>: one … only */
	shortens("std::vector<double, std::allocator<double> >::back()", 20, "std::vect…>::back()");
	/* unbalanced brackets: cut, never read past the end */
	shortens("f<int(", 3, "f…(");
	/* columns, not bytes: the ellipsis is one; a UTF-8 name is cut between characters */
	ck_assert_uint_eq(name_columns("x…y"), 3);
	shortens("αβγδεζηθικ", 5, "αβ…ικ");
	s = name_shorten("a_rather_long_routine_name_that_is_wider_than_the_column", 21);
	ck_assert_uint_eq(name_columns(s), 21);
	ck_assert_uint_eq(strlen(s), 23);
	free(s);
}
END_TEST

/*
 * --width: every line of the table fits, the long name shortened, the
 * columns still lined up; --top: the first rows, one line for the rest,
 * TOTAL of them all.
 */
START_TEST(test_width_top)
{
	static char longname[] =
	    "std::vector<double, std::allocator<double> >::push_back(double&&)";
	static char *nl[] = {longname};
	struct routine r[2] = {
	    {.addr = 0x1000, .size = 1, .flags = RT_SELECTED | RT_MAINLINE},
	    {.addr = 0x2000, .size = 1, .names = nl, .n_names = 1, .flags = RT_SELECTED},
	};
	struct symtab s = {.r = r, .n = 2};
	/* 54 columns besides ROUTINE: 28 for it, the name shortened to 28 */
	struct report_opts opts = {.format = FMT_TABLE, .sort = SORT_TIME, .width = 82};
	struct run run = {.program = "./p", .clock = "cpu", .total_time_s = 1};
	struct acct *a = acct_new(2);
	char *buf = NULL, *l1, *l2, *line;
	size_t len;
	double total;
	FILE *f = open_memstream(&buf, &len);

	acct_enter(a, 1, 0, 100, 0, 0);
	acct_enter(a, 1, 1, 90, 0, 250000000);
	acct_leave(a, 1, 500000000, NULL);
	acct_leave(a, 1, 1000000000, NULL);
	ck_assert_int_eq(write_run(f, &s, a, &run, &opts, false), 0);
	fclose(f);
	l1 = strstr(buf, "* 0x1000 ");
	l2 = strstr(buf, "  std::vector<…>::push_back(…) ");
	ck_assert_ptr_nonnull(l1);
	ck_assert_ptr_nonnull(l2);
	ck_assert_ptr_null(strstr(buf, "double&&"));
	ck_assert_uint_eq(name_columns(l1) - name_columns(strchr(l1, '\n')),
			  name_columns(l2) - name_columns(strchr(l2, '\n')));
	*strstr(buf, "\n\n  total program") = '\0';
	for (line = strchr(buf, '\n') + 2; line; line = strchr(line, '\n')) {
		char *end = strchr(++line, '\n');
		size_t cols;

		if (end)
			*end = '\0';
		cols = name_columns(line);
		ck_assert_msg(cols <= 82, "wider than 82: %s", line);
		if (end)
			*end = '\n';
	}
	free(buf);

	buf = NULL;
	opts.top = 1;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(write_run(f, &s, a, &run, &opts, false), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "* 0x1000 "));
	ck_assert_ptr_null(strstr(buf, "push_back"));
	ck_assert_ptr_nonnull(strstr(buf, "\n  (1 more routine: 25.0 % of the time)\n  TOTAL "));
	l1 = strstr(buf, "\n  TOTAL ");
	ck_assert_ptr_nonnull(l1);
	ck_assert_int_eq(sscanf(l1, " TOTAL %zu %lf", &len, &total), 2);
	ck_assert_uint_eq(len, 2);
	ck_assert_double_eq_tol(total, 1.0, 1e-9);
	free(buf);
	acct_free(a);
}
END_TEST

/* Write errors come back as a negative errno; bad arguments as -EINVAL. */
START_TEST(test_write_error)
{
	struct report_opts opts = {.format = FMT_TABLE};
	struct run run = base_run();
	struct acct *a = profile();
	struct acct *wrong = acct_new(3);
	FILE *f = fopen("/dev/full", "w");
	int fmt;

	ck_assert_int_eq(write_run(stdout, &st, wrong, &run, &opts, false), -EINVAL);
	acct_free(wrong);
	if (!f) {
		acct_free(a);
		return;
	}
	for (fmt = FMT_TABLE; fmt <= FMT_CALLGRIND; fmt++) {
		opts.format = fmt;
		clearerr(f);
		ck_assert_int_eq(write_run(f, &st, a, &run, &opts, false), -ENOSPC);
	}
	fclose(f);
	acct_free(a);
}
END_TEST

START_TEST(test_parse)
{
	enum report_format f = FMT_TABLE;
	enum report_sort s = SORT_TIME;

	ck_assert_int_eq(report_parse_format("json", &f), 0);
	ck_assert_int_eq(f, FMT_JSON);
	ck_assert_int_eq(report_parse_format("csv", &f), 0);
	ck_assert_int_eq(f, FMT_CSV);
	ck_assert_int_eq(report_parse_format("table", &f), 0);
	ck_assert_int_eq(f, FMT_TABLE);
	ck_assert_int_eq(report_parse_format("folded", &f), 0);
	ck_assert_int_eq(f, FMT_FOLDED);
	ck_assert_int_eq(report_parse_format("callgrind", &f), 0);
	ck_assert_int_eq(f, FMT_CALLGRIND);
	ck_assert_int_eq(report_parse_format("table", &f), 0);
	ck_assert_int_eq(report_parse_format("xml", &f), -1);
	ck_assert_int_eq(report_parse_format("", &f), -1);
	ck_assert_int_eq(report_parse_format("JSON", &f), -1);
	ck_assert_int_eq(report_parse_format(NULL, &f), -1);
	ck_assert_int_eq(f, FMT_TABLE);

	ck_assert_int_eq(report_parse_sort("calls", &s), 0);
	ck_assert_int_eq(s, SORT_CALLS);
	ck_assert_int_eq(report_parse_sort("name", &s), 0);
	ck_assert_int_eq(s, SORT_NAME);
	ck_assert_int_eq(report_parse_sort("time", &s), 0);
	ck_assert_int_eq(s, SORT_TIME);
	ck_assert_int_eq(report_parse_sort("times", &s), -1);
	ck_assert_int_eq(report_parse_sort(NULL, &s), -1);
	ck_assert_int_eq(s, SORT_TIME);
}
END_TEST

/*
 * Net times kept segment by segment (run.net): the corrected times
 * are read from that state, not computed from f1 and f2; gross from the
 * other. Here the net state saw the same events at half the times.
 */
START_TEST(test_net_state)
{
	struct run run = base_run();
	struct report_opts opts = {.format = FMT_CSV, .sort = SORT_NAME};
	struct acct *g = profile(), *n = profile_div(2);
	char *buf = NULL, line[256];
	size_t len;
	FILE *f = open_memstream(&buf, &len);
	double solve = -1, f_self = -1;

	ck_assert_ptr_nonnull(f);
	run.net = n;
	ck_assert_int_eq(write_run(f, &st, g, &run, &opts, false), 0);
	fclose(f);
	f = fmemopen(buf, len, "r");
	while (fgets(line, sizeof(line), f)) {
		double v;

		if (sscanf(line, "solve,3,%lf", &v) == 1)
			solve = v;
		else if (sscanf(line, "ns::f(int\\, char const*),6,%lf", &v) == 1 ||
			 sscanf(line, "\"ns::f(int, char const*)\",6,%lf", &v) == 1)
			f_self = v;
	}
	fclose(f);
	free(buf);
	/* gross solve 18.75 ms, f 2.25 ms: half of each, f1 and f2 not used */
	ck_assert_double_eq_tol(solve, 0.009375, 1e-9);
	ck_assert_double_eq_tol(f_self, 0.001125, 1e-9);
	/* --no-correct: the gross state */
	run.correct = false;
	buf = NULL;
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(write_run(f, &st, g, &run, &opts, false), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "solve,3,0.018750000"));
	free(buf);
	acct_free(g);
	acct_free(n);
}
END_TEST

/*
 * json_str: plain ASCII runs as they are, the escapes JSON needs, UTF-8
 * kept whole, an invalid byte as U+FFFD, NULL as null.
 */
START_TEST(test_json_str)
{
	static const struct {
		const char *in, *out;
	} cases[] = {
	    {"", "\"\""},
	    {"std::vector<int>::push_back(int const&)",
	     "\"std::vector<int>::push_back(int const&)\""},
	    {"a\"b\\c", "\"a\\\"b\\\\c\""},
	    {"l1\nl2\r\t\x01\x7f.", "\"l1\\nl2\\r\\t\\u0001\\u007f.\""},
	    {"caf\xc3\xa9 \xf0\x9f\x98\x80!", "\"caf\xc3\xa9 \xf0\x9f\x98\x80!\""},
	    {"x\xffy\xc3", "\"x\\ufffdy\\ufffd\""},
	};
	char buf[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		ck_assert_ptr_nonnull(f);
		json_str(f, cases[i].in);
		fclose(f);
		ck_assert_str_eq(buf, cases[i].out);
	}
	{
		FILE *f = fmemopen(buf, sizeof(buf), "w");

		ck_assert_ptr_nonnull(f);
		json_str(f, NULL);
		fclose(f);
		ck_assert_str_eq(buf, "null");
	}
}
END_TEST

static Suite *report_suite(void)
{
	Suite *s = suite_create("report");
	TCase *tc = tcase_create("golden");
	TCase *tu = tcase_create("unit");

	tcase_add_test(tc, test_table);
	tcase_add_test(tc, test_uncertain_rows);
	tcase_add_test(tc, test_rank);
	tcase_add_test(tc, test_switch_loss);
	tcase_add_test(tc, test_overhead_all);
	tcase_add_test(tc, test_table_zeros);
	tcase_add_test(tc, test_table_sort_calls);
	tcase_add_test(tc, test_table_sort_name);
	tcase_add_test(tc, test_table_gross);
	tcase_add_test(tc, test_table_count);
	tcase_add_test(tc, test_csv);
	tcase_add_test(tc, test_json);
	tcase_add_test(tc, test_json_count);
	tcase_add_test(tc, test_json_valid);
	tcase_add_test(tc, test_json_str);
	tcase_add_test(tc, test_table_views);
	tcase_add_test(tc, test_other_formats);
	tcase_add_test(tc, test_svg_valid);
	tcase_add_test(tc, test_usage_both);
	tcase_add_test(tu, test_folded_sum);
	suite_add_tcase(s, tc);
	tcase_add_test(tu, test_csv_quoting);
	tcase_add_test(tu, test_empty_profile);
	tcase_add_test(tu, test_names_and_width);
	tcase_add_test(tu, test_shorten);
	tcase_add_test(tu, test_width_top);
	tcase_add_test(tu, test_write_error);
	tcase_add_test(tu, test_parse);
	tcase_add_test(tu, test_net_state);
	suite_add_tcase(s, tu);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(report_suite());
	int failed;

	mkdir(BUILDDIR, 0777); /* for *.actual files; usually there already */
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
