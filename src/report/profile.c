// SPDX-License-Identifier: GPL-2.0-or-later
/* profile.c - the report model built from the books: shown and gross times on both clocks. */
#include "fortstat/profile.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/books.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"

/* One set of results of one clock: gross, and net (NULLs: from the formula). */
struct clock_set {
	const struct acct_routine *r, *rn;
	const struct acct_arc *arcs, *arcs_n;
	size_t n_arcs;
	const struct acct_node *nodes, *nodes_n;
	size_t n_nodes;
};

/* What building one set needs: the run's correction, per clock its results. */
struct builder {
	const struct profile *p;
	size_t n;		 /* routines */
	bool known[FS_N_CLOCKS]; /* the clocks whose states were given */
	int first;		 /* the first clock known: the structure comes from it */
	struct clock_set cs[FS_N_CLOCKS];
};

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

struct profile *profile_new(char *const *argv, const double f1_ns[FS_N_CLOCKS],
			    const double f2_ns[FS_N_CLOCKS], uint64_t stops_measured, bool correct)
{
	struct profile *p = xcalloc(1, sizeof(*p));
	size_t n = 0;

	if (argv) {
		while (argv[n])
			n++;
		p->argv = xcalloc(n + 1, sizeof(*p->argv));
		for (size_t i = 0; i < n; i++)
			p->argv[i] = xstrdup(argv[i]);
	}
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		p->f1_ns[c] = f1_ns ? f1_ns[c] : 0;
		p->f2_ns[c] = f2_ns ? f2_ns[c] : 0;
	}
	p->stops_measured = stops_measured;
	p->correct = correct;
	return p;
}

static void set_free(struct profile_set *s)
{
	free(s->r);
	free(s->arcs);
	free(s->nodes);
}

static void section_free(struct profile_section *sec)
{
	for (size_t i = 0; i < sec->n_routines; i++) {
		struct profile_routine *rt = &sec->routines[i];

		free(rt->name);
		free(rt->module);
		for (size_t k = 0; k < rt->n_aliases; k++)
			free(rt->aliases[k]);
		free(rt->aliases);
		free(rt->file);
	}
	free(sec->alloc);
	free(sec->alloc_ctx);
	free(sec->merged);
	free(sec->routines);
	set_free(&sec->all);
	for (size_t t = 0; t < sec->n_threads; t++)
		set_free(&sec->threads[t]);
	free(sec->threads);
	free(sec->label);
	free(sec->note);
	free(sec->active);
	for (size_t i = 0; i < sec->n_needed; i++)
		free(sec->needed[i]);
	free(sec->needed);
	for (size_t i = 0; i < sec->n_lines; i++)
		free(sec->lines[i].file);
	free(sec->lines);
	free(sec->line_at);
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n_sections; i++)
		section_free(&p->sections[i]);
	free(p->sections);
	if (p->argv)
		for (size_t i = 0; p->argv[i]; i++)
			free(p->argv[i]);
	free(p->argv);
	for (size_t i = 0; i < p->n_libs; i++)
		free(p->libs[i]);
	free(p->libs);
	for (size_t i = 0; i < p->n_inputs; i++)
		free(p->inputs[i].file);
	free(p->inputs);
	free(p->merged_clock);
	free(p);
}

void profile_set_spread(struct profile *p, const double df1_ns[FS_N_CLOCKS],
			const double df2_ns[FS_N_CLOCKS])
{
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		p->df1_ns[c] = df1_ns ? df1_ns[c] : 0;
		p->df2_ns[c] = df2_ns ? df2_ns[c] : 0;
	}
}

void profile_set_libs(struct profile *p, const char *const *libs, size_t n)
{
	for (size_t i = 0; i < p->n_libs; i++)
		free(p->libs[i]);
	free(p->libs);
	p->libs = n ? xcalloc(n, sizeof(*p->libs)) : NULL;
	p->n_libs = n;
	for (size_t i = 0; i < n; i++)
		p->libs[i] = xstrdup(libs[i] ? libs[i] : "");
}

