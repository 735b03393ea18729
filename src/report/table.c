// SPDX-License-Identifier: GPL-2.0-or-later
/* table.c - the FORTSTAT/FTN4TRA table, its gprof-style call graph and per-thread sections. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/usage.h"
#include "fortstat/util.h"
#include "view.h"

#define NAME_WIDTH_MIN 20 /* the ROUTINE column is at least this wide */

/* "file:line", "file", or "" (the --lines column); malloc'ed. */
static char *source_of(const struct profile_routine *rt)
{
	if (!rt->file)
		return xstrdup("");
	if (rt->line > 0)
		return xasprintf("%s:%d", rt->file, rt->line);
	return xstrdup(rt->file);
}

/* Rows the table shows: --top's first ones, or all. */
static size_t rows_shown(const struct report *rp)
{
	size_t top = rp->opts->top;

	return top && top < rp->n_rows ? top : rp->n_rows;
}

/* --alloc: the storage columns (the process's rows: storage is not kept per thread). */
static bool show_alloc(const struct report *rp)
{
	return rp->opts->alloc && rp->sec->alloc && rp->set == &rp->sec->all;
}

#define ALLOC_COLUMNS (10 + 14 + 10 + 12 + 14)

/* ALLOCS, BYTES, FREES (self), INCL ALLOCS and INCL BYTES of routine i (NULL: the heads). */
static void alloc_columns(FILE *out, const struct report *rp, const size_t *i)
{
	const struct alloc_routine *a = i ? &rp->sec->alloc[*i] : NULL;

	if (!a)
		fprintf(out, "%10s%14s%10s%12s%14s", "ALLOCS", "BYTES", "FREES", "INCL ALLOCS",
			"INCL BYTES");
	else
		fprintf(out, "%10" PRIu64 "%14" PRIu64 "%10" PRIu64 "%12" PRIu64 "%14" PRIu64,
			a->allocs, a->bytes, a->frees, a->allocs_incl, a->bytes_incl);
}

/* Columns of a table line besides the ROUTINE column. */
static size_t other_columns(const struct report *rp)
{
	/* the mark, ROUTINE's space, CALLED */
	size_t c = 2 + 1 + 12 + (show_alloc(rp) ? ALLOC_COLUMNS : 0);

	if (show_both(rp))
		c += 3 * 16 + 9;
	else if (rp->timed)
		c += 16 + 9 + 14 + (rp->opts->inclusive ? 16 + 9 : 0);
	return c;
}

/*
 * Width of the ROUTINE column: the longest name shown, within limits; with
 * a width (--width, the terminal's), no wider than what leaves the other
 * columns room in it (the names are shortened to fit: name_shorten).
 */
static int name_width(const struct report *rp)
{
	size_t w = NAME_WIDTH_MIN, width = rp->opts->width;
	size_t i;

	for (i = 0; i < rows_shown(rp); i++) {
		size_t len = name_columns(rp->rows[i].name);

		if (len > w)
			w = len > 4096 ? 4096 : len;
	}
	if (width && w > NAME_WIDTH_MIN && w + other_columns(rp) > width)
		w = width > other_columns(rp) + NAME_WIDTH_MIN ? width - other_columns(rp)
							       : NAME_WIDTH_MIN;
	return (int)w;
}

/*
 * name in a column w wide, padded to w display columns; with a width
 * (--width, the terminal's) shortened to fit it, else whole.
 */
static void put_name(FILE *out, const struct report *rp, const char *name, int w)
{
	char *s = name_shorten(name, rp->opts->width ? (size_t)w : 0);
	size_t cols = name_columns(s);

	fputs(s, out);
	if (cols < (size_t)w) /* one call: a C++ name makes the column hundreds wide */
		fprintf(out, "%*s", (int)((size_t)w - cols), "");
	free(s);
}

/* n with a comma between each three digits: "1,234". */
static const char *thousands(uint64_t n, char *buf, size_t len)
{
	char digits[32];
	size_t nd = (size_t)snprintf(digits, sizeof(digits), "%" PRIu64, n), k = 0;

	for (size_t i = 0; i < nd && k + 2 < len; i++) {
		if (i && (nd - i) % 3 == 0)
			buf[k++] = ',';
		buf[k++] = digits[i];
	}
	buf[k] = '\0';
	return buf;
}

/* --top: "  (1,234 more routines: 3.2 % of the time)", the rows not shown. */
static void table_rest(FILE *out, const struct report *rp)
{
	size_t shown = rows_shown(rp), i;
	uint64_t calls = 0;
	acct_time_t t = 0;
	char num[48];

	if (shown == rp->n_rows)
		return;
	for (i = shown; i < rp->n_rows; i++) {
		calls += rp->rows[i].calls;
		t += rp->rows[i].shown;
	}
	fprintf(out, "  (%s more routine%s: ", thousands(rp->n_rows - shown, num, sizeof(num)),
		rp->n_rows - shown == 1 ? "" : "s");
	if (rp->timed)
		fprintf(out, "%.1f %% of the time)\n", percent(rp, secs(t)));
	else
		fprintf(out, "%s calls)\n", thousands(calls, num, sizeof(num)));
}

