/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * insn.h - part of the arch seam (arch.h): the code fortstat puts into a
 * program, planned and generated from byte strings with capstone -- how a
 * routine's first instruction runs once an int3 sits on it (out of line,
 * re-encoded, emulated by the tracer, or refused), entry stubs, the return
 * trap and return sites' traps. No ptrace here: callers read and write the
 * bytes. x86-64: src/arch/x86_64/insn.c, stub*.c, walk.c, capstone.c.
 */
#ifndef FORTSTAT_INSN_H
#define FORTSTAT_INSN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fortstat/evabi.h"

#define INSN_SLOT_SIZE 32 /* bytes of scratch per out-of-line slot */

enum insn_kind {
	INSN_XOL,    /* run slot bytes (the copy, then a jmp back to addr+len) */
	INSN_CALL,   /* emulate: push addr+len, RIP = target */
	INSN_JMP,    /* emulate: RIP = target */
	INSN_JCC,    /* emulate: RIP = cond(eflags, rcx) ? target : addr+len */
	INSN_REFUSE, /* cannot be handled: leave the routine unpatched */
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

/*
 * The fast entry patch: a 5-byte `jmp` over the routine's first
 * instructions to a stub in scratch memory that does the return-address
 * swap itself, so that the entry stop costs the tracer no memory access and
 * no register write in the common case:
 *
 *   stub:  mov %r11,-8(%rsp)        (the red zone is the callee's at entry)
 *          mov (%rsp),%r11          (the return address, for the tracer)
 *          int3                     <- the entry stop (trap_off)
 *   hook:  lea RETRAP(%rip),%r11    the tracer resumes here: return hooked
 *          mov %r11,(%rsp)
 *   plain: mov -8(%rsp),%r11        ... or here (plain_off): not hooked
 *          <the displaced instructions, relocated>
 *          jmp back
 *
 * With an event page (below), timed: the stub also saves r10, RAX and RDX
 * in the red zone (-0x10, -0x18, -0x20), loads r10 with the page, writes
 * the stop's facts and t_trap there, and keeps r10 and the TSC through the
 * int3; after it, t_go and the hook pair go through r10 (the page, or the
 * thread's slot if the tracer set r10 at the stop), the hook is written
 * when the pair's key is the return address (else the common return trap),
 * and RAX, RDX, r10, r11 are restored (the plain path restores them too).
 * The flags are changed (a cmp): they are dead at a routine's entry.
 */
#define INSN_STUB_SIZE 704 /* bytes of scratch per stub (an in-process probe's too) */

#define INSN_REL_MAX 24 /* address-dependent values a stub keeps track of */

#define INSN_RSITE_SIZE 96 /* bytes of a return site's trap */
#define INSN_RSITE_TRAP 47 /* offset of its int3 */

struct insn_stub {
	uint64_t addr;	 /* where the jmp goes (after an endbr64) */
	unsigned len;	 /* bytes of whole instructions it covers (>= 5; >= 2 with pad_addr) */
	uint8_t jmp[16]; /* bytes to write at addr (jmp, then int3 filler) */
	uint8_t code[INSN_STUB_SIZE]; /* the stub, for stub_addr */
	unsigned code_len;
	unsigned trap_off;     /* offset of the int3 in the stub */
	unsigned plain_off;    /* offset of the continuation that leaves [rsp] alone */
	unsigned full_off;     /* a probe: RIP's offset at its full ring's stop (0: none) */
	unsigned throttle_off; /* a timed probe: its throttle flag (a byte; 1: count only) */
	/*
	 * A relative call that ends the covered bytes is emulated by the stub
	 * (its return address pushed, a jmp to the callee): the return
	 * address, addr + len, is a return site although the bytes before it
	 * are the jmp now (0: no call emulated).
	 */
	uint64_t call_ret;
	/*
	 * A short entry (a branch lands in the first 5 bytes, len < 5): the
	 * jmp at addr is a 2-byte `jmp rel8` to pad_addr, padding that no
	 * code runs (between routines, or after an unconditional jump within
	 * the routine), where pad[] (a 5-byte `jmp rel32` to the stub) goes.
	 * 0: none, the jmp at addr reaches the stub itself.
	 */
	uint64_t pad_addr;
	uint8_t pad[5];
	/*
	 * A branch of the routine lands in its first 5 bytes and no padding
	 * is within reach: a small routine runs whole in its stub (this many
	 * bytes at addr; 0: not), its branches re-aimed at the copy.
	 */
	unsigned whole;
	/*
	 * Where code[] depends on addresses, for insn_stub_move: each an
	 * offset in code[] and what is there (INSN_REL_OFF, INSN_REL_KIND);
	 * n_rel > INSN_REL_MAX: more than rel[] holds, the stub cannot move.
	 */
	uint16_t rel[INSN_REL_MAX];
	unsigned n_rel;
	/*
	 * Refused at or after the first check of a displacement's reach: at
	 * other addresses the plan may differ. Before it (decoding, the
	 * shape), a refusal holds wherever the code and the stub lie.
	 */
	bool placed;
	const char *reason; /* why not (when insn_plan_stub returns 1) */
};

/* What insn_stub.rel[] notes (INSN_REL_KIND), at INSN_REL_OFF in code[]. */
enum insn_rel {
	INSN_REL_CODE32 = 1, /* rel32 from the stub to the routine's image (code or data) */
	INSN_REL_CODE64,     /* an address in the routine's image (a call's return address) */
	INSN_REL_RETRAP64,   /* the return trap's address */
	INSN_REL_TRAMP64,    /* the probes' trampoline's address */
	INSN_REL_PAGE64,     /* the event page's address */
	INSN_REL_EV32,	     /* the event page's event number: patch number + 1 */
	INSN_REL_WORD64,     /* a probe's event word: PROBE_W_ENTRY or _EXIT | patch number */
	INSN_REL_CTR32,	     /* a probe's counter: PROBE_CTR + 8 * patch number */
};
#define INSN_REL_OFF(x) (0xfffu & (unsigned)(x))
#define INSN_REL_KIND(x) ((enum insn_rel)((unsigned)(x) >> 12))

/* Note that code[off] holds a value of this kind (a stub's planning). */
static inline void insn_stub_rel(struct insn_stub *stub, size_t off, enum insn_rel kind)
{
	if (stub->n_rel < INSN_REL_MAX)
		stub->rel[stub->n_rel++] = (uint16_t)(off | (unsigned)kind << 12);
	else
		stub->n_rel = INSN_REL_MAX + 1;
}

/*
 * The addresses a stub is planned for: the bias its routine's image is
 * loaded at (every address of the image moves with it), the stub's own,
 * the return trap, the probes' trampoline and the event page (0: none);
 * and its patch number (a library's differs in each program that loads it).
 */
struct insn_place {
	uint64_t bias, stub, retrap, tramp, page;
	uint32_t patch;
};

/*
 * A stub planned for `from` (insn_plan_stub, insn_plan_probe: returned 0)
 * made the one planning would make for `to`, the same image's code at
 * another bias, its bytes the same: its displacements, addresses, patch
 * number and the entry's jmp redone. The shape is the same wherever the
 * code lies; only the reach of a displacement may not be. Returns 0, or 1
 * when one no longer reaches, or a probe's patch number has no counter
 * (the stub is then half moved: plan it again).
 */
int insn_stub_move(struct insn_stub *stub, const struct insn_place *from,
		   const struct insn_place *to);

/*
 * The routine before an entry, and the bytes after it up to the entry:
 * bytes[0..code_len) its code (code_len: its size), bytes[code_len..len)
 * belong to no routine (the caller's symbol table said so). When it ends
 * with an unconditional jump and the rest is padding (nop, int3) that
 * none of its branches reaches, the padding may take a short entry's
 * jmp rel32 (insn_stub.pad_addr).
 */
struct insn_gap {
	uint64_t addr;	      /* where bytes[0] is: the routine's start */
	const uint8_t *bytes; /* up to the entry: len = entry - addr */
	size_t code_len, len;
	/*
	 * Other code whose branches may land in the routine's first bytes:
	 * near[0..near_len) at near_addr, starting on an instruction, walked
	 * for its branch targets only (near_len 0: none). An indirect
	 * function's target has no symbol of its own: the entry points of its
	 * file before it jump into its body (glibc's mempcpy to memmove's
	 * second instruction).
	 */
	uint64_t near_addr;
	const uint8_t *near;
	size_t near_len;
	/*
	 * fn's end is a guess (an indirect function's target: up to the next
	 * routine known, or the end of its mapping): the walks stop, with no
	 * refusal, at code they cannot decode after an instruction that does
	 * not fall through, or at an instruction cut by the end.
	 */
	bool open_end;
	/*
	 * The last `tail` bytes of fn belong to no routine: padding up to the
	 * next one. A routine shorter than the jmp (xor %eax,%eax; ret) takes
	 * it across itself and that padding, and runs whole in its stub.
	 */
	size_t tail;
};

/*
 * Plan the fast entry patch of the routine at `entry` whose code is
 * fn[0..fn_len) (the whole routine: no branch of it, nor of the code
 * before it in gap->near, may land inside the bytes the jmp covers).
 * `stub_addr` is where the stub will live, `retrap` the return trap (0:
 * counting only, no hook path: the stub goes on to its plain continuation
 * after the stop); with an event page at `page` (0: none) the stub reports
 * itself there as event `ev`. When a branch of the routine lands in its
 * first 5 bytes, the whole instructions before the first such target (2
 * bytes at least) take a `jmp rel8` to padding within reach: the
 * routine's own after an unconditional jump, or `gap` (NULL: none).
 * Returns 0 (planned), 1 (not possible: stub->reason; use insn_plan) or -1
 * when capstone fails to start.
 */
int insn_plan_stub(const uint8_t *fn, size_t fn_len, uint64_t entry, uint64_t stub_addr,
		   uint64_t retrap, uint64_t page, uint32_t ev, const struct insn_gap *gap,
		   struct insn_stub *stub);

/*
 * Point the entry's jmp (or a short entry's jmp rel32 in its padding) at
 * `to`. Returns 0, or 1 when it is out of range.
 */
int insn_stub_retarget(struct insn_stub *stub, uint64_t to);

/*
 * The return trap's code (at most 40 bytes into `code`): a bare int3, or
 * with an event page at `page`, RSP and INSN_EV_RETURN written there first
 * through r11, which is saved below RSP and restored before the int3 (every
 * register is the routine's at the stop). Returns its length; the int3 is
 * its last byte.
 */
size_t insn_return_trap(uint64_t page, uint8_t *code);

/*
 * The trap of return site `ret` (INSN_RSITE_SIZE bytes into `code`): it
 * writes RSP, INSN_EV_RETURN_SITE and the TSC to the event page at `page`,
 * stops on its int3 (at INSN_RSITE_TRAP), writes the TSC again (t_go), then
 * jumps to `ret` by itself. r11 (which addresses the page), RAX and RDX
 * (return values) are kept in the dead stack below RSP meanwhile and
 * restored before the jump: callers compiled with -fipa-ra may keep values
 * in registers that the ABI lets a call clobber. The flags are not touched.
 */
void insn_rsite_code(uint64_t page, uint64_t ret, uint8_t *code);

/* Evaluate a JCC condition (0..15 as in the opcode's low nibble; 16: jrcxz). */
int insn_cond_true(int cond, uint64_t eflags, uint64_t rcx);

/*
 * Does the code just before a return address hold a call that returns to it?
 * `before` holds the `n` bytes that end at the return address. Returns 1/0.
 */
int insn_is_return_site(const uint8_t *before, size_t n);

/*
 * Exit probes: the return instructions of a whole routine, fn[0..len) at
 * `addr`, found by a linear sweep (code without data inside, as Go's
 * compiler emits). Their addresses go to rets[0..*n_rets) (at most max).
 * Returns 0, 1 when the routine's exits cannot all be probed (*reason: it
 * is not fully decodable, leaves by a direct jump out of itself, returns
 * with `ret imm` or `iret`, or has more than max returns), -1 when
 * capstone fails to start.
 */
int insn_scan_exits(const uint8_t *fn, size_t len, uint64_t addr, uint64_t *rets, size_t max,
		    size_t *n_rets, const char **reason);

/*
 * An in-process probe (--probes, src/probe/stubs.c) for patch number
 * `patch` of the routine at `entry`: a fast path at stub_addr, then the
 * classic stub (insn_plan_stub with `retrap`, no page) as its slow path and
 * continuation. Timed (`counter` 0): the entry is recorded in the thread's
 * ring at its GS base (evabi.h), the original return address pushed on its
 * shadow stack and replaced by `tramp`; a tail call (the return address is
 * `tramp` already) is recorded with that address; with no area of its own,
 * or a full shadow stack, the thread takes the classic stub's int3. A full
 * ring: the thread sends itself SIGURG (tkill), whose stop (RIP at
 * full_off) the tracer takes to read the ring, and looks again; with no
 * tracer left (EV_ALIVE), the event is not recorded.
 * INSN_PROBE_COUNT: the thread's counter of the patch (PROBE_CTR)
 * incremented; a timed probe takes that path too once its throttle flag
 * (the byte at throttle_off, in the stub) is set. INSN_PROBE_ENTRY (a
 * routine that never returns: exit, longjmp): the entry recorded as a
 * timed one's, with its return address as it is, never hooked (no shadow
 * entry; the classic stub behind it hooks nothing either).
 * INSN_PROBE_ALLOC (an allocator, --alloc): hooked as a timed one, but its
 * entry event holds the call's first arguments, RDI in `ret` and RSI in
 * `tsc` (no TSC is read); the trampoline's return event holds RAX in `ret`.
 * INSN_PROBE_GO
 * (a Go routine, whose exits have probes of their own: insn_plan_go_exit):
 * as ENTRY, but the event holds the goroutine (R14) and the depth in its
 * stack (evabi.h's PROBE_W_EXIT).
 * Returns as insn_plan_stub.
 */
enum insn_probe_mode {
	INSN_PROBE_TIMED,
	INSN_PROBE_COUNT,
	INSN_PROBE_ENTRY,
	INSN_PROBE_ALLOC,
	INSN_PROBE_GO
};
int insn_plan_probe(const uint8_t *fn, size_t fn_len, uint64_t entry, uint64_t stub_addr,
		    uint64_t tramp, uint64_t retrap, uint32_t patch, enum insn_probe_mode mode,
		    const struct insn_gap *gap, struct insn_stub *stub);

/*
 * The return trampoline of in-process probes (at most INSN_PROBE_TRAMP_SIZE
 * bytes into `code`): pops the thread's shadow stack down to the entry of
 * the slot it returns through, records the return, and returns to the
 * original address; with no such entry it jumps to `retrap` (the classic
 * return trap) as a hooked return would have. *full_off: RIP at its full
 * ring's SIGURG. Returns its length. It also writes the
 * INSN_PROBE_TRAMP_CALL bytes before `code` (the caller leaves them free):
 * the `call` through which a hooked entry runs its routine, so that the
 * return address it pushes is the trampoline and the CPU predicts both
 * returns (the routine's to the trampoline, the trampoline's own).
 */
#define INSN_PROBE_TRAMP_SIZE 512
#define INSN_PROBE_TRAMP_CALL 4

/*
 * A Go routine's exit in process: a jmp over `cover` bytes at `addr`: its
 * epilogue, `len` bytes of whole instructions ending with a `ret` (none of
 * them a branch or a branch's target but the first: insn_go_exits), then
 * int3 padding up to `cover` if the epilogue is shorter than a jmp. The
 * epilogue moves into a stub at stub_addr (INSN_GO_EXIT_SIZE bytes at most
 * into `code`), which runs it, records the exit (PROBE_W_EXIT | patch, the
 * entry's patch) and returns; `jmp` gets what covers them (a jmp rel32,
 * int3s after it). A thread without an area stops at the int3 at
 * *trap_off (the tracer emulates the ret); a full ring's stop is at
 * *full_off. Returns 0, or 1 when the stub is out of a jmp's reach.
 */
#define INSN_GO_EXIT_SIZE 448
#define INSN_GO_EPILOGUE_MAX 16
int insn_plan_go_exit(const uint8_t *epi, size_t len, size_t cover, uint64_t addr,
		      uint64_t stub_addr, uint32_t patch, uint8_t *code, size_t *code_len,
		      uint8_t *jmp, unsigned *trap_off, unsigned *full_off);

/*
 * The exits of a Go routine (fn, len bytes at link address addr, then
 * `pad` bytes of int3 padding before the next routine) that can take an
 * in-process exit probe: for each of its `ret`s (rets[0..n), as
 * insn_scan_exits found them), where the epilogue that a jmp may cover
 * starts (starts[k]): whole instructions before the ret, at least 5 bytes
 * with it (or with the padding after the routine's last), at most
 * INSN_GO_EPILOGUE_MAX, none a branch, a call or RIP-relative, and none
 * but the first a branch's target or a call's return address. Returns 0,
 * 1 with *reason when one cannot (the routine's exits then trap), -1 if
 * capstone cannot start.
 */
int insn_go_exits(const uint8_t *fn, size_t len, size_t pad, uint64_t addr, const uint64_t *rets,
		  size_t n, uint64_t *starts, const char **reason);
size_t insn_probe_trampoline(uint64_t retrap, uint8_t *code, unsigned *full_off);

/* Release capstone (optional at exit). */
void insn_cleanup(void);

#endif
