// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * detach.c - -p PID: holding every thread of the attached process (to
 * patch it, to undo it), and the end of the attach: let the threads settle
 * out of signal handlers that interrupted fortstat's code, read every
 * ring, undo every patch, step each thread out of fortstat's code (stubs,
 * the probes' trampoline, the return trap), put back every hooked return
 * address, take fortstat's memory and GS bases out of the process, and let
 * it go as if it had never been traced. attach.c (seizing, patching, the
 * run) calls it through attach_int.h; it calls nothing of attach.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/insn.h"
#include "fortstat/procmem.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "fortstat/procfs.h"
#include "attach_int.h"
#include "tracer.h"
#include "dispatch.h"
#include "../probe/drain.h"
#include "evpage.h"
#include "memcall.h"
#include "patches.h"
#include "../probe/areas.h"
#include "proc.h"
#include "retaddr.h"
#include "wait.h"

/* ---- holding the threads (the attach, to patch; the detach, to undo) ---- */

/* A stop of a held thread's: an interrupt or a group-stop (PTRACE_EVENT_STOP). */
static bool is_event_stop(const struct stop *s)
{
	return s->kind == STOP_INTERRUPT || s->kind == STOP_GROUP;
}

/* Is SIGTRAP pending for thread tid (its SigPnd, /proc/PID/task/TID/status)? */
static bool trap_pending(pid_t pid, pid_t tid)
{
	unsigned long long mask = (unsigned long long)proc_status_num(pid, tid, "SigPnd", 16, 0);

	return (mask >> (SIGTRAP - 1)) & 1;
}

/*
 * Did thread tid, held, just execute one of fortstat's int3s? The kernel
 * reports an interrupt before a SIGTRAP that is already pending: that
 * breakpoint must be acted on first, or the thread would go on past it
 * unaccounted (a return hooked without a frame) or die of the SIGTRAP.
 */
static bool on_our_trap(struct tracer *tr, pid_t tid)
{
	uint64_t pc, v;

	if (!tr->ps->n_patches || arch_get_pc(tid, &pc) < 0)
		return false;
	if (!u64map_get(&tr->ps->traps, pc - 1, &v) && pc - 1 != tr->ps->retrap_trap &&
	    !is_rsite_trap(tr->ps, pc - 1))
		return false;
	return trap_pending(tr->program, tid);
}

/* A probe's full ring (its own SIGURG): dispatch reads it, nothing is delivered. */
static bool probe_full_stop(struct tracer *tr, struct tthread *th, struct stop *s)
{
	if (s->sig != SIGURG || th->probe.area <= 0)
		return false;
	ps_switch(tr, th->proc);
	return probe_full_signal(tr, th, stop_siginfo(s));
}

/* One stop while threads are being held: hold it, or act on it and interrupt it again. */
static void hold_one(struct tracer *tr, struct stop *s)
{
	pid_t tid = s->tid;
	struct tthread *th = thr_find(tr, tid);

	if (th && is_event_stop(s)) {
		ps_switch(tr, th->proc);
		if (s->sig == SIGTRAP && on_our_trap(tr, tid)) {
			/* its breakpoint's stop comes next: act on it, then hold it */
			tracee_resume(PTRACE_CONT, tid, 0);
			return;
		}
		th->att.held = true;
		th->att.held_group = s->sig != SIGTRAP;
		return;
	}
	if (th && tr->att.settling && s->kind == STOP_SIGNAL && !probe_full_stop(tr, th, s)) {
		/* no handler may start now: the signal is delivered after the detach */
		fault_say(tr, tid, s);
		th->defer_sig = s->sig;
		th->att.held = true;
		th->att.held_group = false;
		return;
	}
	dispatch(tr, s);
	th = thr_find(tr, tid);
	if (th && !th->att.held)
		tracee_resume(PTRACE_INTERRUPT, tid, 0);
}

static bool all_held(const struct tracer *tr)
{
	for (size_t i = 0; i < tr->thr.cap; i++) {
		const struct tthread *th = thr_at(tr, i);

		if (th && !th->att.held)
			return false;
	}
	return true;
}

/*
 * Stop every thread of the process not held yet (a stop already taken,
 * first, is the first to act on); stops of other kinds meanwhile are
 * acted on as usual.
 * Returns when all are held or none is left.
 */
