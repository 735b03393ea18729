// SPDX-License-Identifier: GPL-2.0-or-later
/* merge.c - fortstat --merge: JSON reports of ranks or runs folded into min/mean/max/sum. */
#include "fortstat/merge.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fortstat/jsonin.h"
#include "fortstat/map.h"
#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "merge_int.h"
#include "xml.h"

struct merge *merge_new(void)
{
	struct merge *m = xcalloc(1, sizeof(*m));

	m->nodes = xcalloc(1, sizeof(*m->nodes));
	m->nodes[0].parent = m->nodes[0].routine = NONE;
	m->n_nodes = 1;
	return m;
}

void merge_free(struct merge *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->n_in; i++)
		free(m->in[i].file);
	for (size_t i = 0; i < m->n_r; i++) {
		free(m->r[i].name);
		free(m->r[i].file);
	}
	free(m->in);
	free(m->program);
	free(m->clock);
	free(m->r);
	free(m->arcs);
	free(m->nodes);
	free(m->touched);
	free(m->path);
	free(m->rt_hint);
	free(m->arc_hint);
	free(m->st_hint);
	free(m->rn);
	free(m->names);
	u64map_free(&m->arc_at);
	u64map_free(&m->child_at);
	json_free(&m->spare);
	free(m);
}

size_t merge_n_inputs(const struct merge *m)
{
	return m->n_in;
}

/* ---- checking one report ---- */

static bool is_num_or_null(const struct json_node *v)
{
	double d;

	if (!v || v->type == JSON_NULL)
		return v != NULL;
	/* the grammar was checked: without an exponent and short, it is finite */
	if (v->type == JSON_NUMBER && v->len < 300 && !memchr(v->str, 'e', v->len) &&
	    !memchr(v->str, 'E', v->len))
		return true;
	return json_double(v, &d) == 0;
}

static bool is_str_or_null(const struct json_node *v)
{
	return v && (v->type == JSON_STRING || v->type == JSON_NULL);
}

static bool is_bool(const struct json_node *v)
{
	return v && (v->type == JSON_TRUE || v->type == JSON_FALSE);
}

/* The members --merge reads: json_parse_keep builds no others (60% of a report's bytes). */
enum {
	K_PROGRAM,
	K_RANK,
	K_CLOCK,
	K_COUNT_ONLY,
	K_CALLS_TIMED,
	K_ROUTINES,
	K_ARCS,
	K_STACKS,
	K_MERGED,
	K_NAME,
	K_CALLS,
	K_SELF,
	K_TOTAL,
	K_MAIN,
	K_FILE,
	K_LINE,
	K_CALLER,
	K_CALLEE,
	K_TIME,
	K_FRAMES,
	K_N
};
static const char *const keys[K_N] = {"program",  "rank",   "clock",   "count_only", "calls_timed",
				      "routines", "arcs",   "stacks",  "merged",     "name",
				      "calls",	  "self_s", "total_s", "mainline",   "file",
				      "line",	  "caller", "callee",  "time_s",     "frames"};

/* Each list's members: their places in refs, from the key_id (K_*) + 1; 0: not read. */
enum { RT_NAME, RT_CALLS, RT_SELF, RT_TOTAL, RT_MAIN, RT_FILE, RT_LINE, RT_N };
static const uint8_t rt_slot[K_N] = {
    [K_NAME] = RT_NAME + 1,   [K_CALLS] = RT_CALLS + 1, [K_SELF] = RT_SELF + 1,
    [K_TOTAL] = RT_TOTAL + 1, [K_MAIN] = RT_MAIN + 1,	[K_FILE] = RT_FILE + 1,
    [K_LINE] = RT_LINE + 1};
enum { ARC_CALLER, ARC_CALLEE, ARC_CALLS, ARC_TIME, ARC_SELF, ARC_N };
static const uint8_t arc_slot[K_N] = {[K_CALLER] = ARC_CALLER + 1,
				      [K_CALLEE] = ARC_CALLEE + 1,
				      [K_CALLS] = ARC_CALLS + 1,
				      [K_TIME] = ARC_TIME + 1,
				      [K_SELF] = ARC_SELF + 1};
