// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dispatch.c - the loop's body: a stop that next_stop waited for and named
 * (wait.c, stop.h), named further (a breakpoint), acted on by its kind, its
 * thread resumed (tracee_resume). Each kind has one handler elsewhere in
 * src/tracer/.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/clock.h"
#include "fortstat/inject.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/names.h"
#include "fortstat/precheck.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "stop.h"
#include "../probe/cswitch.h"
#include "tracer.h"
#include "dispatch.h"
#include "../probe/drain.h"
#include "evpage.h"
#include "golang.h"
#include "modules.h"
#include "patches.h"
#include "../probe/areas.h"
#include "proc.h"
#include "retaddr.h"
#include "sample.h"
#include "sigtrap.h"
#include "ticker.h"
#include "wait.h"

/* Read nothing more when the event page decides; else RIP alone (-c) or every register. */
static bool decode_break(struct tracer *tr, struct tthread *th, struct stop *s, arch_regs *regs,
			 bool measured)
{
	memset(regs, 0, sizeof(*regs));
	if (s->ev && fast_ok(tr) && stop_from_page(tr->ps, s)) {
		/* The stub or the return trap said what this stop is. */
		arch_regs_from_page(regs, tr->page->rsp, tr->page->ret);
		if (!tr->ps->shstk_checked)
			check_shstk(tr, th);
		return true;
	}
	if (tr->o->count_only && !tr->ps->go) {
		/* Count-only needs RIP alone (no frames, no return address; Go: R14 and RSP too).
		 */
		uint64_t pc;

		if (arch_get_pc(th->tid, &pc) < 0)
			return false; /* gone */
		stop_from_pc(tr->ps, true, pc - 1, s);
		return true;
	}
	if (arch_get_regs(th->tid, regs) < 0)
		return false; /* gone */
	if (!tr->ps->shstk_checked)
		check_shstk(tr, th);
	stop_from_pc(tr->ps, tr->o->count_only, arch_trap_addr(regs), s);
	/*
	 * The segment this stop ends, measured from the registers (seg_slow),
	 * unless seg_measure took it from the page already: an int3 patch's stop
	 * there and here was once charged twice.
	 */
	if (measured)
		return true;
	switch (s->kind) {
	case STOP_RETURN:
		seg_slow(tr, th, regs, SEG_NO_TSC);
		break;
	case STOP_RETURN_SITE:
		seg_slow(tr, th, regs, SEG_RSITE);
		break;
	case STOP_ENTRY:
	case STOP_UNWINDER:
		seg_slow(tr, th, regs, tr->ps->patches[s->patch].stub ? SEG_STUB : SEG_NO_TSC);
		break;
	default:
		th->seg.ok = false;
		break;
	}
	return true;
}

/*
 * A stop at the int3 of a trap-path entry that was throttled since
 * (trap_throttle: the original byte is back): another thread hit it before
 * it went, and its SIGTRAP was still pending. That one is the kernel's
 * (SI_KERNEL, an int3); another SIGTRAP that found RIP just past the
 * entry's first instruction is the program's own.
 */
static bool removed_trap_hit(struct stop *s)
{
	const siginfo_t *si = stop_siginfo(s);

	return si && si->si_code == SI_KERNEL;
}

/* What a stop is taken to cost on the CPU clock (trap_throttle's allowance). */
static double stop_cpu_ns(const struct tracer *tr)
{
	double sc[FS_N_CLOCKS];

	stop_cost_mean(tr, sc);
	return sc[CLOCK_KIND_CPU];
}

/*
 * A SIGTRAP that may be ours: act on what it was. Returns true when it was
 * ours (or the thread is gone), false for the program's own SIGTRAP.
 */