/* Width of the SOURCE column. */
static int source_width(const struct report *rp)
{
	int w = 6;
	size_t i;

	for (i = 0; i < rp->n_rows; i++) {
		char *src = source_of(&rp->sec->routines[rp->rows[i].idx]);
		size_t len = strlen(src);

		if (len > (size_t)w)
			w = len > 4096 ? 4096 : (int)len;
		free(src);
	}
	return w;
}

/* wait as a percentage of wall ("WAITED"), 0 without wall time. */
static double waited_pct(acct_time_t wait, acct_time_t wall)
{
	return wall ? 100.0 * (double)wait / (double)wall : 0.0;
}

/* --clock=both: a row's CPU (SEC), WALL (SEC), WAIT (SEC) and WAITED. */
static void both_columns(FILE *out, acct_time_t cpu, acct_time_t wall, acct_time_t wait)
{
	fprintf(out, "%16.6f%16.6f%16.6f%9.2f", secs(cpu), secs(wall), secs(wait),
		waited_pct(wait, wall));
}

#define LINES_SHOWN 5 /* --lines with --sample: a routine's hottest lines at most */

/* Routine idx's samples, all its lines' (--sample). */
static uint64_t routine_samples(const struct profile_section *sec, size_t idx)
{
	uint64_t n = 0;

	for (size_t k = sec->line_at[idx]; k < sec->line_at[idx + 1]; k++)
		n += sec->lines[k].n;
	return n;
}

/*
 * --lines with --sample: under routine r's row, its hottest lines: the
 * line ("file:line", "?" when not known; "(untimed callees)": the untimed
 * code it called, whose time is its own by FORTSTAT's rule) in the ROUTINE column, its
 * samples in brackets under CALLED, the routine's time times the line's
 * share of its samples, and that share (of the routine's samples, not of
 * the program's time) under PERCENT. The whole process's results only.
 */
static void line_rows(FILE *out, const struct report *rp, const struct row *r, int w)
{
	const struct profile_section *sec = rp->sec;
	uint64_t all;
	char buf[64];

	if (!rp->opts->lines || !sec->line_at || rp->set->tid || !rp->timed || show_both(rp))
		return;
	all = routine_samples(sec, r->idx);
	for (size_t k = sec->line_at[r->idx];
	     all && k < sec->line_at[r->idx + 1] && k < sec->line_at[r->idx] + LINES_SHOWN; k++) {
		const struct profile_line *l = &sec->lines[k];
		const char *base = l->file ? strrchr(l->file, '/') : NULL;
		double share = (double)l->n / (double)all;
		char *label;

		base = base ? base + 1 : l->file;
		if (l->callees)
			label = xstrdup("    (untimed callees)");
		else
			label = l->file ? xasprintf("    %s:%d", base, l->line) : xstrdup("    ?");
		fputs("  ", out);
		put_name(out, rp, label, w);
		snprintf(buf, sizeof(buf), "[%" PRIu64 "]", l->n);
		fprintf(out, " %12s%16.6f %7.2f%%\n", buf, secs(r->shown) * share, 100 * share);
		free(label);
	}
}

/* --sample: what was sampled, and how much of it no timed routine's code held. */
static void table_samples(FILE *out, const struct report *rp)
{
	const struct profile_samples *s = &rp->sec->samples;

	if (!s->hz || rp->set->tid)
		return;
	if (s->refused) {
		fprintf(out, "  %-22s %14s   (the kernel refused perf_event_open)\n", "samples",
			"none");
		return;
	}
	fprintf(out, "  %-22s %14" PRIu64 "   (%u Hz of CPU time; outside timed routines %" PRIu64,
		"samples", s->n, s->hz, s->outside);
	if (s->n)
		fprintf(out, ", %.2f %%", 100.0 * (double)s->outside / (double)s->n);
	if (s->lost || s->full)
		fprintf(out, "; lost %" PRIu64 "%s", s->lost, s->full ? " or more" : "");
	fputs(")\n", out);
}