enum { ST_FRAMES, ST_CALLS, ST_SELF, ST_N };
static const uint8_t st_slot[K_N] = {
    [K_FRAMES] = ST_FRAMES + 1, [K_CALLS] = ST_CALLS + 1, [K_SELF] = ST_SELF + 1};

/*
 * The members of object o that slot[] places into out[0..n) (NULL when
 * absent; the first of a key given twice), by the key_id json_parse_keep
 * gave them.
 */
static void pick(const struct json_doc *d, const struct json_node *o, const uint8_t *slot, size_t n,
		 const struct json_node **out)
{
	memset(out, 0, n * sizeof(*out));
	if (o->type != JSON_OBJECT)
		return;
	/* the parse linked the children: their indices are good */
	for (uint32_t i = o->child; i != JSON_NONE; i = d->nodes[i].next) {
		const struct json_node *v = &d->nodes[i];
		unsigned k = v->key_id < K_N ? slot[v->key_id] : 0;

		if (k && !out[k - 1])
			out[k - 1] = v;
	}
}

/*
 * NULL when the report at root is one fortstat wrote, else what is wrong
 * with it. Each routine's, arc's and stack's members as pick() found them
 * go to *refs (malloc'ed, RT_N a routine, then ARC_N an arc, then ST_N a
 * stack), for fold_report; NULL after an error.
 */
static const char *check_refs(const struct json_doc *d, const struct json_node *root,
			      const struct json_node **refs);

static const char *check_report(const struct json_doc *d, const struct json_node *root,
				const struct json_node ***refs)
{
	const struct json_node *routines, *arcs, *stacks;
	const char *why;

	*refs = NULL;
	if (!root || root->type != JSON_OBJECT)
		return "not a fortstat JSON report (not a JSON object)";
	routines = json_get(d, root, "routines");
	arcs = json_get(d, root, "arcs");
	stacks = json_get(d, root, "stacks");
	*refs = xmalloc(((routines ? routines->n : 0) * RT_N + (arcs ? arcs->n : 0) * ARC_N +
			 (stacks ? stacks->n : 0) * ST_N + 1) *
			sizeof(**refs));
	why = check_refs(d, root, *refs);
	if (why) {
		free(*refs);
		*refs = NULL;
	}
	return why;
}

static const char *check_refs(const struct json_doc *d, const struct json_node *root,
			      const struct json_node **refs)
{
	const struct json_node *routines, *arcs, *stacks, *v;
	uint64_t u;
	int k;

	if (json_get(d, root, "merged"))
		return "a merged report: merge the reports it was made from";
	routines = json_get(d, root, "routines");
	arcs = json_get(d, root, "arcs");
	if (!json_string(json_get(d, root, "program")) || !routines ||
	    routines->type != JSON_ARRAY || !arcs || arcs->type != JSON_ARRAY ||
	    !is_bool(json_get(d, root, "count_only")) ||
	    json_u64(json_get(d, root, "calls_timed"), &u))
		return "not a fortstat JSON report (no program, routines, arcs or calls_timed)";
	if (!is_str_or_null(json_get(d, root, "clock")))
		return "not a fortstat JSON report (clock)";
	v = json_get(d, root, "rank");
	if (v && v->type != JSON_NULL && (json_int(v, &k) || k < 0))
		return "bad \"rank\"";
	for (v = json_first(d, routines); v; v = json_next(d, v)) {
		const struct json_node **f = refs;

		refs += RT_N;
		pick(d, v, rt_slot, RT_N, f);
		if (v->type != JSON_OBJECT || !json_string(f[RT_NAME]) ||
		    json_u64(f[RT_CALLS], &u) || !is_num_or_null(f[RT_SELF]) ||
		    !is_num_or_null(f[RT_TOTAL]) || !is_bool(f[RT_MAIN]))
			return "a routine without name, calls, self_s, total_s or mainline";
		if ((f[RT_FILE] && !is_str_or_null(f[RT_FILE])) ||
		    (f[RT_LINE] && f[RT_LINE]->type != JSON_NULL && json_int(f[RT_LINE], &k)))
			return "a routine with a bad file or line";
	}
	for (v = json_first(d, arcs); v; v = json_next(d, v)) {
		const struct json_node **f = refs;

		refs += ARC_N;
		pick(d, v, arc_slot, ARC_N, f);
		if (v->type != JSON_OBJECT || !is_str_or_null(f[ARC_CALLER]) ||
		    !json_string(f[ARC_CALLEE]) || json_u64(f[ARC_CALLS], &u) ||
		    !is_num_or_null(f[ARC_TIME]) || !is_num_or_null(f[ARC_SELF]))
			return "an arc without caller, callee, calls, time_s or self_s";
	}
	stacks = json_get(d, root, "stacks");
	if (stacks && stacks->type != JSON_ARRAY)
		return "\"stacks\" is not an array";
	for (v = json_first(d, stacks); v; v = json_next(d, v)) {
		const struct json_node **g = refs, *f;

		refs += ST_N;
		pick(d, v, st_slot, ST_N, g);
		if (v->type != JSON_OBJECT || !g[ST_FRAMES] || g[ST_FRAMES]->type != JSON_ARRAY ||
		    !g[ST_FRAMES]->n || json_u64(g[ST_CALLS], &u) || !is_num_or_null(g[ST_SELF]))
			return "a stack without frames, calls or self_s";
		for (f = json_first(d, g[ST_FRAMES]); f; f = json_next(d, f))
			if (!json_string(f))
				return "a stack frame that is not a name";
	}
	return NULL;
}