static bool on_break(struct tracer *tr, struct tthread *th, struct stop *s)
{
	arch_regs regs;
	const struct patch *p;
	bool measured = seg_measure(tr, th, s->ev);

	if (!decode_break(tr, th, s, &regs, measured))
		return true;
	p = s->kind == STOP_SIGNAL || s->kind == STOP_RETURN || s->kind == STOP_RETURN_SITE
		? NULL
		: &tr->ps->patches[s->patch];
	if (p && p->removed && !removed_trap_hit(s))
		return false;
	/* --alloc: an allocator's arguments, what it returned (the page has neither) */
	if (((p && p->alloc) ||
	     (th->mem.fn && (s->kind == STOP_RETURN || s->kind == STOP_RETURN_SITE))) &&
	    arch_get_regs(th->tid, &regs) < 0)
		return true; /* gone */
	/* The calls that went through the traps, and their stops (trace_section.trap_calls). */
	if (p && p->routine != ACCT_NONE && !p->alloc && s->kind != STOP_EXIT_PROBE)
		tr->ps->n_trap_calls++;
	if (p ? p->routine != ACCT_NONE : s->kind == STOP_RETURN || s->kind == STOP_RETURN_SITE)
		tr->ps->n_trap_stops++;
	switch (s->kind) {
	case STOP_RETURN:
	case STOP_RETURN_SITE:
		handle_return(tr, th, &regs, s->kind == STOP_RETURN_SITE);
		return true;
	case STOP_EXIT_PROBE:
		go_exit(tr, th, &regs, p);
		return true;
	case STOP_ENTRY:
	case STOP_UNWINDER:
		if (tr->ps->go) {
			go_entry(tr, th, &regs, p);
			return true;
		}
		handle_entry(tr, th, &regs, p);
		if (p->alloc)
			return true; /* never timed, never throttled */
		if (p->stub)
			probe_throttle_candidate(tr, s->patch);
		else
			trap_throttle(tr, s->patch, stop_cpu_ns(tr));
		return true;
	case STOP_COUNT:
		if (tr->ps->go) {
			go_entry(tr, th, &regs, p);
			return true;
		}
		ev_count(tr, th, p->routine);
		if (!p->stub) { /* a stub goes on by itself */
			resume_patched(tr, th->tid, &regs, p, true);
			trap_throttle(tr, s->patch, stop_cpu_ns(tr));
		}
		return true;
	case STOP_RENDEZVOUS:
		handle_rdebug(tr, th);
		return true;
	default:
		return false;
	}
}

/* The thread ended (exited or killed); its process too when it was the leader. */
static void on_gone(struct tracer *tr, struct tthread *th, const struct stop *s)
{
	long idx;

	if (th) {
		ps_switch(tr, th->proc);
		if (!th->exiting) {
			ev_thread_exit(tr, th);
			thr_end(tr, th);
		}
		thr_remove(tr, s->tid);
	}
	idx = ps_find(tr, s->tid);
	if (idx >= 0)
		ps_end(tr, ps_get(tr, (size_t)idx), s->status);
	if (s->tid == tr->program) {
		tr->status = s->status;
		tr->program_done = true;
	}
	/* With -f, followed processes may outlive the program. */
	tr->done = tr->program_done && ps_find_any(tr) < 0;
}

void fault_say(struct tracer *tr, pid_t tid, struct stop *s)
{
	const siginfo_t *si;
	arch_regs r;
	uint64_t gs = 0;
	char regs[512];

	if (fs_verbose < 2 ||
	    (s->sig != SIGSEGV && s->sig != SIGBUS && s->sig != SIGILL && s->sig != SIGFPE))
		return;
	si = stop_siginfo(s);
	if (arch_get_regs(tid, &r) < 0)
		return;
	arch_get_tls2(tid, &gs);
	arch_regs_format(&r, regs, sizeof(regs));
	fs_info(2,
		"thread %d: SIG%s (si_code %d, si_addr %p): %s; GS base %#" PRIx64
		" (fortstat's code at %#" PRIx64 ", trampoline %#" PRIx64 ")",
		(int)tid, sigabbrev_np(s->sig) ? sigabbrev_np(s->sig) : "?", si ? si->si_code : 0,
		si ? si->si_addr : NULL, regs, gs, tr->ps->scratch, tr->ps->probe_tramp);
}