/* The column heads, the rows and the TOTAL row of one set of results. */
static void table_rows(FILE *out, const struct report *rp, int w, int sw)
{
	bool both = show_both(rp);
	acct_time_t cpu = 0, wall = 0, wait = 0;
	const struct report_opts *opts = rp->opts;
	bool timed = rp->timed;
	size_t i;
	char called[32];
	bool lower = false;

	fputs("  ", out);
	put_name(out, rp, "ROUTINE", w);
	fprintf(out, " %12s", "CALLED");
	if (both) {
		fprintf(out, "%16s%16s%16s%9s", "CPU (SEC)", "WALL (SEC)", "WAIT (SEC)", "WAITED");
	} else if (timed) {
		fprintf(out, "%16s%9s", "TIME (SEC)", "PERCENT");
		if (opts->inclusive)
			fprintf(out, "%16s%9s", "INCL (SEC)", "PERCENT");
		fprintf(out, "%14s", "AV SEC/CALL");
	}
	if (show_alloc(rp))
		alloc_columns(out, rp, NULL);
	if (opts->lines)
		fputs("  SOURCE", out);
	fputc('\n', out);

	for (i = 0; i < rp->n_rows; i++) { /* TOTAL's >= and sums count every row */
		lower |= rp->sec->routines[rp->rows[i].idx].calls_lower;
		cpu += rp->rows[i].cpu;
		wall += rp->rows[i].wall;
		wait += rp->rows[i].wait;
	}
	for (i = 0; i < rows_shown(rp); i++) {
		const struct row *r = &rp->rows[i];
		double s = secs(r->shown);

		/* >=: a lower bound, the routine's calls uncounted once throttled */
		snprintf(called, sizeof(called), "%s%" PRIu64,
			 rp->sec->routines[r->idx].calls_lower ? ">=" : "", r->calls);
		fprintf(out, "%c ", r->mainline ? '*' : ' ');
		put_name(out, rp, r->name, w);
		fprintf(out, " %12s", called);
		if (both) {
			both_columns(out, r->cpu, r->wall, r->wait);
		} else if (timed) {
			/* '~' after a time whose correction is uncertain (acct_uncertain) */
			fprintf(out, "%16.6f%c%8.2f", s, r->uncertain ? '~' : ' ', percent(rp, s));
			if (opts->inclusive)
				fprintf(out, "%16.6f%9.2f", secs(r->incl),
					percent(rp, secs(r->incl)));
			fprintf(out, "%14.6f", r->calls ? s / (double)r->calls : 0.0);
		}
		if (show_alloc(rp))
			alloc_columns(out, rp, &r->idx);
		if (opts->lines) {
			char *src = source_of(&rp->sec->routines[r->idx]);

			/* padded only when INCOMPLETE follows */
			fprintf(out, "  %-*s", timed && r->incomplete ? sw : 0, src);
			free(src);
		}
		if (timed && r->incomplete)
			fputs("  INCOMPLETE", out);
		if (timed && rp->sec->routines[r->idx].throttle_carried)
			fputs("  THROTTLED from the start (in an earlier exec)", out);
		else if (timed && rp->sec->routines[r->idx].throttled_at)
			fprintf(out, "  THROTTLED after %" PRIu64 " calls",
				rp->sec->routines[r->idx].throttled_at);
		fputc('\n', out);
		line_rows(out, rp, r, w);
	}
	table_rest(out, rp);
	snprintf(called, sizeof(called), "%s%" PRIu64, lower ? ">=" : "", rp->calls);
	fputs("  ", out);
	put_name(out, rp, "TOTAL", w);
	fprintf(out, " %12s", called);
	if (both)
		both_columns(out, cpu, wall, wait);
	else if (timed)
		fprintf(out, "%16.6f%9.2f", rp->sum_s, percent(rp, rp->sum_s));
	fputc('\n', out);
}

#define GRAPH_NAME_MIN 10 /* a name in the call graph keeps at least this many columns */

/*
 * A name in the call graph, malloc'ed: with a width, shortened to what is
 * left of it by the columns before the name on a caller's or callee's line
 * (the widest) and the " [index]" after it.
 */
static char *graph_name(const struct report *rp, const char *name)
{
	size_t other = 13 + (rp->timed ? 24 : 0) + 1 + 13 + 6 + 3; /* and " [" "]" */
	size_t width = rp->opts->width;

	for (size_t n = rp->n_rows; n; n /= 10)
		other++; /* the index's digits */
	if (!width)
		return xstrdup(name);
	return name_shorten(name, width > other + GRAPH_NAME_MIN ? width - other : GRAPH_NAME_MIN);
}

/* Calls of routine i that are not direct recursion. */
static uint64_t outside_calls(const struct report *rp, const struct arc_index *ix, size_t i)
{
	uint64_t rec = 0;
	size_t k;

	for (k = ix->caller_at[i]; k < ix->caller_at[i + 1]; k++)
		if (ix->by_caller[k]->callee == i)
			rec += ix->by_caller[k]->calls;
	return rp->set->r[i].calls - rec;
}

/* How the arcs of an entry of the call graph are sorted (qsort_r's argument). */
struct graph_sort {
	const struct report *rp;
	bool by_callee; /* the other end of an arc is its callee (else its caller) */
};

