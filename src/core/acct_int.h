/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * acct_int.h - private to the accounting's files (account.c: the events;
 * acct_state.c: making, growing and freeing a state, its threads;
 * acct_results.c: reading results; acct_copy.c: copies and lanes): the
 * state behind account.h's opaque struct acct. Not a public contract.
 *
 * The program's results (r, lr, arcs, cct) and each thread's own are kept
 * side by side; while a single thread has had events only its own are
 * updated, and the program's are made equal to them (solo_sync) before
 * anything reads them (synced).
 */
#ifndef FORTSTAT_CORE_ACCT_INT_H
#define FORTSTAT_CORE_ACCT_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "acct_tables.h"
#include "fortstat/account.h"
#include "fortstat/map.h"

/*
 * One open activation on a thread's shadow stack. `arc` and `tarc` index the
 * arcs (caller at push time, or the chaining routine -> routine) of the whole
 * program and of the thread: they get the activation's inclusive time when
 * it closes, if it is outermost, and its self time as it runs. `node` is its
 * context in the thread's calling-context tree.
 */
struct frame {
	uint64_t slot;
	uint64_t ret;
	acct_time_t t_enter[ACCT_LANES];
	size_t arc, tarc;
	uint64_t entries0, made0; /* the thread's counters when it opened */
	uint32_t routine;
	uint32_t node;
	bool outermost;
};

/*
 * A thread's contexts looked up lately, direct-mapped by (parent, routine):
 * a parent that calls many routines in turn (an interpreter's loop) misses
 * its node's hint at most calls, and a hash lookup costs four times this
 * (and two cache misses in a big tree). A context, once made, never
 * changes: a slot is right or holds another key. 8,192 slots (128 KiB a
 * thread that had events): cc1 under -f went to the tree at one entry in 7
 * with 1,024, at one in 20 with these (146,990 lookups in 2.9 M entries).
 */
#define CTX_BITS 13
#define CTX_SLOTS (1u << CTX_BITS)
struct ctx_slot {
	uint64_t key; /* pair_key(parent, routine); 0: empty */
	uint32_t node;
};

/*
 * A thread's arcs looked up lately, direct-mapped by (caller, callee): the
 * arcs of a tail call or a count, which no node's hint keeps (two hash
 * lookups each). An arc, once made, keeps its index in both sets.
 */
#define ARC_SLOTS 256
struct arc_slot {
	uint64_t key; /* pair_key(caller, callee); 0: empty */
	size_t arc, tarc;
};

/*
 * A routine's record beside its public struct (one line, acct_tables.h):
 * its times on lanes 1.., and in a thread's, its open activations, its
 * node while active and its node under the root (`root`, 0: not made yet:
 * where the throttled routines' calls are counted, away from the stack,
 * which the parent's hint and the direct-mapped contexts missed at one in
 * two, a hash lookup each under cc1); the last two unused in the program's.
 */
struct rside {
	struct ltimes l[ACCT_XLANES];
	uint32_t active;
	uint32_t node;
	uint32_t root;
} __attribute__((aligned(ACCT_LINE)));

struct thread {
	int tid;
	bool seen;		      /* `last` holds times */
	acct_time_t last[ACCT_LANES]; /* times of the thread's previous event */
	struct frame *fr;	      /* shadow stack, fr[0] the bottom */
	size_t depth, cap;
	uint64_t entries, made; /* entries and calls made on this thread so far */
	struct acct_routine *r; /* this thread's per-routine results */
	struct rside *rx;	/* and their other lanes, open activations, nodes */
	struct arcset arcs;
	struct cct cct;
	struct ctx_slot *ctx;  /* CTX_SLOTS (parent, routine) -> node seen last (lazily) */
	struct arc_slot *arcc; /* ARC_SLOTS (caller, callee) -> arcs seen last (lazily) */
};

struct acct {
	size_t n;
	int lanes; /* clocks fed together: lane 0's times in r, arcs, nodes; others beside */
	struct acct_routine *r;
	struct rside *rx; /* the routines' other lanes */

	struct u64map thr; /* tid + 1 -> struct thread * */
	size_t thr_n;
	struct thread *hot;   /* last thread looked up */
	struct thread **list; /* threads in order of their first event */
	size_t list_cap;

	struct arcset arcs;
	struct cct cct; /* every thread's tree merged */
	/*
	 * While one thread has had events, its results are the program's: the
	 * events update the thread's alone (half the work), and the program's
	 * are copied from it when read (solo_sync). `stale`: they lag behind.
	 */
	bool stale;
	acct_record_fn rec; /* told of each activation closed (NULL: none) */
	void *rec_arg;
	int rec_lane;
};

/*
 * Inlined where called with constant lanes (the books' four), its loop
 * unrolled: an event's path was a fifth loop control.
 */
#define HOT_INLINE static inline __attribute__((always_inline))

/*
 * Is a's only thread so far the whole program (its results the program's)?
 * `event`: an event of that thread is being taken, so the program's copy
 * will lag behind it.
 */
static inline bool solo(struct acct *a, bool event)
{
	if (a->thr_n > 1)
		return false;
	a->stale |= event;
	return true;
}

/* The program's results made equal to its only thread's (see struct acct). */
void solo_sync(struct acct *a);
/* A reader's view of a: the program's results up to date (a is const to the caller). */
const struct acct *synced(const struct acct *a);

/* The thread of tid, or NULL (a hash lookup). */
struct thread *thread_lookup(const struct acct *a, int tid);
/* The thread of tid, made (with zero results) if new; it becomes a->hot. */
struct thread *thread_new(struct acct *a, int tid);

/* The thread of tid, or NULL; the one last looked up without a hash lookup. */
static inline struct thread *thread_find(const struct acct *a, int tid)
{
	if (a->hot && a->hot->tid == tid)
		return a->hot;
	return thread_lookup(a, tid);
}

/* The thread of tid, made if new. */
static inline struct thread *thread_get(struct acct *a, int tid)
{
	if (a->hot && a->hot->tid == tid)
		return a->hot;
	return thread_new(a, tid);
}

#endif
