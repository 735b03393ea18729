// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * account.c - the accounting's events (account.h): shadow stacks, switched
 * clocks (FORTSTAT), inclusive time, arcs and contexts counted as calls
 * enter, return, chain and close. The state itself: acct_int.h.
 */
#include "fortstat/account.h"

#include <stdlib.h>
#include <string.h>

#include "acct_int.h"
#include "fortstat/util.h"

/* ---- clocks ---- */

/*
 * The thread's event at times t (one a lane): credit the time since its
 * previous event to the frame on top of its stack (its routine, arcs and
 * context, in the thread's results and the program's), and set eff to the
 * effective times of the event (t, or the previous event's time on a lane
 * whose clock went backwards).
 */
HOT_INLINE void credit_lanes(struct acct *a, struct thread *th, const acct_time_t *t,
			     acct_time_t *eff, const int lanes, const bool both)
{
	const struct frame *f = &th->fr[th->depth - 1];
	const uint32_t r = f->routine, node = f->node;
	const size_t tarc = f->tarc, arc = f->arc;
	const uint32_t mnode = both ? th->cct.x[node].link : 0;
	acct_time_t d;

	/* lane 0's times in the public structs, the others' beside (struct ltimes) */
	if (t[0] <= th->last[0]) {
		eff[0] = th->last[0];
	} else {
		eff[0] = t[0];
		d = t[0] - th->last[0];
		th->last[0] = t[0];
		th->r[r].self += d;
		th->arcs.v[tarc].self += d;
		th->cct.v[node].self += d;
		if (both) {
			a->r[r].self += d;
			a->arcs.v[arc].self += d;
			a->cct.v[mnode].self += d;
		}
	}
#pragma GCC unroll 4
	for (int k = 1; k < lanes && k < ACCT_LANES; k++) {
		if (t[k] <= th->last[k]) {
			eff[k] = th->last[k];
			continue;
		}
		eff[k] = t[k];
		d = t[k] - th->last[k];
		th->last[k] = t[k];
		th->rx[r].l[k - 1].self += d;
		th->arcs.lt[tarc].l[k - 1].self += d;
		th->cct.x[node].self[k - 1] += d;
		if (both) {
			a->rx[r].l[k - 1].self += d;
			a->arcs.lt[arc].l[k - 1].self += d;
			a->cct.x[mnode].self[k - 1] += d;
		}
	}
}

/* credit_lanes, or the thread's first event, or one with an empty stack. */
HOT_INLINE void credit_k(struct acct *a, struct thread *th, const acct_time_t *t, acct_time_t *eff,
			 const int lanes, const bool both)
{
	if (__builtin_expect(!th->seen, 0)) {
		th->seen = true;
#pragma GCC unroll 4
		for (int k = 0; k < lanes && k < ACCT_LANES; k++)
			eff[k] = th->last[k] = t[k];
		return;
	}
	if (!th->depth) {
#pragma GCC unroll 4
		for (int k = 0; k < lanes && k < ACCT_LANES; k++)
			eff[k] = t[k] > th->last[k] ? (th->last[k] = t[k]) : th->last[k];
		return;
	}
	credit_lanes(a, th, t, eff, lanes, both);
}

/*
 * Each event's path is made once for the books' four lanes (gross and net,
 * both clocks), one thread or more, for their two (gross: --no-correct, or
 * no calibration), one thread, and once for any lanes: the lanes'
 * loops unrolled and every step inlined (the calls between the steps of
 * one event cost as much as the steps). `both` is !solo(a, true): taken
 * once an event.
 */
#define BY_LANES(a, both, fn, ...)                                                                 \
	do {                                                                                       \
		if ((a)->lanes == 4 && !(both))                                                    \
			fn(__VA_ARGS__, 4, false);                                                 \
		else if ((a)->lanes == 4)                                                          \
			fn(__VA_ARGS__, 4, true);                                                  \
		else if ((a)->lanes == 2 && !(both))                                               \
			fn(__VA_ARGS__, 2, false);                                                 \
		else                                                                               \
			fn(__VA_ARGS__, (a)->lanes, both);                                         \
	} while (0)

