// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * scan.c - reading code that fortstat did not write (insn.h): a jcc's
 * condition against the flags, whether a call ends just before a return
 * address, a routine's exits (its ret instructions, for Go's exit probes, and
 * the epilogues an in-process exit probe's jmp may cover).
 */
#include "fortstat/insn.h"

#include <capstone/capstone.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "capstone_int.h"

/*
 * Evaluate a jcc condition against EFLAGS (cond 0..15, the opcode's low
 * nibble) or, for cond 16 (jrcxz), against RCX. Returns 1 if the branch is
 * taken, 0 if not (and 0 for an unknown cond).
 */
int insn_cond_true(int cond, uint64_t eflags, uint64_t rcx)
{
	int cf = (eflags >> 0) & 1, pf = (eflags >> 2) & 1, zf = (eflags >> 6) & 1;
	int sf = (eflags >> 7) & 1, of = (eflags >> 11) & 1;
	int r;

	if (cond == 16)
		return rcx == 0;
	if (cond < 0 || cond > 15)
		return 0;
	switch (cond >> 1) {
	case 0:
		r = of;
		break; /* jo / jno */
	case 1:
		r = cf;
		break; /* jb / jae */
	case 2:
		r = zf;
		break; /* je / jne */
	case 3:
		r = cf || zf;
		break; /* jbe / ja */
	case 4:
		r = sf;
		break; /* js / jns */
	case 5:
		r = pf;
		break; /* jp / jnp */
	case 6:
		r = sf != of;
		break; /* jl / jge */
	default:
		r = zf || sf != of;
		break; /* jle / jg */
	}
	return (cond & 1) ? !r : r;
}

static int is_legacy_prefix(uint8_t b)
{
	switch (b) {
	case 0x26:
	case 0x2e:
	case 0x36:
	case 0x3e: /* segment, notrack */
	case 0x64:
	case 0x65: /* fs, gs */
	case 0x66:
	case 0x67: /* operand, address size */
	case 0xf2: /* bnd */
		return 1;
	default:
		return 0;
	}
}

/*
 * Length of a near call (e8 rel32 or ff /2) starting at p[0..avail), or 0
 * if the bytes there are not one.
 */
static size_t call_len(const uint8_t *p, size_t avail)
{
	size_t i = 0, need;
	uint8_t modrm, mod, rm;

	while (i < avail && i < 4 && is_legacy_prefix(p[i]))
		i++;
	if (i < avail && (p[i] & 0xf0) == 0x40) /* REX */
		i++;
	if (i >= avail)
		return 0;
	if (p[i] == 0xe8)
		return i + 5;
	if (p[i] != 0xff || i + 1 >= avail)
		return 0;
	modrm = p[i + 1];
	if (((modrm >> 3) & 7) != 2)
		return 0;
	mod = modrm >> 6;
	rm = modrm & 7;
	need = i + 2;
	if (mod == 3)
		return need;
	if (rm == 4) { /* SIB */
		if (need >= avail)
			return 0;
		if (mod == 0 && (p[need] & 7) == 5)
			need += 4; /* no base: disp32 */
		need++;
	} else if (mod == 0 && rm == 5) {
		need += 4; /* RIP-relative disp32 */
	}
	if (mod == 1)
		need += 1;
	else if (mod == 2)
		need += 4;
	return need;
}

/*
 * Does a near call end exactly where the n bytes of `before` end (that is,
 * at a candidate return address)? Recognises e8 rel32 and every ff /2
 * form (register, memory, SIB, RIP-relative; REX, segment, notrack, bnd
 * and size prefixes). Returns 1 or 0. A heuristic: data can look like a
 * call, but a compiler-generated call is never missed.
 */
int insn_is_return_site(const uint8_t *before, size_t n)
{
	if (!before)
		return 0;
	/* A call is 2 to 15 bytes long; try every start. */
	for (size_t k = 2; k <= n && k <= 15; k++)
		if (call_len(before + n - k, k) == k)
			return 1;
	return 0;
}

