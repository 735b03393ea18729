// SPDX-License-Identifier: GPL-2.0-or-later
/* acct_tables.c - the accounting's arcs and calling-context trees (acct_tables.h). */
#include "acct_tables.h"

#include <stdlib.h>

/* ---- line-aligned arrays ---- */

void *lines_calloc(size_t n, size_t sz)
{
	void *p = NULL;

	if (!n)
		n = 1;
	if (n > SIZE_MAX / sz || posix_memalign(&p, ACCT_LINE, n * sz)) {
		fs_error("out of memory");
		exit(EXIT_FS_ERROR);
	}
	memset(p, 0, n * sz);
	return p;
}

void *lines_grow(void *p, size_t n, size_t m, size_t sz)
{
	void *q = lines_calloc(m, sz);

	if (p)
		memcpy(q, p, n * sz);
	free(p);
	return q;
}

void *lines_dup(const void *p, size_t n, size_t sz)
{
	void *q;

	if (!p)
		return NULL;
	q = lines_calloc(n, sz);
	memcpy(q, p, n * sz);
	return q;
}

/* ---- calling-context trees ---- */

void cct_init(struct cct *c, int lanes)
{
	c->lanes = lanes;
	c->cap = 16;
	c->v = lines_calloc(c->cap, sizeof(*c->v));
	c->x = lines_calloc(c->cap, sizeof(*c->x));
	c->x[0].arc = c->x[0].tarc = SIZE_MAX;
	c->n = 1;
	c->v[0].parent = ACCT_NONE;
	c->v[0].routine = ACCT_NONE;
}

void cct_free(struct cct *c)
{
	free(c->v);
	free(c->x);
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
		c->x = lines_grow(c->x, c->cap, 2 * c->cap, sizeof(*c->x));
		c->v = lines_grow(c->v, c->cap, 2 * c->cap, sizeof(*c->v));
		c->cap *= 2;
	}
	node = (uint32_t)c->n++;
	c->v[node] = (struct acct_node){.parent = parent, .routine = routine};
	c->x[node] = (struct nside){.arc = SIZE_MAX, .tarc = SIZE_MAX};
	u64map_put(&c->idx, key, node);
	*created = true;
	return node;
}

void cct_dup(struct cct *dst, const struct cct *src)
{
	*dst = *src;
	dst->v = lines_dup(src->v, src->cap, sizeof(*src->v));
	dst->x = lines_dup(src->x, src->cap, sizeof(*src->x));
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
		size_t cap = s->cap ? 2 * s->cap : 32;

		s->v = lines_grow(s->v, s->cap, cap, sizeof(*s->v));
		if (s->lanes > 1)
			s->lt = lines_grow(s->lt, s->cap, cap, sizeof(*s->lt));
		s->cap = cap;
	}
	idx = s->n++;
	s->v[idx] = (struct acct_arc){.caller = caller, .callee = callee};
	if (s->lanes > 1)
		s->lt[idx] = (struct aside){0};
	u64map_put(&s->idx, key, idx);
	return idx;
}

void arcset_free(struct arcset *s)
{
	free(s->v);
	free(s->lt);
	u64map_free(&s->idx);
}

void arcset_dup(struct arcset *dst, const struct arcset *src)
{
	*dst = *src;
	dst->v = lines_dup(src->v, src->cap, sizeof(*src->v));
	dst->lt = lines_dup(src->lt, src->cap, sizeof(*src->lt));
	u64map_dup(&dst->idx, &src->idx);
}
