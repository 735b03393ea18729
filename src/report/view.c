// SPDX-License-Identifier: GPL-2.0-or-later
/* view.c - what the report writers share: rows of one set of results, sorted and corrected. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"
#include "view.h"

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
struct prof prof_thread(const struct acct *acct, const struct report_run *run, size_t i)
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

int cmp_name(const struct row *x, const struct row *y)
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

void report_build(struct report *rp, const struct symtab *st, const struct prof *prof,
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

void report_free(struct report *rp)
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

static size_t arc_slot(uint32_t r, size_t n)
{
	return r == ACCT_NONE || r >= n ? n : r;
}

void arc_index_build(struct arc_index *ix, const struct prof *p, size_t n)
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

void arc_index_free(struct arc_index *ix)
{
	free(ix->by_caller);
	free(ix->by_callee);
	free(ix->caller_at);
	free(ix->callee_at);
}

/* The callee's self time along an arc, shown: its share of the callee's shown self time. */
double arc_self_s(const struct report *rp, const struct acct_arc *a)
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
double arc_time_s(const struct report *rp, const struct acct_arc *a)
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
/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
size_t utf8_len(const unsigned char *s)
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
/* A node's value: microseconds of shown self time, or calls when no clock ran. */
uint64_t node_value(const struct report *rp, size_t i)
{
	const struct report_run *run = rp->run;
	const struct acct_node *x = &rp->prof->nodes[i];
	acct_time_t ns;

	if (run->count_only)
		return x->calls;
	if (run->correct && rp->prof->nodes_n)
		ns = rp->prof->nodes_n[i].self;
	else
		ns = run->correct
			 ? acct_net(x->self, x->calls, x->calls_made, run->f1_ns, run->f2_ns)
			 : x->self;
	return (ns + 500) / 1000;
}

/* A name as a frame of a folded stack: ';' and line breaks would split it. */
void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
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