/* Call graph sorting: the arc's shown inclusive time, then the other end's name. */
static int cmp_graph_arc(const void *p, const void *q, void *arg)
{
	const struct graph_sort *gs = arg;
	const struct profile_arc *x = *(const struct profile_arc *const *)p;
	const struct profile_arc *y = *(const struct profile_arc *const *)q;
	double tx = arc_time_s(gs->rp, x), ty = arc_time_s(gs->rp, y);
	uint32_t ex = gs->by_callee ? x->callee : x->caller;
	uint32_t ey = gs->by_callee ? y->callee : y->caller;
	const char *nx = ex < gs->rp->sec->n_routines ? rname(gs->rp, ex) : "";
	const char *ny = ey < gs->rp->sec->n_routines ? rname(gs->rp, ey) : "";
	int c;

	if (tx != ty)
		return tx > ty ? -1 : 1;
	c = strcmp(nx, ny);
	if (c)
		return c;
	return ex < ey ? -1 : ex > ey;
}

static int cmp_incl(const void *p, const void *q)
{
	const struct row *x = *(const struct row *const *)p, *y = *(const struct row *const *)q;

	if (x->incl != y->incl)
		return x->incl > y->incl ? -1 : 1;
	return cmp_name(x, y);
}

/* One caller or callee line of an entry of the call graph. */
static void graph_arc_line(FILE *out, const struct report *rp, const struct arc_index *ix,
			   const struct profile_arc *a, uint32_t other, const size_t *index)
{
	bool timed = rp->timed;
	char called[48], *name;

	if (other == PROFILE_NONE || other >= rp->sec->n_routines) {
		fprintf(out, "%13s", "");
		if (timed)
			fprintf(out, "%12.6f%12.6f", arc_self_s(rp, a),
				fmax(0, arc_time_s(rp, a) - arc_self_s(rp, a)));
		snprintf(called, sizeof(called), "%" PRIu64 "/%" PRIu64, a->calls,
			 outside_calls(rp, ix, a->callee));
		fprintf(out, " %13s      <spontaneous>\n", called);
		return;
	}
	fprintf(out, "%13s", "");
	if (a->caller == a->callee) {
		/* direct recursion: the count only, as gprof shows it */
		if (timed)
			fprintf(out, "%24s", "");
		snprintf(called, sizeof(called), "%" PRIu64, a->calls);
	} else {
		if (timed)
			fprintf(out, "%12.6f%12.6f", arc_self_s(rp, a),
				fmax(0, arc_time_s(rp, a) - arc_self_s(rp, a)));
		snprintf(called, sizeof(called), "%" PRIu64 "/%" PRIu64, a->calls,
			 outside_calls(rp, ix, a->callee));
	}
	name = graph_name(rp, rname(rp, other));
	fprintf(out, " %13s      %s [%zu]\n", called, name, index[other]);
	free(name);
}

/*
 * gprof's "Call graph", fortstat's way: an entry per routine called, by
 * inclusive time; its callers above it, its callees below, with the calls
 * along each arc over the callee's calls, and the callee's self time and its
 * descendants' time along that arc. Exact: every call of a timed routine is seen.
 */
