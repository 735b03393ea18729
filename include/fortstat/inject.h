/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * inject.h - part of the arch seam (arch.h): running code of fortstat's in a
 * stopped thread of the tracee (system calls, calls) and finding room for
 * scratch pages within reach of its code. x86-64: src/arch/x86_64/inject.c.
 */
#ifndef FORTSTAT_INJECT_H
#define FORTSTAT_INJECT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * Find a free, page-aligned range of `size` bytes in pid's address space
 * from which every address in [lo, hi) is within a signed 32-bit
 * displacement (with a margin). Prefers the highest gap below lo, else a gap
 * well above hi (leaving room for the heap). Returns 0 and sets *addr, or
 * -ENOSPC.
 */
int find_gap(pid_t pid, uint64_t lo, uint64_t hi, size_t size, uint64_t *addr);

/* From where an injected system call's code starts to just after its syscall instruction. */
#define INJECT_SYSCALL_END 7

/*
 * Make the stopped thread `pid` run one system call: saves registers and the
 * bytes at RIP, writes `mov $nr,%eax; syscall; int3` there, runs it, restores both.
 * Returns 0 and the syscall's result in *ret, or a negative errno when the
 * injection itself failed.
 */
int inject_syscall(pid_t pid, int memfd, long nr, const long args[6], long *ret);

/*
 * The same, with the code written at `where` (scratch memory of fortstat's
 * own, left as it is after) instead of at RIP when `where` is not 0, for a
 * program that runs: a signal that arrives meanwhile is stored in *deferred
 * (may be NULL: dropped) for the caller to deliver when the thread resumes.
 */
int inject_syscall_at(pid_t pid, int memfd, uint64_t where, long nr, const long args[6], long *ret,
		      int *deferred);

/*
 * Call `fn(arg0)` in the stopped thread `pid` on its own stack (below the
 * red zone) with return address `trap`, an int3 of fortstat's; restore
 * every register after. Sets *ret to RAX. Signals as inject_syscall_at.
 * Returns 0 or a negative errno (-EFAULT: it hit another breakpoint).
 */
int inject_call(pid_t pid, int memfd, uint64_t fn, uint64_t trap, uint64_t arg0, uint64_t *ret,
		int *deferred);

#endif
