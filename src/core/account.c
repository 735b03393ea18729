// SPDX-License-Identifier: GPL-2.0-or-later
/* account.c - shadow stacks, switched clocks (FORTSTAT), inclusive time, arcs, contexts, lanes. */
#include "fortstat/account.h"
#include "fortstat/map.h"

#include <stdlib.h>
#include <string.h>

#include "fortstat/util.h"

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

/*
 * A thread's contexts looked up lately, direct-mapped by (parent, routine):
 * a parent that calls many routines in turn (an interpreter's loop) misses
 * its node's hint at most calls, and a hash lookup costs four times this.
 * A context, once made, never changes: a slot is right or holds another key.
 */
#define CTX_SLOTS 1024
struct ctx_slot {
	uint64_t key; /* pair_key(parent, routine); 0: empty */
	uint32_t node;
};

struct thread {
	int tid;
	bool seen;		      /* `last` holds times */
	acct_time_t last[ACCT_LANES]; /* times of the thread's previous event */
	struct frame *fr;	      /* shadow stack, fr[0] the bottom */
	size_t depth, cap;
	uint32_t *active;	       /* per routine: open activations (lazily allocated) */
	uint32_t *rnode;	       /* per routine: its node while active (with `active`) */
	uint64_t entries, made;	       /* entries and calls made on this thread so far */
	struct acct_routine *r;	       /* this thread's per-routine results */
	struct ltimes *lr[ACCT_LANES]; /* and their times on lanes 1.. */
	struct arcset arcs;
	struct cct cct;
	struct ctx_slot *ctx; /* CTX_SLOTS (parent, routine) -> node seen last (lazily) */
};

struct acct {
	size_t n;
	int lanes; /* clocks fed together: lane 0's times in r, arcs, nodes; others beside */
	struct acct_routine *r;
	struct ltimes *lr[ACCT_LANES];

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

/* The map key of a pair of 32-bit indices (never 0, as the map wants). */
static uint64_t pair_key(uint32_t hi, uint32_t lo)
{
	return ((uint64_t)hi << 32 | lo) + 1;
}

/*
 * Is a's only thread so far the whole program (its results the program's)?
 * `event`: an event of that thread is being taken, so the program's copy
 * will lag behind it.
 */
static bool solo(struct acct *a, bool event)
{
	if (a->thr_n > 1)
		return false;
	a->stale |= event;
	return true;
}

static void solo_sync(struct acct *a);

/* ---- calling-context trees ---- */

static void cct_init(struct cct *c, bool linked, int lanes)
{
	c->lanes = lanes;
	c->cap = 16;
	for (int k = 1; k < lanes; k++)
		c->lself[k] = xcalloc(c->cap, sizeof(*c->lself[k]));
	c->v = xcalloc(c->cap, sizeof(*c->v));
	c->link = linked ? xcalloc(c->cap, sizeof(*c->link)) : NULL;
	c->hint = NULL;
	if (linked) {
		c->hint = xcalloc(c->cap, sizeof(*c->hint));
		c->hint[0].arc = c->hint[0].tarc = SIZE_MAX;
	}
	c->n = 1;
	c->v[0].parent = ACCT_NONE;
	c->v[0].routine = ACCT_NONE;
}

static void cct_free(struct cct *c)
{
	free(c->v);
	free(c->link);
	free(c->hint);
	for (int k = 1; k < c->lanes; k++)
		free(c->lself[k]);
	u64map_free(&c->idx);
}

/*
 * The child of `parent` for `routine`, created with zero counts if new
 * (*created set). Amortised O(1). When 2^32-2 nodes exist, returns parent.
 */
static uint32_t cct_child(struct cct *c, uint32_t parent, uint32_t routine, bool *created)
{
	uint64_t key = pair_key(parent, routine), found;
	uint32_t node;

	*created = false;
	if (u64map_get(&c->idx, key, &found))
		return (uint32_t)found;
	if (c->n >= UINT32_MAX - 1)
		return parent;
	if (c->n == c->cap) {
		c->cap *= 2;
		c->v = xrealloc(c->v, c->cap * sizeof(*c->v));
		if (c->link)
			c->link = xrealloc(c->link, c->cap * sizeof(*c->link));
		if (c->hint)
			c->hint = xrealloc(c->hint, c->cap * sizeof(*c->hint));
		for (int k = 1; k < c->lanes; k++)
			c->lself[k] = xrealloc(c->lself[k], c->cap * sizeof(*c->lself[k]));
	}
	node = (uint32_t)c->n++;
	c->v[node] = (struct acct_node){.parent = parent, .routine = routine};
	for (int k = 1; k < c->lanes; k++)
		c->lself[k][node] = 0;
	if (c->hint)
		c->hint[node] = (struct hint){.child = 0, .arc = SIZE_MAX, .tarc = SIZE_MAX};
	u64map_put(&c->idx, key, node);
	*created = true;
	return node;
}

/* ---- threads ---- */

static __attribute__((noinline)) struct thread *thread_lookup(const struct acct *a, int tid)
{
	uint64_t p;

	return u64map_get(&a->thr, (uint64_t)(uint32_t)tid + 1, &p) ? (struct thread *)(uintptr_t)p
								    : NULL;
}

/* The thread of tid, or NULL; the one last looked up without a hash lookup. */
static inline struct thread *thread_find(const struct acct *a, int tid)
{
	if (a->hot && a->hot->tid == tid)
		return a->hot;
	return thread_lookup(a, tid);
}

static __attribute__((noinline)) struct thread *thread_new(struct acct *a, int tid)
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
	th->r = xcalloc(a->n ? a->n : 1, sizeof(*th->r));
	for (int k = 1; k < a->lanes; k++)
		th->lr[k] = xcalloc(a->n ? a->n : 1, sizeof(*th->lr[k]));
	th->arcs.lanes = a->lanes;
	cct_init(&th->cct, true, a->lanes);
	u64map_put(&a->thr, (uint64_t)(uint32_t)tid + 1, (uint64_t)(uintptr_t)th);
	a->list[a->thr_n++] = th;
	a->hot = th;
	return th;
}

