/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * session.h - the measuring kit of a run and the tracer's end (session.c).
 * The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_SESSION_H
#define FORTSTAT_TRACER_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/clock.h"

struct tracer;

/* Free what the tracer holds (threads, process states, the event page). */
void tracer_free(struct tracer *tr);

/*
 * The measuring kit of a run (the stops' cost, the event page). `attached`
 * (-p): no page of fortstat's; with probes, ev_size says the event memory
 * is to be made in the process (attach_event_memory). est_ns may be NULL.
 */
void session_kit(struct tracer *tr, const double est_ns[FS_N_CLOCKS], bool attached);

#endif