/* ---- folding one report in ---- */

/* Twice the cells of the name table, its routines put back. */
static void names_grow(struct merge *m)
{
	size_t cap = m->cap_names ? 2 * m->cap_names : 1024;
	struct mname *c = xcalloc(cap, sizeof(*c));

	for (size_t i = 0; i < m->cap_names; i++) {
		size_t k = m->names[i].hash & (cap - 1);

		if (!m->names[i].name)
			continue;
		while (c[k].name)
			k = (k + 1) & (cap - 1);
		c[k] = m->names[i];
	}
	free(m->names);
	m->names = c;
	m->cap_names = cap;
}

/* The routine named by string v: its index, or NONE (create: a new one instead). */
static uint32_t routine_of(struct merge *m, const struct json_node *v, bool create)
{
	uint64_t h = hash_bytes(v->str, v->len);
	size_t k, mask = m->cap_names - 1;
	struct mroutine *r;

	for (k = h & mask; m->cap_names && m->names[k].name; k = (k + 1) & mask)
		if (m->names[k].hash == h && m->names[k].len == v->len &&
		    !memcmp(m->names[k].name, v->str, v->len))
			return m->names[k].idx;
	if (!create || m->n_r >= NONE - 1)
		return NONE;
	if (2 * (m->n_r + 1) > m->cap_names) {
		names_grow(m);
		for (k = h & (m->cap_names - 1); m->names[k].name; k = (k + 1) & (m->cap_names - 1))
			;
	}
	if (m->n_r == m->cap_r) {
		m->cap_r = m->cap_r ? 2 * m->cap_r : 64;
		m->r = xrealloc(m->r, m->cap_r * sizeof(*m->r));
		m->rn = xrealloc(m->rn, m->cap_r * sizeof(*m->rn));
	}
	r = memset(&m->r[m->n_r], 0, sizeof(*m->r));
	r->name = xmalloc((size_t)v->len + 1);
	memcpy(r->name, v->str, v->len);
	r->name[v->len] = '\0';
	m->rn[m->n_r] = (struct mrname){.name = r->name, .len = v->len};
	m->names[k] =
	    (struct mname){.hash = h, .name = r->name, .len = v->len, .idx = (uint32_t)m->n_r};
	return (uint32_t)m->n_r++;
}

/* Whether routine i (< n_r) is named by string v. */
static bool named(const struct merge *m, uint32_t i, const struct json_node *v)
{
	return m->rn[i].len == v->len && !memcmp(m->rn[i].name, v->str, v->len);
}

/*
 * A hint for each place of a list in an input: what the last input had
 * there. Ranks of one program write their routines and arcs in much the
 * same order; a hint that names the same is taken without a lookup (its
 * memory is read in order, the tables' at random). *h grows to n places,
 * new ones NONE.
 */
