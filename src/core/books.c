// SPDX-License-Identifier: GPL-2.0-or-later
/* books.c - both clocks' accounting, gross and net of the stops' cost, fed once. */
#include <stdlib.h>

#include "fortstat/books.h"
#include "fortstat/map.h"
#include "fortstat/util.h"

/* What the net books need of a thread: its stops' cost so far, the last net times fed. */
struct bthread {
	double ovh[FS_N_CLOCKS];
	acct_time_t vlast[FS_N_CLOCKS];
};

struct books {
	bool timed;
	struct acct *gross[FS_N_CLOCKS]; /* count-only: gross[CLOCK_KIND_CPU] alone */
	struct acct *net[FS_N_CLOCKS];	 /* NULL: not kept */
	struct u64map thr;		 /* tid -> index into th */
	struct bthread *th;
	size_t n_th, cap_th;
};

struct books *books_new(size_t n_routines, bool timed, bool net)
{
	struct books *b = xcalloc(1, sizeof(*b));

	b->timed = timed;
	b->gross[CLOCK_KIND_CPU] = acct_new(n_routines);
	if (!timed)
		return b;
	b->gross[CLOCK_KIND_WALL] = acct_new(n_routines);
	for (int k = 0; net && k < FS_N_CLOCKS; k++)
		b->net[k] = acct_new(n_routines);
	return b;
}

struct books *books_new_like(const struct books *b, size_t n_routines)
{
	return books_new(n_routines, b->timed, b->net[0] != NULL);
}

void books_free(struct books *b)
{
	if (!b)
		return;
	for (int k = 0; k < FS_N_CLOCKS; k++) {
		acct_free(b->gross[k]);
		acct_free(b->net[k]);
	}
	u64map_free(&b->thr);
	free(b->th);
	free(b);
}

void books_grow(struct books *b, size_t n_routines)
{
	for (int k = 0; k < FS_N_CLOCKS; k++) {
		if (b->gross[k])
			acct_grow(b->gross[k], n_routines);
		if (b->net[k])
			acct_grow(b->net[k], n_routines);
	}
}

static struct bthread *thread_of(struct books *b, int tid)
{
	uint64_t i;

	if (u64map_get(&b->thr, (uint64_t)(uint32_t)tid + 1, &i))
		return &b->th[i];
	if (b->n_th == b->cap_th) {
		b->cap_th = b->cap_th ? 2 * b->cap_th : 16;
		b->th = xrealloc(b->th, b->cap_th * sizeof(*b->th));
	}
	b->th[b->n_th] = (struct bthread){0};
	u64map_put(&b->thr, (uint64_t)(uint32_t)tid + 1, b->n_th);
	return &b->th[b->n_th++];
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

void books_enter(struct books *b, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		 const struct stamp *s)
{
	for (int k = 0; k < FS_N_CLOCKS; k++)
		if (b->gross[k])
			acct_enter(b->gross[k], tid, routine, slot, ret, s->t[k]);
	if (b->net[0]) {
		const acct_time_t *v = net_times(b, tid, s);

		for (int k = 0; k < FS_N_CLOCKS; k++)
			acct_enter(b->net[k], tid, routine, slot, ret, v[k]);
	}
}

void books_count(struct books *b, int tid, uint32_t routine)
{
	books_count_n(b, tid, routine, 1, false);
}

void books_count_n(struct books *b, int tid, uint32_t routine, uint64_t n, bool spontaneous)
{
	for (int k = 0; k < FS_N_CLOCKS; k++) {
		if (b->gross[k])
			acct_count_n(b->gross[k], tid, routine, n, spontaneous);
		if (b->net[k])
			acct_count_n(b->net[k], tid, routine, n, spontaneous);
	}
}

int books_chain(struct books *b, int tid, uint32_t routine, const struct stamp *s)
{
	int rc = acct_chain(b->gross[CLOCK_KIND_CPU], tid, routine, s->t[CLOCK_KIND_CPU]);

	if (b->gross[CLOCK_KIND_WALL])
		acct_chain(b->gross[CLOCK_KIND_WALL], tid, routine, s->t[CLOCK_KIND_WALL]);
	if (b->net[0]) {
		const acct_time_t *v = net_times(b, tid, s);

		for (int k = 0; k < FS_N_CLOCKS; k++)
			acct_chain(b->net[k], tid, routine, v[k]);
	}
	return rc;
}

int books_leave(struct books *b, int tid, const struct stamp *s, uint64_t *ret)
{
	if (b->gross[CLOCK_KIND_WALL])
		acct_leave(b->gross[CLOCK_KIND_WALL], tid, s->t[CLOCK_KIND_WALL], NULL);
	if (b->net[0]) {
		const acct_time_t *v = net_times(b, tid, s);

		for (int k = 0; k < FS_N_CLOCKS; k++)
			acct_leave(b->net[k], tid, v[k], NULL);
	}
	return acct_leave(b->gross[CLOCK_KIND_CPU], tid, s->t[CLOCK_KIND_CPU], ret);
}

void books_thread_exit(struct books *b, int tid, const struct stamp *s)
{
	for (int k = 0; k < FS_N_CLOCKS; k++)
		if (b->gross[k])
			acct_thread_exit(b->gross[k], tid, s->t[k]);
	if (b->net[0]) {
		const acct_time_t *v = net_times(b, tid, s);

		for (int k = 0; k < FS_N_CLOCKS; k++)
			acct_thread_exit(b->net[k], tid, v[k]);
	}
}

void books_stop_cost(struct books *b, int tid, const double ovh[FS_N_CLOCKS])
{
	struct bthread *th;

	if (!b->net[0])
		return;
	th = thread_of(b, tid);
	for (int k = 0; k < FS_N_CLOCKS; k++)
		th->ovh[k] += ovh[k] > 0 ? ovh[k] : 0;
}

void books_finish(struct books *b, acct_time_t wall_end)
{
	acct_finish(b->gross[CLOCK_KIND_CPU], wall_end, false);
	if (b->gross[CLOCK_KIND_WALL])
		acct_finish(b->gross[CLOCK_KIND_WALL], wall_end, true);
	/* net times: each thread closed at the last it was seen */
	for (int k = 0; k < FS_N_CLOCKS; k++)
		if (b->net[k])
			acct_finish(b->net[k], 0, false);
}

int books_top(const struct books *b, int tid, uint32_t *routine, uint64_t *slot, uint64_t *ret)
{
	return acct_top(b->gross[CLOCK_KIND_CPU], tid, routine, slot, ret);
}

void books_frames(const struct books *b, int tid,
		  void (*fn)(uint32_t routine, uint64_t slot, uint64_t ret, void *arg), void *arg)
{
	acct_frames(b->gross[CLOCK_KIND_CPU], tid, fn, arg);
}

const struct acct *books_acct(const struct books *b, enum clock_kind c, bool net)
{
	if (!b->timed)
		return net ? NULL : b->gross[CLOCK_KIND_CPU];
	return net ? b->net[c] : b->gross[c];
}

bool books_timed(const struct books *b)
{
	return b->timed;
}

size_t books_n_routines(const struct books *b)
{
	return acct_n_routines(b->gross[CLOCK_KIND_CPU]);
}

uint64_t books_total_calls(const struct books *b)
{
	return acct_total_calls(b->gross[CLOCK_KIND_CPU]);
}
