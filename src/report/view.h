/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * view.h - private to src/report/: what the writers of the views share. One
 * set of results (the program's or one thread's) is turned into rows, sorted
 * and corrected, by report_build; each writer prints them its own way.
 */
#ifndef FORTSTAT_REPORT_VIEW_H
#define FORTSTAT_REPORT_VIEW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"

/* One routine shown in the report. */
struct row {
	size_t idx;	  /* routine index in st and acct */
	const char *name; /* display name */
	char *owned;	  /* name, when made up here (no symbol name at all) */
	uint64_t calls;
	acct_time_t gross; /* gross self time */
	acct_time_t net;   /* self time after the overhead correction */
	acct_time_t shown; /* net or gross, as the run asks */
	acct_time_t incl;  /* inclusive time, net or gross as `shown` */
	bool incomplete;
	bool mainline;
};

/* One set of results: the whole program's, or one thread's (tid != 0). */
struct prof {
	int tid;
	const struct acct_routine *r;
	const struct acct_arc *arcs;
	size_t n_arcs;
	const struct acct_node *nodes;
	size_t n_nodes;
	/*
	 * The same results on net times (report_run.net), index for index (the
	 * two states saw the same events), or NULL: net from f1 and f2.
	 */
	const struct acct_routine *rn;
	const struct acct_arc *arcs_n;
	const struct acct_node *nodes_n;
};

/* Everything the formats share. */
struct report {
	const struct symtab *st;
	const struct prof *prof;
	const struct report_opts *opts;
	const struct acct_routine *ar;
	const struct report_run *run;
	struct row *rows;
	size_t n_rows;
	uint64_t calls;	    /* calls timed: sum over shown routines */
	double sum_s;	    /* sum of shown times */
	double gross_sum_s; /* sum of gross times */
	double overhead_s;  /* sum of gross - net */
	double denom_s;	    /* what PERCENT is a percentage of (0: none) */
	double unaccounted_s;
	double total_s;	    /* program time shown: net of the overhead removed */
	const char **names; /* display name of every routine (for arcs) */
	char **names_owned;
};

/* Arcs of one set of results grouped by caller and by callee (counting sort). */
struct arc_index {
	const struct acct_arc **by_caller, **by_callee;
	size_t *caller_at, *callee_at; /* n + 2 offsets; the root is routine n */
};

static inline double secs(acct_time_t ns)
{
	return (double)ns / 1e9;
}

/* s as a percentage of what PERCENT is a percentage of (0 when nothing is). */
static inline double percent(const struct report *rp, double s)
{
	return rp->denom_s > 0 ? 100.0 * s / rp->denom_s : 0.0;
}

/* Routine i is one to show (selected for timing). */
static inline bool selected(const struct symtab *st, uint32_t i)
{
	return i < st->n && (st->r[i].flags & RT_SELECTED);
}

/* Thread i's results (tid 0 and nothing else when there is no thread i). */
struct prof prof_thread(const struct acct *acct, const struct report_run *run, size_t i);

/* Collect, correct and sort the routines of *prof to show into *rp; compute the totals. */
void report_build(struct report *rp, const struct symtab *st, const struct prof *prof,
		  const struct report_run *run, const struct report_opts *opts);
void report_free(struct report *rp);

/* Rows by name, then routine index: the tie-break of every order. */
int cmp_name(const struct row *x, const struct row *y);

/* Group the arcs of *p (n routines) by caller and by callee; arc_index_free frees. */
void arc_index_build(struct arc_index *ix, const struct prof *p, size_t n);
void arc_index_free(struct arc_index *ix);

/* The callee's self and inclusive time along an arc, shown, in seconds. */
double arc_self_s(const struct report *rp, const struct acct_arc *a);
double arc_time_s(const struct report *rp, const struct acct_arc *a);

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
size_t utf8_len(const unsigned char *s);

/* Node i's value: microseconds of shown self time, or calls when no clock ran. */
uint64_t node_value(const struct report *rp, size_t i);

/* A name as a frame of a folded stack (';' and line breaks would split it). */
void folded_name(FILE *out, const char *s);

/* The views of the whole program (acct gives the threads with opts->threads). */
void write_table(FILE *out, const struct report *rp, const struct acct *acct);
void write_csv(FILE *out, const struct report *rp, const struct acct *acct);
void write_json(FILE *out, const struct report *rp, const struct acct *acct);
void write_folded(FILE *out, const struct report *rp, const struct acct *acct);
void write_callgrind(FILE *out, const struct report *rp, const struct acct *acct);
void write_svg(FILE *out, const struct report *rp, const struct acct *acct);

#endif