static void hints_for(uint32_t **h, size_t *n_h, size_t n)
{
	if (n <= *n_h)
		return;
	*h = xrealloc(*h, n * sizeof(**h));
	memset(*h + *n_h, 0xff, (n - *n_h) * sizeof(**h));
	*n_h = n;
}

/* The routine named by string v, tried first at *hint (then set to it). */
static uint32_t routine_hinted(struct merge *m, const struct json_node *v, uint32_t *hint)
{
	if (*hint < m->n_r && named(m, *hint, v))
		return *hint;
	*hint = routine_of(m, v, true);
	return *hint;
}

static double num_or_zero(const struct json_node *v)
{
	double d = 0;

	return json_double(v, &d) == 0 ? d : 0;
}

static void stat_fold(struct mstat *s, uint32_t input)
{
	if (!s->seen || s->cur < s->min)
		s->min = s->cur;
	if (!s->seen || s->cur > s->max) {
		s->max = s->cur;
		s->imax = input;
	}
	s->sum += s->cur;
	s->seen++;
	s->cur = 0;
}

/* The program's name without the " [pid N]" of -f. */
static char *program_name(const char *s)
{
	const char *b = strstr(s, " [pid ");

	return b ? xasprintf("%.*s", (int)(b - s), s) : xstrdup(s);
}

/* Whether arc a (any number) is the one from string or null caller to string callee. */
static bool arc_is(const struct merge *m, uint32_t a, const struct json_node *caller,
		   const struct json_node *callee)
{
	if (a >= m->n_arcs || !named(m, m->arcs[a].callee, callee))
		return false;
	if (caller->type == JSON_NULL)
		return m->arcs[a].caller == NONE;
	return m->arcs[a].caller != NONE && named(m, m->arcs[a].caller, caller);
}

/* The arc from caller (NONE: the root) to callee: its index, a new one if need be. */
static uint32_t arc_of(struct merge *m, uint32_t caller, uint32_t callee)
{
	uint64_t key = (caller == NONE ? 0 : (uint64_t)caller + 1) << 32 | ((uint64_t)callee + 1);
	uint64_t at;

	if (!u64map_get(&m->arc_at, key, &at)) {
		if (m->n_arcs == m->cap_arcs) {
			m->cap_arcs = m->cap_arcs ? 2 * m->cap_arcs : 64;
			m->arcs = xrealloc(m->arcs, m->cap_arcs * sizeof(*m->arcs));
		}
		at = m->n_arcs++;
		memset(&m->arcs[at], 0, sizeof(*m->arcs));
		m->arcs[at].caller = caller;
		m->arcs[at].callee = callee;
		u64map_put(&m->arc_at, key, at);
	}
	return (uint32_t)at;
}

static uint32_t child_of(struct merge *m, uint32_t parent, uint32_t routine)
{
	uint64_t key = ((uint64_t)parent + 1) << 32 | ((uint64_t)routine + 1), at;

	if (u64map_get(&m->child_at, key, &at))
		return (uint32_t)at;
	/* the array holds n_nodes rounded up to a power of two */
	if ((m->n_nodes & (m->n_nodes - 1)) == 0)
		m->nodes = xrealloc(m->nodes, 2 * m->n_nodes * sizeof(*m->nodes));
	at = m->n_nodes++;
	m->nodes[at] = (struct mnode){.parent = parent, .routine = routine};
	u64map_put(&m->child_at, key, at);
	return (uint32_t)at;
}

/*
 * Input m->n_in, the report `what` at root: noted, its program, clock and
 * counting held to the first input's (warned where they differ). Returns
 * its input number.
 */
