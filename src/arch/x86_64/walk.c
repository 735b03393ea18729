// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * walk.c - the walks over a whole routine that the entry stubs' planning
 * makes (stubplan.c, stubshort.c): one instruction at a time
 * (x86_walk_step: lendec.c first, capstone where lendec does not know;
 * constant memory, whatever the routine's size) and the first branch that
 * lands inside an entry's covered bytes (x86_branch_inside); with the
 * refusals that insn_plan_stub compares by address (x86_lands_inside,
 * x86_among_first, x86_no_pad), each one object for all the files.
 */
#include "fortstat/insn.h"

#include <capstone/capstone.h>

#include "insn_int.h"
#include "lendec.h"

/* Reasons compared by address: refusals that a short entry may overcome. */
const char x86_lands_inside[] = "a branch lands inside the first 5 bytes";
const char x86_among_first[] = "a branch among the first 5 bytes";
/* ... and one that moving the whole routine may */
const char x86_no_pad[] = "a branch lands inside the first 5 bytes, no padding within reach";

/*
 * One instruction of a walk over a whole routine at *code (*left bytes, at
 * *a), what the walks need of it into *d; the three moved past it. lendec
 * first, capstone (it, detail on) when lendec does not know: both say the
 * same where lendec answers (tests/check_lendec.c), lendec some 30 times
 * faster (capstone formats every instruction's text).
 * False when the instruction cannot be decoded.
 */
bool x86_walk_step(csh h, cs_insn *it, const uint8_t **code, size_t *left, uint64_t *a,
		   struct x86_ld *d)
{
	const cs_x86 *x;

	if (x86_lendec(*code, *left, *a, d)) {
		*code += d->len;
		*left -= d->len;
		*a += d->len;
		return true;
	}
	if (!cs_disasm_iter(h, code, left, a, it))
		return false;
	x = &it->detail->x86;
	d->len = it->size;
	d->flags = (is_pad(it) ? X86_LD_PAD : 0) | (ends_flow(it) ? X86_LD_ENDS : 0);
	d->target = 0;
	if (x86_has_group(it, X86_GRP_BRANCH_RELATIVE) && x->op_count >= 1 &&
	    x->operands[0].type == X86_OP_IMM) {
		d->flags |= X86_LD_BRANCH;
		d->target = (uint64_t)x->operands[0].imm;
	}
	return true;
}

/*
 * The first branch of code[0..left) at a that lands inside the covered
 * bytes: why not, or NULL. With `open_end` (an end that is a guess) the
 * walk stops at code it cannot decode after an instruction that does not
 * fall through, or at an instruction that the end cuts (under 15 bytes).
 */
const char *x86_branch_inside(csh h, cs_insn *it, const uint8_t *code, size_t left, uint64_t a,
			      bool open_end, const struct insn_stub *stub)
{
	const char *why = NULL;
	struct x86_ld d;
	bool ended = false;

	while (left && !why) {
		if (!x86_walk_step(h, it, &code, &left, &a, &d)) {
			if (!(open_end && (ended || left < 15)))
				why = "routine not fully decodable";
			break;
		}
		ended = d.flags & X86_LD_ENDS;
		if ((d.flags & X86_LD_BRANCH) && d.target > stub->addr &&
		    d.target < stub->addr + stub->len)
			why = x86_lands_inside;
	}
	return why;
}
