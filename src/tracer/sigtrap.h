/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * sigtrap.h - the program's own SIGTRAP handler kept intact (sigtrap.c).
 * The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_SIGTRAP_H
#define FORTSTAT_TRACER_SIGTRAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;
struct tthread;

/*
 * After a breakpoint of thread th, which may run the program's SIGTRAP
 * handler: if the kernel reset the action, put it back and block SIGTRAP
 * again, as the handler had it; if the action is intact, SIGTRAP was not
 * blocked: the handler is over.
 */
void trap_handler_check(struct tracer *tr, struct tthread *th);

/*
 * The program's own SIGTRAP is about to be delivered to thread th: with a
 * handler that runs with SIGTRAP blocked (no SA_NODEFER, no SA_RESETHAND),
 * note the action. A breakpoint hit in that handler makes the kernel
 * reset it to SIG_DFL and unblock SIGTRAP (a forced signal may not be
 * blocked), which would end the program at its next SIGTRAP.
 */
void trap_handler_enter(struct tracer *tr, struct tthread *th);

#endif
