// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sigtrap.c - the program's own SIGTRAP handler kept intact when a breakpoint of
 * fortstat's is hit inside it.
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
#include "tracer.h"
#include "sigtrap.h"

/*
 * Read (set NULL) or set the program's SIGTRAP action with a system call
 * run in thread th, through the event page. Returns 0 or -1.
 */
static int trap_action(struct tracer *tr, struct tthread *th, const struct ksigaction *set,
		       struct ksigaction *old)
{
	struct ksigaction *buf = (struct ksigaction *)((char *)tr->page + EV_SIGACT);
	uint64_t a = tr->ps->page_addr + EV_SIGACT;
	long args[6] = {SIGTRAP, set ? (long)a : 0, set ? 0 : (long)a, KSA_SIGSET_SIZE, 0, 0}, ret;
	char why[256];

	if (!tr->page || !tr->ps->page_addr || !tr->ps->scratch)
		return -1;
	if (syscall_gate(tr, th->tid, "rt_sigaction", SYS_rt_sigaction, args, why, sizeof(why))) {
		fs_info(1, "the program's SIGTRAP action left unread: %s", why);
		return -1;
	}
	if (set)
		*buf = *set;
	if (inject_syscall_at(th->tid, tr->ps->memfd, tr->ps->scratch + SCRATCH_SYSCALL,
			      SYS_rt_sigaction, args, &ret, &th->defer_sig) < 0 ||
	    ret < 0)
		return -1;
	if (old)
		*old = *buf;
	return 0;
}

/*
 * The program's own SIGTRAP is about to be delivered to thread th: with a
 * handler that runs with SIGTRAP blocked (no SA_NODEFER, no SA_RESETHAND),
 * note the action. A breakpoint hit in that handler makes the kernel
 * reset it to SIG_DFL and unblock SIGTRAP (a forced signal may not be
 * blocked), which would end the program at its next SIGTRAP.
 */
void trap_handler_enter(struct tracer *tr, struct tthread *th)
{
	struct ksigaction cur;
	siginfo_t si;
	int have_si;

	if (th->in_trap_handler)
		return;
	/* The signal goes on from the injection's last stop: with its own siginfo. */
	have_si = ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) == 0;
	if (trap_action(tr, th, NULL, &cur) < 0)
		return;
	if (have_si)
		ptrace(PTRACE_SETSIGINFO, th->tid, 0, &si);
	if (cur.handler <= 1 /* SIG_DFL, SIG_IGN */ || (cur.flags & (KSA_NODEFER | KSA_RESETHAND)))
		return;
	tr->ps->trap_act = cur;
	th->in_trap_handler = true;
}

/*
 * After a breakpoint of thread th, which may run the program's SIGTRAP
 * handler: if the kernel reset the action, put it back and block SIGTRAP
 * again, as the handler had it; if the action is intact, SIGTRAP was not
 * blocked: the handler is over.
 */
void trap_handler_check(struct tracer *tr, struct tthread *th)
{
	struct ksigaction cur;
	uint64_t mask;

	if (trap_action(tr, th, NULL, &cur) < 0 || cur.handler != 0) {
		th->in_trap_handler = false; /* over (or changed by the program) */
		return;
	}
	if (trap_action(tr, th, &tr->ps->trap_act, NULL) < 0)
		return;
	if (ptrace(PTRACE_GETSIGMASK, th->tid, sizeof(mask), &mask) == 0) {
		mask |= 1ull << (SIGTRAP - 1);
		ptrace(PTRACE_SETSIGMASK, th->tid, sizeof(mask), &mask);
	}
	fs_info(2, "thread %d: SIGTRAP handler put back after a breakpoint in it", (int)th->tid);
}
