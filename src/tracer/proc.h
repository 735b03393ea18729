/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * proc.h - the traced processes (proc.c): their states (struct pstate)
 * made, found, switched, ended; a thread's first stop and ptrace events.
 * The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_PROC_H
#define FORTSTAT_TRACER_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "stop.h"

struct pstate;
struct tracer;
struct tthread;

/* The first stop of a thread or process we have not seen yet. */
struct tthread *first_stop(struct tracer *tr, pid_t tid, int status);

/* A ptrace event of thread th (clone, fork, vfork, exec, exit, other); resumes it. */
void handle_event(struct tracer *tr, struct tthread *th, enum stop_kind kind);

size_t ps_add(struct tracer *tr, const struct pstate *init);

/*
 * A process state ended now (exit, exec, let go); its calls go to its
 * file's throttle pool (plancache_pool), its descriptor of the program's
 * memory is closed, and with -f it is kept small (trace_opts.compact_ended:
 * its run's own state freed, its books and table kept to the routines it
 * used) once no thread of it is known.
 */
void ps_end(struct tracer *tr, struct pstate *ps, int status);

/*
 * Free what only a process's run reads (its patches, their maps, the
 * probes' drain bookkeeping), leaving them empty: at its end (-f, a
 * process kept small) and when the tracer is freed.
 */
void ps_free_run(struct pstate *ps);

/* The live (not ended) process state of process pid, or -1. */
long ps_find(struct tracer *tr, pid_t pid);

/* Any live process state, or -1. */
long ps_find_any(struct tracer *tr);

/* Process state i: the loaded copy when it is the current one. */
struct pstate *ps_get(struct tracer *tr, size_t i);

/* Make process state i the current one (tr->ps). */
void ps_switch(struct tracer *tr, size_t i);

#endif
