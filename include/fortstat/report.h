/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * report.h - the views of a profile (profile.h): the table (FORTSTAT/FTN4TRA)
 * with a call graph, CSV, JSON, folded stacks, callgrind, pprof (gzipped
 * profile.proto, pprof.h), an SVG flame graph.
 */
#ifndef FORTSTAT_REPORT_H
#define FORTSTAT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fortstat/clockkind.h"

struct profile;

enum report_format { FMT_TABLE, FMT_CSV, FMT_JSON, FMT_FOLDED, FMT_CALLGRIND, FMT_PPROF };
enum report_sort { SORT_TIME, SORT_CALLS, SORT_NAME, SORT_WAIT /* wall less CPU self time */ };

struct report_opts {
	enum report_format format;
	enum report_sort sort;
	enum clock_kind clock; /* --clock: the clock whose times are shown */
	bool both;	       /* --clock=both: the table (CSV) shows each routine's CPU and
				* wall self time and their difference, the wait (clock: cpu) */
	bool zeros;	       /* -z: list selected routines that were never called */
	bool inclusive;	       /* --inclusive: INCL (SEC) and its PERCENT in the table */
	bool graph;	       /* --graph: the call graph after the table */
	bool lines;	       /* --lines: SOURCE (file:line) in the table */
	bool threads;	       /* --threads: per-thread results in every format */
	size_t width;	       /* --width (or the terminal's): table lines fit it; 0: no limit */
	size_t top;	       /* --top: the table's first rows only; 0: all */
	bool alloc;	       /* --alloc: storage per routine (profile's alloc fields) */
};

/* Display columns of s: one a UTF-8 character (an invalid byte: one). */
size_t name_columns(const char *s);

/*
 * `name` in at most `width` display columns (0: no limit), perf's way:
 * first each outermost C++ template argument list elided to <…>, then each
 * parameter list to (…) (not "(anonymous namespace)", nor the characters of
 * operator< or operator()), then the middle cut out for a … . Malloc'ed.
 */
char *name_shorten(const char *name, size_t width);

/*
 * Write the report of section `sec` of profile p (only its selected
 * routines appear) to `out`, its times on opts->clock. Table: ROUTINE,
 * CALLED, TIME (SEC), PERCENT, AV SEC/CALL; `*` marks the mainline;
 * INCOMPLETE; a TOTAL row; summary lines (total program time, time
 * unaccounted, calls timed, overhead removed); with opts->inclusive, INCL
 * (SEC) and PERCENT after PERCENT; with opts->lines, SOURCE; with
 * opts->graph, a gprof-style call graph; with opts->threads, a section per
 * thread. CSV, JSON: inclusive times always; JSON both clocks as well.
 * Folded: "a;b;c N" lines, N the microseconds of self time (calls when
 * count-only) of each stack of timed routines. Callgrind: a profile that
 * callgrind_annotate and KCachegrind read (events: us, calls). Pprof:
 * report_write_pprof of this one section.
 * A merge's profile (profile.inputs, merge.h's merge_profile): its table,
 * CSV and JSON show each routine's spread over the inputs (merge.h says
 * how); folded stacks, callgrind and pprof are a run's, of the sums on the
 * inputs' clock (opts->clock and opts->threads aside).
 * Returns 0, -EINVAL on bad arguments (no section sec), or a negative errno
 * on a write error (out is flushed and checked).
 */
int report_write(FILE *out, const struct profile *p, size_t sec, const struct report_opts *opts);

/*
 * Write the sections secs[0..n) of profile p (those that go to one file)
 * to out as one gzipped profile.proto that `go tool pprof` reads. Sample
 * types: "calls" (count), then "cpu" and "wall" (nanoseconds) for each clock
 * some section has times of (not with -c); the default one is opts->clock's
 * when present, else calls. One sample per calling context (its calls and
 * its shown self time), the innermost routine first; with opts->threads one
 * per context of each thread, labelled "thread" (a Go program's: "goroutine"
 * K); with several sections each labelled "pid". Each routine is a location
 * at its address in its symbol table (link-time) in the mapping of its
 * object (the executable by its path, a library by its soname; the range of
 * the addresses used; has_functions set: pprof never symbolizes them) and a
 * function with its display name, symbol name, source file and line when
 * known. period_type calls/count, period 1; duration_nanos the longest
 * section's wall time and time_nanos when it started (now less it);
 * comments: fortstat's version, the command, each section's note and
 * warning. A merge's (profile.inputs): its clock's type named as its inputs
 * named it, no time, comments naming the merge and each input. Returns 0, -EINVAL, or a negative
 * errno on a write error.
 */
int report_write_pprof(FILE *out, const struct profile *p, const size_t *secs, size_t n,
		       const struct report_opts *opts);

/*
 * Write an interactive SVG flame graph of section sec's merged
 * calling-context tree (self-contained: inline script, no external
 * resource) to out; with opts->threads, one tower per thread. Frame widths
 * are proportional to time on opts->clock (calls when count-only).
 * Returns 0, -EINVAL, or a negative errno.
 */
int report_write_svg(FILE *out, const struct profile *p, size_t sec,
		     const struct report_opts *opts);

/*
 * The warning of section sec's report on opts->clock (trust.h: the overhead
 * removed above the program's time, most of its time unaccounted, with the
 * way forward), malloc'ed, without "fortstat: warning: "; NULL: none. The
 * table's footer and JSON's "warnings" say the same.
 */
char *report_warning(const struct profile *p, size_t sec, const struct report_opts *opts);

/*
 * Parse "table"/"csv"/"json"/"folded"/"callgrind"/"pprof" and
 * "time"/"calls"/"name"/"wait"; return 0 or -1.
 */
int report_parse_format(const char *s, enum report_format *f);
int report_parse_sort(const char *s, enum report_sort *s_out);

#endif
