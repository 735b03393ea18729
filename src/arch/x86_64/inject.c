// SPDX-License-Identifier: GPL-2.0-or-later
/* inject.c - x86-64: free ranges within rel32 reach, system calls and calls run in a stopped
 * thread. */
#include "fortstat/inject.h"
#include "fortstat/procmem.h"
#include "fortstat/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

/* Largest distance kept between the scratch pages and code they serve. */
#define REACH ((uint64_t)0x7fff0000u)
#define PAGE 4096u
#define MIN_ADDR 0x10000u
/* Room left above the program for its heap (brk) when the gap lies above. */
#define HEAP_ROOM ((uint64_t)256 << 20)

struct gap_walk {
	uint64_t lo, hi, size, lim_lo, lim_hi;
	uint64_t prev_end, best, above;
};

/* The gap [g->prev_end, s) below the mapping that starts at s (clipped to the reach). */
static void consider_gap(struct gap_walk *g, uint64_t s)
{
	uint64_t gs = g->prev_end > g->lim_lo ? g->prev_end : g->lim_lo;
	uint64_t ge = s < g->lim_hi ? s : g->lim_hi;

	if (ge <= gs || ge - gs < g->size)
		return;
	if (ge <= g->lo) {
		g->best = ge - g->size; /* highest gap below: keep the last one */
	} else if (!g->above && gs >= g->hi) {
		uint64_t want = gs + HEAP_ROOM;

		if (want + g->size <= ge)
			g->above = want;
		else if (g->prev_end >= g->hi)
			g->above = 0; /* too small to leave heap room */
	}
}

static int gap_before(const struct proc_map *m, void *arg)
{
	struct gap_walk *g = arg;

	consider_gap(g, m->lo);
	if (m->hi > g->prev_end)
		g->prev_end = m->hi;
	return g->prev_end >= 0x7ffffffff000ull; /* the top of user space: done */
}

int find_gap(pid_t pid, uint64_t lo, uint64_t hi, size_t size, uint64_t *addr)
{
	struct gap_walk g = {.lo = lo, .hi = hi, .prev_end = MIN_ADDR};
	int rc;

	g.size = (size + PAGE - 1) & ~(uint64_t)(PAGE - 1);
	g.lim_lo = hi > REACH ? hi - REACH : MIN_ADDR;
	g.lim_hi = lo + REACH;
	if (g.lim_lo < MIN_ADDR)
		g.lim_lo = MIN_ADDR;
	rc = proc_maps_each(pid, gap_before, &g);
	if (rc < 0)
		return rc;
	if (!rc)
		consider_gap(&g, UINT64_MAX); /* above the last mapping */
	if (g.best) {
		*addr = g.best & ~(uint64_t)(PAGE - 1);
		return 0;
	}
	if (g.above) {
		*addr = g.above;
		return 0;
	}
	return -ENOSPC;
}

/*
 * Run the stopped thread from its registers `regs` until it stops with
 * SIGTRAP at `trap` + 1 (an int3 at trap). Other signals that arrive
 * meanwhile are kept in *deferred (the last one) for the caller to deliver
 * when the thread resumes its own work; when deferred is NULL they are dropped.
 * Leaves the final registers in *regs.
 */
static int run_until(pid_t pid, uint64_t trap, struct user_regs_struct *regs, int *deferred)
{
	int status;

	if (ptrace(PTRACE_SETREGS, pid, 0, regs) < 0 || ptrace(PTRACE_CONT, pid, 0, 0) < 0)
		return -errno;
	for (;;) {
		int sig;

		if (waitpid(pid, &status, __WALL) < 0) {
			if (errno == EINTR) /* fortstat's own signal (a snapshot, the ticker) */
				continue;
			return -errno;
		}
		if (!WIFSTOPPED(status))
			return -ESRCH;
		sig = WSTOPSIG(status);
		if (sig == SIGTRAP && (status >> 16) == 0) {
			if (ptrace(PTRACE_GETREGS, pid, 0, regs) < 0)
				return -errno;
			if (regs->rip == trap + 1)
				return 0;
			return -EFAULT; /* a breakpoint elsewhere: give up */
		}
		if ((status >> 16) == 0 && deferred)
			*deferred = sig;
		if (ptrace(PTRACE_CONT, pid, 0, 0) < 0)
			return -errno;
	}
}

int inject_syscall_at(pid_t pid, int memfd, uint64_t where, long nr, const long args[6], long *ret,
		      int *deferred)
{
	/*
	 * mov $nr,%eax; syscall; int3. The number goes in the code, not in
	 * RAX: at the exec stop the kernel has yet to store execve's return
	 * value in RAX and would overwrite ours.
	 */
	uint8_t code[] = {0xb8, 0, 0, 0, 0, 0x0f, 0x05, 0xcc};
	struct user_regs_struct saved, regs;
	uint8_t old[sizeof(code)];
	uint32_t nr32 = (uint32_t)nr;
	bool at_rip = where == 0;
	int err;

	_Static_assert(sizeof(code) - 1 == INJECT_SYSCALL_END, "the syscall instruction's end");
	memcpy(code + 1, &nr32, sizeof(nr32));

	if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0)
		return -errno;
	if (at_rip) {
		where = saved.rip;
		err = mem_read(memfd, where, old, sizeof(old));
		if (err)
			return err;
	}
	err = mem_write(memfd, where, code, sizeof(code));
	if (err)
		return err;
	regs = saved;
	regs.rip = where;
	regs.rax = (unsigned long)nr;
	regs.orig_rax = (unsigned long)-1;
	regs.rdi = (unsigned long)args[0];
	regs.rsi = (unsigned long)args[1];
	regs.rdx = (unsigned long)args[2];
	regs.r10 = (unsigned long)args[3];
	regs.r8 = (unsigned long)args[4];
	regs.r9 = (unsigned long)args[5];
	err = run_until(pid, where + sizeof(code) - 1, &regs, deferred);
	if (!err)
		*ret = (long)regs.rax;
	if (at_rip && mem_write(memfd, where, old, sizeof(old)) < 0 && !err)
		err = -EIO;
	if (ptrace(PTRACE_SETREGS, pid, 0, &saved) < 0 && !err)
		err = -errno;
	return err;
}

int inject_syscall(pid_t pid, int memfd, long nr, const long args[6], long *ret)
{
	/* Nothing of the program has run yet at the exec stop: signals sent
	 * meanwhile are dropped. */
	return inject_syscall_at(pid, memfd, 0, nr, args, ret, NULL);
}

int inject_call(pid_t pid, int memfd, uint64_t fn, uint64_t trap, uint64_t arg0, uint64_t *ret,
		int *deferred)
{
	struct user_regs_struct saved, regs;
	int err;

	if (ptrace(PTRACE_GETREGS, pid, 0, &saved) < 0)
		return -errno;
	regs = saved;
	/* Below the red zone, 16-byte aligned at the call, as the ABI wants. */
	regs.rsp = ((saved.rsp - 1024) & ~(uint64_t)15) - 8;
	err = mem_write(memfd, regs.rsp, &trap, sizeof(trap));
	if (err)
		return err;
	regs.rip = fn;
	regs.rdi = arg0;
	regs.rax = 0;
	regs.orig_rax = (unsigned long)-1;
	err = run_until(pid, trap, &regs, deferred);
	if (!err)
		*ret = regs.rax;
	if (ptrace(PTRACE_SETREGS, pid, 0, &saved) < 0 && !err)
		err = -errno;
	return err;
}