static void credit(struct acct *a, struct thread *th, const acct_time_t *t, acct_time_t *eff)
{
	bool both = !solo(a, true);

	BY_LANES(a, both, credit_k, a, th, t, eff);
}

static uint32_t top_routine(const struct thread *th)
{
	return th && th->depth ? th->fr[th->depth - 1].routine : ACCT_NONE;
}

static uint32_t top_node(const struct thread *th)
{
	return th->depth ? th->fr[th->depth - 1].node : 0;
}

/* The slot of (parent, routine) in th's direct-mapped contexts (made if need be). */
static inline struct ctx_slot *ctx_slot(struct thread *th, uint32_t parent, uint32_t routine)
{
	if (__builtin_expect(!th->ctx, 0))
		th->ctx = xcalloc(CTX_SLOTS, sizeof(*th->ctx));
	return &th->ctx[(pair_key(parent, routine) * 0x9e3779b97f4a7c15ull) >> (64 - CTX_BITS)];
}

/* context's lookup in the trees: a new context, or one its slot lost. */
static __attribute__((noinline)) uint32_t context_slow(struct acct *a, struct thread *th,
						       uint32_t parent, uint32_t routine)
{
	struct ctx_slot *cs = ctx_slot(th, parent, routine);
	uint32_t node;
	bool created;

	node = cct_child(&th->cct, parent, routine, &created);
	if (created)
		th->cct.x[node].link =
		    cct_child(&a->cct, th->cct.x[parent].link, routine, &created);
	if (node != parent) {
		th->cct.x[parent].child = node;
		cs->key = pair_key(parent, routine);
		cs->node = node;
		if (parent == 0)
			th->rx[routine].root = node;
	}
	return node;
}

/*
 * The context of a call of `routine` made from node `parent` of th: the
 * node of its open activation when it is already on the stack (recursion
 * folded), else the child of parent (and its merged twin), new if need be:
 * the root's child its routine keeps (struct rside), the parent's last
 * child, else the direct-mapped slots, else the trees.
 */
HOT_INLINE uint32_t context(struct acct *a, struct thread *th, uint32_t parent, uint32_t routine)
{
	uint32_t node = th->cct.x[parent].child;
	struct ctx_slot *cs;

	if (th->rx[routine].active)
		return th->rx[routine].node;
	if (parent == 0 && th->rx[routine].root)
		return th->rx[routine].root;
	if (node && th->cct.v[node].routine == routine)
		return node;
	cs = ctx_slot(th, parent, routine);
	if (cs->key == pair_key(parent, routine)) {
		th->cct.x[parent].child = cs->node;
		if (parent == 0)
			th->rx[routine].root = cs->node;
		return cs->node;
	}
	return context_slow(a, th, parent, routine);
}

/*
 * The arcs caller -> routine of the program and of th, when no hint knows
 * them: the direct-mapped slots, else the sets.
 */
static void arcs_of(struct acct *a, struct thread *th, uint32_t caller, uint32_t routine,
		    size_t *arc, size_t *tarc)
{
	uint64_t key = pair_key(caller, routine);
	struct arc_slot *as;

	if (__builtin_expect(!th->arcc, 0))
		th->arcc = xcalloc(ARC_SLOTS, sizeof(*th->arcc));
	as = &th->arcc[(caller * 0x9e3779b1u ^ routine) & (ARC_SLOTS - 1)];
	if (as->key != key) {
		as->arc = arcset_get(&a->arcs, caller, routine);
		as->tarc = arcset_get(&th->arcs, caller, routine);
		as->key = key;
	}
	*arc = as->arc;
	*tarc = as->tarc;
}

