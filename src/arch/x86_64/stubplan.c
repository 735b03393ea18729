// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stubplan.c - insn_plan_stub: an entry stub planned for a routine (insn.h
 * says what the stub does). It decides which whole instructions the
 * entry's 5-byte jmp covers and refuses (stub->reason) when a branch of the
 * routine, or of the code before it (insn_gap), lands inside them, or one
 * among them cannot move; a routine shorter than the jmp runs in its stub
 * whole. When a branch lands inside, stubshort.c tries a short entry, then
 * the routine moved whole; stubcode.c writes the stub's code. The walks
 * over a whole routine are walk.c's.
 */
#include "fortstat/insn.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "insn_int.h"

/*
 * The whole instructions in[0..] that cover the jmp's 5 bytes. Branches
 * among them: a relative jcc or jmp anywhere (re-encoded with a 32-bit
 * displacement: test %edx,%edx; jne ...; xor %eax,%eax at an entry), a
 * `ret` anywhere (it runs in the stub as it would have in the routine);
 * an indirect jmp or a call only last (a call in the middle would return
 * into the stub, where no unwinder finds the routine): relative, or
 * through a register or memory that is not RSP's (GCC's `sub $8,%rsp;
 * call *targetm+N(%rip)` at the entry of its hooks' wrappers).
 */
static int stub_cover(const cs_insn *in, size_t n, struct insn_stub *stub)
{
	for (size_t k = 0; stub->len < 5 && k < n; k++) {
		bool last = stub->len + in[k].size >= 5;
		int mb = movable_branch(&in[k]);

		if (is_control(&in[k]) && !(mb >= 0 && mb <= 16) && in[k].id != X86_INS_RET &&
		    !(last &&
		      (is_indirect_jmp(&in[k]) || mb == 17 || is_movable_indirect_call(&in[k]))))
			return stub_refuse(stub, x86_among_first);
		stub->len += in[k].size;
	}
	return stub->len < 5 ? stub_refuse(stub, "routine shorter than a jmp") : 0;
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
		why =
		    x86_branch_inside(h, it, gap->near, gap->near_len, gap->near_addr, false, stub);
		if (why && why != x86_lands_inside)
			why = "the code before it not fully decodable";
	}
	if (!why)
		why = x86_branch_inside(h, it, code, left, stub->addr, gap && gap->open_end, stub);
	cs_free(it, 1);
	return why ? stub_refuse(stub, why) : 0;
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
			why = x86_lands_inside;
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
	if (rc == 1 && !body &&
	    (stub->reason == x86_lands_inside || stub->reason == x86_among_first))
		rc = x86_stub_short(h, in, n, fn + off, own - off, fn_len - own, entry, gap, stub);
	/* no padding: the whole routine into its stub, if it is small */
	if (rc == 1 && !body && stub->reason == x86_no_pad)
		rc = x86_stub_whole(h, fn + off, own - off, gap, stub);
	if (!rc) {
		x86_stub_head(stub, &pos, retrap, page, ev);
		/* counting: nothing to hook, the plain path follows the stop */
		if (retrap)
			rc = x86_stub_hook(stub, &pos, retrap, page);
	}
	if (!rc)
		rc = x86_stub_tail(stub, pos, in, fn + off, body ? body : stub->len, stub_addr,
				   page && retrap);
	cs_free(in, n);
	return rc;
}
