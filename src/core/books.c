// SPDX-License-Identifier: GPL-2.0-or-later
/* books.c - both clocks' accounting, gross and net of the stops' cost, fed once. */
#include <stdlib.h>
#include <string.h>

#include "fortstat/alloc.h"
#include "fortstat/books.h"
#include "fortstat/map.h"
#include "fortstat/timeline.h"
#include "fortstat/util.h"

/* What the net books need of a thread: its stops' cost so far, the last net times fed. */
struct bthread {
	double ovh[FS_N_CLOCKS];
	acct_time_t vlast[FS_N_CLOCKS];
};

/*
 * One accounting state of 1 lane (count-only), 2 (gross CPU, gross wall) or
 * 4 (and net CPU, net wall): each event walks the stacks, arcs and contexts
 * once. books_acct hands out lane k as a state of its own, made when asked
 * and kept until the books change (gen counts the changes).
 */
#define LANE(c, net) (((net) ? 2 : 0) + ((c) == CLOCK_KIND_WALL ? 1 : 0))

struct books {
	bool timed, net;
	struct acct *a;
	struct acct *view[ACCT_LANES]; /* lane k's state, made at view_gen[k] */
	uint64_t view_gen[ACCT_LANES], gen;
	struct u64map thr; /* tid -> index into th */
	struct bthread *th;
	size_t n_th, cap_th;
	int hot_tid;	     /* the thread last looked up, */
	size_t hot;	     /* at th[hot] (when n_th > hot) */
	struct timeline *tl; /* --timeline: where the calls go (NULL: nowhere) */
	uint32_t tl_group;
	struct alloc_books *mem; /* --alloc: storage per routine (NULL: not kept) */
	uint32_t *stk;		 /* ... a thread's stack of routines, for each call */
	size_t stk_cap;
};

struct books *books_new(size_t n_routines, bool timed, bool net)
{
	struct books *b = xcalloc(1, sizeof(*b));

	b->timed = timed;
	b->net = timed && net;
	b->a = acct_new_lanes(n_routines, !timed ? 1 : b->net ? 4 : 2);
	return b;
}

struct books *books_new_like(const struct books *b, size_t n_routines)
{
	struct books *c = books_new(n_routines, b->timed, b->net);

	if (b->tl)
		books_record(c, b->tl);
	if (b->mem)
		books_alloc_keep(c);
	return c;
}

/* acct_record_fn: a call closed, into the timeline as the books' group. */
static void record_call(void *arg, int tid, uint32_t routine, acct_time_t t0, acct_time_t t1,
			bool incomplete)
{
	struct books *b = arg;

	timeline_add(b->tl, b->tl_group, tid, routine, t0, t1, incomplete);
}

uint32_t books_record(struct books *b, struct timeline *tl)
{
	b->tl = tl;
	b->tl_group = timeline_group(tl);
	if (b->timed)
		acct_set_recorder(b->a, LANE(CLOCK_KIND_WALL, false), record_call, b);
	return b->tl_group;
}

uint32_t books_timeline_group(const struct books *b)
{
	return b->tl ? b->tl_group : UINT32_MAX;
}

void books_drop_views(struct books *b)
{
	for (int k = 0; k < ACCT_LANES; k++) {
		acct_free(b->view[k]);
		b->view[k] = NULL;
	}
}

void books_free(struct books *b)
{
	if (!b)
		return;
	acct_free(b->a);
	alloc_free_books(b->mem);
	free(b->stk);
	books_drop_views(b);
	u64map_free(&b->thr);
	free(b->th);
	free(b);
}

void books_grow(struct books *b, size_t n_routines)
{
	b->gen++;
	acct_grow(b->a, n_routines);
	if (b->mem)
		alloc_grow(b->mem, n_routines);
}

