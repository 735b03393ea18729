// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * acct_results.c - an accounting state's results read (account.h): the
 * program's, made equal to its only thread's first while one thread alone
 * has had events (acct_int.h), and each thread's.
 */
#include "fortstat/account.h"

#include <string.h>

#include "acct_int.h"

/* The program's results made equal to its only thread's (see struct acct). */
void solo_sync(struct acct *a)
{
	const struct thread *th;

	if (!a->stale || a->thr_n != 1)
		return;
	a->stale = false;
	th = a->list[0];
	memcpy(a->r, th->r, a->n * sizeof(*a->r));
	for (size_t i = 0; a->lanes > 1 && i < a->n; i++)
		memcpy(a->rx[i].l, th->rx[i].l, sizeof(a->rx[i].l));
	for (size_t i = 0; i < th->arcs.n; i++) {
		const struct acct_arc *t = &th->arcs.v[i];
		uint64_t j;

		if (!u64map_get(&a->arcs.idx, pair_key(t->caller, t->callee), &j))
			continue; /* (every arc of the thread is the program's too) */
		a->arcs.v[j].calls = t->calls;
		a->arcs.v[j].time = t->time;
		a->arcs.v[j].self = t->self;
		if (a->lanes > 1)
			a->arcs.lt[j] = th->arcs.lt[i];
	}
	for (size_t i = 0; i < th->cct.n; i++) {
		const struct acct_node *t = &th->cct.v[i];
		uint32_t m = th->cct.x[i].link;

		a->cct.v[m].calls = t->calls;
		a->cct.v[m].calls_made = t->calls_made;
		a->cct.v[m].self = t->self;
		memcpy(a->cct.x[m].self, th->cct.x[i].self, sizeof(a->cct.x[m].self));
	}
}

/* A reader's view of a: the program's results up to date (a is const to the caller). */
const struct acct *synced(const struct acct *a)
{
	if (a->stale)
		solo_sync((struct acct *)(uintptr_t)a);
	return a;
}

/*
 * One routine's results are read where they are up to date: while one
 * thread alone has had events (a->stale), in its own; solo_sync, which
 * copies every routine, arc and context, would make each read cost the
 * whole program.
 */
acct_time_t acct_lane_self(const struct acct *a, int k, uint32_t routine)
{
	const struct acct_routine *r = a->r;
	const struct rside *rx = a->rx;

	if (routine >= a->n || k < 0 || k >= a->lanes)
		return 0;
	if (a->stale && a->thr_n == 1) {
		r = a->list[0]->r;
		rx = a->list[0]->rx;
	}
	return k ? rx[routine].l[k - 1].self : r[routine].self;
}

uint64_t acct_routine_calls(const struct acct *a, uint32_t routine)
{
	if (routine >= a->n)
		return 0;
	return (a->stale && a->thr_n == 1 ? a->list[0]->r : a->r)[routine].calls;
}

/* The per-routine results, an array of acct_n_routines(a) entries. */
const struct acct_routine *acct_routines(const struct acct *a)
{
	return synced(a)->r;
}

/* The number of routines a was created for. */
size_t acct_n_routines(const struct acct *a)
{
	return a->n;
}

/* The arcs seen so far (valid until the next event); *n their number. */
const struct acct_arc *acct_arcs(const struct acct *a, size_t *n)
{
	*n = a->arcs.n;
	return synced(a)->arcs.v;
}

/* The merged calling-context tree (valid until the next event); *n its nodes. */
const struct acct_node *acct_nodes(const struct acct *a, size_t *n)
{
	*n = a->cct.n;
	return synced(a)->cct.v;
}

/* Threads that had an event. */
size_t acct_n_threads(const struct acct *a)
{
	return a->thr_n;
}

/* Thread i (order of first event) into *out: 0, or -1 when there is no such thread. */
int acct_thread(const struct acct *a, size_t i, struct acct_thread_info *out)
{
	const struct thread *th;

	if (i >= a->thr_n)
		return -1;
	th = a->list[i];
	out->tid = th->tid;
	out->r = th->r;
	out->arcs = th->arcs.v;
	out->n_arcs = th->arcs.n;
	out->nodes = th->cct.v;
	out->n_nodes = th->cct.n;
	return 0;
}

/* Sum of every routine's gross self time. */
acct_time_t acct_total_self(const struct acct *a)
{
	acct_time_t s = 0;
	size_t i;

	synced(a);
	for (i = 0; i < a->n; i++)
		s += a->r[i].self;
	return s;
}

/* Sum of every routine's calls. */
uint64_t acct_total_calls(const struct acct *a)
{
	uint64_t s = 0;
	size_t i;

	synced(a);
	for (i = 0; i < a->n; i++)
		s += a->r[i].calls;
	return s;
}
