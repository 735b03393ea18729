/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insn.h - how to run a routine's first instruction once an int3 sits on it
 * (capstone): copy it out of line, re-encode its RIP-relative displacement,
 * emulate it in the tracer, or refuse. Pure: works on byte strings.
 */
#ifndef FORTSTAT_INSN_H
#define FORTSTAT_INSN_H

#include <stddef.h>
#include <stdint.h>

#define INSN_SLOT_SIZE 32 /* bytes of scratch per out-of-line slot */

enum insn_kind {
	INSN_XOL,	/* run slot bytes (the copy, then a jmp back to addr+len) */
	INSN_CALL,	/* emulate: push addr+len, RIP = target */
	INSN_JMP,	/* emulate: RIP = target */
	INSN_JCC,	/* emulate: RIP = cond(eflags, rcx) ? target : addr+len */
	INSN_REFUSE,	/* cannot be handled: leave the routine unpatched */
};

struct insn_plan {
	enum insn_kind kind;
	uint64_t addr;	 /* where the patched instruction starts (after endbr64) */
	unsigned len;	 /* its length in bytes */
	uint64_t target; /* CALL/JMP/JCC: absolute target */
	int cond;	 /* JCC: the x86 condition code 0..15 (jo..jg), or 16 for jrcxz */
	uint8_t slot[INSN_SLOT_SIZE]; /* XOL: bytes to write at slot_addr */
	unsigned slot_len;
	const char *reason; /* REFUSE: why (static string) */
	char text[64];	    /* the instruction, disassembled (for -v) */
};

/*
 * Plan the patch of a routine at `entry` whose first bytes are code[0..len).
 * An endbr64 at entry is skipped: the plan patches the instruction after it
 * (plan->addr = entry + 4). `slot_addr` is where the XOL slot will live.
 * Returns 0 (plan filled, possibly INSN_REFUSE) or -1 if capstone fails to start.
 */
int insn_plan(const uint8_t *code, size_t len, uint64_t entry, uint64_t slot_addr,
	      struct insn_plan *plan);

/* Evaluate a JCC condition (0..15 as in the opcode's low nibble; 16: jrcxz). */
int insn_cond_true(int cond, uint64_t eflags, uint64_t rcx);

/*
 * Does the code just before a return address hold a call that returns to it?
 * `before` holds the `n` bytes that end at the return address. Returns 1/0.
 */
int insn_is_return_site(const uint8_t *before, size_t n);

/* Release capstone (optional at exit). */
void insn_cleanup(void);

#endif
