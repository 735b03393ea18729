// SPDX-License-Identifier: GPL-2.0-or-later
/* insn.c - plan how to run a routine's displaced first instruction (capstone). */
#include "fortstat/insn.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "capstone_int.h"
#include "lendec.h"

/*
 * One capstone handle for the whole process, opened on first use (x86-64,
 * AT&T syntax, detail on). The tracer is single-threaded, so no locking.
 */
static csh cs_handle;
static int cs_ready;

int x86_cs_get(csh *out)
{
	if (!cs_ready) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs_handle) != CS_ERR_OK)
			return -1;
		if (cs_option(cs_handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
			cs_close(&cs_handle);
			return -1;
		}
		/* Cosmetic only: the plan does not depend on the syntax. */
		cs_option(cs_handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		cs_ready = 1;
	}
	*out = cs_handle;
	return 0;
}

/*
 * Release the capstone handle. Safe to call more than once; insn_plan opens
 * a new handle if called again afterwards.
 */
void insn_cleanup(void)
{
	if (cs_ready) {
		cs_close(&cs_handle);
		cs_ready = 0;
	}
}

static void put_le32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = u & 0xff;
	p[1] = (u >> 8) & 0xff;
	p[2] = (u >> 16) & 0xff;
	p[3] = (u >> 24) & 0xff;
}

static int32_t get_le32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

/* Does the 64-bit signed difference `d` fit in an int32? */
static int fits32(int64_t d)
{
	return d >= INT32_MIN && d <= INT32_MAX;
}

static void refuse(struct insn_plan *plan, const char *why)
{
	plan->kind = INSN_REFUSE;
	plan->reason = why;
	plan->slot_len = 0;
}

int x86_has_group(const cs_insn *in, uint8_t grp)
{
	const cs_detail *d = in->detail;

	for (unsigned i = 0; i < d->groups_count; i++)
		if (d->groups[i] == grp)
			return 1;
	return 0;
}

static int has_prefix(const cs_x86 *x, uint8_t pfx)
{
	for (unsigned i = 0; i < 4; i++)
		if (x->prefix[i] == pfx)
			return 1;
	return 0;
}

