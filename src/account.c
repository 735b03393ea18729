// SPDX-License-Identifier: GPL-2.0-or-later
/* account.c - shadow stacks, switched clocks (FORTSTAT), inclusive time, arcs, overhead. */
#include "fortstat/account.h"

#include <stdlib.h>
#include <string.h>

#include "fortstat/util.h"

/*
 * One open activation on a thread's shadow stack. `arc` indexes a->arcs: the
 * arc (caller at push time, or the chaining routine -> routine) that gets
 * the activation's inclusive time when it closes, if it is outermost.
 */
struct frame {
	uint64_t slot;
	uint64_t ret;
	acct_time_t t_enter;
	size_t arc;
	uint32_t routine;
	bool outermost;
};

struct thread {
	int tid;
	bool seen;	  /* `last` holds a time */
	acct_time_t last; /* time of the thread's previous event */
	struct frame *fr; /* shadow stack, fr[0] the bottom */
	size_t depth, cap;
	uint32_t *active; /* per routine: open activations (lazily allocated) */
};

struct acct {
	size_t n;
	struct acct_routine *r;

	/* threads: open addressing, linear probing, power-of-two size */
	struct thread **thr;
	size_t thr_cap, thr_n;
	struct thread *hot; /* last thread looked up */

	/* arcs: contiguous array + open-addressing index (slot holds index + 1) */
	struct acct_arc *arcs;
	size_t arcs_n, arcs_cap;
	size_t *arc_idx;
	size_t arc_idx_cap;
};

static inline size_t hash_u64(uint64_t k)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdULL;
	k ^= k >> 33;
	k *= 0xc4ceb9fe1a85ec53ULL;
	k ^= k >> 33;
	return (size_t)k;
}

/* ---- threads ---- */

static struct thread *thread_find(const struct acct *a, int tid)
{
	size_t mask, i;

	if (a->hot && a->hot->tid == tid)
		return a->hot;
	if (!a->thr_cap)
		return NULL;
	mask = a->thr_cap - 1;
	for (i = hash_u64((uint32_t)tid) & mask; a->thr[i]; i = (i + 1) & mask)
		if (a->thr[i]->tid == tid)
			return a->thr[i];
	return NULL;
}

static void thread_insert(struct thread **tab, size_t cap, struct thread *th)
{
	size_t mask = cap - 1, i;

	for (i = hash_u64((uint32_t)th->tid) & mask; tab[i]; i = (i + 1) & mask)
		;
	tab[i] = th;
}

static struct thread *thread_get(struct acct *a, int tid)
{
	struct thread *th = thread_find(a, tid);

	if (th) {
		a->hot = th;
		return th;
	}
	if (2 * (a->thr_n + 1) > a->thr_cap) {
		size_t ncap = a->thr_cap ? 2 * a->thr_cap : 16, i;
		struct thread **ntab = xcalloc(ncap, sizeof(*ntab));

		for (i = 0; i < a->thr_cap; i++)
			if (a->thr[i])
				thread_insert(ntab, ncap, a->thr[i]);
		free(a->thr);
		a->thr = ntab;
		a->thr_cap = ncap;
	}
	th = xcalloc(1, sizeof(*th));
	th->tid = tid;
	thread_insert(a->thr, a->thr_cap, th);
	a->thr_n++;
	a->hot = th;
	return th;
}

/* ---- arcs ---- */

static uint64_t arc_key(uint32_t caller, uint32_t callee)
{
	return (uint64_t)caller << 32 | callee;
}

static void arc_index_put(size_t *tab, size_t cap, const struct acct_arc *arcs, size_t idx)
{
	size_t mask = cap - 1;
	size_t i = hash_u64(arc_key(arcs[idx].caller, arcs[idx].callee)) & mask;

	while (tab[i])
		i = (i + 1) & mask;
	tab[i] = idx + 1;
}