static uint32_t fold_input(struct merge *m, const char *what, const struct json_doc *d,
			   const struct json_node *root)
{
	uint32_t input = (uint32_t)m->n_in;
	const char *prog = json_string(json_get(d, root, "program"));
	const char *clock = json_string(json_get(d, root, "clock"));
	bool count_only = json_get(d, root, "count_only")->type == JSON_TRUE;
	char *name = program_name(prog);
	int rank = -1;

	if (json_int(json_get(d, root, "rank"), &rank))
		rank = -1;
	m->in = xrealloc(m->in, (m->n_in + 1) * sizeof(*m->in));
	m->in[m->n_in].file = xstrdup(what);
	m->in[m->n_in].rank = rank;
	m->n_in++;
	if (!m->program) {
		m->program = name;
		m->clock = clock ? xstrdup(clock) : NULL;
		m->count_only = count_only;
	} else {
		if (strcmp(m->program, name))
			fs_warn("%s: a report of %s, not of %s: merged by routine name", what, name,
				m->program);
		if (count_only != m->count_only && !m->mixed_count) {
			fs_warn("%s: %s, the first input %s: the merge counts calls only", what,
				count_only ? "counts only" : "has times",
				m->count_only ? "counts only" : "has times");
			m->mixed_count = true;
		}
		m->count_only |= count_only;
		if (clock && m->clock && strcmp(clock, m->clock))
			fs_warn("%s: times on the %s clock, the first input's on the %s clock",
				what, clock, m->clock);
		free(name);
	}
	return input;
}

/*
 * The routines of the report at root (their members at refs, RT_N each)
 * folded in as input `input`. Returns the arcs' members, after them.
 */
static const struct json_node **fold_routines(struct merge *m, const struct json_doc *d,
					      const struct json_node *root,
					      const struct json_node **refs, uint32_t input)
{
	const struct json_node *v;
	size_t pos;

	m->n_touched = 0;
	m->touched = xrealloc(m->touched, (m->n_r + json_get(d, root, "routines")->n + 1) *
					      sizeof(*m->touched));
	hints_for(&m->rt_hint, &m->n_rt_hint, json_get(d, root, "routines")->n);
	pos = 0;
	for (v = json_first(d, json_get(d, root, "routines")); v; v = json_next(d, v), pos++) {
		const struct json_node **f = refs;
		uint32_t i;
		struct mroutine *r;
		uint64_t calls = 0;
		int line = 0;

		refs += RT_N;
		i = routine_hinted(m, f[RT_NAME], &m->rt_hint[pos]);
		if (i == NONE)
			continue;
		r = &m->r[i];
		json_u64(f[RT_CALLS], &calls);
		r->calls.cur += (double)calls;
		r->self.cur += num_or_zero(f[RT_SELF]);
		r->total.cur += num_or_zero(f[RT_TOTAL]);
		r->mainline |= f[RT_MAIN]->type == JSON_TRUE;
		if (!r->file && json_string(f[RT_FILE])) {
			r->file = xstrdup(json_string(f[RT_FILE]));
			if (!json_int(f[RT_LINE], &line))
				r->line = line;
		}
		if (r->touched != input + 1) {
			r->touched = input + 1;
			m->touched[m->n_touched++] = i;
		}
	}
	for (size_t k = 0; k < m->n_touched; k++) {
		struct mroutine *r = &m->r[m->touched[k]];

		stat_fold(&r->calls, input);
		stat_fold(&r->self, input);
		stat_fold(&r->total, input);
	}
	return refs;
}

/*
 * The arcs of the report at root (their members at refs, ARC_N each)
 * added up. Returns the stacks' members, after them.
 */
static const struct json_node **fold_arcs(struct merge *m, const struct json_doc *d,
					  const struct json_node *root,
					  const struct json_node **refs)
{
	const struct json_node *v;
	size_t pos;
	uint32_t last = NONE; /* the last arc folded in */

	hints_for(&m->arc_hint, &m->n_arc_hint, json_get(d, root, "arcs")->n);
	pos = 0;
	for (v = json_first(d, json_get(d, root, "arcs")); v; v = json_next(d, v), pos++) {
		const struct json_node **f = refs;
		bool root_arc = f[ARC_CALLER]->type == JSON_NULL;
		uint32_t ci, ce, a = m->arc_hint[pos];
		uint64_t calls = 0;

		refs += ARC_N;
		/*
		 * The last input's arc at this place, else the arc after the
		 * one before (fortstat writes arcs in routine order: an arc
		 * more or less in one rank shifts the places that follow).
		 */
		if (!arc_is(m, a, f[ARC_CALLER], f[ARC_CALLEE]))
			a = last + 1; /* NONE + 1: arc 0 */
		if (!arc_is(m, a, f[ARC_CALLER], f[ARC_CALLEE])) {
			ci = root_arc ? NONE : routine_of(m, f[ARC_CALLER], true);
			ce = routine_of(m, f[ARC_CALLEE], true);
			if (ce == NONE || (!root_arc && ci == NONE))
				continue;
			a = arc_of(m, ci, ce);
		}
		m->arc_hint[pos] = last = a;
		json_u64(f[ARC_CALLS], &calls);
		m->arcs[a].calls += calls;
		m->arcs[a].time_s += num_or_zero(f[ARC_TIME]);
		m->arcs[a].self_s += num_or_zero(f[ARC_SELF]);
	}
	return refs;
}

