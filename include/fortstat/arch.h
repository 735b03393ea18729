/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * arch.h - the arch seam: everything the tracer knows of the machine. The
 * tracer names registers, instruction bytes and kernel structures only
 * through this header and the two it includes: insn.h (planning entry
 * patches, generating stubs and traps) and inject.h (running code in a
 * stopped thread). x86-64 lives in src/arch/x86_64/; another architecture
 * is another folder implementing the same contracts.
 */
#ifndef FORTSTAT_ARCH_H
#define FORTSTAT_ARCH_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "fortstat/inject.h"
#include "fortstat/insn.h"

/* A stopped thread's registers, as PTRACE_GETREGS gives them. */
typedef struct user_regs_struct arch_regs;

/* The kernel's struct sigaction (rt_sigaction, an 8-byte sigset) and its flags. */
struct ksigaction {
	uint64_t handler, flags, restorer, mask;
};
#define KSA_NODEFER 0x40000000u
#define KSA_RESETHAND 0x80000000u
#define KSA_SIGSET_SIZE 8

/* Read or write every register of stopped thread tid. 0 or -errno (ESRCH: gone). */
int arch_get_regs(pid_t tid, arch_regs *r);
int arch_set_regs(pid_t tid, const arch_regs *r);

/* The program counter alone (one word: cheaper than every register). 0 or -errno. */
int arch_get_pc(pid_t tid, uint64_t *pc);
int arch_set_pc(pid_t tid, uint64_t pc);

/*
 * The thread's per-thread segment base that in-process probes address
 * their area through (GS on x86-64; Linux user code does not use it).
 * Return 0 or -errno.
 */
int arch_get_tls2(pid_t tid, uint64_t *base);
int arch_set_tls2(pid_t tid, uint64_t base);

/* Every register of r, "name value" pairs, into buf (for -vv). */
void arch_regs_format(const arch_regs *r, char *buf, size_t n);

/* The stack pointer and program counter in a register set. */
uint64_t arch_sp(const arch_regs *r);
uint64_t arch_pc(const arch_regs *r);

/* Where the return address lay that the return just taken popped (a return trap's stop). */
uint64_t arch_popped_slot(const arch_regs *r);

/* Where the breakpoint that stopped a thread with these registers lies (PC after an int3 - 1). */
uint64_t arch_trap_addr(const arch_regs *r);

/*
 * An entry stub's stop: the return address it loaded (and will hook). A
 * register set known from the event page alone is made with arch_regs_from_page.
 */
uint64_t arch_stub_ret(const arch_regs *r);
/* A call's first three integer arguments at its entry; the value a routine returned. */
void arch_call_args(const arch_regs *r, uint64_t a[3]);
uint64_t arch_ret_val(const arch_regs *r);
void arch_regs_from_page(arch_regs *r, uint64_t sp, uint64_t stub_ret);

/* The TSC a stub or a return site's trap read just before its int3 (EDX:EAX). */
uint64_t arch_trap_tsc(const arch_regs *r);

/* The register through which a stub (ARCH_PAGE_REG_STUB) or a return site's
 * trap (ARCH_PAGE_REG_RSITE) addresses the event page after its int3. */
enum arch_page_reg { ARCH_PAGE_REG_STUB, ARCH_PAGE_REG_RSITE };

/* Point that register of stopped thread tid (and of *r) at addr. 0 or -errno. */
int arch_point_page_reg(pid_t tid, arch_regs *r, enum arch_page_reg which, uint64_t addr);

/* Do what a bare `ret` would: pop the return address into the PC. 0 or -errno. */
int arch_emulate_ret(pid_t tid, int memfd);

/*
 * Go's register ABI (Go >= 1.17, ABIInternal): the register that holds the
 * running goroutine's g at a Go function's entry and at its return.
 */
uint64_t arch_go_g(const arch_regs *r);

/* ... and the register of a Go function's first integer argument at its entry. */
uint64_t arch_go_arg0(const arch_regs *r);

/* arch_emulate_ret on registers already read (r is updated). 0 or -errno. */
int arch_emulate_ret_regs(pid_t tid, int memfd, arch_regs *r);

/*
 * Resume thread tid past an instruction that a plan emulates (INSN_CALL:
 * push the return address and jump; INSN_JCC: jump where the flags say).
 * `r` holds its registers (read here first when !have_regs). 0 or -errno.
 */
int arch_emulate(pid_t tid, arch_regs *r, bool have_regs, const struct insn_plan *pl);

#endif