static inline struct thread *thread_get(struct acct *a, int tid)
{
	if (a->hot && a->hot->tid == tid)
		return a->hot;
	return thread_new(a, tid);
}

/* ---- arcs ---- */

/* Index of the arc caller -> callee in s->v, created with zero counts if new. */
static size_t arc_get(struct arcset *s, uint32_t caller, uint32_t callee)
{
	uint64_t key = pair_key(caller, callee), found;
	size_t idx;

	if (u64map_get(&s->idx, key, &found))
		return (size_t)found;
	if (s->n == s->cap) {
		s->cap = s->cap ? 2 * s->cap : 32;
		s->v = xrealloc(s->v, s->cap * sizeof(*s->v));
		for (int k = 1; k < s->lanes; k++)
			s->lt[k] = xrealloc(s->lt[k], s->cap * sizeof(*s->lt[k]));
	}
	idx = s->n++;
	s->v[idx] = (struct acct_arc){.caller = caller, .callee = callee};
	for (int k = 1; k < s->lanes; k++)
		s->lt[k][idx] = (struct ltimes){0, 0};
	u64map_put(&s->idx, key, idx);
	return idx;
}

static void arcset_free(struct arcset *s)
{
	free(s->v);
	for (int k = 1; k < s->lanes; k++)
		free(s->lt[k]);
	u64map_free(&s->idx);
}

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
	const uint32_t mnode = both ? th->cct.link[node] : 0;
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
	for (int k = 1; k < lanes; k++) {
		if (t[k] <= th->last[k]) {
			eff[k] = th->last[k];
			continue;
		}
		eff[k] = t[k];
		d = t[k] - th->last[k];
		th->last[k] = t[k];
		th->lr[k][r].self += d;
		th->arcs.lt[k][tarc].self += d;
		th->cct.lself[k][node] += d;
		if (both) {
			a->lr[k][r].self += d;
			a->arcs.lt[k][arc].self += d;
			a->cct.lself[k][mnode] += d;
		}
	}
}