/*
 * Count a call of `routine` from `caller` (ACCT_NONE: the root) in context
 * `node` whose calling context is `from`: calls, calls made, both arcs, both
 * trees, the thread's counters. Sets *arc and *tarc to the arcs' indices.
 * A tail call (`tail`) is not a call made: it never returns to the caller,
 * so the caller has one segment fewer and no return-side overhead (f2).
 */
HOT_INLINE void count_call(struct acct *a, struct thread *th, uint32_t caller, uint32_t routine,
			   uint32_t from, uint32_t node, bool tail, uint64_t n, size_t *arc,
			   size_t *tarc, const bool both)
{
	th->r[routine].calls += n;
	th->entries += n;
	if (caller != ACCT_NONE && !tail) {
		th->r[caller].calls_made += n;
		th->made += n;
		th->cct.v[from].calls_made += n;
		if (both) {
			a->r[caller].calls_made += n;
			a->cct.v[th->cct.x[from].link].calls_made += n;
		}
	}
	th->cct.v[node].calls += n;
	if (both) {
		a->r[routine].calls += n;
		a->cct.v[th->cct.x[node].link].calls += n;
	}
	if (!tail && node != from && th->cct.v[node].parent == from) {
		/* the arc into a child node is always its parent's routine -> its own */
		struct nside *h = &th->cct.x[node];

		if (h->arc == SIZE_MAX)
			arcs_of(a, th, caller, routine, &h->arc, &h->tarc);
		*arc = h->arc;
		*tarc = h->tarc;
	} else {
		arcs_of(a, th, caller, routine, arc, tarc);
	}
	if (both)
		a->arcs.v[*arc].calls += n;
	th->arcs.v[*tarc].calls += n;
}

/* Begin an activation of `routine` in frame f at time t (frame fields already set). */
HOT_INLINE void open_activation(struct thread *th, struct frame *f, const acct_time_t *t,
				const int lanes)
{
	struct rside *x = &th->rx[f->routine];

	memcpy(f->t_enter, t, (size_t)lanes * sizeof(*t));
	f->outermost = x->active++ == 0;
	if (f->outermost)
		x->node = f->node;
}

/* End the activation in frame f at time t: inclusive time if outermost. */
HOT_INLINE void close_lanes(struct acct *a, struct thread *th, const struct frame *f,
			    const acct_time_t *t, const int lanes, const bool both)
{
	const uint32_t r = f->routine;
	uint64_t e = th->entries - f->entries0, m = th->made - f->made0;
	const size_t tarc = f->tarc, arc = f->arc;
	acct_time_t d = t[0] > f->t_enter[0] ? t[0] - f->t_enter[0] : 0;

	th->r[r].total_entries += e;
	th->r[r].total_calls_made += m;
	th->r[r].total += d;
	th->arcs.v[tarc].time += d;
	if (both) {
		a->r[r].total_entries += e;
		a->r[r].total_calls_made += m;
		a->r[r].total += d;
		a->arcs.v[arc].time += d;
	}
#pragma GCC unroll 4
	for (int k = 1; k < lanes && k < ACCT_LANES; k++) {
		d = t[k] > f->t_enter[k] ? t[k] - f->t_enter[k] : 0;
		th->rx[r].l[k - 1].total += d;
		th->arcs.lt[tarc].l[k - 1].total += d;
		if (both) {
			a->rx[r].l[k - 1].total += d;
			a->arcs.lt[arc].l[k - 1].total += d;
		}
	}
}

HOT_INLINE void close_activation(struct acct *a, struct thread *th, const struct frame *f,
				 const acct_time_t *t, bool incomplete, const int lanes,
				 const bool both)
{
	const uint32_t r = f->routine;

	if (a->rec)
		a->rec(a->rec_arg, th->tid, r, f->t_enter[a->rec_lane], t[a->rec_lane], incomplete);
	th->rx[r].active--;
	if (f->outermost)
		close_lanes(a, th, f, t, lanes, both);
	if (incomplete) {
		th->r[r].incomplete = true;
		if (both)
			a->r[r].incomplete = true;
	}
}

