// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * acct_state.c - an accounting state (account.h) made, grown and freed, and
 * its threads found and made (acct_int.h).
 */
#include "fortstat/account.h"

#include <stdlib.h>
#include <string.h>

#include "acct_int.h"
#include "fortstat/util.h"

/* ---- threads ---- */

struct thread *thread_lookup(const struct acct *a, int tid)
{
	uint64_t p;

	return u64map_get(&a->thr, (uint64_t)(uint32_t)tid + 1, &p) ? (struct thread *)(uintptr_t)p
								    : NULL;
}

struct thread *thread_new(struct acct *a, int tid)
{
	struct thread *th = thread_lookup(a, tid);

	if (th) {
		a->hot = th;
		return th;
	}
	if (a->thr_n == a->list_cap) {
		a->list_cap = a->list_cap ? 2 * a->list_cap : 16;
		a->list = xrealloc(a->list, a->list_cap * sizeof(*a->list));
	}
	if (a->thr_n == 1)
		solo_sync(a); /* from now on, every event updates the program's too */
	th = xcalloc(1, sizeof(*th));
	th->tid = tid;
	th->r = lines_calloc(a->n, sizeof(*th->r));
	th->rx = lines_calloc(a->n, sizeof(*th->rx));
	th->arcs.lanes = a->lanes;
	cct_init(&th->cct, a->lanes);
	u64map_put(&a->thr, (uint64_t)(uint32_t)tid + 1, (uint64_t)(uintptr_t)th);
	a->list[a->thr_n++] = th;
	a->hot = th;
	return th;
}

/* ---- the interface ---- */

/* A new accounting state for n_routines routines and `lanes` clocks, all zero. Never NULL. */
struct acct *acct_new_lanes(size_t n_routines, int lanes)
{
	struct acct *a = xcalloc(1, sizeof(*a));

	a->n = n_routines;
	a->lanes = lanes < 1 ? 1 : lanes > ACCT_LANES ? ACCT_LANES : lanes;
	a->r = lines_calloc(n_routines, sizeof(*a->r));
	a->rx = lines_calloc(n_routines, sizeof(*a->rx));
	a->arcs.lanes = a->lanes;
	cct_init(&a->cct, a->lanes);
	return a;
}

struct acct *acct_new(size_t n_routines)
{
	return acct_new_lanes(n_routines, 1);
}

void acct_set_recorder(struct acct *a, int lane, acct_record_fn fn, void *arg)
{
	a->rec = fn;
	a->rec_arg = arg;
	a->rec_lane = lane >= 0 && lane < a->lanes ? lane : 0;
}

int acct_lanes(const struct acct *a)
{
	return a->lanes;
}

void acct_grow(struct acct *a, size_t n_routines)
{
	size_t old = a->n, i, o1 = old ? old : 1;

	if (n_routines <= old)
		return;
	a->r = lines_grow(a->r, o1, n_routines, sizeof(*a->r));
	a->rx = lines_grow(a->rx, o1, n_routines, sizeof(*a->rx));
	for (i = 0; i < a->thr_n; i++) {
		struct thread *th = a->list[i];

		th->r = lines_grow(th->r, o1, n_routines, sizeof(*th->r));
		th->rx = lines_grow(th->rx, o1, n_routines, sizeof(*th->rx));
	}
	a->n = n_routines;
}

/* Free everything acct_new and the events allocated; a may be NULL. */
void acct_free(struct acct *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->thr_n; i++) {
		struct thread *th = a->list[i];

		free(th->fr);
		free(th->ctx);
		free(th->arcc);
		free(th->r);
		free(th->rx);
		arcset_free(&th->arcs);
		cct_free(&th->cct);
		free(th);
	}
	u64map_free(&a->thr);
	free(a->list);
	arcset_free(&a->arcs);
	cct_free(&a->cct);
	free(a->r);
	free(a->rx);
	free(a);
}
