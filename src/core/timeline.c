// SPDX-License-Identifier: GPL-2.0-or-later
/* timeline.c - the calls of a run in time: kept as they close, bounded, sorted by track. */
#include "fortstat/timeline.h"

#include <stdlib.h>

#include "fortstat/util.h"

struct timeline *timeline_new(acct_time_t min_ns, size_t max_events)
{
	struct timeline *tl = xcalloc(1, sizeof(*tl));

	tl->min_ns = min_ns;
	tl->max_events = max_events < TIMELINE_MAX_LIMIT ? max_events : TIMELINE_MAX_LIMIT;
	return tl;
}

void timeline_free(struct timeline *tl)
{
	if (!tl)
		return;
	free(tl->v);
	free(tl);
}

uint32_t timeline_group(struct timeline *tl)
{
	return tl->n_groups++;
}

void timeline_add(struct timeline *tl, uint32_t group, int tid, uint32_t routine, acct_time_t t0,
		  acct_time_t t1, bool incomplete)
{
	if (t1 < t0)
		t1 = t0;
	if (t1 - t0 < tl->min_ns) {
		tl->short_calls++;
		return;
	}
	if (tl->n >= tl->max_events) {
		if (!tl->late_calls++) {
			tl->full_at = t1;
			if (tl->on_full)
				tl->on_full(tl, tl->full_arg);
		}
		return;
	}
	if (tl->n == tl->cap) {
		tl->cap = tl->cap ? 2 * tl->cap : 1024;
		if (tl->cap > tl->max_events)
			tl->cap = tl->max_events;
		tl->v = xrealloc(tl->v, tl->cap * sizeof(*tl->v));
	}
	tl->v[tl->n] = (struct tl_event){.t0 = t0,
					 .t1 = t1,
					 .tid = tid,
					 .routine = routine,
					 .group = group,
					 .seq = (uint32_t)tl->n,
					 .incomplete = incomplete};
	tl->n++;
}

static int cmp_event(const void *pa, const void *pb)
{
	const struct tl_event *a = pa, *b = pb;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (a->tid != b->tid)
		return a->tid < b->tid ? -1 : 1;
	if (a->t0 != b->t0)
		return a->t0 < b->t0 ? -1 : 1;
	if (a->t1 != b->t1)
		return a->t1 > b->t1 ? -1 : 1;
	if (a->seq != b->seq) /* the same interval: the one that closed last encloses */
		return a->seq > b->seq ? -1 : 1;
	return 0;
}

void timeline_sort(struct timeline *tl)
{
	if (tl->n > 1)
		qsort(tl->v, tl->n, sizeof(*tl->v), cmp_event);
}
