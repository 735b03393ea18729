/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * map.h - the one hash map of fortstat: open addressing from non-zero 64-bit
 * keys to 64-bit values (addresses, thread ids, indices).
 */
#ifndef FORTSTAT_MAP_H
#define FORTSTAT_MAP_H

#include <stddef.h>
#include <stdint.h>

/* Zero-initialised is an empty map. Key 0 is never stored (it marks a free cell). */
struct u64map {
	uint64_t *keys;
	uint64_t *vals;
	size_t cap, n; /* cells (a power of two, or 0), keys stored */
};

/* Store v under k (k != 0), replacing what was there. */
void u64map_put(struct u64map *m, uint64_t k, uint64_t v);

/* Returns 1 and sets *v (may be NULL) when k is present, else 0. */
int u64map_get(const struct u64map *m, uint64_t k, uint64_t *v);

/* Remove k; returns 1 when it was present. */
int u64map_del(struct u64map *m, uint64_t k);

/* A copy of src in *dst (dst's old contents are not freed). */
void u64map_dup(struct u64map *dst, const struct u64map *src);

/* Free the cells; the map is empty again. */
void u64map_free(struct u64map *m);

#endif