static void write_graph(FILE *out, const struct report *rp)
{
	size_t n = rp->sec->n_routines;
	bool timed = rp->timed;
	struct graph_sort gs = {.rp = rp};
	struct arc_index ix;
	const struct row **order;
	const struct profile_arc **tmp;
	size_t *index, i, k, n_order = 0, n_tmp;

	arc_index_build(&ix, rp->set, n);
	order = xcalloc(rp->n_rows + 1, sizeof(*order));
	index = xcalloc(n + 1, sizeof(*index));
	tmp = xcalloc(rp->set->n_arcs + 1, sizeof(*tmp));
	for (i = 0; i < rp->n_rows; i++)
		if (rp->rows[i].calls)
			order[n_order++] = &rp->rows[i];
	qsort(order, n_order, sizeof(*order), cmp_incl);
	for (i = 0; i < n_order; i++)
		index[order[i]->idx] = i + 1;

	fputs("\nCall graph", out);
	if (timed)
		fputs(" (seconds; on a caller's or callee's line, the callee's self time\n"
		      "and its descendants' time in the calls along that arc)",
		      out);
	fputs("\n\n", out);
	fprintf(out, "%-7s%6s", "index", "%time");
	if (timed)
		fprintf(out, "%12s%12s", "self", "children");
	fprintf(out, " %13s  %s\n", "called", "name");
	for (i = 0; i < n_order; i++) {
		const struct row *r = order[i];
		size_t ri = r->idx;
		uint64_t outside = outside_calls(rp, &ix, ri);
		char idx[24], called[48], *name;

		/* callers, the largest nearest the entry */
		n_tmp = 0;
		for (k = ix.callee_at[ri]; k < ix.callee_at[ri + 1]; k++)
			if (ix.by_callee[k]->caller != ri)
				tmp[n_tmp++] = ix.by_callee[k];
		gs.by_callee = false;
		qsort_r(tmp, n_tmp, sizeof(*tmp), cmp_graph_arc, &gs);
		while (n_tmp--)
			graph_arc_line(out, rp, &ix, tmp[n_tmp], tmp[n_tmp]->caller, index);

		snprintf(idx, sizeof(idx), "[%zu]", i + 1);
		if (outside != r->calls)
			snprintf(called, sizeof(called), "%" PRIu64 "+%" PRIu64, outside,
				 r->calls - outside);
		else
			snprintf(called, sizeof(called), "%" PRIu64, r->calls);
		fprintf(out, "%-7s", idx);
		if (timed)
			fprintf(out, "%6.1f%12.6f%12.6f", percent(rp, secs(r->incl)),
				secs(r->shown),
				r->incl > r->shown ? secs(r->incl - r->shown) : 0.0);
		else
			fprintf(out, "%6s", "");
		name = graph_name(rp, r->name);
		fprintf(out, " %13s  %c %s [%zu]", called, r->mainline ? '*' : ' ', name, i + 1);
		free(name);
		if (timed && r->incomplete)
			fputs("  INCOMPLETE", out);
		fputc('\n', out);

		/* callees, the largest first; recursion first of all */
		n_tmp = 0;
		for (k = ix.caller_at[ri]; k < ix.caller_at[ri + 1]; k++)
			if (ix.by_caller[k]->callee < n && index[ix.by_caller[k]->callee])
				tmp[n_tmp++] = ix.by_caller[k];
		gs.by_callee = true;
		qsort_r(tmp, n_tmp, sizeof(*tmp), cmp_graph_arc, &gs);
		for (k = 0; k < n_tmp; k++)
			graph_arc_line(out, rp, &ix, tmp[k], tmp[k]->callee, index);
		fputs("------------------------------------------------------------\n", out);
	}
	free(tmp);
	free(index);
	free(order);
	arc_index_free(&ix);
}

/* "fortstat: PROGRAM (exit status N), cpu clock" */
static void table_exit(FILE *out, const struct report *rp)
{
	const struct profile_section *sec = rp->sec;

	fprintf(out, "fortstat: %s (", sec->label ? sec->label : "?");
	if (sec->running)
		fputs("running", out);
	else if (sec->term_signal)
		fprintf(out, "killed by signal %d", sec->term_signal);
	else
		fprintf(out, "exit status %d", sec->exit_status);
	if (show_both(rp))
		fputs("), cpu and wall clocks\n", out);
	else if (rp->timed)
		fprintf(out, "), %s clock\n", clock_name(rp->c));
	else
		fputs("), count only\n", out);
}

/* -p: "fortstat: attached to PID (PROGRAM), N s, cpu clock", with how it ended meanwhile */
static void table_attached(FILE *out, const struct report *rp)
{
	const struct profile_section *sec = rp->sec;

	fprintf(out, "fortstat: attached to %d (%s), %.1f s", sec->pid,
		sec->label ? sec->label : "?", sec->total_s[CLOCK_KIND_WALL]);
	if (sec->running)
		fputs(", running", out); /* a snapshot's */
	else if (sec->term_signal)
		fprintf(out, ", killed by signal %d", sec->term_signal);
	else if (!sec->detached)
		fprintf(out, ", exit status %d", sec->exit_status);
	if (show_both(rp))
		fputs(", cpu and wall clocks\n", out);
	else if (rp->timed)
		fprintf(out, ", %s clock\n", clock_name(rp->c));
	else
		fputs(", count only\n", out);
}

/*
 * "user 0.812 s  system 0.004 s  elapsed 0.421 s  utilisation 96.9 % of 2
 * CPUs  concurrency 1.94", after `lead`: the set's CPU time as the kernel
 * counted it (usage.h); nothing when it was not measured. Two lines (the
 * second from "utilisation", after `lead` too) when one would not fit
 * --width.
 */
static void table_usage(FILE *out, const struct report *rp, const char *lead)
{
	const struct profile_usage *u = &rp->set->usage;
	double cpu_s = u->user_s + u->sys_s;
	double conc = usage_concurrency(cpu_s, u->elapsed_s);
	double util = usage_utilisation(cpu_s, u->elapsed_s, rp->sec->n_cpus);
	char times[128], ratios[128] = "";
	size_t n = 0, width = rp->opts->width;

	if (!u->known)
		return;
	snprintf(times, sizeof(times), "user %.3f s  system %.3f s  elapsed %.3f s", u->user_s,
		 u->sys_s, u->elapsed_s);
	if (isfinite(util))
		n = (size_t)snprintf(ratios, sizeof(ratios), "utilisation %.1f %% of %d CPU%s",
				     util, rp->sec->n_cpus, rp->sec->n_cpus == 1 ? "" : "s");
	if (isfinite(conc) && n < sizeof(ratios))
		snprintf(ratios + n, sizeof(ratios) - n, "%sconcurrency %.2f", n ? "  " : "", conc);
	if (!ratios[0])
		fprintf(out, "%s%s\n", lead, times);
	else if (width && strlen(lead) + strlen(times) + 2 + strlen(ratios) > width)
		fprintf(out, "%s%s\n%s%s\n", lead, times, lead, ratios);
	else
		fprintf(out, "%s%s  %s\n", lead, times, ratios);
}

