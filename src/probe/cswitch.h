/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * cswitch.h - private to src/tracer/: a thread's off-CPU intervals from the
 * kernel's context-switch records (perf_event_open, context_switch), on
 * CLOCK_MONOTONIC (the tracer's wall clock). Used by in-process probes to
 * give events between two stops their CPU time.
 */
#ifndef FORTSTAT_CSWITCH_H
#define FORTSTAT_CSWITCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct cswitch {
	int fd;	    /* the perf event, -1: none */
	void *meta; /* its mapping: the control page, then the ring */
	uint8_t *data;
	size_t size, data_size;
	bool out; /* switched out at out_at and not back yet */
	uint64_t out_at;
	/*
	 * Off-CPU intervals read and not forgotten, in order: `off` ns of
	 * [from, to) were off the CPU (all of it, but for intervals merged to
	 * keep at most CS_MAX_OFF: then spread evenly over them), in n
	 * switches.
	 */
	struct cs_off {
		uint64_t from, to, off;
		double n;
	} * off;
	size_t n_off, cap_off;
	bool lost;	 /* the kernel dropped records since the last cswitch_forget */
	uint64_t n_lost; /* records the kernel said it dropped (PERF_RECORD_LOST; a full ring may
			    say it later or never) */
};

/*
 * Set (from a signal handler) when a thread's ring is a quarter full: the
 * tracer's loop then reads every thread's records (cswitch_read), so that
 * a thread that switches often between its stops (a sched_yield loop: a
 * full ring in milliseconds) loses none.
 */
extern volatile int cswitch_due;

/* Start recording thread tid's switches. Returns 0 or -errno (then c->fd is -1). */
int cswitch_open(struct cswitch *c, pid_t tid);

void cswitch_close(struct cswitch *c);

/* Take the records the kernel wrote since the last read into intervals. */
void cswitch_read(struct cswitch *c);

/*
 * Nanoseconds of [a, b) (CLOCK_MONOTONIC) the thread spent off its CPU, as
 * read, each switch's interval shortened by `delta` ns: the thread's CPU
 * clock counts the scheduler's work around a switch, which the records
 * put off the CPU (about a microsecond a switch here: a sched_yield loop's
 * hundred thousand switches a second put a third of its CPU time "off").
 * *n (when not NULL): the switches in [a, b).
 */
uint64_t cswitch_off(const struct cswitch *c, uint64_t a, uint64_t b, double delta, double *n);

/* Of interval i, as cswitch_off (a merged one's off time and switches spread evenly). */
uint64_t cswitch_off_in(const struct cs_off *i, uint64_t a, uint64_t b, double delta, double *n);

/* Drop the intervals that end before t. */
void cswitch_forget(struct cswitch *c, uint64_t t);

#endif