static void credit(struct acct *a, struct thread *th, const acct_time_t *t, acct_time_t *eff)
{
	bool both = !solo(a, true);
	const int lanes = a->lanes;

	if (!th->seen) {
		th->seen = true;
		for (int k = 0; k < lanes; k++)
			eff[k] = th->last[k] = t[k];
		return;
	}
	if (!th->depth) {
		for (int k = 0; k < lanes; k++)
			eff[k] = t[k] > th->last[k] ? (th->last[k] = t[k]) : th->last[k];
		return;
	}
	/* the books' four lanes (gross and net, both clocks) unrolled, one thread or more */
	if (lanes == 4 && !both)
		credit_lanes(a, th, t, eff, 4, false);
	else if (lanes == 4)
		credit_lanes(a, th, t, eff, 4, true);
	else
		credit_lanes(a, th, t, eff, lanes, both);
}

static uint32_t top_routine(const struct thread *th)
{
	return th && th->depth ? th->fr[th->depth - 1].routine : ACCT_NONE;
}

static uint32_t top_node(const struct thread *th)
{
	return th->depth ? th->fr[th->depth - 1].node : 0;
}

/*
 * The context of a call of `routine` made from node `parent` of th: the
 * node of its open activation when it is already on the stack (recursion
 * folded), else the child of parent (and its merged twin), new if need be.
 */
static uint32_t context(struct acct *a, struct thread *th, uint32_t parent, uint32_t routine)
{
	uint32_t node = th->cct.hint[parent].child;
	struct ctx_slot *cs;
	uint64_t key;
	bool created;

	if (th->active && th->active[routine])
		return th->rnode[routine];
	if (node && th->cct.v[node].routine == routine)
		return node;
	key = pair_key(parent, routine);
	if (!th->ctx)
		th->ctx = xcalloc(CTX_SLOTS, sizeof(*th->ctx));
	cs = &th->ctx[(parent * 0x9e3779b1u ^ routine) & (CTX_SLOTS - 1)];
	if (cs->key == key) {
		th->cct.hint[parent].child = cs->node;
		return cs->node;
	}
	node = cct_child(&th->cct, parent, routine, &created);
	if (created)
		th->cct.link[node] = cct_child(&a->cct, th->cct.link[parent], routine, &created);
	if (node != parent) {
		th->cct.hint[parent].child = node;
		cs->key = key;
		cs->node = node;
	}
	return node;
}

/*
 * Count a call of `routine` from `caller` (ACCT_NONE: the root) in context
 * `node` whose calling context is `from`: calls, calls made, both arcs, both
 * trees, the thread's counters. Sets *arc and *tarc to the arcs' indices.
 * A tail call (`tail`) is not a call made: it never returns to the caller,
 * so the caller has one segment fewer and no return-side overhead (f2).
 */
static void count_call(struct acct *a, struct thread *th, uint32_t caller, uint32_t routine,
		       uint32_t from, uint32_t node, bool tail, uint64_t n, size_t *arc,
		       size_t *tarc)
{
	bool both = !solo(a, true);

	th->r[routine].calls += n;
	th->entries += n;
	if (caller != ACCT_NONE && !tail) {
		th->r[caller].calls_made += n;
		th->made += n;
		th->cct.v[from].calls_made += n;
		if (both) {
			a->r[caller].calls_made += n;
			a->cct.v[th->cct.link[from]].calls_made += n;
		}
	}
	th->cct.v[node].calls += n;
	if (both) {
		a->r[routine].calls += n;
		a->cct.v[th->cct.link[node]].calls += n;
	}
	if (!tail && node != from && th->cct.v[node].parent == from) {
		/* the arc into a child node is always its parent's routine -> its own */
		struct hint *h = &th->cct.hint[node];

		if (h->arc == SIZE_MAX) {
			h->arc = arc_get(&a->arcs, caller, routine);
			h->tarc = arc_get(&th->arcs, caller, routine);
		}
		*arc = h->arc;
		*tarc = h->tarc;
	} else {
		*arc = arc_get(&a->arcs, caller, routine);
		*tarc = arc_get(&th->arcs, caller, routine);
	}
	if (both)
		a->arcs.v[*arc].calls += n;
	th->arcs.v[*tarc].calls += n;
}

