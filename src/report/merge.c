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
#include "fortstat/cli.h"
#include "fortstat/jsonin.h"
#include "fortstat/map.h"
#include "fortstat/rank.h"
#include "fortstat/util.h"
#include "xml.h"

#define NONE UINT32_MAX
#define MERGE_MAX_FILE ((off_t)1 << 32) /* a report larger than 4 GiB is not one */

/* One quantity over the inputs (a routine missing from an input is 0 there). */
struct mstat {
	double min, max, sum; /* over the inputs that have the routine */
	uint32_t imax;	      /* input of the max */
	uint32_t seen;	      /* inputs that have the routine */
	double cur;	      /* the current input's value (duplicate names add up) */
};

struct mroutine {
	char *name;
	char *file; /* source file of the first input that knew it, or NULL */
	int line;
	bool mainline;
	struct mstat calls, self, total;
	uint32_t touched; /* last input that had it, + 1 (0: none yet) */
};

struct marc {
	uint32_t caller, callee; /* routine indices; caller NONE: the root */
	uint64_t calls;
	double time_s, self_s;
};

struct mnode {
	uint32_t parent, routine; /* NONE for the root (node 0) */
	uint64_t calls;
	double self_s;
};

/* A routine's name and its length. */
struct mrname {
	const char *name;
	uint32_t len;
};

/* A cell of the name table: the hash, length and index at hand, the text one load away. */
struct mname {
	uint64_t hash;
	const char *name;  /* the routine's name, NULL: a free cell */
	uint32_t len, idx; /* its length, the routine's index */
};

/* A frame of the last calling context folded in: its name (in the input's text) and node. */
struct mframe {
	const char *name;
	uint32_t len, node;
};

struct minput {
	char *file;
	int rank; /* -1: not a rank */
};

struct merge {
	struct minput *in;
	size_t n_in;
	char *program; /* the first input's, " [pid N]" cut off */
	char *clock;
	bool count_only, mixed_count;
	bool no_stacks; /* an input had no "stacks" */
	struct mroutine *r;
	size_t n_r, cap_r;
	struct mrname *rn;   /* the routines' names, compact: checking a hint touches little */
	struct mname *names; /* the routines by name: open addressing, at most half full */
	size_t cap_names;    /* cells: a power of two, or 0 */
	struct marc *arcs;
	size_t n_arcs, cap_arcs;
	struct u64map arc_at; /* caller+1 << 32 | callee+1 -> arc index */
	struct mnode *nodes;
	size_t n_nodes;
	struct u64map child_at;			/* parent+1 << 32 | routine+1 -> node index */
	uint32_t *rt_hint, *arc_hint, *st_hint; /* what the last input had at each place */
	size_t n_rt_hint, n_arc_hint, n_st_hint;
	struct mframe *path; /* the last context of the current input */
	size_t n_path, cap_path;
	uint32_t *touched; /* routines of the current input */
	size_t n_touched;
	struct json_doc spare; /* the last text's document: its nodes are reused */
};

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

static uint64_t hash_bytes(const char *s, size_t n)
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

static uint64_t hash_name(const char *s)
{
	return hash_bytes(s, strlen(s));
}

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

