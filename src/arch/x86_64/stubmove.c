// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stubmove.c - a planned entry stub moved to other addresses
 * (insn_stub_move: what the plan cache does at a PIE's later exec: each
 * relocation insn_stub_rel recorded shifted by where its kind moved, or 1
 * when one no longer fits) and the jmp that enters a stub aimed anew
 * (insn_stub_retarget, also the last step of a fresh plan).
 */
#include "fortstat/insn.h"

#include <string.h>

#include "insn_int.h"

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
