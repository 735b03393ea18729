// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * insn.c - how a routine's displaced first instruction runs once an int3
 * sits on it (insn_plan: out of line in an XOL slot, emulated by the
 * tracer, or refused), with the relocation of one instruction that the
 * entry stubs use too (x86_relocate: a RIP-relative displacement
 * re-encoded for where the copy runs, or why it cannot move). The
 * capstone handle: capstone.c; the entry stubs: stubplan.c and the files
 * it names.
 */
#include "fortstat/insn.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstone_int.h"
#include "insn_int.h"

static void refuse(struct insn_plan *plan, const char *why)
{
	plan->kind = INSN_REFUSE;
	plan->reason = why;
	plan->slot_len = 0;
}

/* plan->text = "mnemonic op_str", truncated to fit. */
static void set_text(struct insn_plan *plan, const cs_insn *in)
{
	size_t cap = sizeof(plan->text) - 1;
	size_t n = strnlen(in->mnemonic, sizeof(in->mnemonic));

	if (n > cap)
		n = cap;

	memcpy(plan->text, in->mnemonic, n);
	if (in->op_str[0] && n < cap) {
		size_t m = strnlen(in->op_str, cap - n - 1);

		plan->text[n++] = ' ';
		memcpy(plan->text + n, in->op_str, m);
		n += m;
	}
	plan->text[n] = '\0';
}

/* Classify a branch (call, jmp, jcc, loop, ...): emulate it or refuse. */
static void plan_branch(const cs_insn *in, struct insn_plan *plan)
{
	const cs_x86 *x = &in->detail->x86;
	int cond;

	switch (in->id) {
	case X86_INS_LOOP:
	case X86_INS_LOOPE:
	case X86_INS_LOOPNE:
		refuse(plan, "loop instruction");
		return;
	case X86_INS_JECXZ:
	case X86_INS_JCXZ:
		refuse(plan, "jecxz instruction");
		return;
	default:
		break;
	}
	if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM ||
	    !x86_has_group(in, X86_GRP_BRANCH_RELATIVE)) {
		refuse(plan, "indirect branch as first instruction");
		return;
	}
	/* Intel and AMD disagree on a 16-bit near branch: never guess. */
	if (has_prefix(x, 0x66)) {
		refuse(plan, "operand-size prefix on a relative branch");
		return;
	}
	plan->target = (uint64_t)x->operands[0].imm;
	switch (in->id) {
	case X86_INS_CALL:
		plan->kind = INSN_CALL;
		return;
	case X86_INS_JMP:
		plan->kind = INSN_JMP;
		return;
	case X86_INS_JRCXZ:
		plan->kind = INSN_JCC;
		plan->cond = 16;
		return;
	default:
		break;
	}
	cond = jcc_cond(x);
	if (cond < 0 || !x86_has_group(in, X86_GRP_JUMP)) {
		plan->target = 0;
		refuse(plan, "relative branch that cannot be emulated");
		return;
	}
	plan->kind = INSN_JCC;
	plan->cond = cond;
}

/* x86_relocate's refusal for a displacement's reach */
static const char rip_far[] = "RIP-relative displacement out of range for the slot";

/*
 * Copy instruction `in` (bytes at `bytes`, originally at in->address) to
 * `out`, where it will run at `dst`, re-encoding a RIP-relative
 * displacement (its offset in the instruction then in *disp_at, else -1).
 * Returns NULL, or why it cannot be moved.
 */