static __attribute__((noinline)) struct bthread *thread_add(struct books *b, int tid)
{
	uint64_t i;

	if (u64map_get(&b->thr, (uint64_t)(uint32_t)tid + 1, &i)) {
		b->hot = (size_t)i;
		b->hot_tid = tid;
		return &b->th[i];
	}
	if (b->n_th == b->cap_th) {
		b->cap_th = b->cap_th ? 2 * b->cap_th : 16;
		b->th = xrealloc(b->th, b->cap_th * sizeof(*b->th));
	}
	b->th[b->n_th] = (struct bthread){0};
	u64map_put(&b->thr, (uint64_t)(uint32_t)tid + 1, b->n_th);
	b->hot = b->n_th;
	b->hot_tid = tid;
	return &b->th[b->n_th++];
}

/* Thread tid's, the one last looked up without a hash lookup (every event of a drain). */
static inline struct bthread *thread_of(struct books *b, int tid)
{
	if (b->hot < b->n_th && b->hot_tid == tid)
		return &b->th[b->hot];
	return thread_add(b, tid);
}

/* Thread tid's net times at stamp s: its clocks less its stops' cost, never backwards. */
static const acct_time_t *net_times(struct books *b, int tid, const struct stamp *s)
{
	struct bthread *th = thread_of(b, tid);

	for (int k = 0; k < FS_N_CLOCKS; k++) {
		double v = (double)s->t[k] - th->ovh[k];

		if (v > (double)th->vlast[k])
			th->vlast[k] = (acct_time_t)v;
	}
	return th->vlast;
}

/* The times of stamp s for each lane of b (net ones through net_times). */
static const acct_time_t *lanes_of(struct books *b, int tid, const struct stamp *s, acct_time_t *t)
{
	t[0] = s->t[CLOCK_KIND_CPU];
	t[1] = s->t[CLOCK_KIND_WALL];
	if (b->net) {
		const acct_time_t *v = net_times(b, tid, s);

		t[2] = v[CLOCK_KIND_CPU];
		t[3] = v[CLOCK_KIND_WALL];
	}
	return t;
}

/*
 * lanes_of, th the thread's net state (NULL: no net books), without keeping
 * the net times' floor: the event may not use its times (lanes_keep when
 * it did). The same values as net_times: a time is below 2^63 ns, where a
 * signed conversion (one instruction) is exact as the unsigned one (eight).
 */
static inline void lanes_peek(const struct bthread *th, const struct stamp *s, acct_time_t *t)
{
	t[0] = s->t[CLOCK_KIND_CPU];
	t[1] = s->t[CLOCK_KIND_WALL];
	if (!th)
		return;
#pragma GCC unroll 2
	for (int k = 0; k < FS_N_CLOCKS; k++) {
		double v = (double)(int64_t)s->t[k] - th->ovh[k];

		t[2 + k] =
		    v > (double)(int64_t)th->vlast[k] ? (acct_time_t)(int64_t)v : th->vlast[k];
	}
}

static inline void lanes_keep(struct bthread *th, const acct_time_t *t)
{
	if (th)
		for (int k = 0; k < FS_N_CLOCKS; k++)
			th->vlast[k] = t[2 + k];
}

/* books_stop_cost's, on thread th's net state (NULL: none kept). */
static inline void cost_add(struct bthread *th, const double ovh[FS_N_CLOCKS])
{
	if (th)
		for (int k = 0; k < FS_N_CLOCKS; k++)
			th->ovh[k] += ovh[k] > 0 ? ovh[k] : 0;
}

bool books_probe_enter(struct books *b, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		       bool chained, const struct stamp *s, const double ovh[FS_N_CLOCKS])
{
	acct_time_t t[ACCT_LANES];
	struct bthread *th;
	int done;

	b->gen++;
	th = b->net ? thread_of(b, tid) : NULL;
	cost_add(th, ovh);
	lanes_peek(th, s, t);
	done = chained ? acct_probe_chain_t(b->a, tid, routine, slot, t)
		       : acct_probe_enter_t(b->a, tid, routine, slot, ret, t);
	if (done == 0)
		lanes_keep(th, t);
	return done >= 0;
}

