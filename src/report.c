// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * report.c - the views of an accounting state: the FORTSTAT/FTN4TRA table, a
 * gprof-style call graph, CSV, JSON, folded stacks, callgrind, SVG flame graphs.
 */
#include "fortstat/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "fortstat/account.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"

#define NAME_WIDTH_MIN 20 /* the ROUTINE column is at least this wide */

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

/* The net state to read corrected times from, or NULL (see struct prof). */
static const struct acct *net_of(const struct acct *acct, const struct report_run *run)
{
	const struct acct *n = run->correct ? run->net : NULL;

	if (!n || acct_n_routines(n) != acct_n_routines(acct))
		return NULL;
	return n;
}

/* The whole program's results. */
static struct prof prof_all(const struct acct *acct, const struct report_run *run)
{
	const struct acct *net = net_of(acct, run);
	struct prof p = {0};
	size_t n;

	p.r = acct_routines(acct);
	p.arcs = acct_arcs(acct, &p.n_arcs);
	p.nodes = acct_nodes(acct, &p.n_nodes);
	if (net) {
		p.rn = acct_routines(net);
		p.arcs_n = acct_arcs(net, &n);
		if (n != p.n_arcs)
			p.arcs_n = NULL;
		p.nodes_n = acct_nodes(net, &n);
		if (n != p.n_nodes)
			p.nodes_n = NULL;
	}
	return p;
}

/* Thread i's results. */
static struct prof prof_thread(const struct acct *acct, const struct report_run *run, size_t i)
{
	const struct acct *net = net_of(acct, run);
	struct acct_thread_info ti, tn;
	struct prof p = {0};

	if (acct_thread(acct, i, &ti) < 0)
		return p;
	p.tid = ti.tid;
	p.r = ti.r;
	p.arcs = ti.arcs;
	p.n_arcs = ti.n_arcs;
	p.nodes = ti.nodes;
	p.n_nodes = ti.n_nodes;
	if (net && acct_thread(net, i, &tn) == 0 && tn.tid == ti.tid) {
		p.rn = tn.r;
		p.arcs_n = tn.n_arcs == ti.n_arcs ? tn.arcs : NULL;
		p.nodes_n = tn.n_nodes == ti.n_nodes ? tn.nodes : NULL;
	}
	return p;
}

static double secs(acct_time_t ns)
{
	return (double)ns / 1e9;
}

/* The routine's readable name, or a made-up one in *owned (freed by the caller). */
static const char *routine_name(const struct routine *rt, char **owned)
{
	*owned = NULL;
	if (rt->display && rt->display[0])
		return rt->display;
	if (rt->n_names && rt->names[0] && rt->names[0][0])
		return rt->names[0];
	*owned = xasprintf("0x%" PRIx64, rt->addr);
	return *owned;
}

