// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * acct_copy.c - deep copies of an accounting state (account.h): acct_dup,
 * the whole of it; acct_lane, one lane's times as a state of its own.
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
