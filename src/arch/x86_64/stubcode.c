// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * stubcode.c - the machine code of an entry stub once stubplan.c has
 * chosen what its jmp covers: the stop and its TSC (x86_stub_head), the
 * return address hooked (x86_stub_hook), the plain continuation with the
 * covered instructions moved and the jmp back (x86_stub_tail); and the
 * return trap and a return site's code (insn_return_trap,
 * insn_rsite_code). Every address in a stub that depends on where the
 * image, stub, trap or page lie is recorded with insn_stub_rel, so that
 * insn_stub_move (stubmove.c) can move it; stub->code never outgrows
 * INSN_STUB_SIZE (refused before).
 */
#include "fortstat/insn.h"

#include <capstone/capstone.h>
#include <string.h>

#include "insn_int.h"

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

/* Append n bytes to the stub's code at *pos (the fixed parts fit: see INSN_STUB_SIZE). */
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

/* The stub up to its int3: the stop's facts on the event page (with one), the TSC. */
void x86_stub_head(struct insn_stub *stub, size_t *pos, uint64_t retrap, uint64_t page, uint32_t ev)
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
int x86_stub_hook(struct insn_stub *stub, size_t *pos, uint64_t retrap, uint64_t page)
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
			if (x86_relocate(&in[k], code + (in[k].address - stub->addr),
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
		if (j == n) { /* x86_stub_whole saw to it */
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
 * The plain continuation: registers back, the first `body` bytes of
 * covered instructions moved (relocated; all of them but for a tiny
 * routine, whose padding is not moved), a jmp back after them; then the
 * jmp that enters the stub.
 */
int x86_stub_tail(struct insn_stub *stub, size_t pos, const cs_insn *in, const uint8_t *code,
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
		if (cond == 17 || is_movable_indirect_call(&in[k])) {
			/*
			 * A call (stub_cover: the last instruction moved): its own
			 * return address pushed (the routine's code after it, so
			 * that the callee and any unwinder see the routine), then a
			 * jmp to the callee, relative or through the call's own
			 * operand (ff /2 becomes ff /4). RAX and the flags kept.
			 *   push %rax; movabs $ret,%rax; xchg %rax,(%rsp); jmp target
			 */
			static const uint8_t xchg[] = {0x48, 0x87, 0x04, 0x24};
			const cs_x86 *x = &in[k].detail->x86;
			uint64_t ret = in[k].address + in[k].size;
			size_t jlen = cond == 17 ? 5 : in[k].size;

			if (pos + 15 + jlen + 5 > INSN_STUB_SIZE)
				return stub_refuse(stub, "instructions too long for the stub");
			stub->code[pos] = 0x50;
			stub->code[pos + 1] = 0x48;
			stub->code[pos + 2] = 0xb8;
			memcpy(stub->code + pos + 3, &ret, 8);
			insn_stub_rel(stub, pos + 3, INSN_REL_CODE64);
			memcpy(stub->code + pos + 11, xchg, sizeof(xchg));
			if (cond == 17) {
				uint64_t target = (uint64_t)x->operands[0].imm;

				d = (int64_t)(target - (stub_addr + pos + 20));
				if (!fits32(d))
					return stub_refuse(stub,
							   "call target out of range of the stub");
				stub->code[pos + 15] = 0xe9;
				put_le32(stub->code + pos + 16, (int32_t)d);
				insn_stub_rel(stub, pos + 16, INSN_REL_CODE32);
			} else {
				uint8_t *j = stub->code + pos + 15;

				if (x86_relocate(&in[k], code + moved, stub_addr + pos + 15, j,
						 &disp_at))
					return stub_refuse(stub,
							   "an instruction that cannot be moved");
				if (disp_at >= 0)
					insn_stub_rel(stub, pos + 15 + (size_t)disp_at,
						      INSN_REL_CODE32);
				j[x->encoding.modrm_offset] ^= (2 ^ 4) << 3; /* call -> jmp */
			}
			pos += 15 + jlen;
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
		if (x86_relocate(&in[k], code + moved, stub_addr + pos, stub->code + pos, &disp_at))
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

/* r11 kept below RSP, the event page's address in it: how both traps begin. */
static size_t r11_page(uint8_t *code, uint64_t page)
{
	size_t pos = 0;

	memcpy(code, r11_save, sizeof(r11_save));
	pos += sizeof(r11_save);
	code[pos++] = 0x49; /* movabs $page,%r11 */
	code[pos++] = 0xbb;
	memcpy(code + pos, &page, 8);
	return pos + 8;
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
	size_t pos;

	if (!page) {
		code[0] = 0xcc;
		return 1;
	}
	pos = r11_page(code, page);
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
	size_t pos;

	memset(code, 0xcc, INSN_RSITE_SIZE);
	pos = r11_page(code, page);
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