static int cmp_name(const struct row *x, const struct row *y)
{
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_time(const void *p, const void *q)
{
	const struct row *x = p, *y = q;

	if (x->shown != y->shown)
		return x->shown > y->shown ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_calls(const void *p, const void *q)
{
	const struct row *x = p, *y = q;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_names(const void *p, const void *q)
{
	return cmp_name(p, q);
}

/* Collect, correct and sort the routines to show; compute the totals. */
static void report_names(struct report *rp);

/* The self time of routine i shown (net when the run corrects, else gross). */
static acct_time_t shown_self(const struct report *rp, size_t i)
{
	const struct acct_routine *r = &rp->ar[i];

	if (!rp->run->correct)
		return r->self;
	if (rp->prof->rn)
		return rp->prof->rn[i].self;
	return acct_net(r->self, r->calls, r->calls_made, rp->run->f1_ns, rp->run->f2_ns);
}

/* The inclusive time of routine i shown: its overhead is that of every stop inside. */
static acct_time_t shown_incl(const struct report *rp, size_t i)
{
	const struct acct_routine *r = &rp->ar[i];

	if (!rp->run->correct)
		return r->total;
	if (rp->prof->rn)
		return rp->prof->rn[i].total;
	return acct_net(r->total, r->total_entries, r->total_calls_made, rp->run->f1_ns,
			rp->run->f2_ns);
}

static void report_build(struct report *rp, const struct symtab *st, const struct prof *prof,
			 const struct report_run *run, const struct report_opts *opts)
{
	const struct acct_routine *ar = prof->r;
	enum report_sort sort = opts->sort;
	int (*cmp)(const void *, const void *) = cmp_time;
	size_t i;

	memset(rp, 0, sizeof(*rp));
	rp->st = st;
	rp->prof = prof;
	rp->opts = opts;
	rp->ar = ar;
	rp->run = run;
	rp->rows = xcalloc(st->n ? st->n : 1, sizeof(*rp->rows));
	for (i = 0; i < st->n; i++) {
		const struct routine *rt = &st->r[i];
		struct row *w;

		if (!(rt->flags & RT_SELECTED) || (!ar[i].calls && !opts->zeros))
			continue;
		w = &rp->rows[rp->n_rows++];
		w->idx = i;
		w->name = routine_name(rt, &w->owned);
		w->calls = ar[i].calls;
		w->gross = ar[i].self;
		w->net = prof->rn ? prof->rn[i].self
				  : acct_net(ar[i].self, ar[i].calls, ar[i].calls_made, run->f1_ns,
					     run->f2_ns);
		w->shown = run->correct ? w->net : w->gross;
		w->incl = shown_incl(rp, i);
		w->incomplete = ar[i].incomplete;
		w->mainline = rt->flags & RT_MAINLINE;
		rp->calls += w->calls;
		rp->sum_s += secs(w->shown);
		rp->gross_sum_s += secs(w->gross);
		if (w->gross >= w->net)
			rp->overhead_s += secs(w->gross - w->net);
		else /* negative factors */
			rp->overhead_s -= secs(w->net - w->gross);
	}
	if (run->count_only && sort == SORT_TIME)
		sort = SORT_CALLS; /* no times: the most called first */
	if (sort == SORT_CALLS)
		cmp = cmp_calls;
	else if (sort == SORT_NAME)
		cmp = cmp_names;
	qsort(rp->rows, rp->n_rows, sizeof(*rp->rows), cmp);
	/* The overhead removed from the routines was part of the program's time. */
	rp->total_s = run->total_time_s;
	if (run->correct && !run->count_only && rp->overhead_s < rp->total_s)
		rp->total_s -= rp->overhead_s;
	rp->denom_s = rp->total_s > 0 ? rp->total_s : rp->sum_s;
	rp->unaccounted_s = rp->total_s - rp->sum_s;
	if (fabs(rp->unaccounted_s) < 5e-10)
		rp->unaccounted_s = 0; /* no "-0.000000" from rounding */
	report_names(rp);
}

/* Display names of every routine, for arcs and stacks. */
static void report_names(struct report *rp)
{
	size_t i;

	rp->names = xcalloc(rp->st->n ? rp->st->n : 1, sizeof(*rp->names));
	rp->names_owned = xcalloc(rp->st->n ? rp->st->n : 1, sizeof(*rp->names_owned));
	for (i = 0; i < rp->st->n; i++)
		rp->names[i] = routine_name(&rp->st->r[i], &rp->names_owned[i]);
}

static void report_free(struct report *rp)
{
	size_t i;

	for (i = 0; i < rp->n_rows; i++)
		free(rp->rows[i].owned);
	free(rp->rows);
	for (i = 0; i < rp->st->n; i++)
		free(rp->names_owned[i]);
	free(rp->names_owned);
	free(rp->names);
}

static double percent(const struct report *rp, double s)
{
	return rp->denom_s > 0 ? 100.0 * s / rp->denom_s : 0.0;
}

/* ---- table ---- */

/* "file:line", "file", or "" (the --lines column); malloc'ed. */
static char *source_of(const struct routine *rt)
{
	if (!rt->file)
		return xstrdup("");
	if (rt->line > 0)
		return xasprintf("%s:%d", rt->file, rt->line);
	return xstrdup(rt->file);
}

/* Width of the ROUTINE column: the longest name shown, within limits. */
static int name_width(const struct report *rp)
{
	int w = NAME_WIDTH_MIN;
	size_t i;

	for (i = 0; i < rp->n_rows; i++) {
		size_t len = strlen(rp->rows[i].name);

		if (len > (size_t)w)
			w = len > 4096 ? 4096 : (int)len;
	}
	return w;
}

/* Width of the SOURCE column. */
static int source_width(const struct report *rp)
{
	int w = 6;
	size_t i;

	for (i = 0; i < rp->n_rows; i++) {
		char *src = source_of(&rp->st->r[rp->rows[i].idx]);
		size_t len = strlen(src);

		if (len > (size_t)w)
			w = len > 4096 ? 4096 : (int)len;
		free(src);
	}
	return w;
}

/* The column heads, the rows and the TOTAL row of one set of results. */
static void table_rows(FILE *out, const struct report *rp, int w, int sw)
{
	const struct report_opts *opts = rp->opts;
	bool timed = !rp->run->count_only;
	size_t i;

	fprintf(out, "  %-*s %12s", w, "ROUTINE", "CALLED");
	if (timed) {
		fprintf(out, "%16s%9s", "TIME (SEC)", "PERCENT");
		if (opts->inclusive)
			fprintf(out, "%16s%9s", "INCL (SEC)", "PERCENT");
		fprintf(out, "%14s", "AV SEC/CALL");
	}
	if (opts->lines)
		fputs("  SOURCE", out);
	fputc('\n', out);

	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		double s = secs(r->shown);

		fprintf(out, "%c %-*s %12" PRIu64, r->mainline ? '*' : ' ', w, r->name, r->calls);
		if (timed) {
			fprintf(out, "%16.6f%9.2f", s, percent(rp, s));
			if (opts->inclusive)
				fprintf(out, "%16.6f%9.2f", secs(r->incl),
					percent(rp, secs(r->incl)));
			fprintf(out, "%14.6f", r->calls ? s / (double)r->calls : 0.0);
		}
		if (opts->lines) {
			char *src = source_of(&rp->st->r[r->idx]);

			/* padded only when INCOMPLETE follows */
			fprintf(out, "  %-*s", timed && r->incomplete ? sw : 0, src);
			free(src);
		}
		if (timed && r->incomplete)
			fputs("  INCOMPLETE", out);
		fputc('\n', out);
	}
	fprintf(out, "  %-*s %12" PRIu64, w, "TOTAL", rp->calls);
	if (timed)
		fprintf(out, "%16.6f%9.2f", rp->sum_s, percent(rp, rp->sum_s));
	fputc('\n', out);
}

/* ---- call graph ---- */

/* Arcs of one set of results grouped by caller and by callee (counting sort). */
struct arc_index {
	const struct acct_arc **by_caller, **by_callee;
	size_t *caller_at, *callee_at; /* n + 2 offsets; the root is routine n */
};

static size_t arc_slot(uint32_t r, size_t n)
{
	return r == ACCT_NONE || r >= n ? n : r;
}

static void arc_index_build(struct arc_index *ix, const struct prof *p, size_t n)
{
	size_t i, *fill;

	ix->by_caller = xcalloc(p->n_arcs + 1, sizeof(*ix->by_caller));
	ix->by_callee = xcalloc(p->n_arcs + 1, sizeof(*ix->by_callee));
	ix->caller_at = xcalloc(n + 2, sizeof(size_t));
	ix->callee_at = xcalloc(n + 2, sizeof(size_t));
	fill = xcalloc(n + 2, sizeof(size_t));
	for (i = 0; i < p->n_arcs; i++) {
		ix->caller_at[arc_slot(p->arcs[i].caller, n) + 1]++;
		ix->callee_at[arc_slot(p->arcs[i].callee, n) + 1]++;
	}
	for (i = 1; i < n + 2; i++) {
		ix->caller_at[i] += ix->caller_at[i - 1];
		ix->callee_at[i] += ix->callee_at[i - 1];
	}
	for (i = 0; i < p->n_arcs; i++) {
		size_t c = arc_slot(p->arcs[i].caller, n);

		ix->by_caller[ix->caller_at[c] + fill[c]++] = &p->arcs[i];
	}
	memset(fill, 0, (n + 2) * sizeof(size_t));
	for (i = 0; i < p->n_arcs; i++) {
		size_t c = arc_slot(p->arcs[i].callee, n);

		ix->by_callee[ix->callee_at[c] + fill[c]++] = &p->arcs[i];
	}
	free(fill);
}

static void arc_index_free(struct arc_index *ix)
{
	free(ix->by_caller);
	free(ix->by_callee);
	free(ix->caller_at);
	free(ix->callee_at);
}

/* The callee's self time along an arc, shown: its share of the callee's shown self time. */
static double arc_self_s(const struct report *rp, const struct acct_arc *a)
{
	const struct acct_routine *r = &rp->ar[a->callee];

	if (rp->run->correct && rp->prof->arcs_n)
		return secs(rp->prof->arcs_n[a - rp->prof->arcs].self);
	if (!r->self)
		return 0;
	if (a->self == r->self)
		return secs(shown_self(rp, a->callee));
	return secs(a->self) * ((double)shown_self(rp, a->callee) / (double)r->self);
}

/* The callee's inclusive time along an arc, shown. */
static double arc_time_s(const struct report *rp, const struct acct_arc *a)
{
	const struct acct_routine *r = &rp->ar[a->callee];

	if (rp->run->correct && rp->prof->arcs_n)
		return secs(rp->prof->arcs_n[a - rp->prof->arcs].time);
	if (!r->total)
		return 0;
	if (a->time == r->total)
		return secs(shown_incl(rp, a->callee));
	return secs(a->time) * ((double)shown_incl(rp, a->callee) / (double)r->total);
}

/* Calls of routine i that are not direct recursion. */
static uint64_t outside_calls(const struct report *rp, const struct arc_index *ix, size_t i)
{
	uint64_t rec = 0;
	size_t k;

	for (k = ix->caller_at[i]; k < ix->caller_at[i + 1]; k++)
		if (ix->by_caller[k]->callee == i)
			rec += ix->by_caller[k]->calls;
	return rp->ar[i].calls - rec;
}

/* Call graph sorting: the arc's shown inclusive time, then the other end's name. */
static const struct report *sort_rp;
static bool sort_by_callee;

static int cmp_graph_arc(const void *p, const void *q)
{
	const struct acct_arc *x = *(const struct acct_arc *const *)p;
	const struct acct_arc *y = *(const struct acct_arc *const *)q;
	double tx = arc_time_s(sort_rp, x), ty = arc_time_s(sort_rp, y);
	uint32_t ex = sort_by_callee ? x->callee : x->caller;
	uint32_t ey = sort_by_callee ? y->callee : y->caller;
	const char *nx = ex < sort_rp->st->n ? sort_rp->names[ex] : "";
	const char *ny = ey < sort_rp->st->n ? sort_rp->names[ey] : "";
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
			   const struct acct_arc *a, uint32_t other, const size_t *index)
{
	bool timed = !rp->run->count_only;
	char called[48];

	if (other == ACCT_NONE || other >= rp->st->n) {
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
	fprintf(out, " %13s      %s [%zu]\n", called, rp->names[other], index[other]);
}

/*
 * gprof's "Call graph", fortstat's way: an entry per routine called, by
 * inclusive time; its callers above it, its callees below, with the calls
 * along each arc over the callee's calls, and the callee's self time and its
 * descendants' time along that arc. Exact: every call of a timed routine is seen.
 */
static void write_graph(FILE *out, const struct report *rp)
{
	const struct symtab *st = rp->st;
	bool timed = !rp->run->count_only;
	struct arc_index ix;
	const struct row **order;
	const struct acct_arc **tmp;
	size_t *index, i, k, n_order = 0, n_tmp;

	arc_index_build(&ix, rp->prof, st->n);
	order = xcalloc(rp->n_rows + 1, sizeof(*order));
	index = xcalloc(st->n + 1, sizeof(*index));
	tmp = xcalloc(rp->prof->n_arcs + 1, sizeof(*tmp));
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
	sort_rp = rp;
	for (i = 0; i < n_order; i++) {
		const struct row *r = order[i];
		size_t ri = r->idx;
		uint64_t outside = outside_calls(rp, &ix, ri);
		char idx[24], called[48];

		/* callers, the largest nearest the entry */
		n_tmp = 0;
		for (k = ix.callee_at[ri]; k < ix.callee_at[ri + 1]; k++)
			if (ix.by_callee[k]->caller != ri)
				tmp[n_tmp++] = ix.by_callee[k];
		sort_by_callee = false;
		qsort(tmp, n_tmp, sizeof(*tmp), cmp_graph_arc);
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
		fprintf(out, " %13s  %c %s [%zu]", called, r->mainline ? '*' : ' ', r->name, i + 1);
		if (timed && r->incomplete)
			fputs("  INCOMPLETE", out);
		fputc('\n', out);

		/* callees, the largest first; recursion first of all */
		n_tmp = 0;
		for (k = ix.caller_at[ri]; k < ix.caller_at[ri + 1]; k++)
			if (ix.by_caller[k]->callee < st->n && index[ix.by_caller[k]->callee])
				tmp[n_tmp++] = ix.by_caller[k];
		sort_by_callee = true;
		qsort(tmp, n_tmp, sizeof(*tmp), cmp_graph_arc);
		for (k = 0; k < n_tmp; k++)
			graph_arc_line(out, rp, &ix, tmp[k], tmp[k]->callee, index);
		fputs("------------------------------------------------------------\n", out);
	}
	sort_rp = NULL;
	free(tmp);
	free(index);
	free(order);
	arc_index_free(&ix);
}

static void write_table(FILE *out, const struct report *rp, const struct acct *acct)
{
	const struct report_run *run = rp->run;
	const struct report_opts *opts = rp->opts;
	bool timed = !run->count_only;
	int w = name_width(rp), sw = opts->lines ? source_width(rp) : 0;
	char num[32];
	size_t t;

	fprintf(out, "fortstat: %s (", run->program ? run->program : "?");
	if (run->term_signal)
		fprintf(out, "killed by signal %d", run->term_signal);
	else
		fprintf(out, "exit status %d", run->exit_status);
	if (timed)
		fprintf(out, "), %s clock\n", run->clock ? run->clock : "?");
	else
		fputs("), count only\n", out);
	if (run->note)
		fprintf(out, "fortstat: %s\n", run->note);
	fputc('\n', out);

	table_rows(out, rp, w, sw);
	fputc('\n', out);

	if (!timed) {
		fprintf(out, "  %-22s %14" PRIu64 "\n", "calls timed", rp->calls);
	} else {
		fprintf(out, "  %-22s %14.6f s\n", "total program time", rp->total_s);
		fprintf(out, "  %-22s %14.6f s", "time unaccounted", rp->unaccounted_s);
		if (rp->total_s > 0)
			fprintf(out, " %7.2f %%", 100.0 * rp->unaccounted_s / rp->total_s);
		fputc('\n', out);
		fprintf(out, "  %-22s %14" PRIu64 "\n", "calls timed", rp->calls);
		snprintf(num, sizeof(num), "%14.6f", rp->overhead_s);
		if (run->correct)
			fprintf(out,
				"  %-22s %s s   (f1 %.2f us per entry, f2 %.2f us per call made)\n",
				"overhead removed", num, run->f1_ns / 1e3, run->f2_ns / 1e3);
		else if (run->f1_ns != 0 || run->f2_ns != 0)
			fprintf(out,
				"  %-22s %s s   (not removed; f1 %.2f us per entry, f2 %.2f us per "
				"call made)\n",
				"overhead estimated", num, run->f1_ns / 1e3, run->f2_ns / 1e3);
	}
	if (opts->graph)
		write_graph(out, rp);

	for (t = 0; opts->threads && t < acct_n_threads(acct); t++) {
		struct prof p = prof_thread(acct, rp->run, t);
		struct report tr;

		report_build(&tr, rp->st, &p, run, opts);
		fprintf(out, "\nthread %d\n\n", p.tid);
		table_rows(out, &tr, w, sw);
		if (opts->graph)
			write_graph(out, &tr);
		report_free(&tr);
	}
}

/* ---- CSV ---- */

/* One CSV field, quoted as RFC 4180 asks when it holds a comma, quote or line break. */
static void csv_field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* The CSV rows of one set of results; `tid` (0: none) ends each row when asked. */
static void csv_rows(FILE *out, const struct report *rp, bool with_tid)
{
	bool timed = !rp->run->count_only;
	size_t i;

	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct routine *rt = &rp->st->r[r->idx];
		double s = secs(r->shown);

		csv_field(out, r->name);
		fprintf(out, ",%" PRIu64 ",", r->calls);
		if (timed)
			fprintf(out, "%.9f,%.9f,%.6f,%.9f", s, secs(r->incl), percent(rp, s),
				r->calls ? s / (double)r->calls : 0.0);
		else
			fputs(",,,", out);
		fprintf(out, ",%d,%d,0x%" PRIx64 ",", timed && r->incomplete, r->mainline,
			rt->addr);
		csv_field(out, rt->file);
		fputc(',', out);
		if (rt->line > 0)
			fprintf(out, "%d", rt->line);
		fputc(',', out);
		if (timed)
			fprintf(out, "%.6f", percent(rp, secs(r->incl)));
		if (with_tid) {
			fputc(',', out);
			if (rp->prof->tid)
				fprintf(out, "%d", rp->prof->tid);
		}
		fputc('\n', out);
	}
}

static void write_csv(FILE *out, const struct report *rp, const struct acct *acct)
{
	bool threads = rp->opts->threads;
	size_t t;

	fputs("routine,calls,self_s,total_s,percent,avg_s,incomplete,mainline,address,file,line,"
	      "total_percent",
	      out);
	fputs(threads ? ",thread\n" : "\n", out);
	csv_rows(out, rp, threads);
	for (t = 0; threads && t < acct_n_threads(acct); t++) {
		struct prof p = prof_thread(acct, rp->run, t);
		struct report tr;

		report_build(&tr, rp->st, &p, rp->run, rp->opts);
		csv_rows(out, &tr, true);
		report_free(&tr);
	}
}

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * A JSON string (or null): escapes quotes, backslashes and control
 * characters; bytes that are not UTF-8 become U+FFFD.
 */
static void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*s) {
		size_t n;

		switch (*s) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(out, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				fputs("\\ufffd", out);
				break;
			}
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', out);
}

/* A number of seconds (null if it is not finite or times are not kept). */
static void json_secs(FILE *out, double v, bool timed)
{
	if (!timed || !isfinite(v))
		fputs("null", out);
	else
		fprintf(out, "%.9f", v);
}

static int cmp_arc(const void *p, const void *q)
{
	const struct acct_arc *x = *(const struct acct_arc *const *)p;
	const struct acct_arc *y = *(const struct acct_arc *const *)q;
	/* the root (ACCT_NONE) first, then by routine index */
	uint64_t xc = x->caller == ACCT_NONE ? 0 : (uint64_t)x->caller + 1;
	uint64_t yc = y->caller == ACCT_NONE ? 0 : (uint64_t)y->caller + 1;

	if (xc != yc)
		return xc < yc ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

static bool selected(const struct symtab *st, uint32_t i)
{
	return i < st->n && (st->r[i].flags & RT_SELECTED);
}

/* The "routines" and "arcs" members of one set of results, at `ind` spaces. */
/* A routine's times on the other clock, net of that clock's overhead when correcting. */
static acct_time_t alt_net(const struct report_run *run, const struct acct_routine *a,
			   bool inclusive)
{
	acct_time_t g = inclusive ? a->total : a->self;

	if (!run->correct)
		return g;
	if (run->alt_net && run->alt && acct_n_routines(run->alt_net) == acct_n_routines(run->alt)) {
		const struct acct_routine *n = &acct_routines(run->alt_net)[a - acct_routines(run->alt)];

		return inclusive ? n->total : n->self;
	}
	if (inclusive)
		return acct_net(g, a->total_entries, a->total_calls_made, run->alt_f1_ns,
				run->alt_f2_ns);
	return acct_net(g, a->calls, a->calls_made, run->alt_f1_ns, run->alt_f2_ns);
}

/* , "cpu": {"self_s": ..., "gross_self_s": ..., "total_s": ..., "gross_total_s": ...} */
static void json_clock(FILE *out, const char *name, double self, double gross, double total,
		       double gross_total)
{
	fprintf(out, ", \"%s\": {\"self_s\": ", name);
	json_secs(out, self, true);
	fputs(", \"gross_self_s\": ", out);
	json_secs(out, gross, true);
	fputs(", \"total_s\": ", out);
	json_secs(out, total, true);
	fputs(", \"gross_total_s\": ", out);
	json_secs(out, gross_total, true);
	fputc('}', out);
}

/* both: add each routine's times on both clocks (the whole program, not a thread). */
static void json_routines_arcs(FILE *out, const struct report *rp, int ind, bool both)
{
	const struct symtab *st = rp->st;
	bool timed = !rp->run->count_only;
	const struct acct_arc **sorted;
	size_t n_sorted = 0, i, k;

	fprintf(out, "%*s\"routines\": [", ind, "");
	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct routine *rt = &st->r[r->idx];

		fprintf(out, "%s\n%*s{\"name\": ", i ? "," : "", ind + 2, "");
		json_str(out, r->name);
		fputs(", \"module\": ", out);
		json_str(out, rt->module);
		fputs(", \"aliases\": [", out);
		for (k = 0; k < rt->n_names; k++) {
			if (k)
				fputs(", ", out);
			json_str(out, rt->names[k]);
		}
		fprintf(out, "], \"mainline\": %s, \"calls\": %" PRIu64 ", \"self_s\": ",
			r->mainline ? "true" : "false", r->calls);
		json_secs(out, secs(r->shown), timed);
		fputs(", \"gross_self_s\": ", out);
		json_secs(out, secs(r->gross), timed);
		fputs(", \"total_s\": ", out);
		json_secs(out, secs(r->incl), timed);
		fputs(", \"gross_total_s\": ", out);
		json_secs(out, secs(rp->ar[r->idx].total), timed);
		fputs(", \"total_percent\": ", out);
		if (timed)
			fprintf(out, "%.6f", percent(rp, secs(r->incl)));
		else
			fputs("null", out);
		if (timed && both && rp->run->alt) {
			/* both clocks: the chosen one as shown, the other from alt */
			const struct report_run *run = rp->run;
			const struct acct_routine *a2 = &acct_routines(run->alt)[r->idx];
			bool cpu = !strcmp(run->clock, "cpu");

			json_clock(out, cpu ? "cpu" : "wall", secs(r->shown), secs(r->gross),
				   secs(r->incl), secs(rp->ar[r->idx].total));
			json_clock(out, run->alt_clock, secs(alt_net(run, a2, false)), secs(a2->self),
				   secs(alt_net(run, a2, true)), secs(a2->total));
		}
		fprintf(out, ", \"incomplete\": %s, \"address\": \"0x%" PRIx64 "\", \"file\": ",
			timed && r->incomplete ? "true" : "false", rt->addr);
		json_str(out, rt->file);
		if (rt->line > 0)
			fprintf(out, ", \"line\": %d}", rt->line);
		else
			fputs(", \"line\": null}", out);
	}
	if (rp->n_rows)
		fprintf(out, "\n%*s", ind, "");
	fprintf(out, "],\n%*s\"arcs\": [", ind, "");

	sorted = xcalloc(rp->prof->n_arcs ? rp->prof->n_arcs : 1, sizeof(*sorted));
	for (i = 0; i < rp->prof->n_arcs; i++) {
		const struct acct_arc *a = &rp->prof->arcs[i];

		if (selected(st, a->callee) && (a->caller == ACCT_NONE || a->caller < st->n))
			sorted[n_sorted++] = a;
	}
	qsort(sorted, n_sorted, sizeof(*sorted), cmp_arc);
	for (i = 0; i < n_sorted; i++) {
		const struct acct_arc *a = sorted[i];

		fprintf(out, "%s\n%*s{\"caller\": ", i ? "," : "", ind + 2, "");
		json_str(out, a->caller == ACCT_NONE ? NULL : rp->names[a->caller]);
		fputs(", \"callee\": ", out);
		json_str(out, rp->names[a->callee]);
		fprintf(out, ", \"calls\": %" PRIu64 ", \"time_s\": ", a->calls);
		json_secs(out, arc_time_s(rp, a), timed);
		fputs(", \"self_s\": ", out);
		json_secs(out, arc_self_s(rp, a), timed);
		fputc('}', out);
	}
	free(sorted);
	if (n_sorted)
		fprintf(out, "\n%*s", ind, "");
	fputc(']', out);
}

static void write_json(FILE *out, const struct report *rp, const struct acct *acct)
{
	const struct report_run *run = rp->run;
	bool timed = !run->count_only;
	size_t i, t;

	fputs("{\n  \"version\": \"" PACKAGE_VERSION "\",\n  \"program\": ", out);
	json_str(out, run->program);
	fputs(",\n  \"argv\": [", out);
	for (i = 0; run->argv && run->argv[i]; i++) {
		if (i)
			fputs(", ", out);
		json_str(out, run->argv[i]);
	}
	fprintf(out, "],\n  \"exit_status\": %d,\n  \"term_signal\": %d,\n  \"note\": ",
		run->exit_status, run->term_signal);
	json_str(out, run->note);
	fputs(",\n  \"clock\": ", out);
	json_str(out, run->clock);
	fprintf(out, ",\n  \"count_only\": %s,\n  \"overhead_removed\": %s,\n",
		run->count_only ? "true" : "false", timed && run->correct ? "true" : "false");
	fputs("  \"f1_ns\": ", out);
	if (isfinite(run->f1_ns))
		fprintf(out, "%.3f", run->f1_ns);
	else
		fputs("null", out);
	fputs(",\n  \"f2_ns\": ", out);
	if (isfinite(run->f2_ns))
		fprintf(out, "%.3f", run->f2_ns);
	else
		fputs("null", out);
	fprintf(out, ",\n  \"stops_measured\": %" PRIu64, run->stops_measured);
	fputs(",\n  \"total_time_s\": ", out);
	json_secs(out, rp->total_s, true);
	fputs(",\n  \"gross_total_time_s\": ", out);
	json_secs(out, run->total_time_s, true);
	fputs(",\n  \"unaccounted_s\": ", out);
	json_secs(out, rp->unaccounted_s, timed);
	fputs(",\n  \"overhead_s\": ", out);
	json_secs(out, rp->overhead_s, timed);
	fprintf(out, ",\n  \"calls_timed\": %" PRIu64 ",\n", rp->calls);
	json_routines_arcs(out, rp, 2, true);
	if (rp->opts->threads) {
		fputs(",\n  \"threads\": [", out);
		for (t = 0; t < acct_n_threads(acct); t++) {
			struct prof p = prof_thread(acct, rp->run, t);
			struct report tr;

			report_build(&tr, rp->st, &p, run, rp->opts);
			fprintf(out, "%s\n    {\"tid\": %d, \"calls_timed\": %" PRIu64 ",\n",
				t ? "," : "", p.tid, tr.calls);
			json_routines_arcs(out, &tr, 6, false);
			fputc('}', out);
			report_free(&tr);
		}
		fputs(t ? "\n  ]" : "]", out);
	}
	fputs("\n}\n", out);
}

/* ---- calling-context trees: folded stacks and flame graphs ---- */

/* A node's value: microseconds of shown self time, or calls when no clock ran. */
static uint64_t node_value(const struct report *rp, size_t i)
{
	const struct report_run *run = rp->run;
	const struct acct_node *x = &rp->prof->nodes[i];
	acct_time_t ns;

	if (run->count_only)
		return x->calls;
	if (run->correct && rp->prof->nodes_n)
		ns = rp->prof->nodes_n[i].self;
	else
		ns = run->correct ? acct_net(x->self, x->calls, x->calls_made, run->f1_ns, run->f2_ns)
				  : x->self;
	return (ns + 500) / 1000;
}

/* A name as a frame of a folded stack: ';' and line breaks would split it. */
static void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

struct folded_line {
	char *text;
	size_t len;
};

static int cmp_folded(const void *p, const void *q)
{
	const struct folded_line *x = p, *y = q;

	return strcmp(x->text, y->text);
}

/*
 * Collect the folded lines ("a;b;c N") of one set of results into *v (grown
 * as needed), each stack prefixed by `prefix` (or none).
 */
static void folded_collect(const struct report *rp, const char *prefix, struct folded_line **v,
			   size_t *n, size_t *cap)
{
	const struct prof *p = rp->prof;
	uint32_t *path = xcalloc(rp->st->n + 2, sizeof(*path));
	size_t i;

	for (i = 1; i < p->n_nodes; i++) {
		uint64_t val = node_value(rp, i);
		size_t depth = 0;
		uint32_t k;
		FILE *f;

		if (!val)
			continue;
		for (k = (uint32_t)i; k && k != ACCT_NONE && depth < rp->st->n + 1;
		     k = p->nodes[k].parent)
			path[depth++] = k;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*v = xrealloc(*v, *cap * sizeof(**v));
		}
		(*v)[*n].text = NULL;
		f = open_memstream(&(*v)[*n].text, &(*v)[*n].len);
		if (!f)
			continue;
		if (prefix)
			fprintf(f, "%s;", prefix);
		while (depth--) {
			uint32_t r = p->nodes[path[depth]].routine;

			folded_name(f, r < rp->st->n ? rp->names[r] : "?");
			if (depth)
				fputc(';', f);
		}
		fprintf(f, " %" PRIu64 "\n", val);
		fclose(f);
		(*n)++;
	}
	free(path);
}