/* Begin an activation of `routine` in frame f at time t (frame fields already set). */
static void open_activation(struct acct *a, struct thread *th, struct frame *f,
			    const acct_time_t *t)
{
	if (!th->active) {
		th->active = xcalloc(a->n, sizeof(*th->active));
		th->rnode = xcalloc(a->n, sizeof(*th->rnode));
	}
	for (int k = 0; k < a->lanes; k++)
		f->t_enter[k] = t[k];
	f->outermost = th->active[f->routine]++ == 0;
	if (f->outermost)
		th->rnode[f->routine] = f->node;
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
	for (int k = 1; k < lanes; k++) {
		d = t[k] > f->t_enter[k] ? t[k] - f->t_enter[k] : 0;
		th->lr[k][r].total += d;
		th->arcs.lt[k][tarc].total += d;
		if (both) {
			a->lr[k][r].total += d;
			a->arcs.lt[k][arc].total += d;
		}
	}
}

static void close_activation(struct acct *a, struct thread *th, const struct frame *f,
			     const acct_time_t *t, bool incomplete)
{
	bool both = !solo(a, true);
	const uint32_t r = f->routine;

	if (a->rec)
		a->rec(a->rec_arg, th->tid, r, f->t_enter[a->rec_lane], t[a->rec_lane], incomplete);
	th->active[r]--;
	if (f->outermost) {
		/* inclusive times: the books' four lanes unrolled, as credit's */
		if (a->lanes == 4 && !both)
			close_lanes(a, th, f, t, 4, false);
		else if (a->lanes == 4)
			close_lanes(a, th, f, t, 4, true);
		else
			close_lanes(a, th, f, t, a->lanes, both);
	}
	if (incomplete) {
		th->r[r].incomplete = true;
		if (both)
			a->r[r].incomplete = true;
	}
}

/* Pop the top frame at effective times t (already credited). */
static void pop(struct acct *a, struct thread *th, const acct_time_t *t, bool incomplete)
{
	struct frame *f = &th->fr[--th->depth];

	close_activation(a, th, f, t, incomplete);
}

/* Close every frame of th at times t as incomplete, then drop its stack (not its results). */
static void close_all(struct acct *a, struct thread *th, const acct_time_t *t)
{
	acct_time_t eff[ACCT_LANES];

	credit(a, th, t, eff);
	while (th->depth)
		pop(a, th, eff, true);
	free(th->fr);
	th->fr = NULL;
	th->cap = 0;
	free(th->active);
	th->active = NULL;
	free(th->rnode);
	th->rnode = NULL;
}

/* The program's results made equal to its only thread's (see struct acct). */
static void solo_sync(struct acct *a)
{
	const struct thread *th;

	if (!a->stale || a->thr_n != 1)
		return;
	a->stale = false;
	th = a->list[0];
	memcpy(a->r, th->r, a->n * sizeof(*a->r));
	for (int k = 1; k < a->lanes; k++)
		memcpy(a->lr[k], th->lr[k], a->n * sizeof(*a->lr[k]));
	for (size_t i = 0; i < th->arcs.n; i++) {
		const struct acct_arc *t = &th->arcs.v[i];
		uint64_t j;

		if (!u64map_get(&a->arcs.idx, pair_key(t->caller, t->callee), &j))
			continue; /* (every arc of the thread is the program's too) */
		a->arcs.v[j].calls = t->calls;
		a->arcs.v[j].time = t->time;
		a->arcs.v[j].self = t->self;
		for (int k = 1; k < a->lanes; k++)
			a->arcs.lt[k][j] = th->arcs.lt[k][i];
	}
	for (size_t i = 0; i < th->cct.n; i++) {
		const struct acct_node *t = &th->cct.v[i];
		uint32_t m = th->cct.link[i];

		a->cct.v[m].calls = t->calls;
		a->cct.v[m].calls_made = t->calls_made;
		a->cct.v[m].self = t->self;
		for (int k = 1; k < a->lanes; k++)
			a->cct.lself[k][m] = th->cct.lself[k][i];
	}
}

