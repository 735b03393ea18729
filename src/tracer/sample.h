/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.h - --sample (sample.c): each thread's instruction pointer
 * sampled, folded to its timed frames. The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_SAMPLE_H
#define FORTSTAT_TRACER_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/sample.h"

struct pstate;
struct trace_samples;
struct tracer;
struct tthread;

/* The run's part of --sample (struct tracer.smp): changed by sample.c only. */
struct sample_run {
	int err;		   /* why perf_event_open was refused (-errno), said once; 0 */
	struct sample_timer timer; /* when to read every thread's ring */
};

/* --sample: start sampling thread th (new, not run yet); a refusal is said once a run. */
void sample_thread_new(struct tracer *tr, struct tthread *th);

/* Thread th's samples since its last read into its process's (at each of its stops). */
void sample_read_thread(struct tracer *tr, struct tthread *th);

/* Every thread's (a ring half full: SIGIO, cswitch_due). */
void sample_read_all(struct tracer *tr);

/*
 * Thread th's samples in untimed code taken before wall time `t`
 * (CLOCK_MONOTONIC), read and not yet given, to its innermost timed frame
 * in the books now: at each event its probes recorded, before the event
 * is taken (its time), and at each of its stops once its ring is drained
 * (UINT64_MAX: all). With no frame, outside.
 */
void sample_fold(struct tracer *tr, struct tthread *th, uint64_t t);

/* Thread th is gone: its last samples read, its event closed. */
void sample_thread_gone(struct tracer *tr, struct tthread *th);

/* Process ps's samples (its threads still there read first) into *out (hits malloc'ed). */
void sample_result(struct tracer *tr, struct pstate *ps, struct trace_samples *out);

/* The run is over: no more reading (the timer off). */
void sample_stop(struct tracer *tr);

/* Free process ps's samples. */
void sample_ps_free(struct pstate *ps);

#endif