/* Folded stacks, one line per stack of timed routines, sorted. */
static void write_folded(FILE *out, const struct report *rp, const struct acct *acct)
{
	struct folded_line *v = NULL;
	size_t n = 0, cap = 0, i, t;

	if (!rp->opts->threads) {
		folded_collect(rp, NULL, &v, &n, &cap);
	} else {
		for (t = 0; t < acct_n_threads(acct); t++) {
			struct prof p = prof_thread(acct, rp->run, t);
			struct report tr;
			char prefix[32];

			report_build(&tr, rp->st, &p, rp->run, rp->opts);
			snprintf(prefix, sizeof(prefix), "thread %d", p.tid);
			folded_collect(&tr, prefix, &v, &n, &cap);
			report_free(&tr);
		}
	}
	qsort(v, n, sizeof(*v), cmp_folded);
	for (i = 0; i < n; i++) {
		fwrite(v[i].text, 1, v[i].len, out);
		free(v[i].text);
	}
	free(v);
}

/* A frame of the flame graph. */
struct fnode {
	size_t parent;	   /* SIZE_MAX for the root */
	uint32_t routine;  /* ACCT_NONE: the root or a thread */
	int tid;	   /* a thread's frame: its tid */
	double self, incl; /* microseconds (or calls) */
	double x;	   /* left edge, in the same unit */
	int depth;
	size_t first, next; /* children, sorted by name (SIZE_MAX: none) */
};

