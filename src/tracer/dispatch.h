/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * dispatch.h - acting on a stop (dispatch.c), and the run's wait. The state
 * they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_DISPATCH_H
#define FORTSTAT_TRACER_DISPATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stop.h"

struct stop;
struct tracer;

/*
 * Act on stop s (from next_stop) and resume its thread. s is consumed: its
 * kind may be refined (STOP_PROBE_FULL) and the event word taken into it.
 */
void dispatch(struct tracer *tr, struct stop *s);

/*
 * -vv: a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) that stop s of thread tid
 * brings, delivered or held back for the detach: its siginfo, every
 * register, the GS base and where fortstat's code lies, in one line.
 */
void fault_say(struct tracer *tr, pid_t tid, struct stop *s);

/*
 * The run's wait (session.c, and -p's in attach.c): next_stop on every
 * thread, the ticker's work (a status line, a snapshot, the switch
 * records) done before it and whenever one of fortstat's signals
 * interrupts it; `how` as next_stop's (NEXT_INTR: back to the caller).
 */
int run_stop(struct tracer *tr, int how, struct stop *s);

#endif