/* Index of the arc caller -> callee in a->arcs, created with zero counts if new. */
static size_t arc_get(struct acct *a, uint32_t caller, uint32_t callee)
{
	size_t mask, i, idx;

	if (a->arc_idx_cap) {
		mask = a->arc_idx_cap - 1;
		for (i = hash_u64(arc_key(caller, callee)) & mask; a->arc_idx[i];
		     i = (i + 1) & mask) {
			const struct acct_arc *arc = &a->arcs[a->arc_idx[i] - 1];

			if (arc->caller == caller && arc->callee == callee)
				return a->arc_idx[i] - 1;
		}
	}
	if (2 * (a->arcs_n + 1) > a->arc_idx_cap) {
		size_t ncap = a->arc_idx_cap ? 2 * a->arc_idx_cap : 64;
		size_t *ntab = xcalloc(ncap, sizeof(*ntab));

		for (idx = 0; idx < a->arcs_n; idx++)
			arc_index_put(ntab, ncap, a->arcs, idx);
		free(a->arc_idx);
		a->arc_idx = ntab;
		a->arc_idx_cap = ncap;
	}
	if (a->arcs_n == a->arcs_cap) {
		a->arcs_cap = a->arcs_cap ? 2 * a->arcs_cap : 32;
		a->arcs = xrealloc(a->arcs, a->arcs_cap * sizeof(*a->arcs));
	}
	idx = a->arcs_n++;
	a->arcs[idx] = (struct acct_arc){.caller = caller, .callee = callee};
	arc_index_put(a->arc_idx, a->arc_idx_cap, a->arcs, idx);
	return idx;
}

/* ---- clocks ---- */

/*
 * The thread's event at t: credit the time since its previous event to the
 * routine on top of its stack, and return the effective time of the event
 * (t, or the previous event's time if the clock went backwards).
 */
static acct_time_t credit(struct acct *a, struct thread *th, acct_time_t t)
{
	if (!th->seen) {
		th->seen = true;
		th->last = t;
		return t;
	}
	if (t <= th->last)
		return th->last;
	if (th->depth)
		a->r[th->fr[th->depth - 1].routine].self += t - th->last;
	th->last = t;
	return t;
}

static uint32_t top_routine(const struct thread *th)
{
	return th && th->depth ? th->fr[th->depth - 1].routine : ACCT_NONE;
}

/* Begin an activation of `routine` in frame f at time t (frame fields already set). */
static void open_activation(struct acct *a, struct thread *th, struct frame *f, acct_time_t t)
{
	if (!th->active)
		th->active = xcalloc(a->n, sizeof(*th->active));
	f->t_enter = t;
	f->outermost = th->active[f->routine]++ == 0;
}

/* End the activation in frame f at time t: inclusive time if outermost. */
static void close_activation(struct acct *a, struct thread *th, const struct frame *f,
			     acct_time_t t, bool incomplete)
{
	th->active[f->routine]--;
	if (f->outermost) {
		acct_time_t d = t > f->t_enter ? t - f->t_enter : 0;

		a->r[f->routine].total += d;
		a->arcs[f->arc].time += d;
	}
	if (incomplete)
		a->r[f->routine].incomplete = true;
}

/* Pop the top frame at effective time t (already credited). */
static void pop(struct acct *a, struct thread *th, acct_time_t t, bool incomplete)
{
	struct frame *f = &th->fr[--th->depth];

	close_activation(a, th, f, t, incomplete);
}

/* Close every frame of th at time t as incomplete, then drop its memory. */
static void close_all(struct acct *a, struct thread *th, acct_time_t t)
{
	t = credit(a, th, t);
	while (th->depth)
		pop(a, th, t, true);
	free(th->fr);
	th->fr = NULL;
	th->cap = 0;
	free(th->active);
	th->active = NULL;
}

/* ---- the interface ---- */

/* A new accounting state for n_routines routines, all counts zero. Never NULL. */
struct acct *acct_new(size_t n_routines)
{
	struct acct *a = xcalloc(1, sizeof(*a));