struct flame {
	struct fnode *v;
	size_t n, cap;
};

static size_t flame_add(struct flame *fl, size_t parent, uint32_t routine, int tid, double self)
{
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 256;
		fl->v = xrealloc(fl->v, fl->cap * sizeof(*fl->v));
	}
	fl->v[fl->n] = (struct fnode){.parent = parent,
				      .routine = routine,
				      .tid = tid,
				      .self = self,
				      .first = SIZE_MAX,
				      .next = SIZE_MAX};
	return fl->n++;
}

/* Append a calling-context tree under frame `under` (its root becomes `under`). */
static void flame_graft(struct flame *fl, const struct report *rp, size_t under)
{
	const struct prof *p = rp->prof;
	size_t *map = xcalloc(p->n_nodes ? p->n_nodes : 1, sizeof(*map));
	size_t i;

	map[0] = under;
	for (i = 1; i < p->n_nodes; i++) {
		const struct acct_node *x = &p->nodes[i];

		map[i] =
		    flame_add(fl, map[x->parent], x->routine, 0, (double)node_value(rp, i));
	}
	free(map);
}

static const char *flame_name(const struct report *rp, const struct fnode *f, char *buf, size_t len)
{
	if (f->routine != ACCT_NONE && f->routine < rp->st->n)
		return rp->names[f->routine];
	if (f->tid) {
		snprintf(buf, len, "thread %d", f->tid);
		return buf;
	}
	return "all";
}

