// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stubshort.c - the entries where a branch of the routine lands inside the
 * jmp's 5 bytes (insn_plan_stub's refusals x86_lands_inside and
 * x86_among_first): a short entry (x86_stub_short: a jmp rel8 to padding
 * within reach, which takes the jmp rel32) or, with no padding
 * (x86_no_pad), a small leaf routine moved whole into its stub
 * (x86_stub_whole). Each sets what the jmp covers (stub->len, pad_addr,
 * whole) and clears stub->reason, or refuses with a reason; stubcode.c
 * writes the code.
 */
#include "fortstat/insn.h"

#include <capstone/capstone.h>
#include <stdlib.h>

#include "insn_int.h"

/*
 * Short entries: a branch of the routine lands in its first 5 bytes (a
 * loop back to its third instruction), or an instruction that no stub can
 * run lies there (a syscall: short_fixed), so no 5-byte jmp fits there. The
 * whole instructions before the first such target (a relative jcc or jmp
 * among them moves, re-encoded as in any stub), 2 bytes at least, take
 * a `jmp rel8` to 5 bytes of padding within reach, which take the `jmp
 * rel32` to the stub (as Dyninst and uftrace do). Padding is bytes that no
 * code runs: nops and int3s after an unconditional jump or a return that
 * no branch of the routine reaches (compilers align labels with them: a
 * branch or a jump table goes to the label after the padding), in the
 * routine, between the routine before it and its entry (insn_gap), or
 * after its end when it does not run on (the first 5 bytes of 10 at least:
 * the routine after it may take the last 5 as its gap).
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

		if (!x86_walk_step(h, it, &code, &len, &a, &d)) {
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

#define TAIL_PAD 10 /* padding bytes after a routine's end that its short entry may share */

/*
 * The padding after a routine that ends at `end` (its last instruction does
 * not run on: sc->ended), code[0..len) there, up to the next routine known
 * (16 bytes at most): its first 5 bytes as a run when TAIL_PAD bytes at
 * least are padding, or 5 to TAIL_PAD when code follows them within
 * code[0..len): then no routine known starts after them (the tail ends at
 * the next one), so none takes their last 5 as the gap before its entry
 * (glibc's memcpy@GLIBC_2.2.5: 8 bytes, then memmove's unnamed code).
 */
static void short_tail(csh h, cs_insn *it, const uint8_t *code, size_t len, uint64_t end,
		       struct short_scan *sc)
{
	uint64_t a = end;
	bool code_after = false;

	if (!sc->ended || len < 5)
		return;
	while (a - end < TAIL_PAD) {
		uint64_t at = a;
		struct x86_ld d;

		if (!x86_walk_step(h, it, &code, &len, &a, &d))
			return;
		if (!(d.flags & X86_LD_PAD)) {
			a = at;
			code_after = true;
			break;
		}
	}
	if (a - end >= TAIL_PAD || (code_after && a - end >= 5))
		short_run(sc, end, end + 5, true);
}

/*
 * The first of in[0..n) (at addr) that no stub can run, a branch that does
 * not move (syscall, a call in the middle), past the first: the entry may
 * take a short jmp over those before it (glibc's __read_nocancel: xor
 * %eax,%eax; syscall). 0: none, or the first itself.
 */
static uint64_t short_fixed(const cs_insn *in, size_t n, uint64_t addr)
{
	for (size_t k = 0; k < n && in[k].address < addr + 5; k++) {
		int mb = movable_branch(&in[k]);

		if (is_control(&in[k]) && !(mb >= 0 && mb <= 16) && in[k].id != X86_INS_RET)
			return in[k].address > addr ? in[k].address : 0;
	}
	return 0;
}

/*
 * The short entry of the routine code[0..left) at stub->addr, whose first
 * instructions are in[0..n), with `tail` bytes after its end in
 * code[left..left + tail). Returns 0 (stub->len and pad_addr set), 1
 * (refused: stub->reason) or -1.
 */
int x86_stub_short(csh h, const cs_insn *in, size_t n, const uint8_t *code, size_t left,
		   size_t tail, uint64_t entry, const struct insn_gap *gap, struct insn_stub *stub)
{
	struct short_scan *sc = calloc(1, sizeof(*sc));
	cs_insn *it = cs_malloc(h);
	const char *why = NULL;
	uint64_t pad = 0;
	unsigned len = 0;
	bool by_fixed = false; /* sc->first is an instruction that cannot move */

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
	else {
		uint64_t fixed =
		    stub->reason == x86_among_first ? short_fixed(in, n, stub->addr) : 0;

		if (fixed && (!sc->first || fixed < sc->first)) {
			sc->first = fixed;
			by_fixed = true;
		}
		if (!sc->first)
			why = stub->reason; /* nothing lands inside: the first reason stands */
		else
			short_tail(h, it, code + left, tail, stub->addr + left, sc);
	}
	for (size_t k = 0; !why && k < n && stub->addr + len < sc->first; k++) {
		int mb = movable_branch(&in[k]);

		/* a relative jcc or jmp moves (re-encoded, as in any stub): test; jne */
		if (is_control(&in[k]) && !(mb >= 0 && mb <= 16))
			why = x86_among_first;
		len += in[k].size;
	}
	if (!why && (len < 2 || stub->addr + len != sc->first))
		why = x86_lands_inside;
	if (!why) {
		short_gap(h, it, gap, entry, sc, &pad);
		for (size_t i = 0; !pad && i < sc->nr; i++)
			short_pick(sc, sc->run[i][0], sc->run[i][1], false, &pad);
		if (!pad) /* no padding: the first reason stands where nothing lands inside */
			why = by_fixed ? stub->reason : x86_no_pad;
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
 * A small routine whose own branches land in its first 5 bytes (a loop
 * back to its second instruction) with no padding within reach: the whole
 * routine, code[0..len) at stub->addr, runs in its stub (one that runs on
 * at its end goes on there). Only a leaf whose branches all stay within it
 * (a branch out may go to a cold part that jumps back into the original),
 * and that no code before it enters (gap->near): its original bytes after
 * the jmp are left, and nothing runs them. Returns 0 (stub->whole and stub->len
 * set), 1 (refused: stub->reason) or -1.
 */
int x86_stub_whole(csh h, const uint8_t *code, size_t len, const struct insn_gap *gap,
		   struct insn_stub *stub)
{
	cs_insn *in = NULL;
	size_t n, sum = 0, cover = 0;
	const char *why = NULL;

	if (len > WHOLE_MAX)
		return stub_refuse(stub, x86_no_pad);
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
		if (x86_branch_inside(h, it, gap->near, gap->near_len, gap->near_addr, false,
				      &body))
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
