// SPDX-License-Identifier: GPL-2.0-or-later
/* view.c - what the report writers share: rows of one set of results, sorted, and their helpers. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/usage.h"
#include "fortstat/util.h"
#include "view.h"

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

static int cmp_wait(const void *p, const void *q)
{
	const struct row *x = p, *y = q;

	if (x->wait != y->wait)
		return x->wait > y->wait ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_names(const void *p, const void *q)
{
	return cmp_name(p, q);
}

/* One row of routine i of the set. */
static void row_of(const struct report *rp, size_t i, struct row *w)
{
	const struct profile_routine *rt = &rp->sec->routines[i];
	const struct profile_stats *s = &rp->set->r[i];

	w->idx = i;
	w->name = rt->name;
	w->calls = s->calls;
	w->gross = s->gross_self[rp->c];
	w->overhead = s->overhead[rp->c];
	w->shown = s->self[rp->c];
	w->incl = s->total[rp->c];
	w->cpu = s->self[CLOCK_KIND_CPU];
	w->wall = s->self[CLOCK_KIND_WALL];
	w->wait = rp->sec->clock_known[CLOCK_KIND_CPU] && rp->sec->clock_known[CLOCK_KIND_WALL]
		      ? usage_wait_ns(w->wall, w->cpu)
		      : 0;
	w->incomplete = s->incomplete;
	w->mainline = rt->mainline;
	w->unc = rp->timed ? s->self_unc[rp->c] : 0;
	w->uncertain = rp->timed && acct_uncertain(w->shown, w->unc);
}

void report_build(struct report *rp, const struct profile *p, const struct profile_section *sec,
		  const struct profile_set *set, const struct report_opts *opts)
{
	enum report_sort sort = opts->sort;
	int (*cmp)(const void *, const void *) = cmp_time;
	size_t i;

	memset(rp, 0, sizeof(*rp));
	rp->p = p;
	rp->sec = sec;
	rp->set = set;
	rp->opts = opts;
	rp->c = opts->clock == CLOCK_KIND_WALL ? CLOCK_KIND_WALL : CLOCK_KIND_CPU;
	rp->timed = !sec->count_only;
	rp->rows = xcalloc(sec->n_routines ? sec->n_routines : 1, sizeof(*rp->rows));
	for (i = 0; i < sec->n_routines; i++) {
		struct row *w;

		if (!sec->routines[i].selected || (!set->r[i].calls && !opts->zeros))
			continue;
		w = &rp->rows[rp->n_rows++];
		row_of(rp, i, w);
		rp->calls += w->calls;
		rp->n_uncertain += w->uncertain;
		rp->sum_s += secs(w->shown);
		if (w->overhead >= 0)
			rp->overhead_s += secs((acct_time_t)w->overhead);
		else /* negative factors */
			rp->overhead_s -= secs((acct_time_t)-w->overhead);
	}
	if (sec->count_only && (sort == SORT_TIME || sort == SORT_WAIT))
		sort = SORT_CALLS; /* no times: the most called first */
	if (sort == SORT_CALLS)
		cmp = cmp_calls;
	else if (sort == SORT_NAME)
		cmp = cmp_names;
	else if (sort == SORT_WAIT)
		cmp = cmp_wait;
	qsort(rp->rows, rp->n_rows, sizeof(*rp->rows), cmp);
	/*
	 * The overhead removed from the routines was part of the program's
	 * time, and so was what the probes or stops of calls from untimed code
	 * cost that code (the threads' clocks less all their stops' cost).
	 */
	if (sec->overhead_all_s[rp->c] > rp->overhead_s)
		rp->overhead_s = sec->overhead_all_s[rp->c];
	if (p->correct && rp->timed)
		rp->overhead_unc_s =
		    acct_net_uncertainty(rp->calls, rp->calls, p->df1_ns[rp->c], p->df2_ns[rp->c]) /
		    1e9;
	rp->total_s = sec->total_s[rp->c];
	if (p->correct && !sec->count_only && rp->overhead_s < rp->total_s)
		rp->total_s -= rp->overhead_s;
	rp->denom_s = rp->total_s > 0 ? rp->total_s : rp->sum_s;
	rp->unaccounted_s = rp->total_s - rp->sum_s;
	if (fabs(rp->unaccounted_s) < 5e-10)
		rp->unaccounted_s = 0; /* no "-0.000000" from rounding */
}

