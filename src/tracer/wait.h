/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * wait.h - the one wait and the one resume of the tracer (wait.c). The
 * state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_WAIT_H
#define FORTSTAT_TRACER_WAIT_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stop.h"

struct stop;

/* How next_stop waits (or'ed). */
enum {
	NEXT_POLL = 1, /* no blocking: 0 when no stop is there yet */
	NEXT_INTR = 2, /* -EINTR when one of fortstat's signals interrupts the wait */
};

/*
 * The one wait of the tracer: the next stop of thread tid (-1: of any
 * traced thread), named (stop_from_status) into *s. Every phase waits
 * here: the run and -p's (through run_stop), holding and stepping threads
 * for a detach, a new child's first stop, the exec. A wait that one of
 * fortstat's own signals interrupts goes on (unless NEXT_INTR). Returns 1,
 * 0 (NEXT_POLL: nothing yet) or -errno (-ECHILD: nothing is left to wait
 * for).
 */
int next_stop(pid_t tid, int how, struct stop *s);

/*
 * The siginfo of stop s's signal (PTRACE_GETSIGINFO, read at the first
 * ask and kept in s), or NULL when it cannot be read (the thread is gone).
 */
const siginfo_t *stop_siginfo(struct stop *s);

/*
 * The one way a stopped thread is set going (PTRACE_CONT, PTRACE_LISTEN,
 * PTRACE_SINGLESTEP with signal sig), let go (PTRACE_DETACH) or a running
 * one stopped (PTRACE_INTERRUPT). A thread that has vanished (ESRCH) is no
 * error: its end is a stop that next_stop reports. Returns 0 or -errno
 * (said under -vv unless ESRCH).
 */
int tracee_resume(int op, pid_t tid, int sig);

#endif