/* The head line, the rank, the note and, with -p, what was active at attach. */
static void table_head(FILE *out, const struct report *rp)
{
	const struct profile_section *sec = rp->sec;

	if (sec->attached)
		table_attached(out, rp);
	else
		table_exit(out, rp);
	table_usage(out, rp, "fortstat: ");
	if (rp->p->ranked && rp->p->size)
		fprintf(out, "fortstat: rank %d of %d\n", rp->p->rank, rp->p->size);
	else if (rp->p->ranked)
		fprintf(out, "fortstat: rank %d\n", rp->p->rank);
	if (sec->note)
		fprintf(out, "fortstat: %s\n", sec->note);
	if (sec->attached)
		fprintf(out, "fortstat: active at attach (those calls are not timed): %s\n",
			sec->active ? sec->active : "none known");
	fputc('\n', out);
}

/*
 * "calls trapped": the calls whose entries were ptrace stops, and what their
 * stops cost; with the traps every call is one.
 */
static void table_trapped(FILE *out, const struct report *rp)
{
	const struct profile_section *sec = rp->sec;

	if (!sec->probes) {
		fprintf(out, "  %-22s %14s   (the traps: every call is a ptrace stop)\n",
			"calls trapped", "all");
		return;
	}
	fprintf(out, "  %-22s %14" PRIu64, "calls trapped", sec->trap_calls);
	if (rp->timed && sec->trap_calls)
		fprintf(out, "   (ptrace stops, not probes: about %.6f s of stops)",
			sec->trap_cost_s[rp->c]);
	fputc('\n', out);
}

/* "processes not followed": those it started, let go untimed (no -f). */
static void table_not_followed(FILE *out, const struct report *rp)
{
	if (rp->sec->not_followed)
		fprintf(out, "  %-22s %14" PRIu64 "   (untimed, in no report: -f follows them)\n",
			"processes not followed", rp->sec->not_followed);
}

/*
 * "switch records lost": the kernel dropped context-switch records of some
 * threads (a switch storm outran fortstat's reading): in the stretches
 * between that many of their stops, their CPU times were spread over the
 * elapsed time instead.
 */
static void table_lost(FILE *out, const struct report *rp)
{
	const struct profile_section *sec = rp->sec;
	size_t n = 0;

	if (!rp->timed || !sec->cs_lost_windows)
		return;
	while (n < PROFILE_LOST_TIDS && sec->cs_lost_tids[n])
		n++;
	fprintf(out, "  %-22s %8" PRIu64 " stops   (thread%s", "switch records lost",
		sec->cs_lost_windows, n > 1 ? "s" : "");
	for (size_t k = 0; k < n; k++)
		fprintf(out, "%s %d", k ? "," : "", sec->cs_lost_tids[k]);
	fprintf(out, "%s: CPU times spread over elapsed time there",
		n == PROFILE_LOST_TIDS ? ", ..." : "");
	if (sec->cs_lost_records)
		fprintf(out, "; %" PRIu64 " records dropped", sec->cs_lost_records);
	fputs(")\n", out);
}

/* A row of the table or, with --threads, of a thread's is marked '~'. */
static bool any_uncertain(const struct report *rp)
{
	if (rp->n_uncertain)
		return true;
	for (size_t t = 0; rp->timed && rp->opts->threads && t < rp->sec->n_threads; t++)
		for (size_t i = 0; i < rp->sec->n_routines; i++) {
			const struct profile_stats *s = &rp->sec->threads[t].r[i];

			if (rp->sec->routines[i].selected && s->calls &&
			    acct_uncertain(s->self[rp->c], s->self_unc[rp->c]))
				return true;
		}
	return false;
}

/*
 * The summary lines under the table: program time, unaccounted, calls,
 * calls trapped, overhead (and its share of the program's time), and the
 * report's warning (trust.h) when it has one.
 */
/*
 * --alloc: the process's storage: what the allocators were asked, the frees,
 * the peak of live bytes and whose allocation reached it.
 */