/* A reader's view of a: the program's results up to date (a is const to the caller). */
static const struct acct *synced(const struct acct *a)
{
	if (a->stale)
		solo_sync((struct acct *)(uintptr_t)a);
	return a;
}

/* ---- the interface ---- */

/* A new accounting state for n_routines routines and `lanes` clocks, all zero. Never NULL. */
struct acct *acct_new_lanes(size_t n_routines, int lanes)
{
	struct acct *a = xcalloc(1, sizeof(*a));

	a->n = n_routines;
	a->lanes = lanes < 1 ? 1 : lanes > ACCT_LANES ? ACCT_LANES : lanes;
	a->r = xcalloc(n_routines ? n_routines : 1, sizeof(*a->r));
	for (int k = 1; k < a->lanes; k++)
		a->lr[k] = xcalloc(n_routines ? n_routines : 1, sizeof(*a->lr[k]));
	a->arcs.lanes = a->lanes;
	cct_init(&a->cct, false, a->lanes);
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

/* Grow a zeroed array of n elements of size sz to m elements. */
static void *grow_zeroed(void *p, size_t n, size_t m, size_t sz)
{
	p = xrealloc(p, m * sz);
	memset((char *)p + n * sz, 0, (m - n) * sz);
	return p;
}

void acct_grow(struct acct *a, size_t n_routines)
{
	size_t old = a->n, i, o1 = old ? old : 1;

	if (n_routines <= old)
		return;
	a->r = grow_zeroed(a->r, o1, n_routines, sizeof(*a->r));
	for (int k = 1; k < a->lanes; k++)
		a->lr[k] = grow_zeroed(a->lr[k], o1, n_routines, sizeof(*a->lr[k]));
	for (i = 0; i < a->thr_n; i++) {
		struct thread *th = a->list[i];

		th->r = grow_zeroed(th->r, o1, n_routines, sizeof(*th->r));
		for (int k = 1; k < a->lanes; k++)
			th->lr[k] = grow_zeroed(th->lr[k], o1, n_routines, sizeof(*th->lr[k]));
		if (th->active) {
			th->active = grow_zeroed(th->active, old, n_routines, sizeof(*th->active));
			th->rnode = grow_zeroed(th->rnode, old, n_routines, sizeof(*th->rnode));
		}
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
		free(th->active);
		free(th->rnode);
		free(th->ctx);
		free(th->r);
		for (int k = 1; k < a->lanes; k++)
			free(th->lr[k]);
		arcset_free(&th->arcs);
		cct_free(&th->cct);
		free(th);
	}
	u64map_free(&a->thr);
	free(a->list);
	arcset_free(&a->arcs);
	cct_free(&a->cct);
	free(a->r);
	for (int k = 1; k < a->lanes; k++)
		free(a->lr[k]);
	free(a);
}

/* A copy of n elements of size sz at p (NULL stays NULL). */
static void *dup_array(const void *p, size_t n, size_t sz)
{
	void *q;

	if (!p)
		return NULL;
	q = xmalloc(n * sz);
	memcpy(q, p, n * sz);
	return q;
}

static void arcset_dup(struct arcset *dst, const struct arcset *src)
{
	*dst = *src;
	dst->v = dup_array(src->v, src->cap, sizeof(*src->v));
	for (int k = 1; k < src->lanes; k++)
		dst->lt[k] = dup_array(src->lt[k], src->cap, sizeof(*src->lt[k]));
	u64map_dup(&dst->idx, &src->idx);
}

static void cct_dup(struct cct *dst, const struct cct *src)
{
	*dst = *src;
	dst->v = dup_array(src->v, src->cap, sizeof(*src->v));
	dst->link = dup_array(src->link, src->cap, sizeof(*src->link));
	dst->hint = dup_array(src->hint, src->cap, sizeof(*src->hint));
	for (int k = 1; k < src->lanes; k++)
		dst->lself[k] = dup_array(src->lself[k], src->cap, sizeof(*src->lself[k]));
	u64map_dup(&dst->idx, &src->idx);
}

/* A deep copy of a, sharing nothing with it; never NULL. */
struct acct *acct_dup(const struct acct *a)
{
	struct acct *c = xcalloc(1, sizeof(*c));
	size_t nr = a->n ? a->n : 1;

