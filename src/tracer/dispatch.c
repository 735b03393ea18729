// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * dispatch.c - one stop, from waitpid to the books: decode it (stop.h), then act on
 * its kind.
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
#include "fortstat/cli.h"
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
#include "tracer.h"

/* A SIGTRAP stop: returns 1 if it was ours (handled), 0 to pass it on. */
static int handle_trap(struct tracer *tr, struct tthread *th, uint64_t t, uint32_t ev)
{
	struct user_regs_struct regs;
	uint64_t idx;
	uint64_t pc;

	if (ev && fast_ok(tr)) {
		/* The stub or the return trap said what this stop is: no registers read. */
		memset(&regs, 0, sizeof(regs));
		regs.rsp = tr->page->rsp;
		if (!tr->ps->shstk_checked)
			check_shstk(tr, th);
		if (ev == INSN_EV_RETURN || ev == INSN_EV_RETURN_SITE) {
			handle_return(tr, th, &regs, t, ev == INSN_EV_RETURN_SITE);
			return 1;
		}
		if (ev - 1 < tr->ps->n_patches && tr->ps->patches[ev - 1].stub &&
		    !tr->ps->patches[ev - 1].dead) {
			regs.r11 = tr->page->ret;
			handle_entry(tr, th, &regs, &tr->ps->patches[ev - 1], t);
			return 1;
		}
	}
	if (tr->o->count_only) {
		/* The stub said which routine: nothing to read, nothing to set. */
		if (ev && ev != INSN_EV_RETURN && ev != INSN_EV_RETURN_SITE && fast_ok(tr) &&
		    ev - 1 < tr->ps->n_patches && tr->ps->patches[ev - 1].stub &&
		    !tr->ps->patches[ev - 1].dead) {
			ev_count(tr, th, tr->ps->patches[ev - 1].routine);
			return 1;
		}
		/* Count-only needs RIP alone (no frames, no return address). */
		errno = 0;
		regs.rip = (uint64_t)ptrace(PTRACE_PEEKUSER, th->tid,
					    offsetof(struct user_regs_struct, rip), 0);
		if (errno)
			return 1; /* gone */
		if (!u64map_get(&tr->ps->traps, regs.rip - 1, &idx) || tr->ps->patches[idx].dead)
			return 0;
		if (tr->ps->patches[idx].rdebug) {
			handle_rdebug(tr, th);
			return 1;
		}
		ev_count(tr, th, tr->ps->patches[idx].routine);
		if (!tr->ps->patches[idx].stub) /* a stub goes on by itself */
			resume_patched(tr, th->tid, &regs, &tr->ps->patches[idx], true);
		return 1;
	}
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs) < 0)
		return 1; /* gone */
	if (!tr->ps->shstk_checked)
		check_shstk(tr, th);
	pc = regs.rip - 1;
	/*
	 * RIP-1 on one of our int3s is decisive: no instruction of the program
	 * starts at RIP there (we overwrote the first byte of one), so only our
	 * breakpoint can have left RIP at that address.
	 */
	if (pc == tr->ps->retrap_trap || is_rsite_trap(tr->ps, pc)) {
		seg_slow(tr, th, &regs, pc == tr->ps->retrap_trap ? 0 : 11);
		handle_return(tr, th, &regs, t, pc != tr->ps->retrap_trap);
		return 1;
	}
	if (!u64map_get(&tr->ps->traps, pc, &idx) || tr->ps->patches[idx].dead) {
		th->seg_ok = false;
		return 0;
	}
	if (tr->ps->patches[idx].rdebug) {
		th->seg_ok = false;
		handle_rdebug(tr, th);
		return 1;
	}
	seg_slow(tr, th, &regs, tr->ps->patches[idx].stub ? 10 : 0);
	handle_entry(tr, th, &regs, &tr->ps->patches[idx], t);
	return 1;
}

void dispatch(struct tracer *tr, pid_t tid, int status)
{
	struct tthread *th = thr_find(tr, tid);
	uint64_t t;
	uint32_t ev;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		long idx;

		if (th) {
			ps_switch(tr, th->proc);
			if (!th->exiting) {
				ev_thread_exit(tr, th);
				thr_end(tr, th);
			}
			thr_remove(tr, tid);
		}
		idx = ps_find(tr, tid);
		if (idx >= 0)
			ps_end(ps_get(tr, (size_t)idx), status);
		if (tid == tr->program) {
			tr->status = status;
			tr->program_done = true;
		}
		/* With -f, followed processes may outlive the program. */
		tr->done = tr->program_done && ps_find_any(tr) < 0;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	if (!th) {
		th = first_stop(tr, tid, status);
		if (!th)
			return;
	}
	ps_switch(tr, th->proc);
	thr_stamp(tr, th);
	t = th->now.t[CLOCK_KIND_CPU];
	sig = WSTOPSIG(status);
	event = status >> 16;
	/* Every stop consumes what the event page says (it only holds for this one). */
	ev = 0;
	if (tr->page && tr->page->ev) {
		ev = tr->page->ev;
		tr->page->ev = 0;
	}
	if (sig == SIGTRAP && event == 0) {
		seg_measure(tr, th, ev);
		if (handle_trap(tr, th, t, ev)) {
			if (th->in_trap_handler)
				trap_handler_check(tr, th);
			ptrace(PTRACE_CONT, tid, 0, th->defer_sig);
			th->defer_sig = 0;
			return;
		}
	} else if (event == PTRACE_EVENT_STOP) {
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: stay stopped */
		else
			ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	} else if (sig == SIGTRAP && event) {
		handle_event(tr, th, event, t);
		return;
	}
	if (sig == SIGSEGV && rdtsc_refused(tr, th)) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (sig == SIGTRAP)
		trap_handler_enter(tr, th);
	/* A signal for the program: deliver it unchanged. */
	ptrace(PTRACE_CONT, tid, 0, sig);
}
