// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * acct_copy.c - deep copies of an accounting state (account.h): acct_dup,
 * the whole of it; acct_lane, one lane's times as a state of its own; and
 * a finished state reshaped to the routines it used (acct_used,
 * acct_compact).
 */
#include "fortstat/account.h"

#include <stdlib.h>
#include <string.h>

#include "acct_int.h"
#include "fortstat/util.h"

/* A deep copy of a, sharing nothing with it; never NULL. */
struct acct *acct_dup(const struct acct *a)
{
	struct acct *c = xcalloc(1, sizeof(*c));
	size_t nr = a->n ? a->n : 1;

	synced(a);
	c->n = a->n;
	c->lanes = a->lanes;
	c->r = lines_dup(a->r, nr, sizeof(*a->r));
	c->rx = lines_dup(a->rx, nr, sizeof(*a->rx));
	c->list_cap = a->list_cap;
	c->list = a->list_cap ? xcalloc(a->list_cap, sizeof(*c->list)) : NULL;
	for (size_t i = 0; i < a->thr_n; i++) {
		const struct thread *t = a->list[i];
		struct thread *th = xmalloc(sizeof(*th));

		*th = *t;
		th->fr = dup_array(t->fr, t->cap, sizeof(*t->fr));
		th->ctx = NULL; /* caches: made again when needed */
		th->arcc = NULL;
		th->r = lines_dup(t->r, nr, sizeof(*t->r));
		th->rx = lines_dup(t->rx, nr, sizeof(*t->rx));
		arcset_dup(&th->arcs, &t->arcs);
		cct_dup(&th->cct, &t->cct);
		u64map_put(&c->thr, (uint64_t)(uint32_t)th->tid + 1, (uint64_t)(uintptr_t)th);
		c->list[c->thr_n++] = th;
	}
	arcset_dup(&c->arcs, &a->arcs);
	cct_dup(&c->cct, &a->cct);
	return c;
}

/*
 * Lane k's (k >= 1) times over lane 0's in routine results r (n of them);
 * rx: the copy's routine records, their other lanes' times cleared.
 */
static void lane_routines(struct acct_routine *r, struct rside *rx, const struct rside *from,
			  size_t n, int k)
{
	for (size_t i = 0; i < n; i++) {
		r[i].self = from[i].l[k - 1].self;
		r[i].total = from[i].l[k - 1].total;
		memset(rx[i].l, 0, sizeof(rx[i].l));
	}
}

static void lane_arcs(struct arcset *s, int k)
{
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].self = s->lt[i].l[k - 1].self;
		s->v[i].time = s->lt[i].l[k - 1].total;
	}
}

static void lane_nodes(struct cct *c, int k)
{
	for (size_t i = 0; i < c->n; i++)
		c->v[i].self = c->x[i].self[k - 1];
}

/* Copies of arcs s and tree t holding lane k's times alone (one lane). */
static void dup_lane(struct arcset *ds, struct cct *dt, const struct arcset *s, const struct cct *t,
		     int k)
{
	arcset_dup(ds, s);
	cct_dup(dt, t);
	if (k) {
		lane_arcs(ds, k);
		lane_nodes(dt, k);
	}
	free(ds->lt);
	ds->lt = NULL;
	for (size_t i = 0; i < dt->cap; i++)
		memset(dt->x[i].self, 0, sizeof(dt->x[i].self));
	ds->lanes = dt->lanes = 1;
}

/*
 * Lane k of a as a state of its own (one lane, lane k's times): a deep copy
 * that shares nothing with a. Never NULL.
 */
struct acct *acct_lane(const struct acct *a, int k)
{
	struct acct *c = xcalloc(1, sizeof(*c));
	size_t nr = a->n ? a->n : 1;

	synced(a);
	if (k < 0 || k >= a->lanes)
		k = 0;
	c->n = a->n;
	c->lanes = 1;
	c->r = lines_dup(a->r, nr, sizeof(*a->r));
	c->rx = lines_calloc(nr, sizeof(*c->rx));
	if (k)
		lane_routines(c->r, c->rx, a->rx, a->n, k);
	c->list_cap = a->list_cap;
	c->list = a->list_cap ? xcalloc(a->list_cap, sizeof(*c->list)) : NULL;
	for (size_t i = 0; i < a->thr_n; i++) {
		const struct thread *t = a->list[i];
		struct thread *th = xcalloc(1, sizeof(*th));

		th->tid = t->tid;
		th->seen = t->seen;
		th->last[0] = t->last[k];
		th->depth = th->cap = t->depth;
		th->fr = t->depth ? dup_array(t->fr, t->depth, sizeof(*t->fr)) : NULL;
		for (size_t j = 0; j < t->depth; j++)
			th->fr[j].t_enter[0] = t->fr[j].t_enter[k];
		th->entries = t->entries;
		th->made = t->made;
		th->r = lines_dup(t->r, nr, sizeof(*t->r));
		th->rx = lines_dup(t->rx, nr, sizeof(*t->rx)); /* open activations, nodes */
		if (k)
			lane_routines(th->r, th->rx, t->rx, a->n, k);
		else
			for (size_t j = 0; j < a->n; j++)
				memset(th->rx[j].l, 0, sizeof(th->rx[j].l));
		dup_lane(&th->arcs, &th->cct, &t->arcs, &t->cct, k);
		u64map_put(&c->thr, (uint64_t)(uint32_t)th->tid + 1, (uint64_t)(uintptr_t)th);
		c->list[c->thr_n++] = th;
	}
	dup_lane(&c->arcs, &c->cct, &a->arcs, &a->cct, k);
	return c;
}