/*
 * The calling contexts of the report at root (their members at refs, ST_N
 * each) added up in the merged tree; an input without "stacks" noted.
 */
static void fold_stacks(struct merge *m, const struct json_doc *d, const struct json_node *root,
			const struct json_node **refs)
{
	const struct json_node *v, *stacks;
	size_t pos;

	stacks = json_get(d, root, "stacks");
	if (!stacks)
		m->no_stacks = true;
	m->n_path = 0;
	hints_for(&m->st_hint, &m->n_st_hint, stacks && stacks->type == JSON_ARRAY ? stacks->n : 0);
	pos = 0;
	for (v = json_first(d, stacks); v; v = json_next(d, v), pos++) {
		const struct json_node **g = refs;
		uint32_t at = 0, hint = m->st_hint[pos];
		uint64_t calls = 0;
		size_t k = 0;
		bool same = true; /* frames 0..k are the last stack's */

		refs += ST_N;
		for (const struct json_node *f = json_first(d, g[ST_FRAMES]); f;
		     f = json_next(d, f), k++) {
			uint32_t r;

			/* contexts come parents first: most share the last one's outer frames */
			if (same && k < m->n_path && m->path[k].len == f->len &&
			    !memcmp(m->path[k].name, f->str, f->len)) {
				at = m->path[k].node;
				continue;
			}
			same = false;
			/* the last input's context at this place, when it is this frame's */
			if (hint < m->n_nodes && m->nodes[hint].parent == at &&
			    named(m, m->nodes[hint].routine, f)) {
				at = hint;
			} else {
				r = routine_of(m, f, true);
				if (r == NONE)
					break;
				at = child_of(m, at, r);
			}
			if (k == m->cap_path) {
				m->cap_path = m->cap_path ? 2 * m->cap_path : 64;
				m->path = xrealloc(m->path, m->cap_path * sizeof(*m->path));
			}
			m->path[k] = (struct mframe){.name = f->str, .len = f->len, .node = at};
		}
		m->n_path = k;
		m->st_hint[pos] = at;
		json_u64(g[ST_CALLS], &calls);
		m->nodes[at].calls += calls;
		m->nodes[at].self_s += num_or_zero(g[ST_SELF]);
	}
}

/* Fold the checked report at root in as input m->n_in: its routines, arcs, stacks. */
static void fold_report(struct merge *m, const char *what, const struct json_doc *d,
			const struct json_node *root, const struct json_node **refs)
{
	uint32_t input = fold_input(m, what, d, root);

	refs = fold_routines(m, d, root, refs, input);
	refs = fold_arcs(m, d, root, refs);
	fold_stacks(m, d, root, refs);
}

/* One report found in a text: its document, its object, its members (check_report). */
struct found {
	size_t doc;
	const struct json_node *root;
	const struct json_node **refs;
};

/*
 * Check the report at root (of document doc), or every element of an array
 * of reports (-f writes the reports that share a file as one array), adding
 * each to *f. NULL, or what is wrong (the reports added so far stay in *f).
 */
static const char *find_reports(const struct json_doc *d, size_t doc, const struct json_node *root,
				struct found **f, size_t *n)
{
	const struct json_node *v = root;
	bool array = root && root->type == JSON_ARRAY;

	if (array && !root->n)
		return "not a fortstat JSON report (an empty array)";
	for (v = array ? json_first(d, root) : root; v; v = array ? json_next(d, v) : NULL) {
		const struct json_node **refs;
		const char *why = check_report(d, v, &refs);

		if (why)
			return why;
		*f = xrealloc(*f, (*n + 1) * sizeof(**f));
		(*f)[(*n)++] = (struct found){.doc = doc, .root = v, .refs = refs};
	}
	return NULL;
}