/* Close every frame of th at times t as incomplete, then drop its stack (not its results). */
static void close_all(struct acct *a, struct thread *th, const acct_time_t *t)
{
	acct_time_t eff[ACCT_LANES];
	bool both;

	credit(a, th, t, eff);
	both = !solo(a, true);
	while (th->depth) {
		const struct frame *f = &th->fr[--th->depth];

		BY_LANES(a, both, close_activation, a, th, f, eff, true);
	}
	free(th->fr);
	th->fr = NULL;
	th->cap = 0;
	/* (every activation closed: no routine counts one open) */
	/* the caches too (128 KiB a thread: a program may start thousands) */
	free(th->ctx);
	th->ctx = NULL;
	free(th->arcc);
	th->arcc = NULL;
}

/* ---- the events, each one path a lane count ---- */

static __attribute__((noinline)) void stack_grow(struct thread *th)
{
	th->cap = th->cap ? 2 * th->cap : 64;
	th->fr = xrealloc(th->fr, th->cap * sizeof(*th->fr));
}

HOT_INLINE void enter_k(struct acct *a, struct thread *th, uint32_t routine, uint64_t slot,
			uint64_t ret, const acct_time_t *t, const int lanes, const bool both)
{
	acct_time_t eff[ACCT_LANES];
	uint32_t caller, from;
	struct frame *f;

	credit_k(a, th, t, eff, lanes, both);
	caller = top_routine(th);
	from = top_node(th);
	if (__builtin_expect(th->depth == th->cap, 0))
		stack_grow(th);
	f = &th->fr[th->depth];
	f->slot = slot;
	f->ret = ret;
	f->routine = routine;
	f->entries0 = th->entries; /* its own entry is inside, */
	f->node = context(a, th, from, routine);
	count_call(a, th, caller, routine, from, f->node, false, 1, &f->arc, &f->tarc, both);
	f->made0 = th->made; /* the call made to it is not */
	th->depth++;
	open_activation(th, f, eff, lanes);
}

/* The top frame of th (which has one) returns at t. */
HOT_INLINE void leave_k(struct acct *a, struct thread *th, const acct_time_t *t, uint64_t *ret,
			const int lanes, const bool both)
{
	acct_time_t eff[ACCT_LANES];
	const struct frame *f;

	credit_k(a, th, t, eff, lanes, both);
	f = &th->fr[--th->depth];
	if (ret)
		*ret = f->ret;
	close_activation(a, th, f, eff, false, lanes, both);
}

/* The top frame of th (which has one) is chained to routine (< a->n) at t. */
HOT_INLINE void chain_k(struct acct *a, struct thread *th, uint32_t routine, const acct_time_t *t,
			const int lanes, const bool both)
{
	acct_time_t eff[ACCT_LANES];
	struct frame *f;
	uint32_t old, from, below;

	credit_k(a, th, t, eff, lanes, both);
	f = &th->fr[th->depth - 1];
	old = f->routine;
	from = f->node;
	close_activation(a, th, f, eff, false, lanes, both);
	below = th->depth > 1 ? th->fr[th->depth - 2].node : 0;
	f->routine = routine;
	f->entries0 = th->entries;
	f->node = context(a, th, below, routine);
	count_call(a, th, old, routine, from, f->node, true, 1, &f->arc, &f->tarc, both);
	f->made0 = th->made;
	open_activation(th, f, eff, lanes);
}

/* ---- the interface ---- */

/* t, one time for every lane of a. */
static const acct_time_t *all_lanes(const struct acct *a, acct_time_t t, acct_time_t *buf)
{
	for (int k = 0; k < a->lanes; k++)
		buf[k] = t;
	return buf;
}

/*
 * A call of `routine` (< n_routines) by tid at times t: switch the clock
 * from the caller on top of the stack to routine, count the call, the arc
 * and the context, push a frame {slot, ret}. Amortised O(1).
 */