static void table_alloc(FILE *out, const struct report *rp)
{
	const struct alloc_totals *t = &rp->sec->alloc_total;
	uint32_t pk = t->peak_routine;

	if (!show_alloc(rp))
		return;
	fprintf(out, "  %-22s %14" PRIu64 "   (%" PRIu64 " bytes; %" PRIu64 " frees)\n",
		"allocations", t->allocs, t->bytes, t->frees);
	if (t->outside_allocs || t->outside_frees)
		fprintf(out,
			"  %-22s %14" PRIu64 "   (%" PRIu64 " bytes; %" PRIu64
			" frees): no timed routine on the stack\n",
			"... outside", t->outside_allocs, t->outside_bytes, t->outside_frees);
	fprintf(out, "  %-22s %14" PRIu64 " bytes   (in %s)\n", "peak live", t->peak,
		pk < rp->sec->n_routines ? rp->sec->routines[pk].name : "no timed routine");
}

static void table_summary(FILE *out, const struct report *rp)
{
	double f1 = rp->p->f1_ns[rp->c], f2 = rp->p->f2_ns[rp->c];
	struct trust t;
	char num[32], share[32] = "";

	report_trust(rp, &t);
	if (!rp->timed) {
		fprintf(out, "  %-22s %14" PRIu64 "\n", "calls timed", rp->calls);
		table_trapped(out, rp);
		table_not_followed(out, rp);
		goto warn;
	}
	fprintf(out, "  %-22s %14.6f s\n", "total program time", rp->total_s);
	fprintf(out, "  %-22s %14.6f s", "time unaccounted", rp->unaccounted_s);
	if (rp->total_s > 0)
		fprintf(out, " %7.2f %%", 100.0 * rp->unaccounted_s / rp->total_s);
	fputc('\n', out);
	fprintf(out, "  %-22s %14" PRIu64 "\n", "calls timed", rp->calls);
	table_alloc(out, rp);
	table_trapped(out, rp);
	table_not_followed(out, rp);
	table_lost(out, rp);
	table_samples(out, rp);
	snprintf(num, sizeof(num), "%14.6f", rp->overhead_s);
	if (isfinite(t.overhead_pct))
		snprintf(share, sizeof(share), " %7.2f %%", t.overhead_pct);
	if (rp->p->correct && (rp->p->df1_ns[rp->c] != 0 || rp->p->df2_ns[rp->c] != 0))
		fprintf(out,
			"  %-22s %s s%s \u00b1 %.6f s   (f1 %.2f us per entry, f2 %.2f us per "
			"call made)\n",
			"overhead removed", num, share, rp->overhead_unc_s, f1 / 1e3, f2 / 1e3);
	else if (rp->p->correct)
		fprintf(out, "  %-22s %s s%s   (f1 %.2f us per entry, f2 %.2f us per call made)\n",
			"overhead removed", num, share, f1 / 1e3, f2 / 1e3);
	else if (f1 != 0 || f2 != 0)
		fprintf(out,
			"  %-22s %s s%s   (not removed; f1 %.2f us per entry, f2 %.2f us per "
			"call made)\n",
			"overhead estimated", num, share, f1 / 1e3, f2 / 1e3);
	if (any_uncertain(rp)) /* the legend of the rows' '~' */
		fprintf(out, "  ~ after a time: %s %d %% of it\n",
			"what was removed from it is uncertain by more than", ACCT_UNCERTAIN_PCT);
warn:
	if (t.warning)
		fprintf(out, "fortstat: warning: %s\n", t.warning);
	trust_free(&t);
}

void write_table(FILE *out, const struct report *rp)
{
	const struct report_opts *opts = rp->opts;
	int w = name_width(rp), sw = opts->lines ? source_width(rp) : 0;
	size_t t;

	table_head(out, rp);
	table_rows(out, rp, w, sw);
	fputc('\n', out);
	table_summary(out, rp);
	if (opts->graph)
		write_graph(out, rp);

	for (t = 0; opts->threads && t < rp->sec->n_threads; t++) {
		const struct profile_set *th = &rp->sec->threads[t];
		struct report tr;
		char name[32];

		report_build(&tr, rp->p, rp->sec, th, opts);
		fprintf(out, "\n%s\n", stack_name(th->tid, name, sizeof(name)));
		table_usage(out, &tr, "  ");
		fputc('\n', out);
		table_rows(out, &tr, w, sw);
		if (opts->graph)
			write_graph(out, &tr);
		report_free(&tr);
	}
}

/* ---- a merge's table: each routine's spread over the inputs ---- */

/*
 * The ROUTINE column: the longest name shown, at most 60 columns (longer
 * names overflow it), and with a width (--width, the terminal's) at most
 * what the other columns leave of it, at least 20 (the names shortened).
 */
