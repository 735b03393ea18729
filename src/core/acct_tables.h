/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * acct_tables.h - private to src/core/: the accounting's two indexed tables
 * (account.h), with a time per lane beside lane 0's public structs. Arcs:
 * a contiguous array of struct acct_arc indexed by (caller, callee).
 * Calling-context trees: struct acct_node in an array, node 0 the root,
 * indexed by (parent, routine); a child always has a larger index than its
 * parent. Pure: memory alone; allocation failures die in xmalloc. An entry,
 * once made, keeps its index until the table is freed.
 */
#ifndef FORTSTAT_CORE_ACCT_TABLES_H
#define FORTSTAT_CORE_ACCT_TABLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/map.h"
#include "fortstat/util.h"

/*
 * Times on lanes 1.. (lane 0's are in the public structs): a routine's self
 * and inclusive time, an arc's inclusive and self time.
 */
struct ltimes {
	acct_time_t self, total;
};

/* Arcs: a contiguous array, indexed by (caller, callee); lt[k]: lane k's times. */
struct arcset {
	struct acct_arc *v;
	struct ltimes *lt[ACCT_LANES];
	size_t n, cap;
	int lanes;
	struct u64map idx; /* pair_key(caller, callee) -> index in v */
};

/*
 * What a thread's tree remembers of a node so that the usual call needs no
 * hash lookup: the child it last entered (0: none yet), and, as a child,
 * the arcs parent's routine -> its routine in the program's and the
 * thread's arc sets (SIZE_MAX: not known yet).
 */
struct hint {
	uint32_t child;
	size_t arc, tarc;
};

/*
 * A calling-context tree: nodes in an array (node 0 the root), indexed by
 * (parent, routine). `link` (thread trees only) maps each node to its node
 * in the merged tree; `hint` (thread trees only) caches lookups.
 */
struct cct {
	struct acct_node *v;
	uint32_t *link;
	struct hint *hint;
	acct_time_t *lself[ACCT_LANES]; /* lane k's self time per node (k >= 1) */
	int lanes;
	size_t n, cap;
	struct u64map idx; /* pair_key(parent, routine) -> node */
};

/* The map key of a pair of 32-bit indices (never 0, as the map wants). */
static inline uint64_t pair_key(uint32_t hi, uint32_t lo)
{
	return ((uint64_t)hi << 32 | lo) + 1;
}

/* A copy of n elements of size sz at p (NULL stays NULL). */
static inline void *dup_array(const void *p, size_t n, size_t sz)
{
	void *q;

	if (!p)
		return NULL;
	q = xmalloc(n * sz);
	memcpy(q, p, n * sz);
	return q;
}

/*
 * Arcs. A zeroed struct arcset with `lanes` set (1..ACCT_LANES) is an empty
 * set; arcset_free frees what it holds (not s).
 */
/* Index of the arc caller -> callee in s->v, created with zero counts and times if new. */
size_t arcset_get(struct arcset *s, uint32_t caller, uint32_t callee);
void arcset_free(struct arcset *s);
/* dst (uninitialised) made a deep copy of src, sharing nothing with it. */
void arcset_dup(struct arcset *dst, const struct arcset *src);

/*
 * Calling-context trees. cct_init makes c (zeroed) a tree of the root
 * alone, for `lanes` lanes; `linked`: a thread's tree, with `link`
 * and `hint` kept beside each node (link[] is the caller's to fill).
 */
void cct_init(struct cct *c, bool linked, int lanes);
void cct_free(struct cct *c);
/*
 * The child of `parent` for `routine`, created with zero counts if new
 * (*created set). Amortised O(1). When 2^32-2 nodes exist, returns parent.
 */
uint32_t cct_child(struct cct *c, uint32_t parent, uint32_t routine, bool *created);
/* dst (uninitialised) made a deep copy of src, sharing nothing with it. */
void cct_dup(struct cct *dst, const struct cct *src);

#endif
