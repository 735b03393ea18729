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

/*
 * Layout: what an event touches of a routine, an arc or a node beside lane
 * 0's public struct is one record a line (ACCT_LINE bytes, aligned), every
 * lane's times together: with one array a lane, an event of the books' four
 * lanes touched four lines an entry where it now touches two (cc1's 26,000
 * routines and their trees miss the cache at most of them). Lane k's
 * (k >= 1) times are at [k - 1].
 */
#define ACCT_LINE 64
#define ACCT_XLANES (ACCT_LANES - 1)
_Static_assert(sizeof(struct acct_routine) == ACCT_LINE &&
		   ACCT_LINE % sizeof(struct acct_node) == 0 &&
		   ACCT_LINE % sizeof(struct acct_arc) == 0,
	       "a routine a line, two nodes or arcs a line");

/* An arc's times on lanes 1.. */
struct aside {
	struct ltimes l[ACCT_XLANES];
} __attribute__((aligned(ACCT_LINE)));

/* Arcs: a contiguous array, indexed by (caller, callee); lt[i]: arc i's other lanes. */
struct arcset {
	struct acct_arc *v;
	struct aside *lt;
	size_t n, cap;
	int lanes;
	struct u64map idx; /* pair_key(caller, callee) -> index in v */
};

/*
 * A node's record beside its public struct: its self time on lanes 1..,
 * and what a thread's tree remembers of it so that the usual call needs no
 * hash lookup: the child it last entered (`child`, 0: none yet), and, as a
 * child, the arcs parent's routine -> its routine in the program's and the
 * thread's arc sets (`arc`, `tarc`, SIZE_MAX: not known yet); `link`, its
 * node in the merged tree.
 */
struct nside {
	acct_time_t self[ACCT_XLANES];
	uint32_t child;
	uint32_t link;
	size_t arc, tarc;
} __attribute__((aligned(ACCT_LINE)));

/*
 * A calling-context tree: nodes in an array (node 0 the root), indexed by
 * (parent, routine), and each node's record (struct nside) beside. `link`,
 * `child`, `arc` and `tarc` are a thread tree's alone (link's the caller's
 * to fill).
 */
struct cct {
	struct acct_node *v;
	struct nside *x;
	int lanes;
	size_t n, cap;
	struct u64map idx; /* pair_key(parent, routine) -> node */
};

/*
 * Line-aligned arrays: n zeroed elements; p's n grown to m, the new ones
 * zeroed; a copy of n (NULL stays NULL). Freed by free(). Allocation
 * failures die as xmalloc's. An element of a line (a routine's results,
 * the records beside) or half a line (a node, an arc) never straddles two:
 * from malloc, 16 bytes past a line, half the nodes and arcs and most
 * routines did.
 */
void *lines_calloc(size_t n, size_t sz);
void *lines_grow(void *p, size_t n, size_t m, size_t sz);
void *lines_dup(const void *p, size_t n, size_t sz);

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
 * alone, for `lanes` lanes.
 */
void cct_init(struct cct *c, int lanes);
void cct_free(struct cct *c);
/*
 * The child of `parent` for `routine`, created with zero counts if new
 * (*created set). Amortised O(1). When 2^32-2 nodes exist, returns parent.
 */
uint32_t cct_child(struct cct *c, uint32_t parent, uint32_t routine, bool *created);
/* dst (uninitialised) made a deep copy of src, sharing nothing with it. */
void cct_dup(struct cct *dst, const struct cct *src);

#endif
