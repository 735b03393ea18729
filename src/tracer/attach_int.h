/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attach_int.h - private to attach.c and detach.c (-p): what the attach
 * calls of detach.c (holding every thread, a held thread's stack, the
 * detach); detach.c calls nothing of attach.c.
 */
#ifndef FORTSTAT_ATTACH_INT_H
#define FORTSTAT_ATTACH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "tracer.h"

/* Stop every thread of the process (first, when not NULL, is the first stop to act on). */
void hold_all(struct tracer *tr, struct stop *first);

/* Let every held thread go on (a group-stopped one stays stopped). */
void release_all(struct tracer *tr);

/*
 * Held thread tid's registers into *regs and the words on top of its stack
 * into *words (malloc'ed, *n of them; NULL and 0 when unreadable). False
 * when its registers cannot be read.
 */
bool stack_words(struct tracer *tr, pid_t tid, arch_regs *regs, uint64_t **words, size_t *n);

/* Wait until no thread is in a signal handler that interrupted fortstat's code. */
void settle(struct tracer *tr);

/* Every thread held: undo everything fortstat did in the process and detach. */
void detach_all(struct tracer *tr);

#endif