/* The reports in buf[0..len) (changed: parsed in place), all folded in or none. */
static int add_buf(struct merge *m, const char *what, char *buf, size_t len)
{
	struct json_doc *docs = NULL;
	struct found *found = NULL;
	size_t n = 0, n_found = 0, off = 0;
	char err[160];
	int rc = 0;

	for (;;) {
		/* the first report of a file reuses the node array of the last file's */
		struct json_doc d = n ? (struct json_doc){0} : m->spare;
		const char *why;

		memset(&m->spare, 0, sizeof(m->spare));
		rc = json_parse_keep(buf + off, len - off, &d, keys, K_N, err, sizeof(err));
		if (!rc && (why = find_reports(&d, n, json_root(&d), &found, &n_found)) != NULL) {
			fs_error("%s: %s", what, why);
			rc = -EINVAL;
		} else if (rc == -ENODATA) {
			rc = 0;
			if (!n) {
				fs_error("%s: empty: not a fortstat JSON report", what);
				rc = -EINVAL;
			}
		} else if (rc) {
			unsigned long l = 0;
			size_t line = 1;

			/* the line within the file, not within its n-th report */
			for (size_t i = 0; i < off; i++)
				line += buf[i] == '\n';
			if (sscanf(err, "line %lu:", &l) == 1)
				fs_error("%s: not a fortstat JSON report: line %zu:%s", what,
					 line + l - 1, strchr(err, ':') + 1);
			else
				fs_error("%s: not a fortstat JSON report: %s", what, err);
		}
		docs = xrealloc(docs, (n + 1) * sizeof(*docs));
		docs[n++] = d;
		if (rc || !d.n_nodes)
			break;
		off += d.used;
	}
	/* All the file or nothing of it. */
	for (size_t i = 0; i < n_found; i++) {
		if (!rc)
			fold_report(m, what, &docs[found[i].doc], found[i].root, found[i].refs);
		free(found[i].refs);
	}
	for (size_t i = 1; i < n; i++)
		json_free(&docs[i]);
	m->spare = docs[0];
	free(docs);
	free(found);
	return rc;
}

int merge_add_text(struct merge *m, const char *what, const char *text, size_t len)
{
	char *buf = xmalloc(len + 1);
	int rc;

	if (len)
		memcpy(buf, text, len);
	rc = add_buf(m, what, buf, len);
	free(buf);
	return rc;
}

int merge_add_file(struct merge *m, const char *path)
{
	struct stat sb;
	char *buf;
	size_t len = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0) {
		rc = -errno;
		fs_error("%s: cannot read: %s", path, strerror(-rc));
		return rc;
	}
	if (fstat(fd, &sb) < 0 || S_ISDIR(sb.st_mode) || !S_ISREG(sb.st_mode) ||
	    sb.st_size > MERGE_MAX_FILE) {
		rc = S_ISDIR(sb.st_mode) ? -EISDIR : -EINVAL;
		fs_error("%s: %s", path,
			 S_ISDIR(sb.st_mode)   ? "is a directory, not a fortstat JSON report"
			 : S_ISREG(sb.st_mode) ? "too large for a fortstat JSON report"
					       : "not a regular file");
		close(fd);
		return rc;
	}
	buf = xmalloc((size_t)sb.st_size + 1);
	while (len < (size_t)sb.st_size) {
		ssize_t k = read(fd, buf + len, (size_t)sb.st_size - len);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0) {
			rc = k < 0 ? -errno : 0;
			if (k < 0) {
				fs_error("%s: cannot read: %s", path, strerror(-rc));
				free(buf);
				close(fd);
				return rc;
			}
			break; /* shrank while read: parse what there is */
		}
		len += (size_t)k;
	}
	close(fd);
	rc = add_buf(m, path, buf, len);
	free(buf);
	return rc;
}

/* Seconds as the profile's nanoseconds: what is not above 0 is 0. */
static acct_time_t ns_of(double s)
{
	return s > 0 ? (acct_time_t)(s * 1e9 + 0.5) : 0;
}