	a->n = n_routines;
	a->r = xcalloc(n_routines ? n_routines : 1, sizeof(*a->r));
	return a;
}

/* Free everything acct_new and the events allocated; a may be NULL. */
void acct_free(struct acct *a)
{
	size_t i;

	if (!a)
		return;
	for (i = 0; i < a->thr_cap; i++) {
		if (!a->thr[i])
			continue;
		free(a->thr[i]->fr);
		free(a->thr[i]->active);
		free(a->thr[i]);
	}
	free(a->thr);
	free(a->arcs);
	free(a->arc_idx);
	free(a->r);
	free(a);
}

/*
 * A call of `routine` (< n_routines) by tid at t: switch the clock from the
 * caller on top of the stack to routine, count the call and the arc, push a
 * frame {slot, ret}. Amortised O(1).
 */
void acct_enter(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		acct_time_t t)
{
	struct thread *th;
	struct frame *f;
	uint32_t caller;

	if (routine >= a->n)
		return;
	th = thread_get(a, tid);
	t = credit(a, th, t);
	caller = top_routine(th);
	a->r[routine].calls++;
	if (caller != ACCT_NONE)
		a->r[caller].calls_made++;
	if (th->depth == th->cap) {
		th->cap = th->cap ? 2 * th->cap : 64;
		th->fr = xrealloc(th->fr, th->cap * sizeof(*th->fr));
	}
	f = &th->fr[th->depth++];
	f->slot = slot;
	f->ret = ret;
	f->routine = routine;
	f->arc = arc_get(a, caller, routine);
	a->arcs[f->arc].calls++;
	open_activation(a, th, f, t);
}

/*
 * A call of routine by tid that will not be seen to return: counts the call,
 * the caller's calls made and the arc. Touches no clock and no stack.
 */
void acct_count(struct acct *a, int tid, uint32_t routine)
{
	uint32_t caller;
	size_t arc;

	if (routine >= a->n)
		return;
	caller = top_routine(thread_find(a, tid));
	a->r[routine].calls++;
	if (caller != ACCT_NONE)
		a->r[caller].calls_made++;
	arc = arc_get(a, caller, routine); /* may move a->arcs */
	a->arcs[arc].calls++;
}

/*
 * The top routine of tid returns at t: credit its clock, pop its frame,
 * close its inclusive time. Returns 0 with *ret (may be NULL) set to the
 * saved return address, or -1 (nothing changed) when tid has no frame.
 */
int acct_leave(struct acct *a, int tid, acct_time_t t, uint64_t *ret)
{
	struct thread *th = thread_find(a, tid);

	if (!th || !th->depth)
		return -1;
	t = credit(a, th, t);
	if (ret)
		*ret = th->fr[th->depth - 1].ret;
	pop(a, th, t, false);
	return 0;
}

/*
 * Pop, at t, every frame from the top of tid's stack whose slot lies below
 * sp (the stack was unwound past it). Returns the number popped.
 */
size_t acct_unwind_to(struct acct *a, int tid, uint64_t sp, acct_time_t t)
{
	struct thread *th = thread_find(a, tid);
	size_t n = 0;

	if (!th || !th->depth || th->fr[th->depth - 1].slot >= sp)
		return 0;
	t = credit(a, th, t);
	while (th->depth && th->fr[th->depth - 1].slot < sp) {
		pop(a, th, t, false);
		n++;
	}
	return n;
}

/*
 * Tail call at t: the running frame of tid now belongs to routine (same slot
 * and return address). The old routine's activation closes, the new one's
 * opens; counts the call, the old routine's call made and the arc
 * old -> routine. Returns 0, or -1 (nothing recorded) when tid has no frame.
 */
