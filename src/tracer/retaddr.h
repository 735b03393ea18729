/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * retaddr.h - timing by return addresses (retaddr.c): entries and returns
 * at traps and from the probes' events, the CET shadow-stack check, the
 * frames put back at a detach or in a forked copy. The state they act on is
 * tracer.h's.
 */
#ifndef FORTSTAT_TRACER_RETADDR_H
#define FORTSTAT_TRACER_RETADDR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/arch.h"

struct patch;
struct tracer;
struct tthread;

/*
 * A CET user shadow stack (enabled by the C library at start, for every
 * thread) keeps its own copy of each return address: a rewritten one would
 * end the program with a control-protection fault. Checked at the first
 * stop, before any is rewritten; then calls are counted, never timed.
 */
void check_shstk(struct tracer *tr, struct tthread *th);

void handle_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

void handle_return(struct tracer *tr, struct tthread *th, arch_regs *regs, bool site);

/* An entry and a return recorded in-process (drain.c), as handle_entry/handle_return. */
void entry_recorded(struct tracer *tr, struct tthread *th, uint32_t routine, uint64_t slot,
		    uint64_t ret, bool chained, bool noreturn);

void return_recorded(struct tracer *tr, struct tthread *th, uint64_t slot);

/* Put back the return addresses of thread tid's frames in the forked copy behind fd. */
void frames_undo(struct tracer *tr, int fd, pid_t tid);

/*
 * Detaching (-p), all threads stopped: put back every return address
 * hooked in thread th's open frames (top frame first), and those of the
 * current process's orphans.
 */
void frames_restore(struct tracer *tr, struct tthread *th);

void orphans_restore(struct tracer *tr);

#endif
