/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * chrome.h - the timeline (timeline.h) as Chrome trace-event JSON, the
 * "JSON Object Format" that Perfetto (ui.perfetto.dev) and chrome://tracing
 * open: one track a thread, grouped by process, each named.
 */
#ifndef FORTSTAT_CHROME_H
#define FORTSTAT_CHROME_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct symtab;
struct timeline;

/* One process image of the run: its calls' group and what names them. */
struct chrome_proc {
	uint32_t group; /* books_timeline_group of its books */
	int pid;
	const char *path;	 /* its program */
	const struct symtab *st; /* its routines (routine i of its books is st->r[i]) */
};

/*
 * Write tl's calls into out as one JSON object: "traceEvents" holds, for
 * each process of procs that has calls, a "process_name" metadata event
 * ("M", its path; an image exec'ed in the same pid names it "A -> B"), a
 * "thread_name" for each of its threads (once: the main thread, tid ==
 * pid, by the base name of the first image it ran; others "thread TID"; a Go program's goroutines
 * "goroutine K", K from 1 as in the other views), then one complete event
 * ("X") a call: name (the routine's display name), ts and dur in
 * microseconds of CLOCK_MONOTONIC (nanoseconds as three decimals: the
 * files of several processes or MPI ranks of one machine share their time
 * axis), pid, tid, and "args":{"incomplete":true} for a call still
 * running at its thread's end. Each thread's calls are sorted so that an
 * enclosing call comes before the calls inside it (timeline_sort: tl is
 * sorted). When the bound left calls out, an instant event ("i", global)
 * named "fortstat: timeline full" at the exit of the first call left out,
 * and "otherData" says the counts either way (calls kept, shorter than the
 * threshold, left out by the bound). Calls of a group not in procs, or of
 * a routine past its st, are left out. Returns 0 or a negative errno.
 */
int chrome_write(FILE *out, struct timeline *tl, const struct chrome_proc *procs, size_t n_procs);

#endif