int acct_chain(struct acct *a, int tid, uint32_t routine, acct_time_t t)
{
	struct thread *th = thread_find(a, tid);
	struct frame *f;
	uint32_t old;

	if (!th || !th->depth || routine >= a->n)
		return -1;
	t = credit(a, th, t);
	f = &th->fr[th->depth - 1];
	old = f->routine;
	close_activation(a, th, f, t, false);
	a->r[routine].calls++;
	a->r[old].calls_made++;
	f->routine = routine;
	f->arc = arc_get(a, old, routine);
	a->arcs[f->arc].calls++;
	open_activation(a, th, f, t);
	return 0;
}

/* Thread tid exits at t: close its open frames as incomplete and drop its stack. */
void acct_thread_exit(struct acct *a, int tid, acct_time_t t)
{
	struct thread *th = thread_find(a, tid);

	if (th)
		close_all(a, th, t);
}

/*
 * The program ends: close every open frame of every thread as incomplete at
 * that thread's last event time, or at t when t_is_shared and t is later.
 */
void acct_finish(struct acct *a, acct_time_t t, bool t_is_shared)
{
	size_t i;

	for (i = 0; i < a->thr_cap; i++) {
		struct thread *th = a->thr[i];

		if (!th || !th->depth)
			continue;
		close_all(a, th, t_is_shared && t > th->last ? t : th->last);
	}
}

/* Depth of tid's shadow stack; 0 for an unknown thread. */
size_t acct_depth(const struct acct *a, int tid)
{
	const struct thread *th = thread_find(a, tid);

	return th ? th->depth : 0;
}

/* Top frame of tid into *routine, *slot, *ret (each may be NULL); 0, or -1 if empty. */
int acct_top(const struct acct *a, int tid, uint32_t *routine, uint64_t *slot, uint64_t *ret)
{
	const struct thread *th = thread_find(a, tid);
	const struct frame *f;

	if (!th || !th->depth)
		return -1;
	f = &th->fr[th->depth - 1];
	if (routine)
		*routine = f->routine;
	if (slot)
		*slot = f->slot;
	if (ret)
		*ret = f->ret;
	return 0;
}

/* Call fn for every open frame of tid, bottom first. fn must not change a. */
void acct_frames(const struct acct *a, int tid,
		 void (*fn)(uint32_t routine, uint64_t slot, uint64_t ret, void *arg), void *arg)
{
	const struct thread *th = thread_find(a, tid);
	size_t i;

	if (!th)
		return;
	for (i = 0; i < th->depth; i++)
		fn(th->fr[i].routine, th->fr[i].slot, th->fr[i].ret, arg);
}

/* The per-routine results, an array of acct_n_routines(a) entries. */
const struct acct_routine *acct_routines(const struct acct *a)
{
	return a->r;
}

/* The number of routines a was created for. */
size_t acct_n_routines(const struct acct *a)
{
	return a->n;
}

/* The arcs seen so far (valid until the next event); *n their number. */
const struct acct_arc *acct_arcs(const struct acct *a, size_t *n)
{
	*n = a->arcs_n;
	return a->arcs;
}

/* Sum of every routine's gross self time. */
acct_time_t acct_total_self(const struct acct *a)
{
	acct_time_t s = 0;
	size_t i;

	for (i = 0; i < a->n; i++)
		s += a->r[i].self;
	return s;
}

/* Sum of every routine's calls. */
uint64_t acct_total_calls(const struct acct *a)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < a->n; i++)
		s += a->r[i].calls;
	return s;
}

/*
 * gross - entries*f1 - calls_made*f2 in double arithmetic, rounded to the
 * nearest ns and clamped at zero. Exact when f1 and f2 are zero.
 */
acct_time_t acct_net(acct_time_t gross, uint64_t entries, uint64_t calls_made, double f1, double f2)
{
	double o = (double)entries * f1 + (double)calls_made * f2;
	double x;

	if (o == 0)
		return gross;
	x = (double)gross - o;
	if (!(x > 0))
		return 0;
	if (x >= 18446744073709551615.0)
		return UINT64_MAX;
	return (acct_time_t)(x + 0.5);
}