const char *x86_relocate(const cs_insn *in, const uint8_t *bytes, uint64_t dst, uint8_t *out,
			 int *disp_at)
{
	const cs_x86 *x = &in->detail->x86;

	*disp_at = -1;
	memcpy(out, bytes, in->size);
	for (unsigned i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		uint64_t abs;
		int64_t disp;

		if (op->type != X86_OP_MEM)
			continue;
		if (op->mem.base == X86_REG_EIP)
			return "EIP-relative operand";
		if (op->mem.base != X86_REG_RIP)
			continue;
		/*
		 * A RIP-relative operand always has a 32-bit displacement, just
		 * before the immediate if any (capstone 4 says disp_size 2 for
		 * some 0x66-prefixed SSE instructions: the offset is right).
		 */
		if (!x->encoding.disp_offset ||
		    x->encoding.disp_offset + 4u !=
			(x->encoding.imm_size ? x->encoding.imm_offset : in->size))
			return "RIP-relative operand with an unexpected encoding";
		abs = in->address + in->size + (int64_t)get_le32(out + x->encoding.disp_offset);
		disp = (int64_t)(abs - (dst + in->size));
		if (!fits32(disp))
			return rip_far;
		put_le32(out + x->encoding.disp_offset, (int32_t)disp);
		*disp_at = x->encoding.disp_offset;
		break; /* an instruction has at most one memory displacement */
	}
	return NULL;
}

/*
 * Plan the patch of a routine at `entry` whose first bytes are code[0..len).
 * An endbr64 at entry is skipped (plan->addr = entry + 4). Branches with a
 * relative target are emulated, other branches refused; anything else is
 * copied to the XOL slot at `slot_addr` (RIP-relative displacement adjusted)
 * and followed by a jmp back to plan->addr + plan->len.
 * Returns 0 (plan filled, possibly INSN_REFUSE) or -1 if capstone fails to
 * start or an argument is NULL.
 */
int insn_plan(const uint8_t *code, size_t len, uint64_t entry, uint64_t slot_addr,
	      struct insn_plan *plan)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	const char *why;
	cs_insn *in = NULL;
	size_t off = 0, n;
	uint64_t next;
	int64_t back;
	int disp_at;
	csh h;

	if (!plan || (!code && len))
		return -1;
	memset(plan, 0, sizeof(*plan));
	plan->addr = entry;
	if (x86_cs_get(&h) < 0)
		return -1;

	if (len >= sizeof(endbr64) && !memcmp(code, endbr64, sizeof(endbr64))) {
		off = sizeof(endbr64);
		plan->addr = entry + off;
	}
	if (off < len && code[off] == 0xcc) {
		plan->len = 1;
		snprintf(plan->text, sizeof(plan->text), "int3");
		refuse(plan, "already an int3");
		return 0;
	}
	n = off < len ? cs_disasm(h, code + off, len - off, plan->addr, 1, &in) : 0;
	if (n == 0) {
		refuse(plan, "undecodable first instruction");
		return 0;
	}

	plan->len = in->size;
	set_text(plan, in);
	next = plan->addr + plan->len;

	if (in->id == X86_INS_INT3) {
		refuse(plan, "already an int3");
		goto out;
	}
	if (x86_has_group(in, X86_GRP_INT) && in->id != X86_INS_SYSCALL &&
	    in->id != X86_INS_SYSENTER) {
		refuse(plan, "interrupt instruction as first instruction");
		goto out;
	}
	if ((x86_has_group(in, X86_GRP_CALL) || x86_has_group(in, X86_GRP_JUMP) ||
	     x86_has_group(in, X86_GRP_BRANCH_RELATIVE)) &&
	    !is_indirect_jmp(in)) {
		plan_branch(in, plan);
		goto out;
	}
	/* An indirect jmp (a tail call through a pointer) runs out of line as it is. */
	/* ret, iret and everything else run out of line. */
	if (plan->len + 5 > INSN_SLOT_SIZE) {
		refuse(plan, "instruction too long for the slot");
		goto out;
	}
	why = x86_relocate(in, code + off, slot_addr, plan->slot, &disp_at);
	if (why) {
		refuse(plan, why);
		goto out;
	}

	back = (int64_t)(next - (slot_addr + plan->len + 5));
	if (!fits32(back)) {
		refuse(plan, "jump back out of range for the slot");
		goto out;
	}
	plan->slot[plan->len] = 0xe9;
	put_le32(plan->slot + plan->len + 1, (int32_t)back);
	plan->slot_len = plan->len + 5;
	plan->kind = INSN_XOL;
out:
	if (plan->kind == INSN_REFUSE)
		memset(plan->slot, 0, sizeof(plan->slot));
	cs_free(in, n);
	return 0;
}