struct profile *merge_profile(const struct merge *m)
{
	static const double none[FS_N_CLOCKS];
	struct profile *p = profile_new(NULL, none, none, 0, true);
	struct profile_section *sec;
	enum clock_kind c = merge_clock(m->clock);

	p->sections = xcalloc(1, sizeof(*p->sections));
	p->n_sections = 1;
	sec = &p->sections[0];
	sec->label = xstrdup(m->program ? m->program : "");
	sec->count_only = m->count_only;
	sec->clock_known[c] = !m->count_only;
	sec->n_routines = m->n_r;
	sec->routines = xcalloc(m->n_r + 1, sizeof(*sec->routines));
	sec->merged = xcalloc(m->n_r + 1, sizeof(*sec->merged));
	sec->all.r = xcalloc(m->n_r + 1, sizeof(*sec->all.r));
	for (size_t i = 0; i < m->n_r; i++) {
		const struct mroutine *r = &m->r[i];
		struct profile_spread *to[3] = {&sec->merged[i].calls, &sec->merged[i].self,
						&sec->merged[i].total};
		const struct mstat *from[3] = {&r->calls, &r->self, &r->total};

		sec->routines[i] =
		    (struct profile_routine){.name = xstrdup(r->name),
					     .file = r->file ? xstrdup(r->file) : NULL,
					     .line = r->line,
					     .mainline = r->mainline,
					     .selected = true};
		for (int k = 0; k < 3; k++)
			*to[k] = (struct profile_spread){.min = from[k]->min,
							 .max = from[k]->max,
							 .sum = from[k]->sum,
							 .imax = from[k]->imax,
							 .seen = from[k]->seen};
		sec->all.r[i].calls = r->calls.sum > 0 ? (uint64_t)(r->calls.sum + 0.5) : 0;
		sec->all.r[i].self[c] = ns_of(r->self.sum);
		sec->all.r[i].total[c] = ns_of(r->total.sum);
		sec->all.r[i].gross_self[c] = sec->all.r[i].self[c];
		sec->all.r[i].gross_total[c] = sec->all.r[i].total[c];
	}
	sec->all.n_arcs = m->n_arcs;
	sec->all.arcs = xcalloc(m->n_arcs + 1, sizeof(*sec->all.arcs));
	for (size_t i = 0; i < m->n_arcs; i++) {
		const struct marc *a = &m->arcs[i];
		struct profile_arc *to = &sec->all.arcs[i];

		to->caller = a->caller == NONE ? PROFILE_NONE : a->caller;
		to->callee = a->callee;
		to->calls = a->calls;
		to->time_s[c] = a->time_s;
		to->self_s[c] = a->self_s;
	}
	sec->all.n_nodes = m->n_nodes;
	sec->all.nodes = xcalloc(m->n_nodes + 1, sizeof(*sec->all.nodes));
	for (size_t i = 0; i < m->n_nodes; i++) {
		const struct mnode *x = &m->nodes[i];
		struct profile_node *to = &sec->all.nodes[i];

		to->parent = x->parent == NONE ? PROFILE_NONE : x->parent;
		to->routine = x->routine == NONE ? PROFILE_NONE : x->routine;
		to->calls = x->calls;
		to->self[c] = ns_of(x->self_s);
	}
	p->n_inputs = m->n_in;
	p->inputs = xcalloc(m->n_in + 1, sizeof(*p->inputs));
	for (size_t i = 0; i < m->n_in; i++)
		p->inputs[i] =
		    (struct profile_input){.file = xstrdup(m->in[i].file), .rank = m->in[i].rank};
	p->merged_clock = m->clock ? xstrdup(m->clock) : NULL;
	p->merged_no_stacks = m->no_stacks;
	return p;
}

int merge_write(const struct merge *mg, FILE *out, const struct report_opts *opts)
{
	struct profile *p;
	int err;

	if (!mg->n_in)
		return -EINVAL;
	p = merge_profile(mg);
	err = report_write(out, p, 0, opts);
	profile_free(p);
	return err;
}

int merge_write_svg(const struct merge *mg, FILE *out)
{
	struct profile *p;
	int err;

	if (!mg->n_in)
		return -EINVAL;
	p = merge_profile(mg);
	err = report_write_svg(out, p, 0, &(struct report_opts){0});
	profile_free(p);
	return err;
}