void acct_enter_t(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		  const acct_time_t *t)
{
	struct thread *th;
	bool both;

	if (routine >= a->n)
		return;
	th = thread_get(a, tid);
	both = !solo(a, true);
	BY_LANES(a, both, enter_k, a, th, routine, slot, ret, t);
}

void acct_enter(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		acct_time_t t)
{
	acct_time_t buf[ACCT_LANES];

	acct_enter_t(a, tid, routine, slot, ret, all_lanes(a, t, buf));
}

/*
 * A call of routine by tid that will not be seen to return: counts the call,
 * the caller's calls made, the arc and the context. Touches no clock and no stack.
 */
void acct_count(struct acct *a, int tid, uint32_t routine)
{
	acct_count_n(a, tid, routine, 1, false);
}

void acct_count_n(struct acct *a, int tid, uint32_t routine, uint64_t n, bool spontaneous)
{
	struct thread *th;
	uint32_t from, node;
	size_t arc, tarc;

	if (routine >= a->n || !n)
		return;
	th = thread_get(a, tid);
	from = spontaneous ? 0 : top_node(th);
	node = context(a, th, from, routine);
	count_call(a, th, spontaneous ? ACCT_NONE : top_routine(th), routine, from, node, false, n,
		   &arc, &tarc, !solo(a, true));
}

/*
 * The top routine of tid returns at times t: credit its clock, pop its
 * frame, close its inclusive time. Returns 0 with *ret (may be NULL) set to
 * the saved return address, or -1 (nothing changed) when tid has no frame.
 */
int acct_leave_t(struct acct *a, int tid, const acct_time_t *t, uint64_t *ret)
{
	struct thread *th = thread_find(a, tid);
	bool both;

	if (!th || !th->depth)
		return -1;
	both = !solo(a, true);
	BY_LANES(a, both, leave_k, a, th, t, ret);
	return 0;
}

int acct_leave(struct acct *a, int tid, acct_time_t t, uint64_t *ret)
{
	acct_time_t buf[ACCT_LANES];

	return acct_leave_t(a, tid, all_lanes(a, t, buf), ret);
}

/*
 * Tail call at times t: the running frame of tid now belongs to routine
 * (same slot and return address). The old routine's activation closes, the
 * new one's opens; counts the call, the old routine's call made and the arc
 * old -> routine. Its context is a sibling of the old one (same caller's
 * context). Returns 0, or -1 (nothing recorded) when tid has no frame.
 */
int acct_chain_t(struct acct *a, int tid, uint32_t routine, const acct_time_t *t)
{
	struct thread *th = thread_find(a, tid);
	bool both;

	if (!th || !th->depth || routine >= a->n)
		return -1;
	both = !solo(a, true);
	BY_LANES(a, both, chain_k, a, th, routine, t);
	return 0;
}

int acct_chain(struct acct *a, int tid, uint32_t routine, acct_time_t t)
{
	acct_time_t buf[ACCT_LANES];

	return acct_chain_t(a, tid, routine, all_lanes(a, t, buf));
}

/*
 * A probe's events (see account.h): each taken here only when the top
 * frame's slot says no frame below it is to be closed first.
 */
int acct_probe_enter_t(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		       const acct_time_t *t)
{
	struct thread *th;
	bool both;

	if (routine >= a->n) { /* as acct_enter_t: nothing, not even a thread made */
		th = thread_find(a, tid);
		return th && th->depth && th->fr[th->depth - 1].slot <= slot ? -1 : 0;
	}
	th = thread_get(a, tid);
	if (th->depth && th->fr[th->depth - 1].slot <= slot)
		return -1;
	both = !solo(a, true);
	BY_LANES(a, both, enter_k, a, th, routine, slot, ret, t);
	return 0;
}