/* What a routine is, from its symbol-table entry. */
static void routine_from(struct profile_routine *pr, const struct routine *rt)
{
	if (rt->display && rt->display[0])
		pr->name = xstrdup(rt->display);
	else if (rt->n_names && rt->names[0] && rt->names[0][0])
		pr->name = xstrdup(rt->names[0]);
	else
		pr->name = xasprintf("0x%" PRIx64, rt->addr);
	pr->module = dup_or_null(rt->module);
	pr->n_aliases = rt->n_names;
	pr->aliases = xcalloc(rt->n_names ? rt->n_names : 1, sizeof(*pr->aliases));
	for (size_t k = 0; k < rt->n_names; k++)
		pr->aliases[k] = xstrdup(rt->names[k] ? rt->names[k] : "");
	pr->addr = rt->addr;
	pr->file = dup_or_null(rt->file);
	pr->line = rt->line;
	pr->mainline = rt->flags & RT_MAINLINE;
	pr->selected = (rt->flags & RT_SELECTED) && !(rt->flags & RT_ALLOC); /* --alloc's: no row */
	pr->throttled_at = rt->throttled_at;
	pr->calls_lower = rt->calls_lower;
	pr->throttle_carried = rt->throttle_carried;
}

/* Routine i's results on every clock. */
static void stats_of(const struct builder *bd, size_t i, struct profile_stats *s)
{
	const struct profile *p = bd->p;

	s->calls = bd->cs[bd->first].r[i].calls;
	s->calls_made = bd->cs[bd->first].r[i].calls_made;
	s->incomplete = bd->cs[bd->first].r[i].incomplete;
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		const struct acct_routine *g, *n;
		acct_time_t net, incl;

		if (!bd->known[c])
			continue;
		g = &bd->cs[c].r[i];
		n = bd->cs[c].rn ? &bd->cs[c].rn[i] : NULL;

		net = n ? n->self
			: acct_net(g->self, g->calls, g->calls_made, p->f1_ns[c], p->f2_ns[c]);
		incl = n ? n->total
			 : acct_net(g->total, g->total_entries, g->total_calls_made, p->f1_ns[c],
				    p->f2_ns[c]);
		s->gross_self[c] = g->self;
		s->gross_total[c] = g->total;
		s->self[c] = p->correct ? net : g->self;
		s->total[c] = p->correct ? incl : g->total;
		s->overhead[c] = (int64_t)g->self - (int64_t)net;
		s->self_unc[c] = p->correct ? acct_net_uncertainty(g->calls, g->calls_made,
								   p->df1_ns[c], p->df2_ns[c])
					    : 0;
	}
}

/* Index of the arc caller->callee among arcs (hint first: the states saw the same events). */
static const struct acct_arc *arc_find(const struct acct_arc *arcs, size_t n, size_t hint,
				       uint32_t caller, uint32_t callee)
{
	if (hint < n && arcs[hint].caller == caller && arcs[hint].callee == callee)
		return &arcs[hint];
	for (size_t k = 0; k < n; k++)
		if (arcs[k].caller == caller && arcs[k].callee == callee)
			return &arcs[k];
	return NULL;
}

/*
 * The callee's shown time along arc k on clock c: the net arc's when kept,
 * else the arc's share of the callee's gross time, scaled as its shown time.
 */
static void arc_times(const struct builder *bd, int c, const struct profile_stats *callee, size_t k,
		      struct profile_arc *pa)
{
	const struct clock_set *cs = &bd->cs[c];
	const struct acct_arc *a = NULL;

	if (bd->known[c])
		a = arc_find(cs->arcs, cs->n_arcs, k, pa->caller, pa->callee);

