/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * ticker.h - the live work between stops (ticker.c): the status line,
 * --interval snapshots, the switch records' reading. The state they act on
 * is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_TICKER_H
#define FORTSTAT_TRACER_TICKER_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;

/* Set by fortstat's signal handlers: ticker_poll has work (the loop checks it at each stop). */
extern volatile sig_atomic_t ticker_pending;

/*
 * The loop of a run begins (the program's wall0 is set): the timer of the
 * status line and of --interval, SIGUSR1 interrupting the wait. Nothing
 * when the run asks for no live report (trace_opts). `path` names the
 * program for processes that have not exec'ed.
 */
void ticker_start(struct tracer *tr, const char *path);

/* The loop has ended: the timer off, SIGALRM as it was, SIGUSR1 caught again. */
void ticker_stop(struct tracer *tr);

/*
 * Between stops: draw the status line, take a snapshot, as the flags say;
 * with in-process probes, once every thread has stopped for its ring to be
 * drained (PTRACE_INTERRUPT). Clears ticker_pending.
 */
void ticker_poll(struct tracer *tr);

/* A thread stopped for PTRACE_INTERRUPT (its ring drained): maybe the last awaited. */
void ticker_interrupted(struct tracer *tr);

#endif