int acct_probe_chain_t(struct acct *a, int tid, uint32_t routine, uint64_t slot,
		       const acct_time_t *t)
{
	struct thread *th = thread_find(a, tid);
	uint64_t top;
	bool both;

	if (!th || !th->depth) {
		acct_count_n(a, tid, routine, 1, false);
		return 1;
	}
	top = th->fr[th->depth - 1].slot;
	if (top < slot)
		return -1;
	if (top > slot) { /* not the frame's: a call counted */
		acct_count_n(a, tid, routine, 1, false);
		return 1;
	}
	if (routine >= a->n)
		return 0; /* as acct_chain_t: nothing */
	both = !solo(a, true);
	BY_LANES(a, both, chain_k, a, th, routine, t);
	return 0;
}

int acct_probe_leave_t(struct acct *a, int tid, uint64_t slot, const acct_time_t *t)
{
	struct thread *th = thread_find(a, tid);
	uint64_t top;
	bool both;

	if (!th || !th->depth)
		return 1;
	top = th->fr[th->depth - 1].slot;
	if (top < slot)
		return -1;
	if (top > slot)
		return 1; /* not the top frame's return: nothing */
	both = !solo(a, true);
	BY_LANES(a, both, leave_k, a, th, t, NULL);
	return 0;
}

/* acct_probe_run: event e's times on the lanes (t), its cost charged first (net). */
HOT_INLINE void pev_times(const struct acct_pev *e, struct acct_pnet *net, acct_time_t *t)
{
	t[0] = e->t[0];
	t[1] = e->t[1];
	if (!net) {
		t[2] = t[0]; /* (a state of 4 lanes fed none: as acct_enter) */
		t[3] = t[1];
		return;
	}
#pragma GCC unroll 2
	for (int k = 0; k < 2; k++) {
		double c = e->kind == ACCT_PEV_LEAVE ? net->leave[k] : net->enter[k], v;

		if (e->counted) {
			v = (double)e->counted * net->count[k];
			net->ovh[k] += v > 0 ? v : 0;
		}
		net->ovh[k] += c > 0 ? c : 0;
		/* below 2^63 ns, a signed conversion is exact as the unsigned one */
		v = (double)(int64_t)e->t[k] - net->ovh[k];
		t[2 + k] =
		    v > (double)(int64_t)net->vlast[k] ? (acct_time_t)(int64_t)v : net->vlast[k];
	}
}

/*
 * One event of acct_probe_run on thread th (which exists): what the
 * acct_probe_*_t of its kind returns.
 */
HOT_INLINE int pev_take(struct acct *a, struct thread *th, const struct acct_pev *e,
			const acct_time_t *t, const int lanes, const bool both)
{
	uint64_t top = th->depth ? th->fr[th->depth - 1].slot : 0;

	switch (e->kind) {
	case ACCT_PEV_ENTER:
		if (th->depth && top <= e->slot)
			return -1;
		if (e->routine >= a->n)
			return 0;
		(void)solo(a, true); /* as acct_probe_enter_t: the program's copy lags */
		enter_k(a, th, e->routine, e->slot, e->ret, t, lanes, both);
		return 0;
	case ACCT_PEV_CHAIN:
		if (th->depth && top < e->slot)
			return -1;
		if (!th->depth || top > e->slot) { /* not the frame's: a call counted */
			acct_count_n(a, th->tid, e->routine, 1, false);
			return 1;
		}
		if (e->routine >= a->n)
			return 0;
		(void)solo(a, true);
		chain_k(a, th, e->routine, t, lanes, both);
		return 0;
	default:
		if (!th->depth || top > e->slot)
			return 1;
		if (top < e->slot)
			return -1;
		(void)solo(a, true);
		leave_k(a, th, t, NULL, lanes, both);
		return 0;
	}
}