void report_trust(const struct report *rp, struct trust *t)
{
	const struct profile_section *sec = rp->sec;
	struct trust_facts f = {.timed = rp->timed,
				.correct = rp->p->correct,
				.probes = sec->probes,
				.total_s = rp->total_s,
				.unaccounted_s = rp->unaccounted_s,
				.overhead_s = rp->overhead_s,
				.calls = rp->calls,
				.trap_calls = sec->trap_calls,
				.trap_cost_s = sec->trap_cost_s[rp->c],
				.not_followed = sec->not_followed,
				.stripped = sec->stripped,
				.program = sec->label,
				.pid = sec->attached ? sec->pid : 0,
				.needed = sec->needed,
				.n_needed = sec->n_needed,
				.libs = (const char *const *)rp->p->libs,
				.n_libs = rp->p->n_libs};

	trust_judge(&f, t);
}

void report_free(struct report *rp)
{
	free(rp->rows);
	rp->rows = NULL;
	rp->n_rows = 0;
}

static size_t arc_slot(uint32_t r, size_t n)
{
	return r == PROFILE_NONE || r >= n ? n : r;
}

void arc_index_build(struct arc_index *ix, const struct profile_set *p, size_t n)
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

/* A node's value: microseconds of shown self time, or calls when no clock ran. */
uint64_t node_value(const struct report *rp, size_t i)
{
	const struct profile_node *x = &rp->set->nodes[i];

	if (!rp->timed)
		return x->calls;
	return (x->self[rp->c] + 500) / 1000;
}

/* A name as a frame of a folded stack: ';' and line breaks would split it. */
void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

char *report_warning(const struct profile *p, size_t sec, const struct report_opts *opts)
{
	struct report rp;
	struct trust t;
	char *w;

	if (!p || !opts || sec >= p->n_sections)
		return NULL;
	report_build(&rp, p, &p->sections[sec], &p->sections[sec].all, opts);
	report_trust(&rp, &t);
	w = t.warning;
	t.warning = NULL;
	trust_free(&t);
	report_free(&rp);
	return w;
}

void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*s) {
		size_t n = 0;

		/* a run of printable ASCII that needs no escape, in one call (C++ names) */
		while (s[n] >= 0x20 && s[n] < 0x7f && s[n] != '"' && s[n] != '\\')
			n++;
		if (n) {
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
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

/* ---- a merge's views ---- */

void mview_of(struct mview *v, const struct profile *p)
{
	const struct profile_section *sec = &p->sections[0];

	*v = (struct mview){.p = p,
			    .rt = sec->routines,
			    .ms = sec->merged,
			    .n_r = sec->n_routines,
			    .in = p->inputs,
			    .n_in = p->n_inputs,
			    .arcs = sec->all.arcs,
			    .n_arcs = sec->all.n_arcs,
			    .nodes = sec->all.nodes,
			    .n_nodes = sec->all.n_nodes,
			    .program = sec->label,
			    .clock = p->merged_clock,
			    .count_only = sec->count_only,
			    .no_stacks = p->merged_no_stacks,
			    .c = merge_clock(p->merged_clock)};
}

double mean_of(const struct mview *m, const struct profile_spread *s)
{
	return s->sum / (double)m->n_in;
}

double min_of(const struct mview *m, const struct profile_spread *s)
{
	return s->seen < m->n_in && s->min > 0 ? 0 : s->min;
}

double max_of(const struct mview *m, const struct profile_spread *s)
{
	return s->seen < m->n_in && s->max < 0 ? 0 : s->max;
}

long input_label(const struct mview *m, uint32_t i)
{
	return m->in[i].rank >= 0 ? m->in[i].rank : (long)i;
}

bool all_ranked(const struct mview *m)
{
	for (size_t i = 0; i < m->n_in; i++)
		if (m->in[i].rank < 0)
			return false;
	return true;
}

static int cmp_rows(const void *p, const void *q, void *arg)
{
	const struct mview *m = ((void **)arg)[0];
	const struct report_opts *o = ((void **)arg)[1];
	uint32_t i = *(const uint32_t *)p, k = *(const uint32_t *)q;
	const struct profile_merged *x = &m->ms[i], *y = &m->ms[k];
	double a = 0, b = 0;

	if (o->sort == SORT_TIME && !m->count_only)
		a = x->self.sum, b = y->self.sum;
	else if (o->sort != SORT_NAME)
		a = x->calls.sum, b = y->calls.sum;
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(m->rt[i].name, m->rt[k].name);
}

uint32_t *sorted_rows(const struct mview *m, const struct report_opts *opts, size_t *n)
{
	uint32_t *v = xcalloc(m->n_r + 1, sizeof(*v));
	const void *arg[2] = {m, opts};

	*n = 0;
	for (size_t i = 0; i < m->n_r; i++)
		if (m->ms[i].calls.seen)
			v[(*n)++] = (uint32_t)i;
	qsort_r(v, *n, sizeof(*v), cmp_rows, (void *)arg);
	return v;
}
