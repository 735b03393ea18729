/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * gate.h - -p: the attached threads' seccomp filters (gate.c), and the
 * question every injected system call asks first: would it run?
 */
#ifndef FORTSTAT_GATE_H
#define FORTSTAT_GATE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "fortstat/seccomp.h"

struct tracer;

/* The threads' seccomp filters, read at the attach (gate_read); changed by gate.c only. */
struct gate {
	struct scf_filters *sc;
	size_t n;
	bool strict; /* a thread runs in seccomp's strict mode */
	int err;     /* why a thread's filters could not be read (-errno), else 0 */
};

/*
 * Every thread held: each one's seccomp filters, read once (a filter is a
 * thread's: a thread the program starts later inherits its creator's).
 */
void gate_read(struct tracer *tr);

/* Why a thread's filters could not be read (gate.err), into buf. */
void gate_unread(const struct tracer *tr, char *buf, size_t n);

/*
 * -p: may fortstat run system call nr(args), named `what` in messages
 * ("mmap of shared memory"), in held thread tid? By the threads' seccomp
 * filters read at the attach (a launched program, or one without a
 * filter: always). 0: it runs; 1: it would not (refused, or fatal to the
 * process: never to be tried), why in `why`; 2: unknown (a filter that
 * cannot be read or understood), why in `why`.
 */
int syscall_gate(struct tracer *tr, pid_t tid, const char *what, long nr, const long args[6],
		 char *why, size_t n);

/* Free the filters read. */
void gate_free(struct gate *g);

#endif