	pa->self_s[c] = pa->time_s[c] = 0;
	if (!bd->known[c] || !a)
		return;
	if (cs->arcs_n) {
		pa->self_s[c] = (double)cs->arcs_n[a - cs->arcs].self / 1e9;
		pa->time_s[c] = (double)cs->arcs_n[a - cs->arcs].time / 1e9;
		return;
	}
	if (callee->gross_self[c]) {
		if (a->self == callee->gross_self[c])
			pa->self_s[c] = (double)callee->self[c] / 1e9;
		else
			pa->self_s[c] = (double)a->self / 1e9 *
					((double)callee->self[c] / (double)callee->gross_self[c]);
	}
	if (callee->gross_total[c]) {
		if (a->time == callee->gross_total[c])
			pa->time_s[c] = (double)callee->total[c] / 1e9;
		else
			pa->time_s[c] = (double)a->time / 1e9 *
					((double)callee->total[c] / (double)callee->gross_total[c]);
	}
}

/* Node k's shown self time on clock c. */
static acct_time_t node_self(const struct builder *bd, int c, size_t k)
{
	const struct clock_set *cs = &bd->cs[c];
	const struct acct_node *x;

	if (!bd->known[c] || k >= cs->n_nodes)
		return 0;
	if (cs->nodes_n)
		return cs->nodes_n[k].self;
	x = &cs->nodes[k];
	if (!bd->p->correct)
		return x->self;
	return acct_net(x->self, x->calls, x->calls_made, bd->p->f1_ns[c], bd->p->f2_ns[c]);
}

/* One set of results from bd (the structure from the first known clock's gross state). */
static void set_build(const struct builder *bd, int tid, struct profile_set *s)
{
	const struct clock_set *cpu = &bd->cs[bd->first];

	s->tid = tid;
	s->r = xcalloc(bd->n ? bd->n : 1, sizeof(*s->r));
	for (size_t i = 0; i < bd->n; i++)
		stats_of(bd, i, &s->r[i]);
	s->n_arcs = cpu->n_arcs;
	s->arcs = xcalloc(s->n_arcs ? s->n_arcs : 1, sizeof(*s->arcs));
	for (size_t k = 0; k < s->n_arcs; k++) {
		struct profile_arc *pa = &s->arcs[k];
		const struct profile_stats *callee;

		pa->caller = cpu->arcs[k].caller == ACCT_NONE ? PROFILE_NONE : cpu->arcs[k].caller;
		pa->callee = cpu->arcs[k].callee;
		pa->calls = cpu->arcs[k].calls;
		if (pa->callee >= bd->n)
			continue;
		callee = &s->r[pa->callee];
		for (int c = 0; c < FS_N_CLOCKS; c++)
			arc_times(bd, c, callee, k, pa);
	}
	s->n_nodes = cpu->n_nodes;
	s->nodes = xcalloc(s->n_nodes ? s->n_nodes : 1, sizeof(*s->nodes));
	for (size_t k = 0; k < s->n_nodes; k++) {
		const struct acct_node *x = &cpu->nodes[k];
		struct profile_node *pn = &s->nodes[k];

		pn->parent = x->parent == ACCT_NONE ? PROFILE_NONE : x->parent;
		pn->routine = x->routine == ACCT_NONE ? PROFILE_NONE : x->routine;
		pn->calls = x->calls;
		pn->calls_made = x->calls_made;
		for (int c = 0; c < FS_N_CLOCKS; c++)
			pn->self[c] = node_self(bd, c, k);
	}
}

/* The whole process's results of one clock; the net ones only when they match. */
static void clock_set_all(struct clock_set *cs, const struct acct *g, const struct acct *n)
{
	size_t k;

	memset(cs, 0, sizeof(*cs));
	cs->r = acct_routines(g);
	cs->arcs = acct_arcs(g, &cs->n_arcs);
	cs->nodes = acct_nodes(g, &cs->n_nodes);
	if (!n)
		return;
	cs->rn = acct_routines(n);
	cs->arcs_n = acct_arcs(n, &k);
	if (k != cs->n_arcs)
		cs->arcs_n = NULL;
	cs->nodes_n = acct_nodes(n, &k);
	if (k != cs->n_nodes)
		cs->nodes_n = NULL;
}

