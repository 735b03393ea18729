/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - the views of a profile: the table (FORTSTAT/FTN4TRA) with a call
 * graph, CSV, JSON, folded stacks, callgrind, and an SVG flame graph.
 */
#ifndef FORTSTAT_REPORT_H
#define FORTSTAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct symtab;
struct acct;

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_FOLDED, FMT_CALLGRIND };
enum report_sort { SORT_TIME, SORT_CALLS, SORT_NAME };

struct report_run {
	const char *program;	/* PROGRAM as resolved (path) */
	char *const *argv;	/* PROGRAM's argv, NULL-terminated */
	int exit_status;	/* what fortstat exits with: status, or 128+N */
	int term_signal;	/* N when killed by signal N, else 0 */
	const char *clock;	/* "cpu" or "wall" */
	bool count_only;	/* -c: no times at all */
	double total_time_s;	/* program time on the chosen clock */
	double f1_ns, f2_ns;	/* overhead per entry / per call made, removed from times */
	uint64_t stops_measured; /* segments whose stops' cost the run measured (then f1 = f2
				  * come from that measure), 0: from the calibration alone */
	bool correct;		/* apply f1/f2 (false: gross times) */
	/* The same run on the other clock (JSON's "cpu"/"wall" objects); alt may be NULL. */
	const struct acct *alt;
	const char *alt_clock;
	/*
	 * Net times kept segment by segment (the same events on each thread's
	 * clock less its stops' overhead): when set, the corrected times come
	 * from these, else from f1/f2. alt_net on the other clock.
	 */
	const struct acct *net;
	const struct acct *alt_net;
	double alt_f1_ns, alt_f2_ns;
	const char *note;	/* one line about how the run ended, or NULL */
	bool ranked;		/* one rank of an MPI job: rank of size (size 0: unknown) */
	int rank, size;
};

struct report_opts {
	enum report_format format;
	enum report_sort sort;
	bool zeros;	/* -z: list selected routines that were never called */
	bool inclusive; /* --inclusive: INCL (SEC) and its PERCENT in the table */
	bool graph;	/* --graph: the call graph after the table */
	bool lines;	/* --lines: SOURCE (file:line) in the table */
	bool threads;	/* --threads: per-thread results in every format */
};

/*
 * Write the report of `acct` (routine i of acct is routine i of st; only
 * RT_SELECTED routines appear) to `out`. Table: ROUTINE, CALLED, TIME (SEC),
 * PERCENT, AV SEC/CALL; `*` marks the mainline; INCOMPLETE; a TOTAL row;
 * summary lines (total program time, time unaccounted, calls timed, overhead
 * removed); with opts->inclusive, INCL (SEC) and PERCENT after PERCENT; with
 * opts->lines, SOURCE; with opts->graph, a gprof-style call graph; with
 * opts->threads, a section per thread. CSV, JSON: inclusive times always.
 * Folded: "a;b;c N" lines, N the microseconds of self time (calls with
 * count_only) of each stack of timed routines. Callgrind: a profile that
 * callgrind_annotate and KCachegrind read (events: us, calls).
 * Returns 0, -EINVAL on bad arguments, or a negative errno on a write error.
 */
int report_write(FILE *out, const struct symtab *st, const struct acct *acct,
		 const struct report_run *run, const struct report_opts *opts);

/*
 * Write an interactive SVG flame graph of acct's merged calling-context
 * tree (self-contained: inline script, no external resource) to out; with
 * opts->threads, one tower per thread. Frame widths are proportional to
 * time (calls with run->count_only). Returns 0 or a negative errno.
 */
int report_write_svg(FILE *out, const struct symtab *st, const struct acct *acct,
		     const struct report_run *run, const struct report_opts *opts);

/* Parse "table"/"csv"/"json"/"folded"/"callgrind" and "time"/"calls"/"name"; return 0 or -1. */
int report_parse_format(const char *s, enum report_format *f);
int report_parse_sort(const char *s, enum report_sort *s_out);

#endif
