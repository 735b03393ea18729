// SPDX-License-Identifier: GPL-2.0-or-later
/* regs.c - x86-64 registers of a stopped thread, as the tracer needs them (arch.h). */
#include "fortstat/arch.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>

#include "fortstat/procmem.h"

#ifndef ARCH_SET_GS
#define ARCH_SET_GS 0x1001
#define ARCH_GET_GS 0x1004
#endif

int arch_get_regs(pid_t tid, arch_regs *r)
{
	return ptrace(PTRACE_GETREGS, tid, 0, r) < 0 ? -errno : 0;
}

int arch_set_regs(pid_t tid, const arch_regs *r)
{
	return ptrace(PTRACE_SETREGS, tid, 0, r) < 0 ? -errno : 0;
}

int arch_get_pc(pid_t tid, uint64_t *pc)
{
	errno = 0;
	*pc = (uint64_t)ptrace(PTRACE_PEEKUSER, tid, offsetof(arch_regs, rip), 0);
	return errno ? -errno : 0;
}

/* RIP alone: one word, about 1 us cheaper a stop than PTRACE_SETREGS. */
int arch_set_pc(pid_t tid, uint64_t pc)
{
	return ptrace(PTRACE_POKEUSER, tid, offsetof(arch_regs, rip), pc) < 0 ? -errno : 0;
}

void arch_regs_format(const arch_regs *r, char *buf, size_t n)
{
	snprintf(buf, n,
		 "rip %llx rsp %llx rax %llx rbx %llx rcx %llx rdx %llx rsi %llx rdi %llx "
		 "rbp %llx r8 %llx r9 %llx r10 %llx r11 %llx r12 %llx r13 %llx r14 %llx "
		 "r15 %llx eflags %llx cs %llx ss %llx",
		 r->rip, r->rsp, r->rax, r->rbx, r->rcx, r->rdx, r->rsi, r->rdi, r->rbp, r->r8,
		 r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->eflags, r->cs, r->ss);
}

uint64_t arch_sp(const arch_regs *r)
{
	return r->rsp;
}

uint64_t arch_pc(const arch_regs *r)
{
	return r->rip;
}

uint64_t arch_popped_slot(const arch_regs *r)
{
	return r->rsp - 8;
}

uint64_t arch_trap_addr(const arch_regs *r)
{
	return r->rip - 1;
}

void arch_call_args(const arch_regs *r, uint64_t a[3])
{
	a[0] = r->rdi;
	a[1] = r->rsi;
	a[2] = r->rdx;
}

uint64_t arch_ret_val(const arch_regs *r)
{
	return r->rax;
}

/* The stub loads the return address into r11 before its int3 (insn.h). */
uint64_t arch_stub_ret(const arch_regs *r)
{
	return r->r11;
}

void arch_regs_from_page(arch_regs *r, uint64_t sp, uint64_t stub_ret)
{
	memset(r, 0, sizeof(*r));
	r->rsp = sp;
	r->r11 = stub_ret;
}

uint64_t arch_trap_tsc(const arch_regs *r)
{
	return (r->rdx << 32) | (r->rax & 0xffffffffu);
}

/* r10 in a stub, r11 in a return site's trap (insn.h). */
int arch_point_page_reg(pid_t tid, arch_regs *r, enum arch_page_reg which, uint64_t addr)
{
	bool stub = which == ARCH_PAGE_REG_STUB;

	if (ptrace(PTRACE_POKEUSER, tid, stub ? offsetof(arch_regs, r10) : offsetof(arch_regs, r11),
		   addr) < 0)
		return -errno;
	if (stub)
		r->r10 = addr;
	else
		r->r11 = addr;
	return 0;
}

int arch_emulate_ret(pid_t tid, int memfd)
{
	arch_regs r;
	uint64_t ra;
	int err = arch_get_regs(tid, &r);

	if (err)
		return err;
	err = mem_read(memfd, r.rsp, &ra, sizeof(ra));
	if (err)
		return err;
	r.rip = ra;
	r.rsp += 8;
	return arch_set_regs(tid, &r);
}

int arch_emulate(pid_t tid, arch_regs *r, bool have_regs, const struct insn_plan *pl)
{
	uint64_t next = pl->addr + pl->len;

	if (!have_regs && arch_get_regs(tid, r) < 0)
		return -errno;
	switch (pl->kind) {
	case INSN_CALL:
		r->rsp -= 8;
		if (ptrace(PTRACE_POKEDATA, tid, r->rsp, next) < 0)
			return -errno;
		r->rip = pl->target;
		return arch_set_regs(tid, r);
	case INSN_JCC:
		return arch_set_pc(tid,
				   insn_cond_true(pl->cond, r->eflags, r->rcx) ? pl->target : next);
	case INSN_JMP:
		return arch_set_pc(tid, pl->target);
	default:
		return -EINVAL;
	}
}

uint64_t arch_go_g(const arch_regs *r)
{
	return r->r14;
}

uint64_t arch_go_arg0(const arch_regs *r)
{
	return r->rax;
}

int arch_emulate_ret_regs(pid_t tid, int memfd, arch_regs *r)
{
	uint64_t ra;
	int err = mem_read(memfd, r->rsp, &ra, sizeof(ra));

	if (err)
		return err;
	r->rip = ra;
	r->rsp += 8;
	return arch_set_regs(tid, r);
}

int arch_get_tls2(pid_t tid, uint64_t *base)
{
	unsigned long v = 0;

	if (ptrace(PTRACE_ARCH_PRCTL, tid, &v, ARCH_GET_GS) < 0)
		return -errno;
	*base = v;
	return 0;
}

int arch_set_tls2(pid_t tid, uint64_t base)
{
	return ptrace(PTRACE_ARCH_PRCTL, tid, (void *)(uintptr_t)base, ARCH_SET_GS) < 0 ? -errno
											: 0;
}