static const struct report *flame_rp;
static const struct flame *flame_fl;

static int cmp_fnode(const void *p, const void *q)
{
	size_t a = *(const size_t *)p, b = *(const size_t *)q;
	char ba[32], bb[32];
	int c = strcmp(flame_name(flame_rp, &flame_fl->v[a], ba, sizeof(ba)),
		       flame_name(flame_rp, &flame_fl->v[b], bb, sizeof(bb)));

	if (c)
		return c;
	return a < b ? -1 : a > b;
}

/* Inclusive values (children after parents), children sorted by name, x and depth. */
static void flame_layout(struct flame *fl, const struct report *rp)
{
	size_t *kids, *at, *fill, i, k;

	for (i = 0; i < fl->n; i++)
		fl->v[i].incl = fl->v[i].self;
	for (i = fl->n; i-- > 1;)
		fl->v[fl->v[i].parent].incl += fl->v[i].incl;
	at = xcalloc(fl->n + 1, sizeof(*at));
	fill = xcalloc(fl->n + 1, sizeof(*fill));
	kids = xcalloc(fl->n + 1, sizeof(*kids));
	for (i = 1; i < fl->n; i++)
		at[fl->v[i].parent + 1]++;
	for (i = 1; i <= fl->n; i++)
		at[i] += at[i - 1];
	for (i = 1; i < fl->n; i++)
		kids[at[fl->v[i].parent] + fill[fl->v[i].parent]++] = i;
	flame_rp = rp;
	flame_fl = fl;
	for (i = 0; i < fl->n; i++) {
		double x = fl->v[i].x;

		qsort(kids + at[i], at[i + 1] - at[i], sizeof(*kids), cmp_fnode);
		for (k = at[i]; k < at[i + 1]; k++) {
			struct fnode *c = &fl->v[kids[k]];

			c->x = x;
			c->depth = fl->v[i].depth + 1;
			x += c->incl;
		}
	}
	flame_rp = NULL;
	flame_fl = NULL;
	free(kids);
	free(fill);
	free(at);
}

