// SPDX-License-Identifier: GPL-2.0-or-later
/* map.c - open addressing with linear probing and backward-shift deletion. */
#include <stdlib.h>
#include <string.h>

#include "fortstat/map.h"
#include "fortstat/util.h"

static size_t slot_of(uint64_t k, size_t cap)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & (cap - 1);
}

static void grow(struct u64map *m)
{
	struct u64map old = *m;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->n = 0;
	m->keys = xcalloc(m->cap, sizeof(*m->keys));
	m->vals = xcalloc(m->cap, sizeof(*m->vals));
	for (size_t i = 0; i < old.cap; i++)
		if (old.keys[i])
			u64map_put(m, old.keys[i], old.vals[i]);
	free(old.keys);
	free(old.vals);
}

void u64map_put(struct u64map *m, uint64_t k, uint64_t v)
{
	size_t i;

	if ((m->n + 1) * 2 > m->cap)
		grow(m);
	for (i = slot_of(k, m->cap); m->keys[i] && m->keys[i] != k; i = (i + 1) & (m->cap - 1))
		;
	if (!m->keys[i])
		m->n++;
	m->keys[i] = k;
	m->vals[i] = v;
}

static size_t find(const struct u64map *m, uint64_t k)
{
	if (!m->cap || !k)
		return (size_t)-1;
	for (size_t i = slot_of(k, m->cap); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == k)
			return i;
	return (size_t)-1;
}

int u64map_get(const struct u64map *m, uint64_t k, uint64_t *v)
{
	size_t i = find(m, k);

	if (i == (size_t)-1)
		return 0;
	if (v)
		*v = m->vals[i];
	return 1;
}

int u64map_del(struct u64map *m, uint64_t k)
{
	size_t i = find(m, k), mask = m->cap - 1;

	if (i == (size_t)-1)
		return 0;
	m->keys[i] = 0;
	m->n--;
	/* Move back the keys of the run after i that would no longer be found. */
	for (size_t j = (i + 1) & mask; m->keys[j]; j = (j + 1) & mask) {
		size_t home = slot_of(m->keys[j], m->cap);

		if (((j - home) & mask) >= ((j - i) & mask)) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			m->keys[j] = 0;
			i = j;
		}
	}
	return 1;
}

void u64map_dup(struct u64map *dst, const struct u64map *src)
{
	*dst = *src;
	if (!src->cap)
		return;
	dst->keys = xmalloc(src->cap * sizeof(*dst->keys));
	dst->vals = xmalloc(src->cap * sizeof(*dst->vals));
	memcpy(dst->keys, src->keys, src->cap * sizeof(*dst->keys));
	memcpy(dst->vals, src->vals, src->cap * sizeof(*dst->vals));
}

void u64map_free(struct u64map *m)
{
	free(m->keys);
	free(m->vals);
	memset(m, 0, sizeof(*m));
}