	synced(a);
	c->n = a->n;
	c->lanes = a->lanes;
	c->r = dup_array(a->r, nr, sizeof(*a->r));
	for (int k = 1; k < a->lanes; k++)
		c->lr[k] = dup_array(a->lr[k], nr, sizeof(*a->lr[k]));
	c->list_cap = a->list_cap;
	c->list = a->list_cap ? xcalloc(a->list_cap, sizeof(*c->list)) : NULL;
	for (size_t i = 0; i < a->thr_n; i++) {
		const struct thread *t = a->list[i];
		struct thread *th = xmalloc(sizeof(*th));

		*th = *t;
		th->fr = dup_array(t->fr, t->cap, sizeof(*t->fr));
		th->active = dup_array(t->active, a->n, sizeof(*t->active));
		th->rnode = dup_array(t->rnode, a->n, sizeof(*t->rnode));
		th->ctx = NULL; /* a cache: made again when needed */
		th->r = dup_array(t->r, nr, sizeof(*t->r));
		for (int k = 1; k < a->lanes; k++)
			th->lr[k] = dup_array(t->lr[k], nr, sizeof(*t->lr[k]));
		arcset_dup(&th->arcs, &t->arcs);
		cct_dup(&th->cct, &t->cct);
		u64map_put(&c->thr, (uint64_t)(uint32_t)th->tid + 1, (uint64_t)(uintptr_t)th);
		c->list[c->thr_n++] = th;
	}
	arcset_dup(&c->arcs, &a->arcs);
	cct_dup(&c->cct, &a->cct);
	return c;
}

/* Lane k's times over lane 0's in routine results r (n of them). */
static void lane_routines(struct acct_routine *r, const struct ltimes *lt, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		r[i].self = lt[i].self;
		r[i].total = lt[i].total;
	}
}

static void lane_arcs(struct arcset *s, int k)
{
	for (size_t i = 0; i < s->n; i++) {
		s->v[i].self = s->lt[k][i].self;
		s->v[i].time = s->lt[k][i].total;
	}
}

static void lane_nodes(struct cct *c, int k)
{
	for (size_t i = 0; i < c->n; i++)
		c->v[i].self = c->lself[k][i];
}

/* Copies of arcs s and tree t holding lane k's times alone (one lane). */
static void dup_lane(struct arcset *ds, struct cct *dt, const struct arcset *s, const struct cct *t,
		     int k)
{
	arcset_dup(ds, s);
	cct_dup(dt, t);
	if (k) {
		lane_arcs(ds, k);
		lane_nodes(dt, k);
	}
	for (int j = 1; j < s->lanes; j++) {
		free(ds->lt[j]);
		ds->lt[j] = NULL;
	}
	for (int j = 1; j < t->lanes; j++) {
		free(dt->lself[j]);
		dt->lself[j] = NULL;
	}
	ds->lanes = dt->lanes = 1;
}

/*
 * Lane k of a as a state of its own (one lane, lane k's times): a deep copy
 * that shares nothing with a. Never NULL.
 */
struct acct *acct_lane(const struct acct *a, int k)
{
	struct acct *c = xcalloc(1, sizeof(*c));
	size_t nr = a->n ? a->n : 1;