/* Thread i's results of one clock; -1 when the state has no thread i of that tid. */
static int clock_set_thread(struct clock_set *cs, const struct acct *g, const struct acct *n,
			    size_t i, int *tid)
{
	struct acct_thread_info ti, tn;

	memset(cs, 0, sizeof(*cs));
	if (acct_thread(g, i, &ti) < 0 || (*tid && ti.tid != *tid))
		return -1;
	*tid = ti.tid;
	cs->r = ti.r;
	cs->arcs = ti.arcs;
	cs->n_arcs = ti.n_arcs;
	cs->nodes = ti.nodes;
	cs->n_nodes = ti.n_nodes;
	if (n && acct_thread(n, i, &tn) == 0 && tn.tid == ti.tid) {
		cs->rn = tn.r;
		cs->arcs_n = tn.n_arcs == ti.n_arcs ? tn.arcs : NULL;
		cs->nodes_n = tn.n_nodes == ti.n_nodes ? tn.nodes : NULL;
	}
	return 0;
}

/* Every thread's results; a thread one clock does not know (never expected) is left out. */
static void threads_build(struct builder *bd, struct profile_section *sec,
			  const struct acct *const gross[FS_N_CLOCKS],
			  const struct acct *const net[FS_N_CLOCKS])
{
	size_t n = acct_n_threads(gross[bd->first]);

	sec->threads = xcalloc(n ? n : 1, sizeof(*sec->threads));
	for (size_t i = 0; i < n; i++) {
		int tid = 0, c, ok = 1;

		for (c = 0; c < FS_N_CLOCKS; c++)
			if (bd->known[c] &&
			    clock_set_thread(&bd->cs[c], gross[c], net[c], i, &tid) < 0)
				ok = 0;
		if (ok)
			set_build(bd, tid, &sec->threads[sec->n_threads++]);
	}
}

/* The process's usage and its threads' from the facts (profile_facts.usage). */
static void usage_build(struct profile_section *sec, const struct profile_facts *f)
{
	struct profile_usage *all = &sec->all.usage;

	sec->n_cpus = f->n_cpus;
	if (!f->usage)
		return;
	all->known = true;
	all->elapsed_s = f->total_s[CLOCK_KIND_WALL];
	for (size_t i = 0; i < f->n_usage; i++) {
		const struct profile_thread_usage *u = &f->usage[i];

		all->user_s += u->user_s;
		all->sys_s += u->sys_s;
		for (size_t t = 0; t < sec->n_threads; t++) {
			struct profile_usage *tu = &sec->threads[t].usage;

			if (sec->threads[t].tid != u->tid)
				continue;
			tu->known = true;
			tu->user_s += u->user_s;
			tu->sys_s += u->sys_s;
			tu->elapsed_s += u->elapsed_s;
		}
	}
}

