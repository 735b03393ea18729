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
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/trust.h"

/* One routine shown in the report. */
struct row {
	size_t idx;	  /* routine index in the section */
	const char *name; /* display name */
	uint64_t calls;
	acct_time_t gross;     /* gross self time */
	int64_t overhead;      /* the stops' overhead in it: removed, or only estimated */
	acct_time_t shown;     /* self time as the profile shows it (net or gross) */
	acct_time_t incl;      /* inclusive time, net or gross as `shown` */
	acct_time_t cpu, wall; /* self time as shown on each clock (--clock=both) */
	acct_time_t wait;      /* wall less CPU: the time it waited (usage_wait_ns) */
	bool incomplete;
	bool mainline;
	double unc;	/* the uncertainty of `shown`, ns (profile_stats.self_unc) */
	bool uncertain; /* ... large against it (acct_uncertain): marked */
};

/* One set of results (the program's, or one thread's) ready to print on one clock. */
struct report {
	const struct profile *p;
	const struct profile_section *sec;
	const struct profile_set *set; /* &sec->all, or a thread's */
	const struct report_opts *opts;
	enum clock_kind c; /* the clock shown (opts->clock) */
	bool timed;	   /* times are kept (not count-only) */
	struct row *rows;
	size_t n_rows;
	uint64_t calls;	   /* calls timed: sum over shown routines */
	double sum_s;	   /* sum of shown times */
	double overhead_s; /* sum of the rows' overhead */
	/*
	 * The uncertainty of the overhead removed, seconds: every call timed
	 * carries one f1 (its routine's) and one f2 (its caller's, timed or
	 * not), each known to within the profile's df1, df2; 0 when nothing
	 * was removed.
	 */
	double overhead_unc_s;
	size_t n_uncertain; /* rows marked uncertain */
	double denom_s;	    /* what PERCENT is a percentage of (0: none) */
	double unaccounted_s;
	double total_s; /* program time shown: net of the overhead removed */
};

