/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * timeline.h - the calls of a run in time (--timeline): each call's thread,
 * routine, entry and exit on the wall clock, kept as the accounting closes
 * it (acct_set_recorder, books_record). Pure: no clock, no names; the
 * report writes them (chrome.h). Calls shorter than a threshold are left
 * out and counted, and so is every call after a bound on their number.
 */
#ifndef FORTSTAT_TIMELINE_H
#define FORTSTAT_TIMELINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fortstat/account.h"

/* --timeline-min's default, microseconds (see fortstat(1), TIMELINE). */
#define TIMELINE_MIN_US_DEFAULT 10
/* --timeline-max's default: calls kept (about 100 bytes of JSON each). */
#define TIMELINE_MAX_DEFAULT 1000000
#define TIMELINE_MAX_LIMIT 0x7fffffff /* the most --timeline-max takes */

/* One call: group (a process image, timeline_group), stack key, routine, times (ns). */
struct tl_event {
	acct_time_t t0, t1; /* entry and exit, t0 <= t1 */
	int tid;	    /* thread id, or ACCT_GOROUTINE0 + k */
	uint32_t routine;   /* index in its group's routines */
	uint32_t group;
	uint32_t seq : 31;	 /* its rank in the order the calls closed */
	uint32_t incomplete : 1; /* still running when its thread or process ended */
};

struct timeline;
/* Told once, as the bound leaves out its first call (timeline.on_full). */
typedef void (*timeline_full_fn)(const struct timeline *tl, void *arg);

struct timeline {
	acct_time_t min_ns; /* calls shorter than this are left out */
	size_t max_events;  /* at most this many kept */
	struct tl_event *v; /* kept, in the order they closed (timeline_sort: by track) */
	size_t n, cap;
	uint64_t short_calls; /* left out: shorter than min_ns */
	uint64_t late_calls;  /* left out: closed after max_events were kept */
	acct_time_t full_at;  /* the exit of the first call the bound left out (0: none) */
	uint32_t n_groups;
	timeline_full_fn on_full; /* NULL: nobody is told */
	void *full_arg;
};

/*
 * A new, empty timeline keeping calls of at least min_ns, at most
 * max_events (at most TIMELINE_MAX_LIMIT). Never NULL.
 */
struct timeline *timeline_new(acct_time_t min_ns, size_t max_events);
void timeline_free(struct timeline *tl);

/* A new group (the calls of one process image, its own routines): its number. */
uint32_t timeline_group(struct timeline *tl);

/*
 * One call closed: kept when t1 - t0 >= min_ns (an incomplete one too) and
 * fewer than max_events are kept; else counted in short_calls or
 * late_calls (the first of those: on_full is called). t1 < t0 is taken
 * as t1 = t0.
 */
void timeline_add(struct timeline *tl, uint32_t group, int tid, uint32_t routine, acct_time_t t0,
		  acct_time_t t1, bool incomplete);

/*
 * Sort the calls by group, then thread, then entry (ascending), then exit
 * (descending), then the order they closed (descending): each track's
 * calls in the order a viewer nests them, an enclosing call before the
 * calls inside it, even when they began and ended at the same time.
 */
void timeline_sort(struct timeline *tl);

/* Did the bound leave calls out? */
static inline bool timeline_full(const struct timeline *tl)
{
	return tl->late_calls > 0;
}

#endif
