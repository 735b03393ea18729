/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * memcall.h - --alloc (memcall.c): the allocator calls of the program,
 * counted at their entries and returns. The state they act on is
 * tracer.h's.
 */
#ifndef FORTSTAT_TRACER_MEMCALL_H
#define FORTSTAT_TRACER_MEMCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/arch.h"
#include "fortstat/alloc.h"

struct patch;
struct routine;
struct tracer;
struct tthread;

/*
 * --alloc: the allocator call a thread is in (struct tthread.mem, changed by
 * memcall.c only; fn 0: none); calls it makes
 * itself (realloc's free) are inside it and not counted.
 */
struct mem_call {
	uint8_t fn;	  /* enum alloc_fn */
	bool hooked;	  /* its return address is ours to put back (the traps) */
	uint64_t slot;	  /* its return address's slot */
	uint64_t ret;	  /* ... which held this (hooked) */
	uint64_t args[3]; /* RDI, RSI, RDX at its entry */
};

/*
 * memcall.c, --alloc: the allocator routine r is (enum alloc_fn; 0: none or
 * not --alloc); whether its calls can be probed in-process (its block is
 * not written in memory). memcall_entry: the entry of allocator patch p,
 * at a trap (registers read): the call noted, its return hooked, the thread
 * resumed past the entry. memcall_entry_recorded: a probe's entry event (its
 * arguments). memcall_return: a return through `slot` with RAX `rax` (and
 * registers, at a trap, NULL from a probe's event): a call noted there is
 * charged to the books; returns true when the return address was ours
 * alone to put back (*ret: where the thread returns).
 */
enum alloc_fn memcall_fn(const struct tracer *tr, const struct routine *r);

bool memcall_probe_ok(const struct routine *r);

void memcall_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

void memcall_entry_recorded(struct tracer *tr, struct tthread *th, const struct patch *p,
			    uint64_t slot, uint64_t rdi, uint64_t rsi);

bool memcall_return(struct tracer *tr, struct tthread *th, uint64_t slot, uint64_t rax,
		    uint64_t *ret);

/* -p's detach: the return address of th's allocator call put back, if fortstat hooked it. */
void memcall_restore(struct tracer *tr, struct tthread *th);

#endif