/* A signal for the program: delivered unchanged (unless it is fortstat's own fault). */
static void on_signal(struct tracer *tr, struct tthread *th, int sig)
{
	if (sig == SIGSEGV && rdtsc_refused(tr, th)) {
		tracee_resume(PTRACE_CONT, th->tid, 0);
		return;
	}
	if (sig == SIGTRAP)
		trap_handler_enter(tr, th);
	tracee_resume(PTRACE_CONT, th->tid, sig);
}

void dispatch(struct tracer *tr, struct stop *s)
{
	pid_t tid = s->tid;
	struct tthread *th = thr_find(tr, tid);

	if (s->kind == STOP_GONE) {
		on_gone(tr, th, s);
		return;
	}
	if (s->kind == STOP_NONE)
		return;
	if (!th) {
		th = first_stop(tr, tid, s->status);
		if (!th)
			return;
	}
	ps_switch(tr, th->proc);
	thr_stamp(tr, th);
	sample_read_thread(tr, th);
	if (s->kind == STOP_SIGNAL && s->sig == SIGURG && th->probe.area > 0 &&
	    probe_full_signal(tr, th, stop_siginfo(s)))
		s->kind = STOP_PROBE_FULL;
	/* What its probes recorded comes first: it happened before this stop. */
	if (th->probe.area > 0 && s->kind == STOP_PROBE_FULL)
		probe_drain_defer(tr, th); /* read once it runs again, below */
	else if (th->probe.area > 0)
		probe_drain(tr, th, s->kind != STOP_BREAK);
	sample_fold(tr, th, UINT64_MAX); /* its samples in untimed code: to its stack of now */
	/* Every stop consumes what the event page says (it only holds for this one). */
	if (tr->page && tr->page->ev) {
		s->ev = tr->page->ev;
		tr->page->ev = 0;
	}
	switch (s->kind) {
	case STOP_BREAK:
		if (on_break(tr, th, s)) {
			if (th->in_trap_handler)
				trap_handler_check(tr, th);
			tracee_resume(PTRACE_CONT, tid, thr_take_signal(tr, th));
			return;
		}
		on_signal(tr, th, SIGTRAP); /* not ours */
		return;
	case STOP_PROBE_FULL:
		probe_full(tr, th);
		tracee_resume(PTRACE_CONT, tid, th->defer_sig); /* its SIGURG not delivered */
		th->defer_sig = 0;
		probe_drain_pending(tr); /* its events, while it runs */
		return;
	case STOP_GROUP:
		tracee_resume(PTRACE_LISTEN, tid, 0); /* stay stopped */
		return;
	case STOP_INTERRUPT:
		ticker_interrupted(tr); /* its ring was drained above */
		tracee_resume(PTRACE_CONT, tid, 0);
		return;
	case STOP_CLONE:
	case STOP_FORK:
	case STOP_VFORK:
	case STOP_EXEC:
	case STOP_EXIT:
	case STOP_EVENT:
		handle_event(tr, th, s->kind);
		return;
	default:
		fault_say(tr, tid, s);
		on_signal(tr, th, s->sig);
		return;
	}
}

/*
 * A signal of fortstat's own (SIGUSR1, the ticker's SIGALRM, SIGIO)
 * interrupts the wait: its work is done, then the wait goes on; one that
 * came between stops is seen by its flag alone.
 */
int run_stop(struct tracer *tr, int how, struct stop *s)
{
	for (;;) {
		int err;

		if (ticker_pending)
			ticker_poll(tr);
		if (cswitch_due)
			probe_read_switches(tr);
		err = next_stop(-1, how | NEXT_INTR, s);
		if (err != -EINTR || (how & NEXT_INTR))
			return err;
	}
}
