/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insn_int.h - private to the files that plan and write the code fortstat
 * puts into a program (insn.h): insn.c (a first instruction's plan, one
 * instruction relocated), stubplan.c (what an entry stub's jmp covers),
 * walk.c (the walks over a whole routine), stubshort.c (short entries,
 * routines moved whole), stubcode.c (the code of stubs and traps),
 * stubmove.c (a plan moved to other addresses). Not a
 * public contract: the instruction tests and byte helpers they share, and
 * the steps one of them takes for another.
 */
#ifndef FORTSTAT_X86_INSN_INT_H
#define FORTSTAT_X86_INSN_INT_H

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "capstone_int.h"
#include "lendec.h"
#include "fortstat/insn.h"

static inline void put_le32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = u & 0xff;
	p[1] = (u >> 8) & 0xff;
	p[2] = (u >> 16) & 0xff;
	p[3] = (u >> 24) & 0xff;
}

static inline int32_t get_le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* Does the 64-bit signed difference `d` fit in an int32? */
static inline int fits32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

static inline int has_prefix(const cs_x86 *x, uint8_t pfx)
{
	for (unsigned i = 0; i < 4; i++)
		if (x->prefix[i] == pfx)
			return 1;
	return 0;
}

/* The condition code (0..15) of a jcc, from its opcode bytes; -1 if not one. */
static inline int jcc_cond(const cs_x86 *x)
{
	if (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f)
		return x->opcode[0] & 0xf;
	if (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f)
		return x->opcode[1] & 0xf;
	return -1;
}

/*
 * A near jmp through a register or memory (jmp *%rax, jmp *0x110(%rdi),
 * jmp *0x10(%rip)): it goes where the operand says from any address, so it
 * can run out of line (a RIP-relative operand re-encoded like any other).
 */
static inline bool is_indirect_jmp(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	return in->id == X86_INS_JMP && x->op_count == 1 &&
	       (x->operands[0].type == X86_OP_REG || x->operands[0].type == X86_OP_MEM);
}

/*
 * A near call through a register or memory (call *0x10(%rip), the hooks of
 * a table: GCC's targetm; call *%rax) that the stub can emulate as it does
 * a relative call, its return address pushed first: so not one that reads
 * RSP (the push moves it), nor one with a 16-bit operand size.
 */
static inline bool is_movable_indirect_call(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *op = &x->operands[0];

	if (in->id != X86_INS_CALL || x->op_count != 1 || x->opcode[0] != 0xff ||
	    has_prefix(x, 0x66) || !x->encoding.modrm_offset || ((x->modrm >> 3) & 7) != 2)
		return false;
	if (op->type == X86_OP_REG)
		return op->reg != X86_REG_RSP;
	return op->type == X86_OP_MEM && op->mem.base != X86_REG_RSP &&
	       op->mem.index != X86_REG_RSP && op->mem.segment == X86_REG_INVALID;
}

/* Is this instruction one that transfers control (or traps)? */
static inline int is_control(const cs_insn *in)
{
	return x86_has_group(in, X86_GRP_CALL) || x86_has_group(in, X86_GRP_JUMP) ||
	       x86_has_group(in, X86_GRP_RET) || x86_has_group(in, X86_GRP_IRET) ||
	       x86_has_group(in, X86_GRP_INT) || x86_has_group(in, X86_GRP_BRANCH_RELATIVE) ||
	       in->id == X86_INS_SYSCALL || in->id == X86_INS_SYSENTER || in->id == X86_INS_UD2 ||
	       in->id == X86_INS_HLT;
}

/* Does execution never go on to the next instruction after in? */
static inline bool ends_flow(const cs_insn *in)
{
	return in->id == X86_INS_JMP || in->id == X86_INS_RET || in->id == X86_INS_UD2;
}

static inline bool is_pad(const cs_insn *in)
{
	return in->id == X86_INS_NOP || in->id == X86_INS_INT3;
}

static inline int stub_refuse(struct insn_stub *stub, const char *why)
{
	stub->reason = why;
	return 1;
}

/*
 * A jcc or jmp with a relative target (test %rsi,%rsi; je ... at an entry):
 * the stub can end with it, re-encoded with a 32-bit displacement to the
 * same target; a relative call, emulated (its return address pushed, then a
 * jmp). Returns its condition (0..15), 16 for a jmp, 17 for a call, -1
 * otherwise.
 */
static inline int movable_branch(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	if (!x86_has_group(in, X86_GRP_BRANCH_RELATIVE) || x->op_count != 1 ||
	    x->operands[0].type != X86_OP_IMM || has_prefix(x, 0x66))
		return -1;
	if (in->id == X86_INS_CALL)
		return 17;
	if (!x86_has_group(in, X86_GRP_JUMP))
		return -1;
	if (in->id == X86_INS_JMP)
		return 16;
	return jcc_cond(x);
}
#define WHOLE_MAX 64 /* bytes of a routine moved whole into its stub at most */

/*
 * Refusals that insn_plan_stub compares by address (walk.c): a short
 * entry may overcome the first two, moving the whole routine the third.
 */
extern const char x86_lands_inside[];
extern const char x86_among_first[];
extern const char x86_no_pad[];

/* insn.c: copy `in` to run at dst, its RIP-relative displacement re-encoded (see there). */
const char *x86_relocate(const cs_insn *in, const uint8_t *bytes, uint64_t dst, uint8_t *out,
			 int *disp_at);

/* walk.c: one step of a walk over a whole routine; a branch into the covered bytes. */
bool x86_walk_step(csh h, cs_insn *it, const uint8_t **code, size_t *left, uint64_t *a,
		   struct x86_ld *d);
const char *x86_branch_inside(csh h, cs_insn *it, const uint8_t *code, size_t left, uint64_t a,
			      bool open_end, const struct insn_stub *stub);

/* stubshort.c: when a branch lands inside the 5 bytes: a short entry, or the routine whole. */
int x86_stub_short(csh h, const cs_insn *in, size_t n, const uint8_t *code, size_t left,
		   size_t tail, uint64_t entry, const struct insn_gap *gap, struct insn_stub *stub);
int x86_stub_whole(csh h, const uint8_t *code, size_t len, const struct insn_gap *gap,
		   struct insn_stub *stub);

/* stubcode.c: the stub's code, up to its int3, the return hook, the plain continuation. */
void x86_stub_head(struct insn_stub *stub, size_t *pos, uint64_t retrap, uint64_t page,
		   uint32_t ev);
int x86_stub_hook(struct insn_stub *stub, size_t *pos, uint64_t retrap, uint64_t page);
int x86_stub_tail(struct insn_stub *stub, size_t pos, const cs_insn *in, const uint8_t *code,
		  size_t body, uint64_t stub_addr, bool hooked_page);

#endif