bool books_probe_leave(struct books *b, int tid, uint64_t slot, const struct stamp *s,
		       const double ovh[FS_N_CLOCKS])
{
	acct_time_t t[ACCT_LANES];
	struct bthread *th;
	int done;

	b->gen++;
	th = b->net ? thread_of(b, tid) : NULL;
	cost_add(th, ovh);
	lanes_peek(th, s, t);
	done = acct_probe_leave_t(b->a, tid, slot, t);
	if (done == 0)
		lanes_keep(th, t);
	return done >= 0;
}

/* acct_probe_run's lanes 0, 1 and net ones are the clocks in enum clock_kind's order */
_Static_assert(CLOCK_KIND_CPU == 0 && CLOCK_KIND_WALL == 1 && FS_N_CLOCKS == 2, "clock order");

size_t books_probe_run(struct books *b, int tid, const struct acct_pev *ev, size_t n,
		       const double cost[3][FS_N_CLOCKS])
{
	struct acct_pnet net;
	struct bthread *th;
	size_t i;

	if (!n)
		return 0;
	if (!b->net) {
		i = acct_probe_run(b->a, tid, ev, n, NULL);
	} else {
		th = thread_of(b, tid);
		net = (struct acct_pnet){.ovh = th->ovh, .vlast = th->vlast};
		for (int k = 0; k < FS_N_CLOCKS; k++) {
			net.count[k] = cost[0][k];
			net.enter[k] = cost[1][k];
			net.leave[k] = cost[2][k];
		}
		i = acct_probe_run(b->a, tid, ev, n, &net);
	}
	b->gen += i < n ? i + 1 : n; /* one an event, as books_probe_enter's */
	return i;
}

void books_enter(struct books *b, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		 const struct stamp *s)
{
	acct_time_t t[ACCT_LANES];

	b->gen++;
	acct_enter_t(b->a, tid, routine, slot, ret, lanes_of(b, tid, s, t));
}

void books_count(struct books *b, int tid, uint32_t routine)
{
	books_count_n(b, tid, routine, 1, false);
}

void books_count_n(struct books *b, int tid, uint32_t routine, uint64_t n, bool spontaneous)
{
	b->gen++;
	acct_count_n(b->a, tid, routine, n, spontaneous);
}

int books_chain(struct books *b, int tid, uint32_t routine, const struct stamp *s)
{
	acct_time_t t[ACCT_LANES];

	b->gen++;
	return acct_chain_t(b->a, tid, routine, lanes_of(b, tid, s, t));
}

int books_leave(struct books *b, int tid, const struct stamp *s, uint64_t *ret)
{
	acct_time_t t[ACCT_LANES];

	b->gen++;
	return acct_leave_t(b->a, tid, lanes_of(b, tid, s, t), ret);
}

void books_thread_exit(struct books *b, int tid, const struct stamp *s)
{
	acct_time_t t[ACCT_LANES];

	b->gen++;
	acct_thread_exit_t(b->a, tid, lanes_of(b, tid, s, t));
}

void books_stop_cost(struct books *b, int tid, const double ovh[FS_N_CLOCKS])
{
	struct bthread *th;

	if (!b->net)
		return;
	th = thread_of(b, tid);
	for (int k = 0; k < FS_N_CLOCKS; k++)
		th->ovh[k] += ovh[k] > 0 ? ovh[k] : 0;
}

void books_overhead(const struct books *b, double out[FS_N_CLOCKS])
{
	out[CLOCK_KIND_CPU] = out[CLOCK_KIND_WALL] = 0;
	for (size_t i = 0; b->net && i < b->n_th; i++) {
		out[CLOCK_KIND_CPU] += b->th[i].ovh[CLOCK_KIND_CPU];
		if (b->th[i].ovh[CLOCK_KIND_WALL] > out[CLOCK_KIND_WALL])
			out[CLOCK_KIND_WALL] = b->th[i].ovh[CLOCK_KIND_WALL];
	}
}

size_t books_compact(struct books *b, uint32_t *map)
{
	size_t n_new;

	if (b->tl || b->mem) /* the timeline's calls and the storage name routines */
		return SIZE_MAX;
	n_new = acct_used(b->a, map);
	if (!acct_compact(b->a, map, n_new))
		return SIZE_MAX;
	b->gen++;
	books_drop_views(b);
	return n_new;
}