void hold_all(struct tracer *tr, struct stop *first)
{
	struct stop s;

	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th && !th->att.held)
			tracee_resume(PTRACE_INTERRUPT, th->tid, 0);
	}
	if (first)
		hold_one(tr, first);
	while (!tr->done && !all_held(tr) && next_stop(-1, 0, &s) > 0)
		hold_one(tr, &s);
}

/* Let every held thread go on (a group-stopped one stays stopped). */
void release_all(struct tracer *tr)
{
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (!th || !th->att.held)
			continue;
		th->att.held = false;
		if (th->att.held_group) {
			tracee_resume(PTRACE_LISTEN, th->tid, 0);
		} else {
			tracee_resume(PTRACE_CONT, th->tid, thr_take_signal(tr, th));
		}
	}
}

#define STACK_SCAN (256 * 1024) /* bytes of each thread's stack looked at */

/*
 * Held thread tid's registers into *regs and the words on top of its stack
 * (at most STACK_SCAN bytes, up to the end of its mapping) into *words
 * (malloc'ed, *n of them; NULL and 0 when unreadable). False when its
 * registers cannot be read.
 */
bool stack_words(struct tracer *tr, pid_t tid, arch_regs *regs, uint64_t **words, size_t *n)
{
	uint64_t sp, end;

	*words = NULL;
	*n = 0;
	if (arch_get_regs(tid, regs) < 0)
		return false;
	sp = arch_sp(regs) & ~(uint64_t)7;
	end = maps_end(tid, sp, 0);
	if (end <= sp)
		return true;
	*n = (size_t)((end - sp < STACK_SCAN ? end - sp : STACK_SCAN) / 8);
	*words = xmalloc(*n * 8);
	if (mem_read(tr->ps->memfd, sp, *words, *n * 8) < 0) {
		free(*words);
		*words = NULL;
		*n = 0;
	}
	return true;
}

/* ---- letting them go ---- */

enum at_scratch { AT_NONE, AT_CODE, AT_STUB_TRAP, AT_RETURN_TRAP, AT_PAD };

/* Is pc in fortstat's code in the current process, and where? (*pp: the stub.) */
static enum at_scratch scratch_at(const struct pstate *ps, uint64_t pc, const struct patch **pp)
{
	if (ps->scratch && pc >= ps->scratch && pc < ps->scratch + SCRATCH_HDR)
		return pc == ps->retrap_trap ? AT_RETURN_TRAP : AT_CODE;
	if (ps->rsites && pc >= ps->rsites && pc < ps->rsites + RSITE_MAX * INSN_RSITE_SIZE)
		return AT_CODE;
	/* the probes' trampoline (a probe stub is in its slot, below) */
	if (ps->probe_tramp && pc >= ps->probe_tramp &&
	    pc < ps->probe_tramp + INSN_PROBE_TRAMP_SIZE)
		return AT_CODE;
	for (size_t j = 0; j < ps->n_patches; j++) {
		const struct patch *p = &ps->patches[j];

		/* between a short entry's two jmps: its padding holds its own bytes again */
		if (p->stub && p->pad_addr && !p->dead && pc == p->pad_addr) {
			*pp = p;
			return AT_PAD;
		}
		if (!p->slot || pc < p->slot || pc >= p->slot + INSN_STUB_SIZE)
			continue;
		*pp = p;
		return p->stub && pc == p->trap ? AT_STUB_TRAP : AT_CODE;
	}
	return AT_NONE;
}

/*
 * Thread th stands on the return trap: return to where its frame would have
 * (its return accounted). Returns false when no frame knows where.
 */
static bool return_now(struct tracer *tr, struct tthread *th)
{
	arch_regs regs;
	uint64_t slot, top_slot, top_ret, ret;
	uint32_t top;

	if (arch_get_regs(th->tid, &regs) < 0)
		return false;
	slot = arch_sp(&regs) - 8; /* the return popped it */
	thr_stamp(tr, th);
	if (books_top(tr->ps->books, th->tid, &top, &top_slot, &top_ret) == 0 && top_slot == slot) {
		ev_leave(tr, th, &ret);
	} else if (!u64map_get(&tr->ps->orphans, slot, &ret) || !ret) {
		fs_warn("thread %d stands on fortstat's return trap with no frame to return to",
			(int)th->tid);
		return false;
	}
	return arch_set_pc(th->tid, ret) == 0;
}

