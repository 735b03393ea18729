/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evpage.h - the event page and the event memory (evpage.c), and the stops'
 * cost measured per segment from it. The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_EVPAGE_H
#define FORTSTAT_TRACER_EVPAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/arch.h"
#include "fortstat/clock.h"
#include "fortstat/evabi.h"

struct insn_event_page;
struct pstate;
struct tracer;
struct tthread;

/*
 * The run's part of the segment timing (struct tracer.seg): changed by
 * evpage.c, session.c (the kit) and thread.c (the slots).
 */
struct seg_run {
	struct acct_ovh *ovh[2];     /* on the CPU clock, on the wall clock; NULL: not measured */
	uint8_t slot_used[EV_SLOTS]; /* threads' slots after the event page */
	double est[FS_N_CLOCKS];     /* a stop's overhead when it cannot be measured */
	double acc_n, acc_c, acc_w;  /* measures taken so far: count, sums (CPU clock, wall) */
	/*
	 * The program's time of the segments measured (u: TSC just after a
	 * stop to just before the next), by the stop that ends them: SEG_ENTRY
	 * an entry stub's (the caller's code), SEG_RETURN a return site's (the
	 * routine's); those under SEG_U_MAX ns. The calibration's are what the
	 * stubs themselves take of a segment (trace_result.seg_u_ns).
	 */
	double u_sum[2];
	uint64_t u_n[2];
};
enum { SEG_ENTRY = 0, SEG_RETURN = 1 };
#define SEG_U_MAX 10000.0

/*
 * A thread's part of the segment timing (struct tthread.seg): changed by
 * evpage.c, thread.c (its slot), and where a stop leaves its next segment
 * unmeasurable (ok false: dispatch.c, proc.c).
 */
struct seg_thr {
	int slot;      /* its slot after the event page, -1: none (see seg_slow) */
	bool ok;       /* its last stop had timestamps: the next segment is measurable */
	uint64_t c, w; /* the clocks at that stop */
	double last_ovh[FS_N_CLOCKS]; /* what its last stop cost (ovh_add), for a goroutine's net
					 books (golang.c reads it) */
};

/*
 * May the stop's facts be taken from the event page? Only while the
 * program has had a single thread and a single process: with two, their
 * writes could cross (the page is shared by all of them).
 */
bool fast_ok(struct tracer *tr);

/*
 * Map the event page (the memfd the program inherited from fortstat) into
 * the program at its first exec stop, and close that descriptor there, before
 * any of the program's code runs.
 */
void map_event_page(struct tracer *tr);

/*
 * -f: a followed process exec'ed a new image, which holds no event memory:
 * at its exec stop it opens fortstat's memfd (tr->mem_fd, through
 * /proc/FORTSTAT/fd), maps it and closes it again, as the program mapped
 * the one it inherited. Sets ps->page_addr; the areas are the same memory
 * as every other process's (one pool). Returns 0 or -errno (none mapped:
 * its calls trap).
 */
int exec_event_memory(struct tracer *tr);

/*
 * -p with probes: the running process inherits nothing of fortstat's, so
 * the event memory (tr->ev_size bytes) is made in it by held thread th
 * (the leader): shared anonymous memory it maps, which fortstat maps too
 * through /proc/PID/map_files (which needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE); where that is refused, a memfd it creates and
 * maps, opened by fortstat through /proc/PID/fd, its descriptor closed
 * again. Only system calls its seccomp filters let through
 * (syscall_gate). Sets tr->page and ps->page_addr. Returns 0, or -errno
 * with why in `why` (nothing left in it).
 */
int attach_event_memory(struct tracer *tr, struct tthread *th, char *why, size_t n);

/* Detaching: unmap the event memory from the process, by held thread th. */
void detach_event_memory(struct tracer *tr, struct tthread *th);

/*
 * The event memory's liveness word (EV_ALIVE) made fortstat's own robust
 * futex: this thread's id in it, and a robust list of one entry, kept in
 * fortstat's private memory, that names it. When fortstat dies, even by
 * SIGKILL, the kernel clears the id (FUTEX_OWNER_DIED) before it lets the
 * tracees go: the probes then know that no one reads their rings, and fall
 * through to plain calls. evpage_alive_end puts the C library's list back
 * and clears the word, before the memory is unmapped.
 */
void evpage_alive_start(struct tracer *tr);

void evpage_alive_end(struct tracer *tr);

/*
 * -p: a forked child let go (not followed) inherited the event memory, and
 * its thread the GS base of its parent's area: both taken out of it, as at
 * the detach, by a system call run in the child, stopped (its memory behind
 * fd; a signal meanwhile into *deferred). A launched program's children
 * keep them, unused.
 */
void fork_child_memory(struct tracer *tr, pid_t pid, int fd, int *deferred);

/*
 * A program may forbid rdtsc (prctl PR_SET_TSC, PR_TSC_SIGSEGV: sandboxes,
 * record-and-replay): then the stubs' and return sites' TSC reads fault.
 * Such a SIGSEGV is fortstat's, not the program's: the rdtsc becomes a
 * 2-byte nop (the stores that follow write what RAX and RDX held, restored
 * right after), the thread goes on, and the run's stops are not measured
 * any more (the calibration's f1 and f2 stand). Returns 1 when it was that.
 */
int rdtsc_refused(struct tracer *tr, struct tthread *th);

bool seg_measure(struct tracer *tr, struct tthread *th, uint32_t ev);

/*
 * What a stop has been charged on each clock so far, ns: the mean measured
 * once 100 stops were, else the calibration's estimate (trace_run's est_ns).
 */
void stop_cost_mean(const struct tracer *tr, double out[FS_N_CLOCKS]);

/* What process ps's calls through the traps cost (n_trap_stops stops), ns, into out. */
void trap_cost(const struct tracer *tr, const struct pstate *ps, double out[FS_N_CLOCKS]);

/* What a stop's registers hold of the segment it ends (seg_slow). */
enum seg_how {
	SEG_NO_TSC, /* nothing: an int3 patch, the common return trap */
	SEG_STUB,   /* an entry stub's stop */
	SEG_RSITE,  /* a return site's trap */
};

/* Measure the segment a stop ends from its registers (the page cannot be trusted). */
void seg_slow(struct tracer *tr, struct tthread *th, arch_regs *regs, enum seg_how how);

/* Thread th's slot, on fortstat's side. */
struct insn_event_page *thr_slot_page(struct tracer *tr, const struct tthread *th);

#endif