/* ---- a finished state kept small ---- */

/* Does routine i have anything in results r and rx (calls, a time on any lane, a node)? */
static bool routine_used(const struct acct_routine *r, const struct rside *rx, int lanes)
{
	if (r->calls || r->calls_made || r->self || r->total || r->incomplete || rx->root)
		return true;
	for (int k = 1; k < lanes; k++)
		if (rx->l[k - 1].self || rx->l[k - 1].total)
			return true;
	return false;
}

static void mark_arcs(const struct arcset *s, uint32_t *map, size_t n)
{
	for (size_t k = 0; k < s->n; k++) {
		if (s->v[k].caller < n)
			map[s->v[k].caller] = 0;
		if (s->v[k].callee < n)
			map[s->v[k].callee] = 0;
	}
}

static void mark_nodes(const struct cct *c, uint32_t *map, size_t n)
{
	for (size_t k = 0; k < c->n; k++)
		if (c->v[k].routine < n)
			map[c->v[k].routine] = 0;
}

size_t acct_used(const struct acct *a, uint32_t *map)
{
	size_t n_new = 0;

	a = synced(a);
	for (size_t i = 0; i < a->n; i++)
		map[i] = routine_used(&a->r[i], &a->rx[i], a->lanes) ? 0 : ACCT_NONE;
	mark_arcs(&a->arcs, map, a->n);
	mark_nodes(&a->cct, map, a->n);
	for (size_t t = 0; t < a->thr_n; t++) {
		const struct thread *th = a->list[t];

		for (size_t i = 0; i < a->n; i++)
			if (map[i] == ACCT_NONE && routine_used(&th->r[i], &th->rx[i], a->lanes))
				map[i] = 0;
		mark_arcs(&th->arcs, map, a->n);
		mark_nodes(&th->cct, map, a->n);
	}
	for (size_t i = 0; i < a->n; i++)
		if (map[i] != ACCT_NONE)
			map[i] = (uint32_t)n_new++;
	return n_new;
}

/* Routine results r, rx (n of them) to the n_new that map keeps, in new arrays. */
static void compact_routines(struct acct_routine **r, struct rside **rx, const uint32_t *map,
			     size_t n, size_t n_new)
{
	struct acct_routine *nr = lines_calloc(n_new, sizeof(*nr));
	struct rside *nx = lines_calloc(n_new, sizeof(*nx));

	for (size_t i = 0; i < n; i++)
		if (map[i] != ACCT_NONE) {
			nr[map[i]] = (*r)[i];
			nx[map[i]] = (*rx)[i];
		}
	free(*r);
	free(*rx);
	*r = nr;
	*rx = nx;
}

static uint32_t renum(const uint32_t *map, size_t n, uint32_t i)
{
	return i < n ? map[i] : i; /* ACCT_NONE stays */
}

static void compact_arcs(struct arcset *s, const uint32_t *map, size_t n)
{
	if (s->n && s->cap > s->n) { /* no room kept for arcs to come */
		s->v = lines_grow(s->v, s->n, s->n, sizeof(*s->v));
		if (s->lt)
			s->lt = lines_grow(s->lt, s->n, s->n, sizeof(*s->lt));
		s->cap = s->n;
	}
	u64map_free(&s->idx);
	for (size_t k = 0; k < s->n; k++) {
		s->v[k].caller = renum(map, n, s->v[k].caller);
		s->v[k].callee = renum(map, n, s->v[k].callee);
		u64map_put(&s->idx, pair_key(s->v[k].caller, s->v[k].callee), k);
	}
}

static void compact_nodes(struct cct *c, const uint32_t *map, size_t n)
{
	if (c->cap > c->n) { /* nor for nodes (the root is always there) */
		c->v = lines_grow(c->v, c->n, c->n, sizeof(*c->v));
		c->x = lines_grow(c->x, c->n, c->n, sizeof(*c->x));
		c->cap = c->n;
	}
	u64map_free(&c->idx);
	for (size_t k = 0; k < c->n; k++) {
		c->v[k].routine = renum(map, n, c->v[k].routine);
		if (k) /* the root is no child */
			u64map_put(&c->idx, pair_key(c->v[k].parent, c->v[k].routine), k);
	}
}

bool acct_compact(struct acct *a, const uint32_t *map, size_t n_new)
{
	size_t n = a->n;

	if (a->rec)
		return false;
	for (size_t t = 0; t < a->thr_n; t++)
		if (a->list[t]->depth)
			return false;
	synced(a);
	compact_routines(&a->r, &a->rx, map, n, n_new);
	compact_arcs(&a->arcs, map, n);
	compact_nodes(&a->cct, map, n);
	for (size_t t = 0; t < a->thr_n; t++) {
		struct thread *th = a->list[t];

		compact_routines(&th->r, &th->rx, map, n, n_new);
		compact_arcs(&th->arcs, map, n);
		compact_nodes(&th->cct, map, n);
		free(th->ctx); /* caches by routine: made again when needed */
		free(th->arcc);
		th->ctx = NULL;
		th->arcc = NULL;
	}
	a->n = n_new;
	return true;
}
