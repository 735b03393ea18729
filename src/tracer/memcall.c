// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * memcall.c - --alloc in the tracer: an allocator's call seen at its entry
 * (its arguments: registers at a trap, the probe's event in-process) and at
 * its return (RAX), charged to the books' storage (books_alloc) with the
 * thread's stack of timed routines then. The allocators are never timed:
 * no frame of theirs enters the books. A call an allocator makes itself
 * (realloc's free, operator new's malloc) is inside the thread's call and
 * not counted.
 */
#include <errno.h>
#include <sys/ptrace.h>

#include "fortstat/alloc.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "tracer.h"
#include "memcall.h"
#include "patches.h"

static enum alloc_fn routine_fn(const struct routine *r)
{
	for (size_t k = 0; (r->flags & RT_ALLOC) && k < r->n_names; k++) {
		enum alloc_fn fn = alloc_fn_of(r->names[k]);

		if (fn != ALLOC_NONE)
			return fn;
	}
	return ALLOC_NONE;
}

enum alloc_fn memcall_fn(const struct tracer *tr, const struct routine *r)
{
	return tr->o->alloc ? routine_fn(r) : ALLOC_NONE;
}

/*
 * A probe's event has room for two arguments and RAX: posix_memalign's
 * block is written in memory, reallocarray's size is its third argument;
 * both take a trap, where the registers and memory are read.
 */
bool memcall_probe_ok(const struct routine *r)
{
	enum alloc_fn fn = routine_fn(r);

	return fn != ALLOC_POSIX_MEMALIGN && fn != ALLOC_REALLOCARRAY;
}

/*
 * A call begins at `slot`; false: it is one an allocator call under way
 * makes, or its tail call (the sized operator delete's jmp to the plain one).
 */
static bool begin(struct tthread *th, uint8_t fn, uint64_t slot, const uint64_t args[3])
{
	if (th->mem.fn && slot <= th->mem.slot)
		return false;
	th->mem = (struct mem_call){.fn = fn, .slot = slot};
	for (int i = 0; i < 3; i++)
		th->mem.args[i] = args[i];
	return true;
}

void memcall_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p)
{
	uint64_t slot = arch_sp(regs), args[3], ret;

	arch_call_args(regs, args);
	/* a classic stub with the event page keeps RDX below RSP (its TSC is in RDX) */
	if (p->stub && !tr->ps->probes && tr->ps->page_addr &&
	    mem_read(tr->ps->memfd, slot - 0x20, &args[2], sizeof(args[2])) < 0)
		args[2] = 0;
	errno = 0;
	ret = (uint64_t)ptrace(PTRACE_PEEKDATA, th->tid, slot, 0);
	if (!errno && begin(th, p->alloc, slot, args) && !is_hooked(tr->ps, ret) &&
	    ptrace(PTRACE_POKEDATA, th->tid, slot, tr->ps->retrap) == 0) {
		th->mem.hooked = true;
		th->mem.ret = ret;
	}
	resume_patched(tr, th->tid, regs, p, false);
}

void memcall_entry_recorded(struct tracer *tr, struct tthread *th, const struct patch *p,
			    uint64_t slot, uint64_t rdi, uint64_t rsi)
{
	(void)tr;
	begin(th, p->alloc, slot, (const uint64_t[3]){rdi, rsi, 0});
}

bool memcall_return(struct tracer *tr, struct tthread *th, uint64_t slot, uint64_t rax,
		    uint64_t *ret)
{
	struct mem_call c = th->mem;
	uint64_t block = rax;

	if (!c.fn || slot < c.slot)
		return false; /* none, or a return inside the call */
	th->mem.fn = ALLOC_NONE;
	if (slot > c.slot)
		return false; /* it was left without a return (longjmp) */
	if (c.fn == ALLOC_POSIX_MEMALIGN) {
		/* 0 (an int) and the block at *args[0] */
		block = 0;
		if ((uint32_t)rax == 0 &&
		    mem_read(tr->ps->memfd, c.args[0], &block, sizeof(block)) < 0)
			block = 0;
	}
	books_alloc(tr->ps->books, th->tid, (enum alloc_fn)c.fn, c.args, block);
	if (c.hooked)
		*ret = c.ret;
	return c.hooked;
}

void memcall_restore(struct tracer *tr, struct tthread *th)
{
	uint64_t cur;

	if (th->mem.fn && th->mem.hooked &&
	    mem_read(tr->ps->memfd, th->mem.slot, &cur, sizeof(cur)) == 0 && cur == tr->ps->retrap)
		mem_write(tr->ps->memfd, th->mem.slot, &th->mem.ret, sizeof(th->mem.ret));
	th->mem.fn = ALLOC_NONE;
}