void books_finish(struct books *b, acct_time_t wall_end)
{
	/* CPU and net times: each thread closed at the last it was seen; wall: at wall_end */
	static const bool shared[ACCT_LANES] = {false, true, false, false};
	const acct_time_t t[ACCT_LANES] = {wall_end, wall_end, 0, 0};

	b->gen++;
	acct_finish_t(b->a, t, shared);
}

struct books *books_dup(const struct books *b)
{
	struct books *c = xcalloc(1, sizeof(*c));

	c->timed = b->timed;
	c->net = b->net;
	c->hot = b->hot;
	c->hot_tid = b->hot_tid;
	c->a = acct_dup(b->a);
	c->mem = b->mem ? alloc_dup(b->mem) : NULL;
	u64map_dup(&c->thr, &b->thr);
	c->n_th = c->cap_th = b->n_th;
	if (b->n_th) {
		c->th = xmalloc(b->n_th * sizeof(*c->th));
		memcpy(c->th, b->th, b->n_th * sizeof(*c->th));
	}
	return c;
}

struct books *books_snapshot(const struct books *b, acct_time_t wall_end)
{
	struct books *c = books_dup(b);

	books_finish(c, wall_end);
	return c;
}

int books_top(const struct books *b, int tid, uint32_t *routine, uint64_t *slot, uint64_t *ret)
{
	return acct_top(b->a, tid, routine, slot, ret);
}

void books_frames(const struct books *b, int tid,
		  void (*fn)(uint32_t routine, uint64_t slot, uint64_t ret, void *arg), void *arg)
{
	acct_frames(b->a, tid, fn, arg);
}

/*
 * Lane 0 is the state itself; another lane is copied out when asked and
 * kept until the books change (the cache is not part of the books' value).
 */
const struct acct *books_acct(const struct books *b, enum clock_kind c, bool net)
{
	struct books *m = (struct books *)(uintptr_t)b;
	int k;

	if (!b->timed)
		return net ? NULL : b->a;
	if (net && !b->net)
		return NULL;
	k = LANE(c, net);
	if (!k)
		return b->a;
	if (!m->view[k] || m->view_gen[k] != b->gen) {
		acct_free(m->view[k]);
		m->view[k] = acct_lane(b->a, k);
		m->view_gen[k] = b->gen;
	}
	return m->view[k];
}

acct_time_t books_self(const struct books *b, enum clock_kind c, bool net, uint32_t routine)
{
	if (!b->timed || (net && !b->net))
		net = false;
	return acct_lane_self(b->a, b->timed ? LANE(c, net) : 0, routine);
}

uint64_t books_calls(const struct books *b, uint32_t routine)
{
	return acct_routine_calls(b->a, routine);
}

bool books_timed(const struct books *b)
{
	return b->timed;
}

size_t books_n_routines(const struct books *b)
{
	return acct_n_routines(b->a);
}

uint64_t books_total_calls(const struct books *b)
{
	return acct_total_calls(b->a);
}

void books_alloc_keep(struct books *b)
{
	if (!b->mem)
		b->mem = alloc_new(acct_n_routines(b->a));
}

struct stack_buf {
	struct books *b;
	size_t n;
};

/* books_frames' visitor: the routines of a thread's stack into b->stk, bottom first. */
static void push_frame(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	struct stack_buf *s = arg;
	struct books *b = s->b;

	(void)slot;
	(void)ret;
	if (s->n == b->stk_cap) {
		b->stk_cap = b->stk_cap ? 2 * b->stk_cap : 64;
		b->stk = xrealloc(b->stk, b->stk_cap * sizeof(*b->stk));
	}
	b->stk[s->n++] = routine;
}

void books_alloc(struct books *b, int tid, enum alloc_fn fn, const uint64_t args[3], uint64_t block)
{
	struct stack_buf s = {b, 0};

	if (!b->mem)
		return;
	acct_frames(b->a, tid, push_frame, &s);
	alloc_charge(b->mem, b->stk, s.n, fn, args, block);
}

const struct alloc_books *books_alloc_books(const struct books *b)
{
	return b->mem;
}