/*
 * Move held thread th out of fortstat's code (a stub, an out-of-line slot,
 * the return trap) by single steps, skipping the traps as the tracer would
 * have resumed them, without hooking. Signals meanwhile wait in
 * th->defer_sig. Returns false when the thread is gone.
 */
static bool step_out(struct tracer *tr, struct tthread *th)
{
	for (int n = 0; n < 10000; n++) {
		const struct patch *p = NULL;
		uint64_t pc;
		struct stop s;

		if (arch_get_pc(th->tid, &pc) < 0)
			return false;
		switch (scratch_at(tr->ps, pc, &p)) {
		case AT_NONE:
			return true;
		case AT_STUB_TRAP: /* its plain continuation: the return is not hooked */
			arch_set_pc(th->tid, p->slot + p->plain_off);
			continue;
		case AT_RETURN_TRAP:
			if (!return_now(tr, th))
				return true;
			continue;
		case AT_PAD: /* where its jmp rel32 went: the stub */
			arch_set_pc(th->tid, p->slot);
			continue;
		case AT_CODE:
			break;
		}
		if (tracee_resume(PTRACE_SINGLESTEP, th->tid, 0) < 0 ||
		    next_stop(th->tid, 0, &s) < 0)
			return false;
		if (s.kind == STOP_GONE || s.kind == STOP_NONE)
			return false;
		if (s.kind == STOP_SIGNAL) {
			fault_say(tr, th->tid, &s);
			th->defer_sig = s.sig; /* delivered after the detach */
		}
	}
	fs_warn("thread %d did not leave fortstat's code", (int)th->tid);
	return true;
}

/*
 * With probes, what each held thread recorded since its last stop, into
 * the books: the frames its probes hooked are then known (detach_all).
 */
static void drain_all(struct tracer *tr)
{
	for (size_t i = 0; tr->ps->probes && i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th && th->probe.area > 0 && !th->exiting) {
			thr_stamp(tr, th);
			probe_drain(tr, th, true);
		}
	}
}

/* A held thread to run system calls in: the leader if it may, else another. */
static struct tthread *syscall_thread(struct tracer *tr)
{
	struct tthread *any = NULL, *th = thr_find(tr, tr->program);

	if (th && !th->exiting && !th->att.held_group)
		return th;
	for (size_t i = 0; i < tr->thr.cap; i++) {
		th = thr_at(tr, i);
		if (!th || th->exiting)
			continue;
		if (!th->att.held_group)
			return th;
		any = any ? any : th;
	}
	return any;
}

/*
 * Every thread held: read what the probes recorded, remove every patch,
 * bring each thread out of fortstat's code (what it records meanwhile read
 * too), put back every hooked return address, close the books as at each
 * thread's end, take fortstat's memory out of the process (GS bases back
 * to 0, the event memory unmapped), and let them all go.
 */
void detach_all(struct tracer *tr)
{
	struct tthread *sys;

	ps_switch(tr, 0);
	drain_all(tr);
	patch_undo_all(tr, tr->ps->memfd);
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th && !step_out(tr, th))
			fs_info(1, "thread %d ended while fortstat detached", (int)th->tid);
	}
	drain_all(tr);
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th) {
			frames_restore(tr, th);
			memcall_restore(tr, th);
		}
	}
	orphans_restore(tr);
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (!th)
			continue;
		if (!th->exiting) {
			thr_stamp(tr, th);
			ev_thread_exit(tr, th);
			thr_end(tr, th);
		}
		if (th->probe.area >= 0 && arch_set_tls2(th->tid, 0) < 0 && !th->exiting)
			fs_info(1, "thread %d: its GS base could not be reset", (int)th->tid);
		probe_thread_gone(tr, th);
	}
	sys = syscall_thread(tr);
	if (sys)
		detach_event_memory(tr, sys);
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (!th)
			continue;
		if (th->defer_sig)
			syscall(SYS_tgkill, tr->program, th->tid, th->defer_sig);
		tracee_resume(PTRACE_DETACH, th->tid, 0);
	}
	ps_end(tr, tr->ps, 0);
	tr->done = true;
}

/* books_frames: a frame's slot into the set (a u64map) of slots hooked for a frame. */
static void frame_slot(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	(void)routine;
	(void)ret;
	if (slot)
		u64map_put(arg, slot, 1);
}