	synced(a);
	if (k < 0 || k >= a->lanes)
		k = 0;
	c->n = a->n;
	c->lanes = 1;
	c->r = dup_array(a->r, nr, sizeof(*a->r));
	if (k)
		lane_routines(c->r, a->lr[k], a->n);
	c->list_cap = a->list_cap;
	c->list = a->list_cap ? xcalloc(a->list_cap, sizeof(*c->list)) : NULL;
	for (size_t i = 0; i < a->thr_n; i++) {
		const struct thread *t = a->list[i];
		struct thread *th = xcalloc(1, sizeof(*th));

		th->tid = t->tid;
		th->seen = t->seen;
		th->last[0] = t->last[k];
		th->depth = th->cap = t->depth;
		th->fr = t->depth ? dup_array(t->fr, t->depth, sizeof(*t->fr)) : NULL;
		for (size_t j = 0; j < t->depth; j++)
			th->fr[j].t_enter[0] = t->fr[j].t_enter[k];
		th->active = dup_array(t->active, a->n, sizeof(*t->active));
		th->rnode = dup_array(t->rnode, a->n, sizeof(*t->rnode));
		th->entries = t->entries;
		th->made = t->made;
		th->r = dup_array(t->r, nr, sizeof(*t->r));
		if (k)
			lane_routines(th->r, t->lr[k], a->n);
		dup_lane(&th->arcs, &th->cct, &t->arcs, &t->cct, k);
		u64map_put(&c->thr, (uint64_t)(uint32_t)th->tid + 1, (uint64_t)(uintptr_t)th);
		c->list[c->thr_n++] = th;
	}
	dup_lane(&c->arcs, &c->cct, &a->arcs, &a->cct, k);
	return c;
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
	struct ltimes *const *lr = a->lr;

	if (routine >= a->n || k < 0 || k >= a->lanes)
		return 0;
	if (a->stale && a->thr_n == 1) {
		r = a->list[0]->r;
		lr = a->list[0]->lr;
	}
	return k ? lr[k][routine].self : r[routine].self;
}

uint64_t acct_routine_calls(const struct acct *a, uint32_t routine)
{
	if (routine >= a->n)
		return 0;
	return (a->stale && a->thr_n == 1 ? a->list[0]->r : a->r)[routine].calls;
}

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
	struct frame *f;
	uint32_t caller, from;
	acct_time_t eff[ACCT_LANES];

	if (routine >= a->n)
		return;
	th = thread_get(a, tid);
	credit(a, th, t, eff);
	caller = top_routine(th);
	from = top_node(th);
	if (th->depth == th->cap) {
		th->cap = th->cap ? 2 * th->cap : 64;
		th->fr = xrealloc(th->fr, th->cap * sizeof(*th->fr));
	}
	f = &th->fr[th->depth];
	f->slot = slot;
	f->ret = ret;
	f->routine = routine;
	f->entries0 = th->entries; /* its own entry is inside, */
	f->node = context(a, th, from, routine);
	count_call(a, th, caller, routine, from, f->node, false, 1, &f->arc, &f->tarc);
	f->made0 = th->made; /* the call made to it is not */
	th->depth++;
	open_activation(a, th, f, eff);
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
		   &arc, &tarc);
}

/*
 * The top routine of tid returns at times t: credit its clock, pop its
 * frame, close its inclusive time. Returns 0 with *ret (may be NULL) set to
 * the saved return address, or -1 (nothing changed) when tid has no frame.
 */
int acct_leave_t(struct acct *a, int tid, const acct_time_t *t, uint64_t *ret)
{
	struct thread *th = thread_find(a, tid);
	acct_time_t eff[ACCT_LANES];

	if (!th || !th->depth)
		return -1;
	credit(a, th, t, eff);
	if (ret)
		*ret = th->fr[th->depth - 1].ret;
	pop(a, th, eff, false);
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
	struct frame *f;
	uint32_t old, from, below;
	acct_time_t eff[ACCT_LANES];

	if (!th || !th->depth || routine >= a->n)
		return -1;
	credit(a, th, t, eff);
	f = &th->fr[th->depth - 1];
	old = f->routine;
	from = f->node;
	close_activation(a, th, f, eff, false);
	below = th->depth > 1 ? th->fr[th->depth - 2].node : 0;
	f->routine = routine;
	f->entries0 = th->entries;
	f->node = context(a, th, below, routine);
	count_call(a, th, old, routine, from, f->node, true, 1, &f->arc, &f->tarc);
	f->made0 = th->made;
	open_activation(a, th, f, eff);
	return 0;
}

int acct_chain(struct acct *a, int tid, uint32_t routine, acct_time_t t)
{
	acct_time_t buf[ACCT_LANES];

	return acct_chain_t(a, tid, routine, all_lanes(a, t, buf));
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