/* The condition code (0..15) of a jcc, from its opcode bytes; -1 if not one. */
static int jcc_cond(const cs_x86 *x)
{
	if (x->opcode[0] >= 0x70 && x->opcode[0] <= 0x7f)
		return x->opcode[0] & 0xf;
	if (x->opcode[0] == 0x0f && x->opcode[1] >= 0x80 && x->opcode[1] <= 0x8f)
		return x->opcode[1] & 0xf;
	return -1;
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

/*
 * A near jmp through a register or memory (jmp *%rax, jmp *0x110(%rdi),
 * jmp *0x10(%rip)): it goes where the operand says from any address, so it
 * can run out of line (a RIP-relative operand re-encoded like any other).
 */
static bool is_indirect_jmp(const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;

	return in->id == X86_INS_JMP && x->op_count == 1 &&
	       (x->operands[0].type == X86_OP_REG || x->operands[0].type == X86_OP_MEM);
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

/* relocate's refusal for a displacement's reach */
static const char rip_far[] = "RIP-relative displacement out of range for the slot";

/*
 * Copy instruction `in` (bytes at `bytes`, originally at in->address) to
 * `out`, where it will run at `dst`, re-encoding a RIP-relative
 * displacement (its offset in the instruction then in *disp_at, else -1).
 * Returns NULL, or why it cannot be moved.
 */
static const char *relocate(const cs_insn *in, const uint8_t *bytes, uint64_t dst, uint8_t *out,
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
	why = relocate(in, code + off, slot_addr, plan->slot, &disp_at);
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

/* Is this instruction one that transfers control (or traps)? */
static int is_control(const cs_insn *in)
{
	return x86_has_group(in, X86_GRP_CALL) || x86_has_group(in, X86_GRP_JUMP) ||
	       x86_has_group(in, X86_GRP_RET) || x86_has_group(in, X86_GRP_IRET) ||
	       x86_has_group(in, X86_GRP_INT) || x86_has_group(in, X86_GRP_BRANCH_RELATIVE) ||
	       in->id == X86_INS_SYSCALL || in->id == X86_INS_SYSENTER || in->id == X86_INS_UD2 ||
	       in->id == X86_INS_HLT;
}

/* Does execution never go on to the next instruction after in? */
static bool ends_flow(const cs_insn *in)
{
	return in->id == X86_INS_JMP || in->id == X86_INS_RET || in->id == X86_INS_UD2;
}

static bool is_pad(const cs_insn *in)
{
	return in->id == X86_INS_NOP || in->id == X86_INS_INT3;
}

/* Reasons compared by address: refusals that a short entry may overcome. */
static const char lands_inside[] = "a branch lands inside the first 5 bytes";
static const char among_first[] = "a branch among the first 5 bytes";
/* ... and one that moving the whole routine may */
static const char no_pad[] = "a branch lands inside the first 5 bytes, no padding within reach";

static int stub_refuse(struct insn_stub *stub, const char *why)
{
	stub->reason = why;
	return 1;
}

/* Append n bytes to the stub's code at *pos (the fixed parts fit: see INSN_STUB_SIZE). */
/*
 * The TSC around a stop. Before the int3: RAX and RDX saved at save(%rsp)
 * and save-8(%rsp), the TSC read and stored into t_trap through r10 or r11
 * (`base`, holding the event page), and left in EAX:EDX for the tracer to
 * read with the registers when the page cannot be trusted (threads). After
 * it: the TSC stored into t_go through the same register -- which is the
 * page unless the tracer set it to the thread's own slot -- and RAX, RDX
 * restored. The flags are untouched. TSC_SAVE_LEN + TSC_LEN, TSC_LEN +
 * TSC_RESTORE_LEN bytes.
 */
#define TSC_TRAP 0x28 /* offsetof(struct insn_event_page, t_trap) */
#define TSC_GO 0x30   /* offsetof(struct insn_event_page, t_go) */

static size_t rax_rdx(uint8_t *c, uint8_t op, int8_t save)
{
	const uint8_t code[] = {
	    0x48, op, 0x44, 0x24, (uint8_t)save,       /* mov %rax <-> save(%rsp) */
	    0x48, op, 0x54, 0x24, (uint8_t)(save - 8), /* mov %rdx <-> save-8(%rsp) */
	};

	memcpy(c, code, sizeof(code));
	return sizeof(code);
}

static size_t tsc_read(uint8_t *c, int base, uint8_t disp)
{
	uint8_t m = base == 11 ? 0x43 : 0x42; /* ModRM: disp8(%r11) or disp8(%r10) */
	const uint8_t code[] = {
	    0x0f,
	    0x31, /* rdtsc */
	    0x41,
	    0x89,
	    m,
	    disp, /* mov %eax,disp(base) */
	    0x41,
	    0x89,
	    (uint8_t)(m + 0x10),
	    (uint8_t)(disp + 4), /* mov %edx,disp+4(base) */
	};

	memcpy(c, code, sizeof(code));
	return sizeof(code);
}

/* Before the int3 (ending with it) and after it. */
static size_t tsc_before(uint8_t *c, int base, int8_t save)
{
	size_t n = rax_rdx(c, 0x89, save);

	n += tsc_read(c + n, base, TSC_TRAP);
	c[n++] = 0xcc; /* int3 */
	return n;
}

static size_t tsc_after(uint8_t *c, int base, int8_t save)
{
	size_t n = tsc_read(c, base, TSC_GO);

	return n + rax_rdx(c + n, 0x8b, save);
}

static void emit(struct insn_stub *stub, size_t *pos, const void *b, size_t n)
{
	memcpy(stub->code + *pos, b, n);
	*pos += n;
}

/* The pieces of an entry stub (see insn.h for what it does). */
static const uint8_t head[] = {
    0x4c, 0x89, 0x5c, 0x24, 0xf8, /* mov %r11,-0x8(%rsp) */
    0x4c, 0x8b, 0x1c, 0x24,	  /* mov (%rsp),%r11 */
    0xcc,			  /* int3 */
};
static const uint8_t page_head[] = {
    0x4c, 0x89, 0x5c, 0x24, 0xf8, /* mov %r11,-0x8(%rsp) */
    0x4c, 0x89, 0x54, 0x24, 0xf0, /* mov %r10,-0x10(%rsp) */
    0x4c, 0x8b, 0x1c, 0x24,	  /* mov (%rsp),%r11 */
    0x49, 0xba,			  /* movabs $page,%r10 (8 bytes follow) */
};
static const uint8_t page_tail[] = {
    0x4d, 0x89, 0x1a,	    /* mov %r11,(%r10): the return address */
    0x49, 0x89, 0x62, 0x08, /* mov %rsp,0x8(%r10): the slot */
    0x41, 0xc7, 0x42, 0x10, /* movl $ev,0x10(%r10) (4 bytes follow) */
};
static const uint8_t page_end[] = {
    0x4c, 0x8b, 0x54, 0x24, 0xf0, /* mov -0x10(%rsp),%r10 */
    0xcc,			  /* int3 */
};
static const uint8_t hook_store[] = {0x4c, 0x89, 0x1c, 0x24}; /* mov %r11,(%rsp) */
/*
 * With the event page, the hook path writes the tracer's hook_val when
 * the return address is hook_key (value read first: a signal handler
 * between the two reads changes the key too), else the return trap.
 */
static const uint8_t plain_page[] = {
    0x48, 0x8b, 0x44, 0x24, 0xe8, /* mov -0x18(%rsp),%rax */
    0x48, 0x8b, 0x54, 0x24, 0xe0, /* mov -0x20(%rsp),%rdx */
    0x4c, 0x8b, 0x54, 0x24, 0xf0, /* mov -0x10(%rsp),%r10 */
};
static const uint8_t page_hook2[] = {
    0x4d, 0x8b, 0x5a, 0x18, /* mov 0x18(%r10),%r11: hook_val */
    0x4d, 0x8b, 0x52, 0x20, /* mov 0x20(%r10),%r10: hook_key */
    0x4c, 0x3b, 0x14, 0x24, /* cmp (%rsp),%r10 */
    0x74, 0x0a,		    /* je store (over the movabs) */
};
static const uint8_t page_hook3[] = {
    0x4c, 0x89, 0x1c, 0x24,	  /* store: mov %r11,(%rsp) */
    0x4c, 0x8b, 0x54, 0x24, 0xf0, /* mov -0x10(%rsp),%r10 */
};
static const uint8_t restore[] = {0x4c, 0x8b, 0x5c, 0x24, 0xf8};  /* mov -0x8(%rsp),%r11 */
static const uint8_t r11_save[] = {0x4c, 0x89, 0x5c, 0x24, 0xf8}; /* mov %r11,-0x8(%rsp) */

/*
 * A jcc or jmp with a relative target (test %rsi,%rsi; je ... at an entry):
 * the stub can end with it, re-encoded with a 32-bit displacement to the
 * same target; a relative call, emulated (its return address pushed, then a
 * jmp). Returns its condition (0..15), 16 for a jmp, 17 for a call, -1
 * otherwise.
 */
static int movable_branch(const cs_insn *in)
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

/*
 * The whole instructions in[0..] that cover the jmp's 5 bytes. Branches
 * among them: a relative jcc or jmp anywhere (re-encoded with a 32-bit
 * displacement: test %edx,%edx; jne ...; xor %eax,%eax at an entry), a
 * `ret` anywhere (it runs in the stub as it would have in the routine);
 * an indirect jmp or a relative call only last (a call in the middle would
 * return into the stub, where no unwinder finds the routine).
 */
static int stub_cover(const cs_insn *in, size_t n, struct insn_stub *stub)
{
	for (size_t k = 0; stub->len < 5 && k < n; k++) {
		bool last = stub->len + in[k].size >= 5;
		int mb = movable_branch(&in[k]);

		if (is_control(&in[k]) && !(mb >= 0 && mb <= 16) && in[k].id != X86_INS_RET &&
		    !(last && (is_indirect_jmp(&in[k]) || mb == 17)))
			return stub_refuse(stub, among_first);
		stub->len += in[k].size;
	}
	return stub->len < 5 ? stub_refuse(stub, "routine shorter than a jmp") : 0;
}

static bool ends_flow(const cs_insn *in);
static bool is_pad(const cs_insn *in);

/*
 * One instruction of a walk over a whole routine at *code (*left bytes, at
 * *a), what the walks need of it into *d; the three moved past it. lendec
 * first, capstone (it, detail on) when lendec does not know: both say the
 * same where lendec answers (tests/check_lendec.c), lendec some 30 times
 * faster (capstone formats every instruction's text).
 * False when the instruction cannot be decoded.
 */
static bool walk_step(csh h, cs_insn *it, const uint8_t **code, size_t *left, uint64_t *a,
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
static const char *branch_inside(csh h, cs_insn *it, const uint8_t *code, size_t left, uint64_t a,
				 bool open_end, const struct insn_stub *stub)
{
	const char *why = NULL;
	struct x86_ld d;
	bool ended = false;

	while (left && !why) {
		if (!walk_step(h, it, &code, &left, &a, &d)) {
			if (!(open_end && (ended || left < 15)))
				why = "routine not fully decodable";
			break;
		}
		ended = d.flags & X86_LD_ENDS;
		if ((d.flags & X86_LD_BRANCH) && d.target > stub->addr &&
		    d.target < stub->addr + stub->len)
			why = lands_inside;
	}
	return why;
}

/*
 * No branch of the routine code[0..left), nor of the code near it
 * (insn_gap.near), may land inside the covered bytes: walk them one
 * instruction at a time (constant memory, whatever their size). Returns
 * 0, 1 (refused: stub->reason) or -1.
 */
static int stub_no_branch_inside(csh h, const uint8_t *code, size_t left,
				 const struct insn_gap *gap, struct insn_stub *stub)
{
	cs_insn *it = cs_malloc(h);
	const char *why = NULL;

	if (!it)
		return -1;
	if (gap && gap->near && gap->near_len) {
		why = branch_inside(h, it, gap->near, gap->near_len, gap->near_addr, false, stub);
		if (why && why != lands_inside)
			why = "the code before it not fully decodable";
	}
	if (!why)
		why = branch_inside(h, it, code, left, stub->addr, gap && gap->open_end, stub);
	cs_free(it, 1);
	return why ? stub_refuse(stub, why) : 0;
}

/* The stub up to its int3: the stop's facts on the event page (with one), the TSC. */
static void stub_head(struct insn_stub *stub, size_t *pos, uint64_t retrap, uint64_t page,
		      uint32_t ev)
{
	if (page) {
		/* The entry written to the event page for the tracer, then the stop. */
		emit(stub, pos, page_head, sizeof(page_head));
		insn_stub_rel(stub, *pos, INSN_REL_PAGE64);
		emit(stub, pos, &page, 8);
		emit(stub, pos, page_tail, sizeof(page_tail));
		insn_stub_rel(stub, *pos, INSN_REL_EV32);
		emit(stub, pos, &ev, 4);
		if (retrap) /* timed: the TSC too, r10 kept (counting needs no times) */
			*pos += tsc_before(stub->code + *pos, 10, -0x18);
		else
			emit(stub, pos, page_end, sizeof(page_end));
	} else {
		emit(stub, pos, head, sizeof(head));
	}
	stub->trap_off = (unsigned)*pos - 1;
}

/* After the int3: hook the return address with the return trap (or the tracer's pair). */
static int stub_hook(struct insn_stub *stub, size_t *pos, uint64_t retrap, uint64_t page)
{
	if (page) {
		/* r10: the page, or the thread's slot if the tracer said so */
		*pos += tsc_after(stub->code + *pos, 10, -0x18);
		emit(stub, pos, page_hook2, sizeof(page_hook2));
	}
	/*
	 * movabs $retrap,%r11: the return trap lies in the program's scratch
	 * page, which a library's stub (far from the program) reaches too.
	 */
	stub->code[(*pos)++] = 0x49;
	stub->code[(*pos)++] = 0xbb;
	insn_stub_rel(stub, *pos, INSN_REL_RETRAP64);
	memcpy(stub->code + *pos, &retrap, 8);
	*pos += 8;
	if (page)
		emit(stub, pos, page_hook3, sizeof(page_hook3));
	else
		emit(stub, pos, hook_store, sizeof(hook_store));
	return 0;
}

#define WHOLE_MAX 64 /* bytes of a routine moved whole into its stub at most */

/*
 * The instructions of a routine moved whole (stub->whole bytes of code at
 * stub->addr) at *pos: its relative branches, all within it, re-aimed at
 * the copy (rel32), RIP-relative operands re-encoded. Returns 0 or 1
 * (refused: stub->reason).
 */
static int whole_tail(struct insn_stub *stub, size_t *pos, const uint8_t *code, uint64_t stub_addr)
{
	unsigned at[WHOLE_MAX], cur = 0;
	cs_insn *in = NULL;
	size_t n = 0;
	int rc = 0;
	csh h;

	if (x86_cs_get(&h) < 0)
		return stub_refuse(stub, "capstone failed");
	n = cs_disasm(h, code, stub->whole, stub->addr, 0, &in);
	for (size_t k = 0; k < n; k++) { /* where each instruction goes in the copy */
		int mb = movable_branch(&in[k]);

		at[k] = cur;
		cur += mb == 16 ? 5 : mb >= 0 && mb < 16 ? 6 : in[k].size;
	}
	if (*pos + cur + 5 > INSN_STUB_SIZE)
		rc = stub_refuse(stub, "instructions too long for the stub");
	for (size_t k = 0; !rc && k < n; k++) {
		int mb = movable_branch(&in[k]);
		uint8_t *o = stub->code + *pos + at[k];
		uint64_t t;
		size_t j = 0;
		int disp_at;

		if (mb < 0 || mb > 16) {
			if (relocate(&in[k], code + (in[k].address - stub->addr),
				     stub_addr + *pos + at[k], o, &disp_at))
				rc = stub_refuse(stub, "an instruction that cannot be moved");
			else if (disp_at >= 0)
				insn_stub_rel(stub, *pos + at[k] + (size_t)disp_at,
					      INSN_REL_CODE32);
			continue;
		}
		t = (uint64_t)in[k].detail->x86.operands[0].imm;
		while (j < n && in[j].address != t)
			j++;
		if (j == n) { /* stub_whole saw to it */
			rc = stub_refuse(stub, "a branch out of a routine moved whole");
			break;
		}
		if (mb == 16) {
			o[0] = 0xe9;
		} else {
			o[0] = 0x0f;
			o[1] = (uint8_t)(0x80 | mb);
		}
		put_le32(o + (mb == 16 ? 1 : 2),
			 (int32_t)((int64_t)at[j] - (int64_t)(at[k] + (mb == 16 ? 5 : 6))));
	}
	cs_free(in, n);
	if (!rc)
		*pos += cur;
	return rc;
}

/*
 * A small routine whose own branches land in its first 5 bytes (a loop
 * back to its second instruction) with no padding within reach: the whole
 * routine, code[0..len) at stub->addr, runs in its stub (one that runs on
 * at its end goes on there). Only a leaf whose branches all stay within it
 * (a branch out may go to a cold part that jumps back into the original),
 * and that no code before it enters (gap->near): its original bytes after
 * the jmp are left, and nothing runs them. Returns 0 (stub->whole and stub->len
 * set), 1 (refused: stub->reason) or -1.
 */
static int stub_whole(csh h, const uint8_t *code, size_t len, const struct insn_gap *gap,
		      struct insn_stub *stub)
{
	cs_insn *in = NULL;
	size_t n, sum = 0, cover = 0;
	const char *why = NULL;

	if (len > WHOLE_MAX)
		return stub_refuse(stub, no_pad);
	n = cs_disasm(h, code, len, stub->addr, 0, &in);
	for (size_t k = 0; k < n; k++)
		sum += in[k].size;
	if (sum != len || !n)
		why = "routine not fully decodable";
	for (size_t k = 0; !why && k < n; k++) {
		int mb = movable_branch(&in[k]);
		uint64_t t;
		size_t j = 0;

		if (cover < 5)
			cover += in[k].size;
		if (!is_control(&in[k]))
			continue;
		if (in[k].id == X86_INS_RET)
			continue;
		if (mb < 0 || mb > 16) {
			why = "a branch lands inside the first 5 bytes, and a call or an indirect "
			      "branch in the routine";
			break;
		}
		t = (uint64_t)in[k].detail->x86.operands[0].imm;
		while (j < n && in[j].address != t)
			j++;
		if (j == n)
			why = "a branch lands inside the first 5 bytes, and one leaves the routine";
	}
	cs_free(in, n);
	if (!why && gap && gap->near && gap->near_len) {
		/* the code before it may enter it anywhere but at its entry */
		struct insn_stub body = *stub;
		cs_insn *it = cs_malloc(h);

		if (!it)
			return -1;
		body.len = (unsigned)len;
		if (branch_inside(h, it, gap->near, gap->near_len, gap->near_addr, false, &body))
			why = "a branch lands inside the first 5 bytes, and other code enters it";
		cs_free(it, 1);
	}
	if (why)
		return stub_refuse(stub, why);
	stub->whole = (unsigned)len;
	stub->len = (unsigned)cover;
	stub->reason = NULL;
	return 0;
}

/*
 * The plain continuation: registers back, the first `body` bytes of
 * covered instructions moved (relocated; all of them but for a tiny
 * routine, whose padding is not moved), a jmp back after them; then the
 * jmp that enters the stub.
 */
static int stub_tail(struct insn_stub *stub, size_t pos, const cs_insn *in, const uint8_t *code,
		     size_t body, uint64_t stub_addr, bool hooked_page)
{
	uint64_t back_from;
	int64_t d;
	int disp_at;

	/* from here, what the code reaches from the stub counts (insn_stub_move) */
	stub->placed = true;
	stub->plain_off = (unsigned)pos;
	if (hooked_page) /* entered from the stop too: RAX, RDX, r10 as they were */
		emit(stub, &pos, plain_page, sizeof(plain_page));
	emit(stub, &pos, restore, sizeof(restore));
	if (stub->whole && whole_tail(stub, &pos, code, stub_addr))
		return 1;
	for (size_t k = 0, moved = 0; !stub->whole && moved < body; k++) {
		int cond = is_control(&in[k]) ? movable_branch(&in[k]) : -1;

		if (pos + in[k].size + 6 + 5 > INSN_STUB_SIZE)
			return stub_refuse(stub, "instructions too long for the stub");
		if (cond == 17) {
			/*
			 * A call: its own return address pushed (the routine's code
			 * after it, so that the callee and any unwinder see the
			 * routine), then a jmp to the callee. RAX and the flags kept.
			 *   push %rax; movabs $ret,%rax; xchg %rax,(%rsp); jmp target
			 */
			static const uint8_t xchg[] = {0x48, 0x87, 0x04, 0x24};
			uint64_t target = (uint64_t)in[k].detail->x86.operands[0].imm;
			uint64_t ret = in[k].address + in[k].size;

			if (pos + 20 + 5 > INSN_STUB_SIZE)
				return stub_refuse(stub, "instructions too long for the stub");
			d = (int64_t)(target - (stub_addr + pos + 20));
			if (!fits32(d))
				return stub_refuse(stub, "call target out of range of the stub");
			stub->code[pos] = 0x50;
			stub->code[pos + 1] = 0x48;
			stub->code[pos + 2] = 0xb8;
			memcpy(stub->code + pos + 3, &ret, 8);
			insn_stub_rel(stub, pos + 3, INSN_REL_CODE64);
			memcpy(stub->code + pos + 11, xchg, sizeof(xchg));
			stub->code[pos + 15] = 0xe9;
			put_le32(stub->code + pos + 16, (int32_t)d);
			insn_stub_rel(stub, pos + 16, INSN_REL_CODE32);
			pos += 20;
			moved += in[k].size;
			stub->call_ret = ret;
			continue;
		}
		if (cond >= 0) {
			/* jcc rel32 (0f 8x) or jmp rel32 (e9) to the branch's own target */
			uint64_t target = (uint64_t)in[k].detail->x86.operands[0].imm;
			unsigned n = cond == 16 ? 5 : 6;

			d = (int64_t)(target - (stub_addr + pos + n));
			if (!fits32(d))
				return stub_refuse(stub, "branch target out of range of the stub");
			if (cond == 16) {
				stub->code[pos] = 0xe9;
			} else {
				stub->code[pos] = 0x0f;
				stub->code[pos + 1] = (uint8_t)(0x80 | cond);
			}
			put_le32(stub->code + pos + n - 4, (int32_t)d);
			insn_stub_rel(stub, pos + n - 4, INSN_REL_CODE32);
			pos += n;
			moved += in[k].size;
			continue;
		}
		if (relocate(&in[k], code + moved, stub_addr + pos, stub->code + pos, &disp_at))
			return stub_refuse(stub, "an instruction that cannot be moved");
		if (disp_at >= 0)
			insn_stub_rel(stub, pos + (size_t)disp_at, INSN_REL_CODE32);
		pos += in[k].size;
		moved += in[k].size;
	}
	back_from = stub_addr + pos + 5;
	d = (int64_t)(stub->addr + (stub->whole ? stub->whole : stub->len) - back_from);
	if (!fits32(d))
		return stub_refuse(stub, "jump back out of range");
	stub->code[pos] = 0xe9;
	put_le32(stub->code + pos + 1, (int32_t)d);
	insn_stub_rel(stub, pos + 1, INSN_REL_CODE32);
	stub->code_len = (unsigned)(pos + 5);

	/* The jmp to the stub, the rest of the covered bytes int3. */
	if (insn_stub_retarget(stub, stub_addr))
		return stub_refuse(stub, "stub out of range");
	return 0;
}

_Static_assert(INSN_STUB_SIZE <= 0x1000, "a stub's offsets outgrew insn_stub.rel's 12 bits");

static void add_le64(uint8_t *p, uint64_t d)
{
	uint64_t v;

	memcpy(&v, p, 8);
	v += d;
	memcpy(p, &v, 8);
}

int insn_stub_move(struct insn_stub *stub, const struct insn_place *from,
		   const struct insn_place *to)
{
	const uint64_t dcode = to->bias - from->bias;
	/* a rel32 from the stub into the image: both ends move */
	const int64_t drel = (int64_t)(dcode - (to->stub - from->stub));
	const uint32_t dpatch = to->patch - from->patch;
	uint32_t u;

	if (stub->n_rel > INSN_REL_MAX || stub->code_len > sizeof(stub->code))
		return 1;
	for (unsigned i = 0; i < stub->n_rel; i++) {
		const enum insn_rel kind = INSN_REL_KIND(stub->rel[i]);
		const unsigned off = INSN_REL_OFF(stub->rel[i]);
		uint8_t *p = stub->code + off;
		int64_t v;

		if (off + (kind == INSN_REL_CODE32 ? 4u : 8u) > stub->code_len)
			return 1;
		switch (kind) {
		case INSN_REL_CODE32:
			v = (int64_t)get_le32(p) + drel;
			if (!fits32(v))
				return 1;
			put_le32(p, (int32_t)v);
			break;
		case INSN_REL_CODE64:
			add_le64(p, dcode);
			break;
		case INSN_REL_RETRAP64:
			add_le64(p, to->retrap - from->retrap);
			break;
		case INSN_REL_TRAMP64:
			add_le64(p, to->tramp - from->tramp);
			break;
		case INSN_REL_PAGE64:
			add_le64(p, to->page - from->page);
			break;
		case INSN_REL_EV32:
			memcpy(&u, p, 4);
			u += dpatch;
			memcpy(p, &u, 4);
			break;
		case INSN_REL_WORD64:
			add_le64(p, (uint64_t)to->patch - from->patch);
			break;
		case INSN_REL_CTR32: /* insn_plan_probe's refusal: no counter of its own */
			if (to->patch >= PROBE_CTR_N)
				return 1;
			memcpy(&u, p, 4);
			u += 8 * dpatch;
			memcpy(p, &u, 4);
			break;
		default:
			return 1;
		}
	}
	stub->addr += dcode;
	if (stub->pad_addr)
		stub->pad_addr += dcode;
	if (stub->call_ret)
		stub->call_ret += dcode;
	return insn_stub_retarget(stub, to->stub);
}

int insn_stub_retarget(struct insn_stub *stub, uint64_t to)
{
	int64_t d;

	if (stub->len > sizeof(stub->jmp))
		return 1;
	memset(stub->jmp, 0xcc, sizeof(stub->jmp));
	if (stub->pad_addr) {
		/* jmp rel8 to the padding, jmp rel32 there to the stub */
		int64_t d8 = (int64_t)(stub->pad_addr - (stub->addr + 2));

		d = (int64_t)(to - (stub->pad_addr + 5));
		if (d8 < INT8_MIN || d8 > INT8_MAX || !fits32(d))
			return 1;
		stub->jmp[0] = 0xeb;
		stub->jmp[1] = (uint8_t)(int8_t)d8;
		stub->pad[0] = 0xe9;
		put_le32(stub->pad + 1, (int32_t)d);
		return 0;
	}
	d = (int64_t)(to - (stub->addr + 5));
	if (!fits32(d))
		return 1;
	stub->jmp[0] = 0xe9;
	put_le32(stub->jmp + 1, (int32_t)d);
	return 0;
}

/*
 * Short entries: a branch of the routine lands in its first 5 bytes (a
 * loop back to its third instruction), so no 5-byte jmp fits there. The
 * whole instructions before the first such target, 2 bytes at least, take
 * a `jmp rel8` to 5 bytes of padding within reach, which take the `jmp
 * rel32` to the stub (as Dyninst and uftrace do). Padding is bytes that no
 * code runs: nops and int3s after an unconditional jump or a return that
 * no branch of the routine reaches (compilers align labels with them: a
 * branch or a jump table goes to the label after the padding), in the
 * routine or between the routine before it and its entry (insn_gap).
 */

#define SHORT_TARGETS 256 /* branch targets near the entry that a walk keeps */
#define SHORT_RUNS 16	  /* padding runs of the routine that a walk keeps */

struct short_scan {
	uint64_t addr;		   /* where the jmp rel8 goes (after an endbr64) */
	uint64_t first;		   /* the first branch target in (addr, addr + 5), 0: none */
	uint64_t t[SHORT_TARGETS]; /* branch targets near addr */
	size_t nt;
	bool overflow;		     /* more targets than t holds: no padding is sure */
	uint64_t run[SHORT_RUNS][2]; /* padding runs [start, end), 5 bytes at least */
	size_t nr;
	bool ended; /* the last instruction walked does not fall through */
};

static void short_run(struct short_scan *sc, uint64_t start, uint64_t end, bool runs)
{
	if (runs && end - start >= 5 && sc->nr < SHORT_RUNS) {
		sc->run[sc->nr][0] = start;
		sc->run[sc->nr][1] = end;
		sc->nr++;
	}
}

/*
 * Walk code[0..len) at a: note the branch targets near sc->addr, the first
 * one inside the entry's 5 bytes, and (runs) the padding runs. Returns
 * false when it is not fully decodable.
 */
static bool short_walk(csh h, cs_insn *it, const uint8_t *code, size_t len, uint64_t a,
		       struct short_scan *sc, bool runs, bool open_end)
{
	uint64_t rs = 0, end = a + len;

	sc->ended = false;
	while (len) {
		uint64_t at = a, t;
		struct x86_ld d;

		if (!walk_step(h, it, &code, &len, &a, &d)) {
			if (!open_end || !(sc->ended || rs || len < 15))
				return false;
			end = a; /* an end that was a guess: the code stops here */
			break;
		}
		if ((d.flags & X86_LD_PAD) && (sc->ended || rs)) {
			if (!rs)
				rs = at;
			continue;
		}
		if (rs)
			short_run(sc, rs, at, runs);
		rs = 0;
		sc->ended = d.flags & X86_LD_ENDS;
		if (!(d.flags & X86_LD_BRANCH))
			continue;
		t = d.target;
		if (t > sc->addr && t < sc->addr + 5 && (!sc->first || t < sc->first))
			sc->first = t;
		if (t + 256 > sc->addr && t < sc->addr + 256) {
			if (sc->nt == SHORT_TARGETS)
				sc->overflow = true;
			else
				sc->t[sc->nt++] = t;
		}
	}
	if (rs)
		short_run(sc, rs, end, runs);
	sc->ended = sc->ended || rs;
	return true;
}

/* Can [start, end) take the 5 bytes of padding? The place in *pad (0: no). */
static void short_pick(const struct short_scan *sc, uint64_t start, uint64_t end, bool at_end,
		       uint64_t *pad)
{
	uint64_t lo = sc->addr + 2 - 128, hi = sc->addr + 2 + 127, p;

	*pad = 0;
	if (end - start < 5 || sc->overflow)
		return;
	p = at_end ? end - 5 : (start > lo ? start : lo);
	if (p < start || p + 5 > end || p < lo || p > hi)
		return;
	for (size_t i = 0; i < sc->nt; i++)
		if (sc->t[i] >= start && sc->t[i] < end)
			return; /* something runs there */
	*pad = p;
}

/* The gap before the entry: the routine's end, then padding only. Its place in *pad. */
static void short_gap(csh h, cs_insn *it, const struct insn_gap *gap, uint64_t entry,
		      struct short_scan *sc, uint64_t *pad)
{
	const uint8_t *code;
	size_t left;
	uint64_t a;

	*pad = 0;
	if (!gap || !gap->bytes || gap->code_len == 0 || gap->code_len + 5 > gap->len ||
	    gap->addr + gap->len != entry ||
	    !short_walk(h, it, gap->bytes, gap->code_len, gap->addr, sc, false, false) ||
	    !sc->ended)
		return;
	code = gap->bytes + gap->code_len;
	left = gap->len - gap->code_len;
	a = gap->addr + gap->code_len;
	while (left)
		if (!cs_disasm_iter(h, &code, &left, &a, it) || !is_pad(it))
			return;
	short_pick(sc, gap->addr + gap->code_len, entry, true, pad);
}

/*
 * The short entry of the routine code[0..left) at stub->addr, whose first
 * instructions are in[0..n). Returns 0 (stub->len and pad_addr set), 1
 * (refused: stub->reason) or -1.
 */
static int stub_short(csh h, const cs_insn *in, size_t n, const uint8_t *code, size_t left,
		      uint64_t entry, const struct insn_gap *gap, struct insn_stub *stub)
{
	struct short_scan *sc = calloc(1, sizeof(*sc));
	cs_insn *it = cs_malloc(h);
	const char *why = NULL;
	uint64_t pad = 0;
	unsigned len = 0;

	if (!sc || !it) {
		free(sc);
		if (it)
			cs_free(it, 1);
		return -1;
	}
	sc->addr = stub->addr;
	if (gap && gap->near && gap->near_len &&
	    !short_walk(h, it, gap->near, gap->near_len, gap->near_addr, sc, false, false))
		why = "the code before it not fully decodable";
	else if (!short_walk(h, it, code, left, stub->addr, sc, true, gap && gap->open_end))
		why = "routine not fully decodable";
	else if (!sc->first)
		why = stub->reason; /* nothing lands inside: the first reason stands */
	for (size_t k = 0; !why && k < n && stub->addr + len < sc->first; k++) {
		if (is_control(&in[k]))
			why = among_first;
		len += in[k].size;
	}
	if (!why && (len < 2 || stub->addr + len != sc->first))
		why = lands_inside;
	if (!why) {
		short_gap(h, it, gap, entry, sc, &pad);
		for (size_t i = 0; !pad && i < sc->nr; i++)
			short_pick(sc, sc->run[i][0], sc->run[i][1], false, &pad);
		if (!pad)
			why = no_pad;
	}
	cs_free(it, 1);
	free(sc);
	if (why)
		return stub_refuse(stub, why);
	stub->len = len;
	stub->pad_addr = pad;
	stub->reason = NULL;
	return 0;
}

/*
 * A routine shorter than the jmp, code[0..own) at stub->addr, with the
 * padding code[own..left) after it (insn_gap.tail): straight-line code
 * that ends by a return or a jump (xor %eax,%eax; ret; a load and a ret)
 * and padding (nop, int3) up to 5 bytes at least. The jmp covers both; the
 * whole routine runs in its stub. Returns 0 (stub->len set), 1 (refused:
 * stub->reason) or -1.
 */
static int stub_tiny(csh h, const uint8_t *code, size_t own, size_t left, struct insn_stub *stub)
{
	cs_insn *it = cs_malloc(h);
	const uint8_t *c = code;
	uint64_t a = stub->addr;
	size_t n = own;
	const char *why = NULL;
	bool ended = false;

	if (!it)
		return -1;
	while (n && !why) {
		int mb;

		if (!cs_disasm_iter(h, &c, &n, &a, it)) {
			why = "routine not fully decodable";
			break;
		}
		mb = movable_branch(it);
		if (is_control(it) && !(mb >= 0 && mb <= 16) && it->id != X86_INS_RET &&
		    !(is_indirect_jmp(it) && !n))
			why = "a routine shorter than a jmp, with a call or trap";
		else if (mb >= 0 && (uint64_t)it->detail->x86.operands[0].imm > stub->addr &&
			 (uint64_t)it->detail->x86.operands[0].imm < stub->addr + 5)
			why = lands_inside;
		ended = ends_flow(it) || is_indirect_jmp(it);
	}
	if (!why && !ended)
		why = "a routine shorter than a jmp that runs on into what follows it";
	/* the padding after it, up to the jmp's 5 bytes */
	n = left - own;
	while (!why && (size_t)(a - stub->addr) < 5) {
		if (!n || !cs_disasm_iter(h, &c, &n, &a, it) || !is_pad(it))
			why = "a routine shorter than a jmp, without padding after it";
	}
	cs_free(it, 1);
	if (why)
		return stub_refuse(stub, why);
	stub->len = 5;
	return 0;
}

/*
 * How many instructions of code[0..len) at addr start within its first 5
 * bytes (lendec's count; 12 when it does not know one of them, as many as
 * capstone was always asked for).
 */
static size_t first_insns(const uint8_t *code, size_t len, uint64_t addr)
{
	struct x86_ld d;
	size_t at = 0, k = 0;

	while (at < 5 && at < len) {
		if (!x86_lendec(code + at, len - at, addr + at, &d) || d.len == 0)
			return 12;
		at += d.len;
		k++;
	}
	return k ? k : 1;
}

int insn_plan_stub(const uint8_t *fn, size_t fn_len, uint64_t entry, uint64_t stub_addr,
		   uint64_t retrap, uint64_t page, uint32_t ev, const struct insn_gap *gap,
		   struct insn_stub *stub)
{
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa};
	size_t off = 0, n, pos = 0, own, body;
	cs_insn *in = NULL;
	csh h;
	int rc;

	if (!fn || !stub)
		return -1;
	memset(stub, 0, sizeof(*stub));
	if (x86_cs_get(&h) < 0)
		return -1;
	/* the routine's own bytes: fn less the padding after it */
	own = gap && gap->tail < fn_len ? fn_len - gap->tail : fn_len;
	if (own >= sizeof(endbr64) && !memcmp(fn, endbr64, sizeof(endbr64)))
		off = sizeof(endbr64);
	stub->addr = entry + off;
	/*
	 * The instructions that start in the first 5 bytes, kept for moving:
	 * nothing after them is moved (the jmp covers at most those). lendec
	 * counts them; capstone, which formats every instruction's text, then
	 * decodes only those (it was a dozen: a quarter of fortstat's time
	 * under -f gcc, 26,000 routines of cc1 planned at each exec).
	 */
	n = first_insns(fn + off, fn_len - off < 64 ? fn_len - off : 64, stub->addr);
	n = cs_disasm(h, fn + off, fn_len - off < 64 ? fn_len - off : 64, stub->addr, n, &in);
	if (n == 0)
		return stub_refuse(stub, "undecodable code");
	if (own - off < 5) { /* shorter than the jmp: across it and its padding, if any */
		rc = stub_tiny(h, fn + off, own - off, fn_len - off, stub);
		body = own - off;
	} else {
		rc = stub_cover(in, n, stub);
		body = 0;
	}
	if (!rc)
		rc = stub_no_branch_inside(h, fn + off, own - off, gap, stub);
	/* A branch lands inside the 5 bytes: a short jmp to padding, if any */
	if (rc == 1 && !body && (stub->reason == lands_inside || stub->reason == among_first))
		rc = stub_short(h, in, n, fn + off, own - off, entry, gap, stub);
	/* no padding: the whole routine into its stub, if it is small */
	if (rc == 1 && !body && stub->reason == no_pad)
		rc = stub_whole(h, fn + off, own - off, gap, stub);
	if (!rc) {
		stub_head(stub, &pos, retrap, page, ev);
		/* counting: nothing to hook, the plain path follows the stop */
		if (retrap)
			rc = stub_hook(stub, &pos, retrap, page);
	}
	if (!rc)
		rc = stub_tail(stub, pos, in, fn + off, body ? body : stub->len, stub_addr,
			       page && retrap);
	cs_free(in, n);
	return rc;
}

/*
 * The return trap and a return site's trap address the event page through
 * r11, and put it back from the dead stack below RSP (the return address's
 * slot) before the program goes on: a call does not always clobber it. GCC
 * at -O2 (-fipa-ra) keeps values in r11 (or RAX, RDX, ...) across a call
 * to a routine of the same unit that it knows leaves them alone, a leaf
 * routine that the tracer times among them.
 */
size_t insn_return_trap(uint64_t page, uint8_t *code)
{
	static const uint8_t tail[] = {
	    0x49, 0x89, 0x63, 0x08,			    /* mov %rsp,0x8(%r11) */
	    0x41, 0xc7, 0x43, 0x10, 0xff, 0xff, 0xff, 0xff, /* movl $-1,0x10(%r11) */
	    0x4c, 0x8b, 0x5c, 0x24, 0xf8,		    /* mov -0x8(%rsp),%r11 */
	    0xcc,					    /* int3 */
	};
	size_t pos = 0;

	if (!page) {
		code[0] = 0xcc;
		return 1;
	}
	memcpy(code, r11_save, sizeof(r11_save));
	pos += sizeof(r11_save);
	code[pos++] = 0x49; /* movabs $page,%r11 */
	code[pos++] = 0xbb;
	memcpy(code + pos, &page, 8);
	pos += 8;
	memcpy(code + pos, tail, sizeof(tail));
	return pos + sizeof(tail);
}

void insn_rsite_code(uint64_t page, uint64_t ret, uint8_t *code)
{
	static const uint8_t mid[] = {
	    0x49, 0x89, 0x63, 0x08,			    /* mov %rsp,0x8(%r11) */
	    0x41, 0xc7, 0x43, 0x10, 0xfe, 0xff, 0xff, 0xff, /* movl $EV_RETURN_SITE,0x10(%r11) */
	};
	static const uint8_t jmp_back[] = {0xff, 0x25, 0x00, 0x00, 0x00, 0x00}; /* jmp *0(%rip) */
	size_t pos = 0;

	memset(code, 0xcc, INSN_RSITE_SIZE);
	memcpy(code + pos, r11_save, sizeof(r11_save));
	pos += sizeof(r11_save);
	code[pos++] = 0x49; /* movabs $page,%r11 */
	code[pos++] = 0xbb;
	memcpy(code + pos, &page, 8);
	pos += 8;
	memcpy(code + pos, mid, sizeof(mid));
	pos += sizeof(mid);
	/* RAX and RDX (the return value) kept below RSP, after r11: dead stack at a return site */
	pos += tsc_before(code + pos, 11, -0x10); /* its int3 at INSN_RSITE_TRAP */
	pos += tsc_after(code + pos, 11, -0x10);
	memcpy(code + pos, restore, sizeof(restore)); /* r11 as the routine left it */
	pos += sizeof(restore);
	memcpy(code + pos, jmp_back, sizeof(jmp_back));
	pos += sizeof(jmp_back);
	memcpy(code + pos, &ret, 8);
}
