/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * drain.h - the probes' ring reader (drain.c): a thread's events into the
 * books at its stops. The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_PROBE_DRAIN_H
#define FORTSTAT_PROBE_DRAIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;
struct tthread;

/*
 * Read what thread th's probes recorded since its last stop into the books
 * (stamped between that stop's clocks and this one's), at every stop of
 * it. Returns the events read. The count path's counters are read when
 * it took calls since; with -c (every probe counts there) at a breakpoint
 * only once enough calls make the walk worth it, at any other stop
 * (`all`: an event, an interrupt for a snapshot, the end) always.
 */
size_t probe_drain(struct tracer *tr, struct tthread *th, bool all);

/*
 * Thread th stopped on a full ring (STOP_PROBE_FULL): its events copied
 * out and its ring given back (true), to be read by probe_drain_pending
 * once the caller has resumed it, before fortstat waits again; false: a
 * drain made in full now (Go, --alloc, --sample: their events reach into
 * the program or its samples; one CPU for the program, where the reading
 * would take turns with it; FORTSTAT_DEFER_DRAIN=0).
 */
bool probe_drain_defer(struct tracer *tr, struct tthread *th);

/* The events probe_drain_defer copied out, into the books (every drain reads them first). */
void probe_drain_pending(struct tracer *tr);

/* Read every thread's context-switch records now (cswitch_due: a ring a quarter full). */
void probe_read_switches(struct tracer *tr);

#endif
