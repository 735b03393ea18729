/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lendec.h - private to src/arch/x86_64/: a table-driven x86-64 length
 * decoder for the walks over a whole routine (walk.c), which capstone
 * makes slow (it formats every instruction's text).
 *
 * Contract: x86_lendec() answers only when it is sure, and then exactly as
 * capstone 4 (x86-64, detail on) and x86_walk_step would: the length, a
 * relative branch with an immediate target (capstone's
 * X86_GRP_BRANCH_RELATIVE with an immediate operand: jmp, jcc, call rel,
 * loop, loope, loopne, jrcxz, xbegin) and its absolute target, padding
 * (capstone's X86_INS_NOP or X86_INS_INT3: 90, 66 90, 0f 1f /0, cc) and
 * the end of the flow (X86_INS_JMP, X86_INS_RET, X86_INS_UD2: e9, eb,
 * ff /4, c3, c2, 0f 0b). Beyond capstone 4 it knows rdpkru and wrpkru
 * (0f 01 ee, 0f 01 ef, no prefix: three bytes, no operand: pkey_get,
 * pkey_set) and AVX-512 (EVEX in its maps 1 to 3, the mask registers'
 * instructions under VEX: glibc's EVEX string routines, which a CPU with
 * AVX-512 selects), none of them a branch. Anything else it is not sure
 * of (x87, rare groups and maps, odd prefixes on branches, XOP, AVX512-FP16,
 * truncated code) is "unknown": the caller decodes that instruction with
 * capstone. A wrong answer could hide a branch into the bytes a jmp
 * overwrites, so unknown is the rule for every doubt; tests/check_lendec.c
 * holds it against capstone over libc and cc1, and against GNU objdump
 * where capstone fails.
 */
#ifndef FORTSTAT_X86_LENDEC_H
#define FORTSTAT_X86_LENDEC_H

#include <stddef.h>
#include <stdint.h>

#define X86_LD_BRANCH 1u /* a relative branch: target set */
#define X86_LD_PAD 2u	 /* a nop or an int3 */
#define X86_LD_ENDS 4u	 /* jmp, ret, ud2: the next instruction is not reached from it */

struct x86_ld {
	unsigned len;	 /* 1..15 */
	unsigned flags;	 /* X86_LD_* */
	uint64_t target; /* the branch's absolute target (X86_LD_BRANCH) */
};

/*
 * Decode the instruction at code[0..left), which sits at address addr.
 * Returns its length (d filled), or 0: unknown (d undefined).
 */
unsigned x86_lendec(const uint8_t *code, size_t left, uint64_t addr, struct x86_ld *d);

#endif