int profile_add_accts(struct profile *p, const struct profile_facts *f, const struct symtab *st,
		      const struct acct *const gross[FS_N_CLOCKS],
		      const struct acct *const net[FS_N_CLOCKS])
{
	const struct acct *nets[FS_N_CLOCKS] = {NULL, NULL};
	struct profile_section *sec;
	struct builder bd = {.p = p, .n = st ? st->n : 0};
	int c;

	if (!p || !f || !st || !gross || (!gross[0] && !gross[1]))
		return -EINVAL;
	for (c = FS_N_CLOCKS - 1; c >= 0; c--) {
		bd.known[c] = gross[c] != NULL;
		if (!gross[c])
			continue;
		bd.first = c;
		if (acct_n_routines(gross[c]) != st->n)
			return -EINVAL;
		if (net && net[c] && p->correct) {
			if (acct_n_routines(net[c]) != st->n)
				return -EINVAL;
			nets[c] = net[c];
		}
	}
	p->sections = xrealloc(p->sections, (p->n_sections + 1) * sizeof(*p->sections));
	sec = &p->sections[p->n_sections++];
	memset(sec, 0, sizeof(*sec));
	sec->label = dup_or_null(f->label);
	sec->pid = f->pid;
	sec->exit_status = f->exit_status;
	sec->term_signal = f->term_signal;
	sec->running = f->running;
	for (c = 0; c < FS_N_CLOCKS; c++) {
		sec->total_s[c] = f->total_s[c];
		sec->clock_known[c] = bd.known[c];
	}
	sec->count_only = f->count_only;
	sec->probes = f->probes;
	sec->probe_events = f->probe_events;
	sec->trap_calls = f->trap_calls;
	sec->not_followed = f->not_followed;
	for (c = 0; c < FS_N_CLOCKS; c++) {
		sec->trap_cost_s[c] = f->trap_cost_s[c];
		sec->overhead_all_s[c] = f->overhead_all_s[c];
	}
	sec->cs_lost_windows = f->cs_lost_windows;
	sec->cs_lost_records = f->cs_lost_records;
	memcpy(sec->cs_lost_tids, f->cs_lost_tids, sizeof(sec->cs_lost_tids));
	sec->stripped = f->stripped;
	sec->n_needed = f->needed ? f->n_needed : 0;
	sec->needed = xcalloc(sec->n_needed ? sec->n_needed : 1, sizeof(*sec->needed));
	for (size_t i = 0; i < sec->n_needed; i++)
		sec->needed[i] = xstrdup(f->needed[i] ? f->needed[i] : "");
	sec->note = dup_or_null(f->note);
	sec->attached = f->attached;
	sec->detached = f->detached;
	sec->active = dup_or_null(f->active);
	sec->n_routines = st->n;
	sec->routines = xcalloc(st->n ? st->n : 1, sizeof(*sec->routines));
	for (size_t i = 0; i < st->n; i++)
		routine_from(&sec->routines[i], &st->r[i]);
	for (c = 0; c < FS_N_CLOCKS; c++)
		if (bd.known[c])
			clock_set_all(&bd.cs[c], gross[c], nets[c]);
	set_build(&bd, 0, &sec->all);
	threads_build(&bd, sec, gross, nets);
	usage_build(sec, f);
	return 0;
}

int profile_add_books(struct profile *p, const struct profile_facts *f, const struct symtab *st,
		      const struct books *b)
{
	const struct acct *gross[FS_N_CLOCKS], *net[FS_N_CLOCKS];
	int rc;

	if (!b)
		return -EINVAL;
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		gross[c] = books_acct(b, (enum clock_kind)c, false);
		net[c] = books_acct(b, (enum clock_kind)c, true);
	}
	rc = profile_add_accts(p, f, st, gross, net);
	if (!rc)
		profile_set_alloc(p, books_alloc_books(b));
	return rc;
}

void profile_set_alloc(struct profile *p, const struct alloc_books *m)
{
	const struct alloc_ctx *ctx;
	struct profile_section *sec;
	size_t n;

	if (!m || !p->n_sections)
		return;
	sec = &p->sections[p->n_sections - 1];
	n = alloc_n_routines(m) < sec->n_routines ? alloc_n_routines(m) : sec->n_routines;
	free(sec->alloc);
	sec->alloc = xcalloc(sec->n_routines ? sec->n_routines : 1, sizeof(*sec->alloc));
	if (n)
		memcpy(sec->alloc, alloc_routines(m), n * sizeof(*sec->alloc));
	alloc_totals(m, &sec->alloc_total);
	ctx = alloc_contexts(m, &n);
	free(sec->alloc_ctx);
	sec->alloc_ctx = xcalloc(n ? n : 1, sizeof(*sec->alloc_ctx));
	sec->n_alloc_ctx = n;
	for (size_t i = 0; i < n; i++) { /* a context of a routine out of range: the root's */
		sec->alloc_ctx[i] = ctx[i];
		if (i && (ctx[i].routine >= sec->n_routines || ctx[i].parent >= i))
			sec->alloc_ctx[i].routine = PROFILE_NONE;
	}
	if (sec->alloc_total.peak_routine >= sec->n_routines)
		sec->alloc_total.peak_routine = PROFILE_NONE;
}
