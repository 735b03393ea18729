// SPDX-License-Identifier: GPL-2.0-or-later
/* acct_tables.c - the accounting's arcs and calling-context trees (acct_tables.h). */
#include "acct_tables.h"

#include <stdlib.h>

/* ---- calling-context trees ---- */

void cct_init(struct cct *c, bool linked, int lanes)
{
	c->lanes = lanes;
	c->cap = 16;
	for (int k = 1; k < lanes; k++)
		c->lself[k] = xcalloc(c->cap, sizeof(*c->lself[k]));
	c->v = xcalloc(c->cap, sizeof(*c->v));
	c->link = linked ? xcalloc(c->cap, sizeof(*c->link)) : NULL;
	c->hint = NULL;
	if (linked) {
		c->hint = xcalloc(c->cap, sizeof(*c->hint));
		c->hint[0].arc = c->hint[0].tarc = SIZE_MAX;
	}
	c->n = 1;
	c->v[0].parent = ACCT_NONE;
	c->v[0].routine = ACCT_NONE;
}

void cct_free(struct cct *c)
{
	free(c->v);
	free(c->link);
	free(c->hint);
	for (int k = 1; k < c->lanes; k++)
		free(c->lself[k]);
	u64map_free(&c->idx);
}

uint32_t cct_child(struct cct *c, uint32_t parent, uint32_t routine, bool *created)
{
	uint64_t key = pair_key(parent, routine), found;
	uint32_t node;

	*created = false;
	if (u64map_get(&c->idx, key, &found))
		return (uint32_t)found;
	if (c->n >= UINT32_MAX - 1)
		return parent;
	if (c->n == c->cap) {
		c->cap *= 2;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
		if (c->link)
			c->link = xrealloc(c->link, c->cap * sizeof(*c->link));
		if (c->hint)
			c->hint = xrealloc(c->hint, c->cap * sizeof(*c->hint));
		for (int k = 1; k < c->lanes; k++)
			c->lself[k] = xrealloc(c->lself[k], c->cap * sizeof(*c->lself[k]));
	}
	node = (uint32_t)c->n++;
	c->v[node] = (struct acct_node){.parent = parent, .routine = routine};
	for (int k = 1; k < c->lanes; k++)
		c->lself[k][node] = 0;
	if (c->hint)
		c->hint[node] = (struct hint){.child = 0, .arc = SIZE_MAX, .tarc = SIZE_MAX};
	u64map_put(&c->idx, key, node);
	*created = true;
	return node;
}

void cct_dup(struct cct *dst, const struct cct *src)
{
	*dst = *src;
	dst->v = dup_array(src->v, src->cap, sizeof(*src->v));
	dst->link = dup_array(src->link, src->cap, sizeof(*src->link));
	dst->hint = dup_array(src->hint, src->cap, sizeof(*src->hint));
	for (int k = 1; k < src->lanes; k++)
		dst->lself[k] = dup_array(src->lself[k], src->cap, sizeof(*src->lself[k]));
	u64map_dup(&dst->idx, &src->idx);
}

/* ---- arcs ---- */

size_t arcset_get(struct arcset *s, uint32_t caller, uint32_t callee)
{
	uint64_t key = pair_key(caller, callee), found;
	size_t idx;

	if (u64map_get(&s->idx, key, &found))
		return (size_t)found;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
		for (int k = 1; k < s->lanes; k++)
			s->lt[k] = xrealloc(s->lt[k], s->cap * sizeof(*s->lt[k]));
	}
	idx = s->n++;
	s->v[idx] = (struct acct_arc){.caller = caller, .callee = callee};
	for (int k = 1; k < s->lanes; k++)
		s->lt[k][idx] = (struct ltimes){0, 0};
	u64map_put(&s->idx, key, idx);
	return idx;
}

void arcset_free(struct arcset *s)
{
	free(s->v);
	for (int k = 1; k < s->lanes; k++)
		free(s->lt[k]);
	u64map_free(&s->idx);
}

void arcset_dup(struct arcset *dst, const struct arcset *src)
{
	*dst = *src;
	dst->v = dup_array(src->v, src->cap, sizeof(*src->v));
	for (int k = 1; k < src->lanes; k++)
		dst->lt[k] = dup_array(src->lt[k], src->cap, sizeof(*src->lt[k]));
	u64map_dup(&dst->idx, &src->idx);
}