int insn_scan_exits(const uint8_t *fn, size_t len, uint64_t addr, uint64_t *rets, size_t max,
		    size_t *n_rets, const char **reason)
{
	csh h;
	cs_insn *it;
	const uint8_t *code = fn;
	size_t left = len;
	uint64_t a = addr, end = addr + len;
	const char *why = NULL;

	*n_rets = 0;
	*reason = NULL;
	if (x86_cs_get(&h) < 0 || !(it = cs_malloc(h)))
		return -1;
	while (left && !why) {
		const cs_x86 *x;

		if (!cs_disasm_iter(h, &code, &left, &a, it)) {
			why = "not fully decodable";
			break;
		}
		x = &it->detail->x86;
		if (x86_has_group(it, X86_GRP_RET)) {
			if (it->id != X86_INS_RET || x->op_count != 0)
				why = "returns with `ret imm`";
			else if (*n_rets == max)
				why = "too many return instructions";
			else
				rets[(*n_rets)++] = it->address;
			continue;
		}
		if (x86_has_group(it, X86_GRP_IRET))
			why = "returns from an interrupt";
		else if (it->id == X86_INS_JMP && x->op_count == 1 &&
			 x->operands[0].type == X86_OP_IMM &&
			 ((uint64_t)x->operands[0].imm < addr ||
			  (uint64_t)x->operands[0].imm >= end))
			why = "leaves by a jump (a tail call)";
	}
	cs_free(it, 1);
	*reason = why;
	return why ? 1 : 0;
}

/* May instruction `it` run elsewhere than where it is, unchanged (an epilogue's)? */
static bool movable(const cs_insn *it)
{
	const cs_x86 *x = &it->detail->x86;

	if (x86_has_group(it, X86_GRP_JUMP) || x86_has_group(it, X86_GRP_CALL) ||
	    x86_has_group(it, X86_GRP_RET) || x86_has_group(it, X86_GRP_IRET) ||
	    x86_has_group(it, X86_GRP_INT) || it->id == X86_INS_INT3)
		return false;
	for (unsigned i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && x->operands[i].mem.base == X86_REG_RIP)
			return false;
	return true;
}

int insn_go_exits(const uint8_t *fn, size_t len, size_t pad, uint64_t addr, const uint64_t *rets,
		  size_t n, uint64_t *starts, const char **reason)
{
	csh h;
	cs_insn *it;
	const uint8_t *code = fn;
	size_t left = len;
	uint64_t a = addr;
	/* per byte: an instruction starts there (1), it may move (2), a branch lands there (4) */
	uint8_t *at;
	const char *why = NULL;

	*reason = NULL;
	if (!len || x86_cs_get(&h) < 0 || !(it = cs_malloc(h)))
		return -1;
	at = calloc(len + 1, 1);
	if (!at) {
		cs_free(it, 1);
		return -1;
	}
	while (left && !why) {
		const cs_x86 *x;
		size_t off;

		if (!cs_disasm_iter(h, &code, &left, &a, it)) {
			why = "not fully decodable";
			break;
		}
		off = (size_t)(it->address - addr);
		x = &it->detail->x86;
		at[off] |= (uint8_t)(1 | (movable(it) ? 2 : 0));
		if (x86_has_group(it, X86_GRP_JUMP)) {
			uint64_t t;

			if (x->op_count != 1 || x->operands[0].type != X86_OP_IMM) {
				why = "an indirect jump (a jump table): its targets are unknown";
				break;
			}
			t = (uint64_t)x->operands[0].imm;
			if (t >= addr && t < addr + len)
				at[t - addr] |= 4;
		}
		/* a return address: the runtime resumes goroutines there */
		if (x86_has_group(it, X86_GRP_CALL) && off + it->size <= len)
			at[off + it->size] |= 4;
	}
	for (size_t k = 0; k < n && !why; k++) {
		size_t r = (size_t)(rets[k] - addr), s = r;

		if (rets[k] < addr || r >= len || !(at[r] & 1)) {
			why = "a `ret` the walk did not find";
			break;
		}
		/* back over whole instructions until a jmp fits (or the padding after) */
		while (r + 1 - s < 5 && !(r + 1 == len && r + 1 - s + pad >= 5) && !why) {
			size_t p = s;

			if (at[s] & 4)
				why = "a branch lands in the epilogue a jmp at a `ret` would cover";
			while (!why && p > 0 && !(at[--p] & 1))
				;
			if (!why && (p == s || !(at[p] & 1) || !(at[p] & 2)))
				why = "the code before a `ret` cannot move (a branch, a call, "
				      "RIP-relative)";
			else if (!why)
				s = p;
			if (!why && r + 1 - s > INSN_GO_EPILOGUE_MAX)
				why = "an epilogue longer than a stub takes";
		}
		starts[k] = addr + s;
	}
	free(at);
	cs_free(it, 1);
	*reason = why;
	return why ? 1 : 0;
}