/* Text escaped for XML character data and attribute values. */
static void xml_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	while (*s) {
		size_t n;

		switch (*s) {
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '&':
			fputs("&amp;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fputc(' ', out);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				fputs("&#xfffd;", out);
				break;
			}
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		s++;
	}
}

/* At most `max` characters of name (".." when cut), as SVG text. */
static void xml_fit(FILE *out, const char *name, int max)
{
	size_t keep;
	char *cut;

	if (max < 3)
		return;
	if ((int)strlen(name) <= max) {
		xml_str(out, name);
		return;
	}
	/* cut before a character, not inside a UTF-8 sequence */
	for (keep = (size_t)max - 2; keep > 0 && ((unsigned char)name[keep] & 0xc0) == 0x80; keep--)
		;
	cut = xasprintf("%.*s..", (int)keep, name);
	xml_str(out, cut);
	free(cut);
}

#define SVG_W 1200.0 /* width of the frames' area, px */
#define SVG_PAD 10.0 /* left and right margins */
#define SVG_FH 16    /* frame height */
#define SVG_MINW 0.1 /* frames narrower than this (px) are left out */
#define SVG_CHAR 7.0 /* approximate width of a character of the frames' font */

static const char svg_script[] =
    "var fr=document.getElementsByClassName('f'),det=document.getElementById('details');\n"
    "var W="
    "1200"
    ",P=10,C=7;\n"
    "function num(e,a){return parseFloat(e.getAttribute(a));}\n"
    "function fit(e,w){var t=e.getElementsByTagName('text')[0],n=e.getAttribute('data-n'),"
    "m=Math.floor((w-6)/C);\n"
    "t.textContent=m<3?'':(n.length<=m?n:n.substring(0,m-2)+'..');}\n"
    "function zoom(g){var x=num(g,'data-x'),w=num(g,'data-w'),d=num(g,'data-d');\n"
    "for(var i=0;i<fr.length;i++){var e=fr[i],ex=num(e,'data-x'),ew=num(e,'data-w'),"
    "ed=num(e,'data-d'),r=e.getElementsByTagName('rect')[0],t=e.getElementsByTagName('text')[0];\n"
    "var nx,nw;if(ed>=d&&ex>=x-1e-9&&ex+ew<=x+w+1e-9){nx=(ex-x)/w;nw=ew/w;e.style.opacity=1;}\n"
    "else if(ed<d&&ex<=x+1e-9&&ex+ew>=x+w-1e-9){nx=0;nw=1;e.style.opacity=0.5;}\n"
    "else{e.style.display='none';continue;}\n"
    "e.style.display='';r.setAttribute('x',P+nx*W);r.setAttribute('width',Math.max(nw*W-0.5,0));"
    "t.setAttribute('x',P+nx*W+3);fit(e,nw*W);}}\n"
    "for(var i=0;i<fr.length;i++){(function(e){\n"
    "e.onclick=function(){zoom(e);};\n"
    "e.onmouseover=function(){det.textContent=e.getAttribute('data-i');};\n"
    "e.onmouseout=function(){det.textContent=' ';};})(fr[i]);}\n";