/* Arcs of one set of results grouped by caller and by callee (counting sort). */
struct arc_index {
	const struct profile_arc **by_caller, **by_callee;
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

/*
 * --clock=both, and both clocks are known: a row's CPU and wall self time
 * side by side with the wait (the table, CSV).
 */
static inline bool show_both(const struct report *rp)
{
	return rp->opts->both && rp->timed && rp->sec->clock_known[CLOCK_KIND_CPU] &&
	       rp->sec->clock_known[CLOCK_KIND_WALL];
}

/* Routine i of the section exists and is one to show (selected for timing). */
static inline bool selected(const struct report *rp, uint32_t i)
{
	return i < rp->sec->n_routines && rp->sec->routines[i].selected;
}

/* The display name of routine i of the section (i < n_routines). */
static inline const char *rname(const struct report *rp, uint32_t i)
{
	return rp->sec->routines[i].name;
}

/* The callee's shown self and inclusive time along an arc, seconds. */
static inline double arc_self_s(const struct report *rp, const struct profile_arc *a)
{
	return a->self_s[rp->c];
}

static inline double arc_time_s(const struct report *rp, const struct profile_arc *a)
{
	return a->time_s[rp->c];
}

/*
 * Collect and sort the routines of set `set` of section sec to show, on
 * opts->clock, into *rp; compute the totals. report_free frees.
 */
void report_build(struct report *rp, const struct profile *p, const struct profile_section *sec,
		  const struct profile_set *set, const struct report_opts *opts);
void report_free(struct report *rp);

/* Rows by name, then routine index: the tie-break of every order. */
int cmp_name(const struct row *x, const struct row *y);

/* Group the arcs of set s (n routines) by caller and by callee; arc_index_free frees. */
void arc_index_build(struct arc_index *ix, const struct profile_set *s, size_t n);
void arc_index_free(struct arc_index *ix);

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
size_t utf8_len(const unsigned char *s);

/* Node i's value: microseconds of shown self time, or calls when no clock ran. */
uint64_t node_value(const struct report *rp, size_t i);

/* A name as a frame of a folded stack (';' and line breaks would split it). */
void folded_name(FILE *out, const char *s);

/*
 * A JSON string, or null for NULL: quotes, backslashes and control
 * characters escaped, valid UTF-8 as it is, each byte of invalid UTF-8 as
 * \ufffd (the JSON stays valid whatever the program's names hold).
 */
void json_str(FILE *out, const char *str);

/* A stack's name for people: "thread TID", or "goroutine K" (ACCT_GOROUTINE0). */
static inline const char *stack_name(int tid, char *buf, size_t len)
{
	if (tid >= ACCT_GOROUTINE0)
		snprintf(buf, len, "goroutine %d", tid - ACCT_GOROUTINE0 + 1);
	else
		snprintf(buf, len, "thread %d", tid);
	return buf;
}

/* The trust verdict of one report (trust.h); trust_free frees. */
void report_trust(const struct report *rp, struct trust *t);

/* The views of a whole section (its threads from rp->sec with opts->threads). */
void write_table(FILE *out, const struct report *rp);
void write_csv(FILE *out, const struct report *rp);
void write_json(FILE *out, const struct report *rp);
void write_folded(FILE *out, const struct report *rp);
void write_callgrind(FILE *out, const struct report *rp);
void write_svg(FILE *out, const struct report *rp);

/* A name's hash (the name table's, and the flame graph's colours). */
static inline uint64_t hash_bytes(const char *s, size_t n)
{
	uint64_t h = 0x9e3779b97f4a7c15ULL ^ n, w;

	/* eight bytes at a time, each mixed by a multiply and a shift */
	for (; n >= 8; n -= 8, s += 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0xff51afd7ed558ccdULL;
		h ^= h >> 32;
	}
	w = 0;
	memcpy(&w, s, n);
	h = (h ^ w) * 0xc4ceb9fe1a85ec53ULL;
	return h ^ (h >> 29);
}

/* The clock that the inputs' "clock" names ("wall", else the CPU's). */
static inline enum clock_kind merge_clock(const char *name)
{
	return name && !strcmp(name, "wall") ? CLOCK_KIND_WALL : CLOCK_KIND_CPU;
}

static inline uint64_t hash_name(const char *s)
{
	return hash_bytes(s, strlen(s));
}

/* ---- a merge's views (profile.inputs: --merge) ---- */

/*
 * The merged profile as the views read it: its one section's routines and
 * their spreads, the sums' arcs and calling contexts, the inputs.
 */
struct mview {
	const struct profile *p;
	const struct profile_routine *rt; /* n_r of them */
	const struct profile_merged *ms;  /* ... each one's spread over the inputs */
	size_t n_r;
	const struct profile_input *in;
	size_t n_in;
	const struct profile_arc *arcs;
	size_t n_arcs;
	const struct profile_node *nodes;
	size_t n_nodes;
	const char *program, *clock;
	bool count_only, no_stacks;
	enum clock_kind c; /* the sums' clock */
};

/* The merged profile p (merge_profile) as its views read it. */
void mview_of(struct mview *v, const struct profile *p);

/* A spread's mean, min and max over every input (one without the routine counts 0). */
double mean_of(const struct mview *m, const struct profile_spread *s);
double min_of(const struct mview *m, const struct profile_spread *s);
double max_of(const struct mview *m, const struct profile_spread *s);

/* The label of input i: its rank, else its position among the inputs. */
long input_label(const struct mview *m, uint32_t i);

/* Whether every input has a rank. */
bool all_ranked(const struct mview *m);

/* The routines to show (called in some input), sorted as opts says; *n of them (free it). */
uint32_t *sorted_rows(const struct mview *m, const struct report_opts *opts, size_t *n);

/* A merge's own views: the spreads (table, CSV, JSON), the summed contexts (SVG). */
void write_merged_table(const struct mview *m, FILE *out, const struct report_opts *opts);
void write_merged_csv(const struct mview *m, FILE *out, const struct report_opts *opts);
void write_merged_json(const struct mview *m, FILE *out, const struct report_opts *opts);
int write_merged_svg(const struct mview *m, FILE *out);

#endif
