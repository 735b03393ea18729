/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * golang.h - Go programs (golang.c): goroutines, exit probes, the runtime's
 * hooks. The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_GOLANG_H
#define FORTSTAT_TRACER_GOLANG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/arch.h"

struct golang;
struct patch;
struct pstate;
struct routine;
struct tracer;
struct tthread;
struct probe_event;

/* A thread's part of Go's state (struct tthread.go): changed by golang.c only. */
struct go_thr {
	uint64_t cpu_seen; /* its CPU clock when its last goroutine's stop was accounted */
	uint64_t cur;	   /* the g it runs, as the scheduler's hooks saw (0: none, unknown) */
};

/*
 * A Go program (trace_is_go: it has runtime.morestack) must never see a
 * foreign return address: its runtime walks and copies the goroutines'
 * stacks. Detect it at the exec stop (before patch_routines): then ps->go
 * is set, the runtime's own routines are not timed, each timed routine's
 * `ret`s are found for exit probes (a routine whose exits cannot all be
 * found is refused, -v says why; with probes, where a jmp over each one's
 * epilogue may go: a routine where one cannot traps), and the runtime is hooked where it
 * grows a stack (runtime.morestack: a function re-entered after it is
 * counted once), ends a goroutine (runtime.goexit1) and switches them
 * (runtime.schedule, runtime.execute). Returns 0 (not Go, or ready).
 */
int go_setup(struct tracer *tr);

/* Is routine i of the program's table one of the runtime's hooks (go_setup), never timed? */
bool go_is_hook(const struct pstate *ps, size_t i);

/* Patch the exit probes of routine i after its entry patch (patch_routines). */
void go_add_exits(struct tracer *tr, size_t i, uint64_t bias);

/* An entry (STOP_ENTRY, STOP_COUNT) of a Go program: regs complete. Resumes it. */
void go_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

/* An exit probe (STOP_EXIT_PROBE): the routine returns; the `ret` is emulated. */
void go_exit(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

/*
 * With probes: why Go routine r takes no in-process entry (its exits trap,
 * it has none, the traps throughout), or NULL (try_stub plans INSN_PROBE_GO).
 */
const char *go_stub_refused(const struct tracer *tr, const struct routine *r);

/*
 * Why Go routine r's entry stub (a jmp over len bytes at `at`, the routine
 * moved whole into it if `whole`, a short entry's jmp in the padding at
 * pad_addr if not 0) cannot be, or NULL: a routine moved whole would
 * return into the stub, a jmp may not cover an exit's, the padding before
 * a routine may hold the last exit's jmp of the one before.
 */
const char *go_stub_clash(const struct tracer *tr, const struct routine *r, uint64_t at,
			  unsigned len, unsigned whole, uint64_t pad_addr);

/* Scratch bytes the program's in-process exit stubs take (patch_routines). */
size_t go_exit_room(const struct tracer *tr);

/*
 * Routine i's entry took in-process stub j: a jmp over each of its exits'
 * epilogues to an exit stub, written at base (buf: fortstat's copy), one
 * after another, `room` bytes at most (-c: none; an exit without room or
 * out of reach: an int3 on its ret). Returns how many stubs it wrote.
 */
size_t go_add_probe_exits(struct tracer *tr, size_t i, size_t j, uint64_t bias, uint64_t base,
			  uint8_t *buf, size_t room);

/*
 * An event of a Go routine's in-process probe read from thread th's ring
 * (th->now: its stamp), `counted` calls of the count path before it: an
 * entry or an exit of a goroutine's frame (drain.c's take).
 */

void go_take(struct tracer *tr, struct tthread *th, const struct probe_event *e, uint64_t counted);

/*
 * Patch j was throttled: a goroutine that called runtime.morestack from its
 * routine and has not re-entered it yet will re-enter through the count
 * path, a count that is no call (probe_uncount), not the same call's event.
 */
void go_throttled(struct tracer *tr, size_t j);

/* A copy of a process's Go state for its forked child (NULL for NULL). */
struct golang *go_dup(const struct golang *go);

/* Free a process's Go state. */
void go_free(struct golang *go);

#endif