/*
 * Is a word on a held thread's stack an address inside fortstat's code
 * that is no hooked return address (those are put back): the PC a signal
 * handler that runs now interrupted, in a stub or the trampoline? Its
 * sigreturn would resume there after the detach, in code that finds
 * neither the shared memory nor its hook undone (the handler's own frames,
 * which its ring has after the interrupted event, cannot be read either).
 * A word that equals a hook (the trampoline, the return trap, a return
 * site) is a hooked return address only in a slot that a frame of the
 * books (or an orphan) holds: elsewhere it is a PC interrupted just as a
 * return reached the trampoline or a trap.
 */
static pid_t interrupted_in_code(struct tracer *tr)
{
	const struct pstate *ps = tr->ps;

	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);
		struct u64map slots = {0};
		arch_regs regs;
		uint64_t *words, sp, orig;
		size_t n;
		pid_t found = 0;

		if (!th || th->exiting || !stack_words(tr, th->tid, &regs, &words, &n))
			continue;
		sp = arch_sp(&regs) & ~(uint64_t)7;
		books_frames(ps->books, th->tid, frame_slot, &slots);
		for (size_t k = 0; k < n && !found; k++) {
			const struct patch *p = NULL;
			uint64_t w = words[k], at = sp + 8 * k;
			enum at_scratch a = scratch_at(ps, w, &p);

			if (a == AT_NONE || a == AT_PAD ||
			    (at == sp && scratch_at(ps, arch_pc(&regs), &p) != AT_NONE))
				continue; /* the slot its stub hooks (step_out finishes it) */
			if ((w == ps->retrap || (ps->probe_tramp && w == ps->probe_tramp) ||
			     (ps->rsites && w >= ps->rsites &&
			      w < ps->rsites + RSITE_MAX * INSN_RSITE_SIZE &&
			      (w - ps->rsites) % INSN_RSITE_SIZE == 0)) &&
			    (u64map_get(&slots, at, NULL) ||
			     (u64map_get(&ps->orphans, at, &orig) && orig)))
				continue;
			found = th->tid;
		}
		u64map_free(&slots);
		free(words);
		if (found)
			return found;
	}
	return 0;
}

#define SETTLE_TRIES 50 /* times the threads are let go for SETTLE_NS before a detach */
#define SETTLE_NS 2000000

/*
 * The threads let go while att.settling, for ns: their stops are acted on (an
 * interrupt left pending goes on), their signals held back.
 */
static void settle_run(struct tracer *tr, uint64_t ns)
{
	uint64_t end = wall_now() + ns;

	while (!tr->done && wall_now() < end) {
		struct tthread *th;
		struct stop s;
		int got = next_stop(-1, NEXT_POLL, &s);

		if (got < 0)
			break;
		if (got == 0) {
			struct timespec ts = {0, 100000};

			nanosleep(&ts, NULL);
			continue;
		}
		th = thr_find(tr, s.tid);
		if (th && s.kind == STOP_SIGNAL) {
			fault_say(tr, s.tid, &s);
			th->defer_sig = s.sig;
			tracee_resume(PTRACE_CONT, s.tid, 0);
			continue;
		}
		dispatch(tr, &s);
	}
}

/*
 * Every thread held to detach: while one is in a signal handler that
 * interrupted fortstat's code, let them all run a moment, their signals
 * held back (no handler starts: the one that runs returns, the stub or
 * trampoline it interrupted ends), and hold them again.
 */
void settle(struct tracer *tr)
{
	pid_t tid = 0;

	ps_switch(tr, 0);
	tr->att.settling = true;
	for (int k = 0; k < SETTLE_TRIES && !tr->done && tr->thr.n; k++) {
		drain_all(tr); /* the frames hooked since each one's last stop */
		tid = interrupted_in_code(tr);
		if (!tid)
			break;
		fs_info(2,
			"thread %d: a signal handler interrupted fortstat's code: let go a moment",
			(int)tid);
		release_all(tr);
		settle_run(tr, SETTLE_NS);
		hold_all(tr, NULL);
		ps_switch(tr, 0);
	}
	tr->att.settling = false;
	if (tid && !tr->done && tr->thr.n)
		fs_warn("thread %d: a signal handler that interrupted fortstat's code has not "
			"returned: it may crash after the detach",
			(int)tid);
}
