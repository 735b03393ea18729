/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sample.h - --sample: one thread's instruction pointer sampled by the
 * kernel's software CPU clock (perf_event_open, PERF_COUNT_SW_CPU_CLOCK: no
 * hardware PMU needed), HZ samples a second of the thread's CPU time, user
 * mode only (what perf_event_paranoid 2 allows), read from a ring buffer
 * that fortstat maps (src/tracer/sample.c).
 *
 * One event a thread, opened by the tracer at the thread's first stop
 * (before it runs): the kernel refuses to mmap a per-task event that is
 * inherited (each child would write into the parent's ring), and a
 * per-CPU inherited one would need an event per CPU and its records sorted
 * out by thread; the tracer sees every thread born anyway (its clone
 * event), as for the context-switch records (cswitch.c).
 *
 * The ring is the kernel's, its head and every record's size are still
 * bounded by what fortstat mapped before anything is read.
 */
#ifndef FORTSTAT_SAMPLE_H
#define FORTSTAT_SAMPLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#define SAMPLE_HZ_DEFAULT 997 /* not a divisor of common timer rates (perf's choice too) */
#define SAMPLE_HZ_MAX 100000  /* perf_event_max_sample_rate's usual ceiling */

/* One thread's sampling event and its ring. */
struct sampler {
	int fd;	    /* the perf event, -1: none */
	void *meta; /* its mapping: the control page, then the ring */
	uint8_t *data;
	size_t size, data_size;
	uint64_t lost; /* samples the kernel said it dropped (PERF_RECORD_LOST) */
	bool full;     /* the ring was found (nearly) full at a read: samples may be lost */
	/*
	 * The tracer's: times of samples read in untimed code, not yet given
	 * to a routine (sample_fold), in order; at most SAMPLE_PEND_MAX.
	 */
	uint64_t *pend;
	size_t n_pend, cap_pend;
};

#define SAMPLE_PEND_MAX (1u << 20) /* samples waiting for the thread's stack (8 MB) */

/* One sample as the kernel wrote it. */
struct sample_rec {
	uint64_t ip;   /* user-mode instruction pointer */
	uint64_t time; /* CLOCK_MONOTONIC, ns */
	uint32_t pid, tid;
};

/*
 * Start sampling thread tid at hz samples a CPU second (a fixed period of
 * 1e9/hz ns of its CPU clock), read by the caller (sampler_read) at least
 * every quarter of a ring's samples (sample_timer). Returns 0, or -errno (s->fd is -1 then):
 * -EACCES/-EPERM when perf_event_paranoid or a seccomp filter refuses.
 * FORTSTAT_SAMPLE_REFUSE=1 in the environment (a test hook) makes it fail
 * with -EACCES without asking the kernel.
 */
int sampler_open(struct sampler *s, pid_t tid, unsigned hz);

/* A POSIX timer that says when the rings are to be read. */
struct sample_timer {
	timer_t id;
	bool on;
};

/*
 * Every quarter of a ring's samples at hz (10 ms to 1 s), SIGIO to
 * fortstat, whose handler sets `*due`: the tracer's loop then reads every
 * ring. Returns 0 or -errno (no timer).
 */
int sample_timer_start(struct sample_timer *t, unsigned hz, volatile int *due);

void sample_timer_stop(struct sample_timer *t);

/*
 * Read what the kernel wrote since the last read: fn(rec, arg) for each
 * sample, in order. Returns the samples read. A record whose size is
 * smaller than its header or runs past the head ends the read (the rest
 * is dropped: the tail moves to the head).
 */
size_t sampler_read(struct sampler *s, void (*fn)(const struct sample_rec *r, void *arg),
		    void *arg);

/* Stop and unmap, free the pending times; s->fd is -1 again. Records not read are lost. */
void sampler_close(struct sampler *s);

#endif