/* A deterministic warm colour for a name, as flame graphs use. */
static void flame_colour(const char *name, int *r, int *g, int *b)
{
	uint32_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	*r = 205 + (int)(h % 50);
	*g = 80 + (int)((h >> 8) % 150);
	*b = 30 + (int)((h >> 16) % 50);
}

static void write_svg(FILE *out, const struct report *rp, const struct acct *acct)
{
	const struct report_run *run = rp->run;
	bool timed = !run->count_only;
	struct flame fl = {0};
	double total;
	int max_depth = 0, height;
	size_t i, t;

	flame_add(&fl, SIZE_MAX, ACCT_NONE, 0, 0);
	if (!rp->opts->threads) {
		flame_graft(&fl, rp, 0);
	} else {
		for (t = 0; t < acct_n_threads(acct); t++) {
			struct prof p = prof_thread(acct, rp->run, t);
			struct report tr;

			report_build(&tr, rp->st, &p, run, rp->opts);
			flame_graft(&fl, &tr, flame_add(&fl, 0, ACCT_NONE, p.tid, 0));
			report_free(&tr);
		}
	}
	flame_layout(&fl, rp);
	total = fl.v[0].incl;
	for (i = 0; i < fl.n; i++)
		if (fl.v[i].incl > 0 && fl.v[i].depth > max_depth)
			max_depth = fl.v[i].depth;
	height = (max_depth + 1) * SVG_FH + 66;

	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n", out);
	fprintf(out,
		"<svg version=\"1.1\" xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%d\" viewBox=\"0 0 %.0f %d\">\n",
		SVG_W + 2 * SVG_PAD, height, SVG_W + 2 * SVG_PAD, height);
	fputs("<style>text{font-family:monospace;font-size:12px;fill:#000}"
	      "g.f{cursor:pointer}g.f:hover rect{stroke:#000;stroke-width:0.5}</style>\n",
	      out);
	fprintf(out, "<rect x=\"0\" y=\"0\" width=\"%.0f\" height=\"%d\" fill=\"#f8f8f0\"/>\n",
		SVG_W + 2 * SVG_PAD, height);
	fprintf(out, "<text x=\"%.0f\" y=\"20\" style=\"font-size:15px\">fortstat: ", SVG_PAD);
	xml_str(out, run->program ? run->program : "?");
	fprintf(out, " (%s; click a frame to zoom, click all to reset)</text>\n",
		timed ? (run->clock && !strcmp(run->clock, "wall") ? "wall time" : "CPU time")
		      : "calls");
	fprintf(out, "<text id=\"details\" x=\"%.0f\" y=\"%d\"> </text>\n", SVG_PAD, height - 10);
	for (i = 0; i < fl.n; i++) {
		const struct fnode *f = &fl.v[i];
		double w = total > 0 ? f->incl / total * SVG_W : 0;
		double x = total > 0 ? SVG_PAD + f->x / total * SVG_W : SVG_PAD;
		int y = height - 34 - (f->depth + 1) * SVG_FH;
		char buf[32];
		const char *name = flame_name(rp, f, buf, sizeof(buf));
		int cr, cg, cb;

		if (!(f->incl > 0) || w < SVG_MINW)
			continue;
		flame_colour(name, &cr, &cg, &cb);
		if (f->routine == ACCT_NONE)
			cr = cg = cb = 200;
		fprintf(out,
			"<g class=\"f\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%d\" data-n=\"",
			f->x / total, f->incl / total, f->depth);
		xml_str(out, name);
		fputs("\" data-i=\"", out);
		xml_str(out, name);
		if (timed)
			fprintf(out, ": %.6f s (%.2f%%), self %.6f s\"", f->incl / 1e6,
				100.0 * f->incl / total, f->self / 1e6);
		else
			fprintf(out, ": %.0f calls (%.2f%%), own %.0f\"", f->incl,
				100.0 * f->incl / total, f->self);
		fputs("><title>", out);
		xml_str(out, name);
		if (timed)
			fprintf(out, " (%.6f s, %.2f%%)", f->incl / 1e6, 100.0 * f->incl / total);
		else
			fprintf(out, " (%.0f calls, %.2f%%)", f->incl, 100.0 * f->incl / total);
		fprintf(out,
			"</title><rect x=\"%.3f\" y=\"%d\" width=\"%.3f\" height=\"%d\" "
			"fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/><text x=\"%.3f\" y=\"%d\">",
			x, y, fmax(w - 0.5, 0), SVG_FH - 1, cr, cg, cb, x + 3, y + 12);
		xml_fit(out, name, (int)((w - 6) / SVG_CHAR));
		fputs("</text></g>\n", out);
	}
	fprintf(out, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
		svg_script);
	free(fl.v);
}

/* ---- callgrind ---- */

/* Sum of the rows' shown self times, each rounded to microseconds. */
static uint64_t sum_shown_us(const struct report *rp)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < rp->n_rows; i++)
		s += (rp->rows[i].shown + 500) / 1000;
	return s;
}