static int merged_name_width(const struct mview *m, const uint32_t *rows, size_t n,
			     const struct report_opts *opts)
{
	size_t w = 8, other = 2 + 13 + 15 + 13;

	for (size_t i = 0; i < n; i++) {
		size_t l = name_columns(m->rt[rows[i]].name);

		if (l > w)
			w = l;
	}
	w = w > 60 ? 60 : w;
	other += m->count_only ? 9 + 10 + 15 : 13 * 3 + 9 + 10 + 13 + (opts->inclusive ? 26 : 0);
	if (opts->width && w > 20 && w + other > opts->width)
		w = opts->width > other + 20 ? opts->width - other : 20;
	return (int)w;
}

/* A name padded to w columns; with a width, shortened to fit them. */
static void merged_put_name(FILE *out, const char *name, int w, const struct report_opts *opts)
{
	char *s = name_shorten(name, opts->width ? (size_t)w : 0);

	fputs(s, out);
	for (size_t cols = name_columns(s); cols < (size_t)w; cols++)
		fputc(' ', out);
	free(s);
}

/* --top: "  (12 more routines: 3.2 % of the sum)", the rows not shown. */
static void merged_rest_line(const struct mview *m, FILE *out, const uint32_t *rows, size_t n,
			     size_t shown)
{
	double all = 0, rest = 0;

	if (shown >= n)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct profile_merged *r = &m->ms[rows[i]];
		double v = m->count_only ? r->calls.sum : r->self.sum;

		all += v;
		if (i >= shown)
			rest += v;
	}
	fprintf(out, "  (%zu more routine%s: %.1f %% of the %s)\n", n - shown,
		n - shown == 1 ? "" : "s", all > 0 ? 100.0 * rest / all : 0.0,
		m->count_only ? "calls" : "time");
}

static void merged_imbalance(char *buf, size_t len, const struct mview *m,
			     const struct profile_spread *s)
{
	double mean = mean_of(m, s);

	if (mean > 0)
		snprintf(buf, len, "%.2f", max_of(m, s) / mean);
	else
		snprintf(buf, len, "-");
}

void write_merged_table(const struct mview *m, FILE *out, const struct report_opts *opts)
{
	size_t n, i;
	uint32_t *rows = sorted_rows(m, opts, &n);
	int w = merged_name_width(m, rows, n, opts);
	size_t shown = opts->top && opts->top < n ? opts->top : n;
	const char *at = all_ranked(m) ? "RANK" : "INPUT";
	char imb[32];

	fprintf(out, "fortstat --merge: %zu input%s of %s", m->n_in, m->n_in == 1 ? "" : "s",
		m->program);
	if (m->count_only)
		fputs(", count only\n\n", out);
	else
		fprintf(out, ", %s clock; times are self times\n\n", m->clock ? m->clock : "?");
	fputs("  ", out);
	merged_put_name(out, "ROUTINE", w, opts);
	fprintf(out, " %12s %14s %12s", "CALLS MIN", "CALLS MEAN", "CALLS MAX");
	if (m->count_only)
		fprintf(out, " %8s %9s %14s\n", at, "MAX/MEAN", "CALLS SUM");
	else {
		fprintf(out, " %12s %12s %12s %8s %9s %12s", "MIN (SEC)", "MEAN (SEC)", "MAX (SEC)",
			at, "MAX/MEAN", "SUM (SEC)");
		if (opts->inclusive)
			fprintf(out, " %12s %12s", "INCL MEAN", "INCL MAX");
		fputc('\n', out);
	}
	for (i = 0; i < shown; i++) {
		const struct profile_routine *rt = &m->rt[rows[i]];
		const struct profile_merged *r = &m->ms[rows[i]];
		const struct profile_spread *s = m->count_only ? &r->calls : &r->self;

		merged_imbalance(imb, sizeof(imb), m, s);
		fprintf(out, "%c ", rt->mainline ? '*' : ' ');
		merged_put_name(out, rt->name, w, opts);
		fprintf(out, " %12.0f %14.2f %12.0f", min_of(m, &r->calls), mean_of(m, &r->calls),
			max_of(m, &r->calls));
		if (m->count_only) {
			fprintf(out, " %8ld %9s %14.0f\n", input_label(m, s->imax), imb, s->sum);
			continue;
		}
		fprintf(out, " %12.6f %12.6f %12.6f %8ld %9s %12.6f", min_of(m, s), mean_of(m, s),
			max_of(m, s), input_label(m, s->imax), imb, s->sum);
		if (opts->inclusive)
			fprintf(out, " %12.6f %12.6f", mean_of(m, &r->total), max_of(m, &r->total));
		fputc('\n', out);
	}
	merged_rest_line(m, out, rows, n, shown);
	fprintf(out,
		"\n  %s: the %s of the max; MAX/MEAN: imbalance; a routine missing from "
		"an input counts 0 there\n",
		at, all_ranked(m) ? "rank" : "input (0: the first file)");
	free(rows);
}