/* Fold the checked report at root in as input m->n_in. */
static void fold_report(struct merge *m, const char *what, const struct json_doc *d,
			const struct json_node *root, const struct json_node **refs)
{
	uint32_t input = (uint32_t)m->n_in;
	const struct json_node *v, *stacks;
	const char *prog = json_string(json_get(d, root, "program"));
	const char *clock = json_string(json_get(d, root, "clock"));
	bool count_only = json_get(d, root, "count_only")->type == JSON_TRUE;
	char *name = program_name(prog);
	int rank = -1;
	size_t pos;
	uint32_t last = NONE; /* the last arc folded in */

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

/* ---- writing ---- */

static double mean_of(const struct merge *m, const struct mstat *s)
{
	return s->sum / (double)m->n_in;
}

/* Min and max with the inputs that lack the routine counted as 0. */
static double min_of(const struct merge *m, const struct mstat *s)
{
	return s->seen < m->n_in && s->min > 0 ? 0 : s->min;
}

static double max_of(const struct merge *m, const struct mstat *s)
{
	return s->seen < m->n_in && s->max < 0 ? 0 : s->max;
}

/* The label of input i: its rank, else its position among the inputs. */
static long input_label(const struct merge *m, uint32_t i)
{
	return m->in[i].rank >= 0 ? m->in[i].rank : (long)i;
}

static bool all_ranked(const struct merge *m)
{
	for (size_t i = 0; i < m->n_in; i++)
		if (m->in[i].rank < 0)
			return false;
	return true;
}

static int cmp_rows(const void *p, const void *q, void *arg)
{
	const struct merge *m = ((void **)arg)[0];
	const struct report_opts *o = ((void **)arg)[1];
	const struct mroutine *x = &m->r[*(const uint32_t *)p], *y = &m->r[*(const uint32_t *)q];
	double a = 0, b = 0;

	if (o->sort == SORT_TIME && !m->count_only)
		a = x->self.sum, b = y->self.sum;
	else if (o->sort != SORT_NAME)
		a = x->calls.sum, b = y->calls.sum;
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* The routines to show (called in some input), sorted as opts says; *n of them. */
static uint32_t *sorted_rows(const struct merge *m, const struct report_opts *opts, size_t *n)
{
	uint32_t *v = xcalloc(m->n_r + 1, sizeof(*v));
	const void *arg[2] = {m, opts};

	*n = 0;
	for (size_t i = 0; i < m->n_r; i++)
		if (m->r[i].calls.seen)
			v[(*n)++] = (uint32_t)i;
	qsort_r(v, *n, sizeof(*v), cmp_rows, (void *)arg);
	return v;
}

static int name_width(const struct merge *m, const uint32_t *rows, size_t n)
{
	size_t w = 8;

	for (size_t i = 0; i < n; i++) {
		size_t l = strlen(m->r[rows[i]].name);

		if (l > w)
			w = l;
	}
	return w > 60 ? 60 : (int)w;
}

static void fmt_imbalance(char *buf, size_t len, const struct merge *m, const struct mstat *s)
{
	double mean = mean_of(m, s);

	if (mean > 0)
		snprintf(buf, len, "%.2f", max_of(m, s) / mean);
	else
		snprintf(buf, len, "-");
}

static void write_table(const struct merge *m, FILE *out, const struct report_opts *opts)
{
	size_t n, i;
	uint32_t *rows = sorted_rows(m, opts, &n);
	int w = name_width(m, rows, n);
	const char *at = all_ranked(m) ? "RANK" : "INPUT";
	char imb[32];

	fprintf(out, "fortstat --merge: %zu input%s of %s", m->n_in, m->n_in == 1 ? "" : "s",
		m->program);
	if (m->count_only)
		fputs(", count only\n\n", out);
	else
		fprintf(out, ", %s clock; times are self times\n\n", m->clock ? m->clock : "?");
	fprintf(out, "  %-*s %12s %14s %12s", w, "ROUTINE", "CALLS MIN", "CALLS MEAN", "CALLS MAX");
	if (m->count_only)
		fprintf(out, " %8s %9s %14s\n", at, "MAX/MEAN", "CALLS SUM");
	else {
		fprintf(out, " %12s %12s %12s %8s %9s %12s", "MIN (SEC)", "MEAN (SEC)", "MAX (SEC)",
			at, "MAX/MEAN", "SUM (SEC)");
		if (opts->inclusive)
			fprintf(out, " %12s %12s", "INCL MEAN", "INCL MAX");
		fputc('\n', out);
	}
	for (i = 0; i < n; i++) {
		const struct mroutine *r = &m->r[rows[i]];
		const struct mstat *s = m->count_only ? &r->calls : &r->self;

		fmt_imbalance(imb, sizeof(imb), m, s);
		fprintf(out, "%c %-*s %12.0f %14.2f %12.0f", r->mainline ? '*' : ' ', w, r->name,
			min_of(m, &r->calls), mean_of(m, &r->calls), max_of(m, &r->calls));
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
	fprintf(out,
		"\n  %s: the %s of the max; MAX/MEAN: imbalance; a routine missing from "
		"an input counts 0 there\n",
		at, all_ranked(m) ? "rank" : "input (0: the first file)");
	free(rows);
}

/* One CSV field (the name): quoted when it holds a comma, quote or line break. */
static void csv_name(FILE *out, const char *s)
{
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

static void csv_stat(FILE *out, const struct merge *m, const struct mstat *s, bool timed)
{
	if (!timed) {
		fputs(",,,,,,", out);
		return;
	}
	fprintf(out, ",%.9f,%.9f,%.9f,%.9f,%ld,", min_of(m, s), mean_of(m, s), max_of(m, s), s->sum,
		input_label(m, s->imax));
	if (mean_of(m, s) > 0)
		fprintf(out, "%.6f", max_of(m, s) / mean_of(m, s));
}

static void write_csv(const struct merge *m, FILE *out, const struct report_opts *opts)
{
	size_t n;
	uint32_t *rows = sorted_rows(m, opts, &n);

	fputs("routine,mainline,calls_min,calls_mean,calls_max,calls_sum,calls_max_at,"
	      "self_min_s,self_mean_s,self_max_s,self_sum_s,self_max_at,self_imbalance,"
	      "total_min_s,total_mean_s,total_max_s,total_sum_s,total_max_at,total_imbalance\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const struct mroutine *r = &m->r[rows[i]];

		csv_name(out, r->name);
		fprintf(out, ",%d,%.0f,%.6f,%.0f,%.0f,%ld", r->mainline, min_of(m, &r->calls),
			mean_of(m, &r->calls), max_of(m, &r->calls), r->calls.sum,
			input_label(m, r->calls.imax));
		csv_stat(out, m, &r->self, !m->count_only);
		csv_stat(out, m, &r->total, !m->count_only);
		fputc('\n', out);
	}
	free(rows);
}

/* A JSON string: escapes quotes, backslashes and control characters (input was valid UTF-8). */
static void json_str(FILE *out, const char *s)
{
	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20 || c == 0x7f)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

/* {"min": ..., "mean": ..., "max": ..., "sum": ..., "max_input": i, "imbalance": x} */
static void json_stat(FILE *out, const struct merge *m, const struct mstat *s, bool whole,
		      bool timed)
{
	double mean = mean_of(m, s);

	if (!timed) {
		fputs("null", out);
		return;
	}
	if (whole)
		fprintf(out, "{\"min\": %.0f, \"mean\": %.6f, \"max\": %.0f, \"sum\": %.0f",
			min_of(m, s), mean, max_of(m, s), s->sum);
	else
		fprintf(out, "{\"min\": %.9f, \"mean\": %.9f, \"max\": %.9f, \"sum\": %.9f",
			min_of(m, s), mean, max_of(m, s), s->sum);
	fprintf(out, ", \"max_input\": %" PRIu32, s->imax);
	if (m->in[s->imax].rank >= 0)
		fprintf(out, ", \"max_rank\": %d", m->in[s->imax].rank);
	fputs(", \"imbalance\": ", out);
	if (mean > 0)
		fprintf(out, "%.6f}", max_of(m, s) / mean);
	else
		fputs("null}", out);
}

static void write_json(const struct merge *m, FILE *out, const struct report_opts *opts)
{
	bool timed = !m->count_only;
	size_t n, i;
	uint32_t *rows = sorted_rows(m, opts, &n);

	fputs("{\n  \"merged\": true,\n  \"program\": ", out);
	json_str(out, m->program);
	fprintf(out, ",\n  \"inputs\": %zu,\n  \"files\": [", m->n_in);
	for (i = 0; i < m->n_in; i++) {
		fputs(i ? ",\n    {\"file\": " : "\n    {\"file\": ", out);
		json_str(out, m->in[i].file);
		if (m->in[i].rank >= 0)
			fprintf(out, ", \"rank\": %d}", m->in[i].rank);
		else
			fputs(", \"rank\": null}", out);
	}
	fputs(m->n_in ? "\n  ],\n  \"clock\": " : "],\n  \"clock\": ", out);
	json_str(out, m->clock);
	fprintf(out, ",\n  \"count_only\": %s,\n  \"routines\": [",
		m->count_only ? "true" : "false");
	for (i = 0; i < n; i++) {
		const struct mroutine *r = &m->r[rows[i]];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		json_str(out, r->name);
		fprintf(out, ", \"mainline\": %s, \"inputs_with\": %" PRIu32 ", \"calls\": ",
			r->mainline ? "true" : "false", r->calls.seen);
		json_stat(out, m, &r->calls, true, true);
		fputs(", \"self_s\": ", out);
		json_stat(out, m, &r->self, false, timed);
		fputs(", \"total_s\": ", out);
		json_stat(out, m, &r->total, false, timed);
		fputs(", \"file\": ", out);
		json_str(out, r->file);
		if (r->line > 0)
			fprintf(out, ", \"line\": %d}", r->line);
		else
			fputs(", \"line\": null}", out);
	}
	fputs(n ? "\n  ],\n  \"arcs\": [" : "],\n  \"arcs\": [", out);
	for (i = 0; i < m->n_arcs; i++) {
		const struct marc *a = &m->arcs[i];

		fprintf(out, "%s\n    {\"caller\": ", i ? "," : "");
		json_str(out, a->caller == NONE ? NULL : m->r[a->caller].name);
		fputs(", \"callee\": ", out);
		json_str(out, m->r[a->callee].name);
		fprintf(out, ", \"calls\": %" PRIu64, a->calls);
		if (timed)
			fprintf(out, ", \"time_s\": %.9f, \"self_s\": %.9f}", a->time_s, a->self_s);
		else
			fputs(", \"time_s\": null, \"self_s\": null}", out);
	}
	fputs(m->n_arcs ? "\n  ]\n}\n" : "]\n}\n", out);
	free(rows);
}

/* A name as a frame of a folded stack: ';' and line breaks would split it. */
static void folded_name(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, out);
}

/* A context's value in folded stacks and flame graphs: self microseconds, or calls. */
static uint64_t node_value(const struct merge *m, const struct mnode *x)
{
	if (m->count_only)
		return x->calls;
	return x->self_s > 0 ? (uint64_t)(x->self_s * 1e6 + 0.5) : 0;
}

struct line {
	char *text;
	size_t len;
};

static int cmp_lines(const void *p, const void *q)
{
	return strcmp(((const struct line *)p)->text, ((const struct line *)q)->text);
}

static void write_folded(const struct merge *m, FILE *out)
{
	struct line *v = xcalloc(m->n_nodes, sizeof(*v));
	uint32_t *path = xcalloc(m->n_nodes + 1, sizeof(*path));
	size_t n = 0;

	for (size_t i = 1; i < m->n_nodes; i++) {
		uint64_t val = node_value(m, &m->nodes[i]);
		size_t depth = 0;
		FILE *f;

		if (!val)
			continue;
		for (uint32_t k = (uint32_t)i; k && k != NONE && depth <= m->n_nodes;
		     k = m->nodes[k].parent)
			path[depth++] = k;
		f = open_memstream(&v[n].text, &v[n].len);
		if (!f)
			continue;
		while (depth--) {
			folded_name(f, m->r[m->nodes[path[depth]].routine].name);
			if (depth)
				fputc(';', f);
		}
		fprintf(f, " %" PRIu64 "\n", val);
		if (fclose(f) == 0)
			n++;
	}
	qsort(v, n, sizeof(*v), cmp_lines);
	for (size_t i = 0; i < n; i++) {
		fwrite(v[i].text, 1, v[i].len, out);
		free(v[i].text);
	}
	free(v);
	free(path);
}

static void write_callgrind(const struct merge *m, FILE *out, const struct report_opts *opts)
{
	size_t n;
	uint32_t *rows = sorted_rows(m, opts, &n);
	uint64_t us = 0, calls = 0;
	bool timed = !m->count_only;

	for (size_t i = 0; i < n; i++) {
		us += timed && m->r[rows[i]].self.sum > 0
			  ? (uint64_t)(m->r[rows[i]].self.sum * 1e6 + 0.5)
			  : 0;
		calls += (uint64_t)m->r[rows[i]].calls.sum;
	}
	fputs("# callgrind format\nversion: 1\ncreator: fortstat " PACKAGE_VERSION " --merge\n",
	      out);
	fprintf(out, "cmd: %s (%zu inputs merged)\npositions: line\n", m->program, m->n_in);
	fputs("event: us : self time (microseconds)\nevent: calls : calls\nevents: us calls\n",
	      out);
	fprintf(out, "summary: %" PRIu64 " %" PRIu64 "\n", us, calls);
	for (size_t i = 0; i < n; i++) {
		const struct mroutine *r = &m->r[rows[i]];

		fprintf(out, "\nfl=%s\nfn=%s\n%d %" PRIu64 " %.0f\n", r->file ? r->file : "???",
			r->name, r->line > 0 ? r->line : 0,
			timed && r->self.sum > 0 ? (uint64_t)(r->self.sum * 1e6 + 0.5) : 0,
			r->calls.sum);
		for (size_t k = 0; k < m->n_arcs; k++) {
			const struct marc *a = &m->arcs[k];
			const struct mroutine *c = &m->r[a->callee];

			if (a->caller != rows[i])
				continue;
			fprintf(out,
				"cfi=%s\ncfn=%s\ncalls=%" PRIu64 " %d\n%d %" PRIu64 " %" PRIu64
				"\n",
				c->file ? c->file : "???", c->name, a->calls,
				c->line > 0 ? c->line : 0, r->line > 0 ? r->line : 0,
				timed && a->time_s > 0 ? (uint64_t)(a->time_s * 1e6 + 0.5) : 0,
				a->calls);
		}
	}
	fprintf(out, "\ntotals: %" PRIu64 " %" PRIu64 "\n", us, calls);
	free(rows);
}

int merge_write(const struct merge *m, FILE *out, const struct report_opts *opts)
{
	if (!m->n_in)
		return -EINVAL;
	switch (opts->format) {
	case FMT_CSV:
		write_csv(m, out, opts);
		break;
	case FMT_JSON:
		write_json(m, out, opts);
		break;
	case FMT_FOLDED:
		if (m->no_stacks) {
			fs_error("folded stacks: an input has no \"stacks\" (a report of an older "
				 "fortstat)");
			return -ENODATA;
		}
		write_folded(m, out);
		break;
	case FMT_CALLGRIND:
		write_callgrind(m, out, opts);
		break;
	case FMT_TABLE:
	default:
		write_table(m, out, opts);
		break;
	}
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* ---- the flame graph ---- */

static int cmp_siblings(const void *p, const void *q, void *arg)
{
	const struct merge *cmp_m = arg;
	const struct mnode *x = &cmp_m->nodes[*(const uint32_t *)p];
	const struct mnode *y = &cmp_m->nodes[*(const uint32_t *)q];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(cmp_m->r[x->routine].name, cmp_m->r[y->routine].name);
}

/*
 * A flame graph of the summed contexts: each frame as wide as its inclusive
 * value (self microseconds, or calls when counting), children in name order.
 */
int merge_write_svg(const struct merge *m, FILE *out)
{
	size_t n = m->n_nodes, i;
	double *incl = xcalloc(n, sizeof(*incl)), *x = xcalloc(n, sizeof(*x));
	double *next_x = xcalloc(n, sizeof(*next_x));
	int *depth = xcalloc(n, sizeof(*depth)), max_depth = 0;
	uint32_t *order = xcalloc(n, sizeof(*order));
	const double width = 1200, fh = 17;
	double scale;

	if (!m->n_in)
		return -EINVAL;
	if (m->no_stacks) {
		fs_error("flame graph: an input has no \"stacks\" (a report of an older fortstat)");
		free(incl), free(x), free(next_x), free(depth), free(order);
		return -ENODATA;
	}
	/* a parent's index is below its children's */
	for (i = n; i-- > 1;) {
		incl[i] += (double)node_value(m, &m->nodes[i]);
		incl[m->nodes[i].parent] += incl[i];
	}
	for (i = 1; i < n; i++) {
		depth[i] = depth[m->nodes[i].parent] + 1;
		if (depth[i] > max_depth)
			max_depth = depth[i];
		order[i - 1] = (uint32_t)i;
	}
	qsort_r(order, n - 1, sizeof(*order), cmp_siblings, (void *)m);
	/*
	 * Siblings in name order. Sorted by parent index, a parent's group comes
	 * after its own parent's (a smaller index): it is placed before its children.
	 */
	for (i = 0; i + 1 < n; i++) {
		uint32_t k = order[i], p = m->nodes[k].parent;

		x[k] = x[p] + next_x[p];
		next_x[p] += incl[k];
	}
	scale = incl[0] > 0 ? (width - 20) / incl[0] : 0;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"10\" y=\"20\" font-family=\"monospace\" font-size=\"14\">",
		width, (max_depth + 3) * fh);
	xml_str(out, m->program);
	fprintf(out, ": %zu inputs merged (%s)</text>\n", m->n_in,
		m->count_only ? "calls" : "self microseconds, summed");
	for (i = 1; i < n; i++) {
		double w = incl[i] * scale, y = (max_depth - depth[i] + 2) * fh;
		const char *name = m->r[m->nodes[i].routine].name;
		unsigned h = (unsigned)hash_name(name);

		if (w < 0.5)
			continue;
		fprintf(out, "<g><title>");
		xml_str(out, name);
		fprintf(out,
			" (%.0f %s)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.0f\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			incl[i], m->count_only ? "calls" : "us", 10 + x[i] * scale, y, w, fh - 1,
			205 + h % 50, 80 + (h >> 8) % 150, (h >> 16) % 55);
		/* the name when it fits, about 7 px a character */
		if ((double)strlen(name) * 7 < w - 6) {
			fprintf(out,
				"<text x=\"%.1f\" y=\"%.1f\" font-family=\"monospace\" "
				"font-size=\"11\">",
				13 + x[i] * scale, y + fh - 5);
			xml_str(out, name);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</svg>\n", out);
	free(incl), free(x), free(next_x), free(depth), free(order);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* ---- fortstat --merge ---- */

/* buf, whole, to path (through a temporary file renamed) or to standard output. */
static int put_whole(const char *path, const char *buf, size_t len)
{
	char *tmp;
	FILE *f;
	int fd, err = 0;

	if (!path)
		return rank_write_whole(stdout, buf, len);
	tmp = xasprintf("%s.tmp.XXXXXX", path);
	fd = mkstemp(tmp);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	f = fdopen(fd, "w");
	if (!f) {
		err = -errno;
		close(fd);
	} else {
		err = rank_write_whole(f, buf, len);
		if (fchmod(fd, 0644) < 0 && !err)
			err = -errno;
		if (fclose(f) != 0 && !err)
			err = -errno;
	}
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

int merge_command(char *const *files, size_t n, const struct report_opts *opts, const char *output,
		  const char *svg)
{
	struct merge *m;
	char *rep = NULL, *pic = NULL;
	size_t rep_len = 0, pic_len = 0;
	FILE *f;
	int err = 0, rc = EXIT_FS_ERROR;

	if (!n) {
		fs_error("--merge: no files given (fortstat --merge FILE...)");
		return EXIT_FS_ERROR;
	}
	m = merge_new();
	for (size_t i = 0; i < n; i++)
		if (merge_add_file(m, files[i]) < 0)
			goto out;
	f = open_memstream(&rep, &rep_len);
	if (!f || (err = merge_write(m, f, opts)) < 0) {
		if (f)
			fclose(f);
		if (err != -ENODATA)
			fs_error("--merge: cannot build the report: %s",
				 strerror(f ? -err : errno));
		goto out;
	}
	fclose(f);
	if (svg) {
		f = open_memstream(&pic, &pic_len);
		if (!f || (err = merge_write_svg(m, f)) < 0) {
			if (f)
				fclose(f);
			if (err != -ENODATA)
				fs_error("--merge: cannot build the flame graph: %s",
					 strerror(f ? -err : errno));
			goto out;
		}
		fclose(f);
	}
	/* Both are built: now they go out. */
	err = put_whole(output, rep, rep_len);
	if (err) {
		fs_error("%s: cannot write the report: %s", output ? output : "stdout",
			 strerror(-err));
		goto out;
	}
	if (svg && (err = put_whole(svg, pic, pic_len)) < 0) {
		fs_error("%s: cannot write the flame graph: %s", svg, strerror(-err));
		goto out;
	}
	rc = 0;
out:
	free(rep);
	free(pic);
	merge_free(m);
	return rc;
}
