// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * patches.c - a process's patch records (struct patch) and the marks
 * fortstat leaves in the program: the table grown, a thread resumed past
 * a patch, every patch undone in a forked copy, and what a word of the
 * program is (a hooked return address, a return site's trap, the return
 * address of a stub's emulated call). Below every mechanism: patch.c
 * (planning), retaddr.c, golang.c and memcall.c make and read the records
 * through it.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "fortstat/arch.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/procmem.h"
#include "fortstat/util.h"
#include "tracer.h"
#include "patches.h"

struct patch *patch_new(struct tracer *tr)
{
	if (tr->ps->n_patches == tr->ps->cap_patches) {
		tr->ps->cap_patches = tr->ps->cap_patches ? 2 * tr->ps->cap_patches : 64;
		tr->ps->patches =
		    xrealloc(tr->ps->patches, tr->ps->cap_patches * sizeof(*tr->ps->patches));
	}
	memset(&tr->ps->patches[tr->ps->n_patches], 0, sizeof(*tr->ps->patches));
	return &tr->ps->patches[tr->ps->n_patches];
}

/* Is v what fortstat writes over return addresses (the return trap, a site's trap)? */
bool is_hooked(const struct pstate *ps, uint64_t v)
{
	return v == ps->retrap || (ps->probe_tramp && v == ps->probe_tramp) ||
	       (ps->rsites && v >= ps->rsites && v < ps->rsites + ps->rsite_n * INSN_RSITE_SIZE &&
		(v - ps->rsites) % INSN_RSITE_SIZE == 0);
}

/* Is pc the int3 of a return site's trap? */
bool is_rsite_trap(const struct pstate *ps, uint64_t pc)
{
	return ps->rsites && pc >= ps->rsites && pc < ps->rsites + ps->rsite_n * INSN_RSITE_SIZE &&
	       (pc - ps->rsites) % INSN_RSITE_SIZE == INSN_RSITE_TRAP;
}

/*
 * Resume the thread past the displaced instruction of patch p: at its
 * stub's plain continuation, its out-of-line slot, or as emulated. `regs`
 * is complete unless `rip_only` (count-only: only RIP was read).
 */
int resume_patched(struct tracer *tr, pid_t tid, arch_regs *regs, const struct patch *p,
		   bool rip_only)
{
	(void)tr;
	if (p->stub)
		return arch_set_pc(tid, p->slot + p->plain_off);
	if (p->plan.kind == INSN_XOL)
		return arch_set_pc(tid, p->slot);
	return arch_emulate(tid, regs, !rip_only, &p->plan);
}

/*
 * Is ret the return address of a call that a live stub emulates? The code
 * before it is the stub's jmp now, no call: return_site_ok and -p's scan of
 * the stacks ask here first.
 */
bool patch_call_site(const struct pstate *ps, uint64_t ret)
{
	uint64_t v;

	return u64map_get(&ps->callret, ret, &v) && v && v <= ps->n_patches &&
	       !ps->patches[v - 1].dead && ps->patches[v - 1].call_ret == ret;
}

/* Undo every live patch of the current process in the memory behind fd (a forked copy). */
void patch_undo_all(struct tracer *tr, int fd)
{
	for (size_t j = 0; j < tr->ps->n_patches; j++) {
		const struct patch *p = &tr->ps->patches[j];

		if (p->dead)
			continue;
		if (p->stub)
			mem_write(fd, p->jmp_addr, p->orig_bytes, p->orig_len);
		else
			mem_write(fd, p->trap, &p->orig, 1);
		if (p->stub && p->pad_addr) /* after the jmp rel8 that leads there */
			mem_write(fd, p->pad_addr, p->pad_orig, 5);
	}
}