static void cg_pos(FILE *out, const char *key, const struct routine *rt)
{
	fprintf(out, "%s=%s\n", key, rt->file ? rt->file : "???");
}

/*
 * A callgrind profile: per routine its self time (us) and calls, and per
 * arc the calls and the callee's inclusive time along it. Times are
 * rounded to whole microseconds; the summary is the sum of the self costs.
 */
static void write_callgrind_part(FILE *out, const struct report *rp, int part, uint64_t *tot_us,
				 uint64_t *tot_calls)
{
	const struct symtab *st = rp->st;
	bool timed = !rp->run->count_only;
	uint64_t sum_us = 0, sum_calls = 0;
	size_t i, k;
	struct arc_index ix;

	sum_us = timed ? sum_shown_us(rp) : 0;
	sum_calls = rp->calls;
	if (!part)
		fprintf(out, "summary: %" PRIu64 " %" PRIu64 "\n", sum_us, sum_calls);
	*tot_us += sum_us;
	*tot_calls += sum_calls;
	arc_index_build(&ix, rp->prof, st->n);
	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct routine *rt = &st->r[r->idx];

		fputc('\n', out);
		if (rp->prof->tid)
			fprintf(out, "ob=thread %d\n", rp->prof->tid);
		cg_pos(out, "fl", rt);
		fprintf(out, "fn=%s\n", r->name);
		fprintf(out, "%d %" PRIu64 " %" PRIu64 "\n", rt->line > 0 ? rt->line : 0,
			timed ? (r->shown + 500) / 1000 : 0, r->calls);
		for (k = ix.caller_at[r->idx]; k < ix.caller_at[r->idx + 1]; k++) {
			const struct acct_arc *a = ix.by_caller[k];
			const struct routine *ct;

			if (!selected(st, a->callee))
				continue;
			ct = &st->r[a->callee];
			if (rp->prof->tid)
				fprintf(out, "cob=thread %d\n", rp->prof->tid);
			cg_pos(out, "cfi", ct);
			fprintf(out, "cfn=%s\n", rp->names[a->callee]);
			fprintf(out, "calls=%" PRIu64 " %d\n", a->calls,
				ct->line > 0 ? ct->line : 0);
			fprintf(out, "%d %" PRIu64 " %" PRIu64 "\n", rt->line > 0 ? rt->line : 0,
				timed ? (uint64_t)(arc_time_s(rp, a) * 1e6 + 0.5) : 0, a->calls);
		}
	}
	arc_index_free(&ix);
}

static void write_callgrind(FILE *out, const struct report *rp, const struct acct *acct)
{
	const struct report_run *run = rp->run;
	uint64_t us = 0, calls = 0;
	size_t i, t;

	fputs("# callgrind format\nversion: 1\ncreator: fortstat " PACKAGE_VERSION "\n", out);
	fputs("cmd:", out);
	for (i = 0; run->argv && run->argv[i]; i++) {
		fputc(' ', out);
		folded_name(out, run->argv[i]);
	}
	if (!run->argv && run->program)
		fprintf(out, " %s", run->program);
	fputs("\npositions: line\n", out);
	fputs("event: us : self time (microseconds)\nevent: calls : calls\nevents: us calls\n",
	      out);
	if (!rp->opts->threads) {
		write_callgrind_part(out, rp, 0, &us, &calls);
	} else {
		/* each thread's routines in an "object" of their own: KCachegrind keeps them apart
		 */
		fprintf(out, "summary: %" PRIu64 " %" PRIu64 "\n",
			rp->run->count_only ? 0 : sum_shown_us(rp), rp->calls);
		for (t = 0; t < acct_n_threads(acct); t++) {
			struct prof p = prof_thread(acct, rp->run, t);
			struct report tr;

			report_build(&tr, rp->st, &p, run, rp->opts);
			write_callgrind_part(out, &tr, (int)t + 1, &us, &calls);
			report_free(&tr);
		}
	}
	fprintf(out, "\ntotals: %" PRIu64 " %" PRIu64 "\n", us, calls);
}

/*
 * Write the report of acct over st in opts->format to out. Returns 0,
 * -EINVAL when st and acct disagree on the number of routines, or the
 * negative errno of a write error (out is flushed and checked).
 */
int report_write(FILE *out, const struct symtab *st, const struct acct *acct,
		 const struct report_run *run, const struct report_opts *opts)
{
	struct report rp;
	struct prof all;

	if (!out || !st || !acct || !run || !opts || acct_n_routines(acct) != st->n)
		return -EINVAL;
	all = prof_all(acct, run);
	report_build(&rp, st, &all, run, opts);
	switch (opts->format) {
	case FMT_CSV:
		write_csv(out, &rp, acct);
		break;
	case FMT_JSON:
		write_json(out, &rp, acct);
		break;
	case FMT_FOLDED:
		write_folded(out, &rp, acct);
		break;
	case FMT_CALLGRIND:
		write_callgrind(out, &rp, acct);
		break;
	case FMT_TABLE:
	default:
		write_table(out, &rp, acct);
		break;
	}
	report_free(&rp);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* The SVG flame graph of acct over st to out: 0, -EINVAL, or a write error's negative errno. */
int report_write_svg(FILE *out, const struct symtab *st, const struct acct *acct,
		     const struct report_run *run, const struct report_opts *opts)
{
	struct report rp;
	struct prof all;

	if (!out || !st || !acct || !run || !opts || acct_n_routines(acct) != st->n)
		return -EINVAL;
	all = prof_all(acct, run);
	report_build(&rp, st, &all, run, opts);
	write_svg(out, &rp, acct);
	report_free(&rp);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* "table", "csv", "json", "folded" or "callgrind" into *f: 0, or -1 (f untouched) otherwise. */
int report_parse_format(const char *s, enum report_format *f)
{
	if (!s)
		return -1;
	if (!strcmp(s, "table"))
		*f = FMT_TABLE;
	else if (!strcmp(s, "csv"))
		*f = FMT_CSV;
	else if (!strcmp(s, "json"))
		*f = FMT_JSON;
	else if (!strcmp(s, "folded"))
		*f = FMT_FOLDED;
	else if (!strcmp(s, "callgrind"))
		*f = FMT_CALLGRIND;
	else
		return -1;
	return 0;
}

/* "time", "calls" or "name" into *s_out: 0, or -1 (untouched) for anything else. */
int report_parse_sort(const char *s, enum report_sort *s_out)
{
	if (!s)
		return -1;
	if (!strcmp(s, "time"))
		*s_out = SORT_TIME;
	else if (!strcmp(s, "calls"))
		*s_out = SORT_CALLS;
	else if (!strcmp(s, "name"))
		*s_out = SORT_NAME;
	else
		return -1;
	return 0;
}