/* acct_probe_run's loop on thread th from *i, for the state's lanes; true: stopped at *i. */
HOT_INLINE bool run_k(struct acct *a, struct thread *th, const struct acct_pev *ev, size_t n,
		      size_t *i, struct acct_pnet *net, const int lanes, const bool both)
{
	acct_time_t t[ACCT_LANES];

	for (size_t k = *i; k < n; k++) {
		const struct acct_pev *e = &ev[k];
		int done;

		pev_times(e, net, t);
		done = pev_take(a, th, e, t, lanes, both);
		if (done < 0) {
			*i = k;
			return true;
		}
		if (done == 0 && net) {
			net->vlast[0] = t[2];
			net->vlast[1] = t[3];
		}
	}
	*i = n;
	return false;
}

/* One event of acct_probe_run while tid has no thread: through the acct_probe_*_t. */
static int pev_first(struct acct *a, int tid, const struct acct_pev *e, struct acct_pnet *net)
{
	acct_time_t t[ACCT_LANES];
	int done;

	pev_times(e, net, t);
	if (e->kind == ACCT_PEV_ENTER)
		done = acct_probe_enter_t(a, tid, e->routine, e->slot, e->ret, t);
	else if (e->kind == ACCT_PEV_CHAIN)
		done = acct_probe_chain_t(a, tid, e->routine, e->slot, t);
	else
		done = acct_probe_leave_t(a, tid, e->slot, t);
	if (done == 0 && net) {
		net->vlast[0] = t[2];
		net->vlast[1] = t[3];
	}
	return done;
}

size_t acct_probe_run(struct acct *a, int tid, const struct acct_pev *ev, size_t n,
		      struct acct_pnet *net)
{
	struct thread *th = thread_find(a, tid);
	size_t i = 0;
	bool both, stop = false;

	if (net && a->lanes != 4)
		net = NULL; /* no lanes of theirs */
	/* the thread's first events: the one that makes it (its thread count changes) */
	for (; !th && i < n; i++) {
		if (pev_first(a, tid, &ev[i], net) < 0)
			return i;
		th = thread_find(a, tid);
	}
	if (i == n)
		return n;
	/* a thread made no other: the same `both` for the run (solo's answer) */
	both = a->thr_n > 1;
	if (a->lanes == 4 && !both)
		stop = run_k(a, th, ev, n, &i, net, 4, false);
	else if (a->lanes == 4)
		stop = run_k(a, th, ev, n, &i, net, 4, true);
	else if (a->lanes == 2 && !both)
		stop = run_k(a, th, ev, n, &i, NULL, 2, false);
	else
		stop = run_k(a, th, ev, n, &i, NULL, a->lanes, both);
	return stop ? i : n;
}

/* Thread tid exits at times t: close its open frames as incomplete and drop its stack. */
void acct_thread_exit_t(struct acct *a, int tid, const acct_time_t *t)
{
	struct thread *th = thread_find(a, tid);

	if (th)
		close_all(a, th, t);
}

void acct_thread_exit(struct acct *a, int tid, acct_time_t t)
{
	acct_time_t buf[ACCT_LANES];

	acct_thread_exit_t(a, tid, all_lanes(a, t, buf));
}

/*
 * The program ends: close every open frame of every thread as incomplete, on
 * each lane at that thread's last event time, or at t[k] when shared[k] and
 * t[k] is later.
 */
void acct_finish_t(struct acct *a, const acct_time_t *t, const bool *shared)
{
	for (size_t i = 0; i < a->thr_n; i++) {
		struct thread *th = a->list[i];
		acct_time_t at[ACCT_LANES];

		if (!th->depth)
			continue;
		for (int k = 0; k < a->lanes; k++)
			at[k] = shared[k] && t[k] > th->last[k] ? t[k] : th->last[k];
		close_all(a, th, at);
	}
}

void acct_finish(struct acct *a, acct_time_t t, bool t_is_shared)
{
	acct_time_t buf[ACCT_LANES];
	bool sh[ACCT_LANES];

	for (int k = 0; k < ACCT_LANES; k++)
		sh[k] = t_is_shared;
	acct_finish_t(a, all_lanes(a, t, buf), sh);
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
