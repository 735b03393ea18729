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

/* Read every thread's context-switch records now (cswitch_due: a ring a quarter full). */
void probe_read_switches(struct tracer *tr);

#endif
