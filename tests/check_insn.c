// SPDX-License-Identifier: GPL-2.0-or-later
/* check_insn.c - Check suite for insn.c: plans, conditions, return sites. */
#include "fortstat/insn.h"

#include <check.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define ENTRY 0x401000ULL
#define SLOT 0x500000ULL
#define GIB 0x40000000ULL

static int32_t rd32(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
			 (uint32_t)p[3] << 24);
}

static void wr32(uint8_t *p, int32_t v)
{
	uint32_t u = (uint32_t)v;

	p[0] = u & 0xff;
	p[1] = (u >> 8) & 0xff;
	p[2] = (u >> 16) & 0xff;
	p[3] = (u >> 24) & 0xff;
}

/* Plan `code` (padded with nops so that capstone never runs short). */
static struct insn_plan plan_of(const uint8_t *code, size_t n, uint64_t entry, uint64_t slot)
{
	struct insn_plan p;
	uint8_t buf[32];

	ck_assert_uint_le(n, sizeof(buf));
	memset(buf, 0x90, sizeof(buf));
	memcpy(buf, code, n);
	ck_assert_int_eq(insn_plan(buf, sizeof(buf), entry, slot, &p), 0);
	return p;
}

#define PLAN(entry, slot, ...)                                                                     \
	({                                                                                         \
		static const uint8_t c_[] = {__VA_ARGS__};                                         \
		plan_of(c_, sizeof(c_), (entry), (slot));                                          \
	})

/* Check an XOL plan: slot = the bytes, (displacement untouched), jmp back. */
static void check_xol_tail(const struct insn_plan *p, uint64_t slot)
{
	ck_assert_int_eq(p->kind, INSN_XOL);
	ck_assert_uint_eq(p->slot_len, p->len + 5);
	ck_assert_uint_eq(p->slot[p->len], 0xe9);
	ck_assert_int_eq((int64_t)rd32(p->slot + p->len + 1),
			 (int64_t)((p->addr + p->len) - (slot + p->len + 5)));
	/* Executing the jmp lands just after the patched instruction. */
	ck_assert_uint_eq(slot + p->len + 5 + (int64_t)rd32(p->slot + p->len + 1),
			  p->addr + p->len);
}

START_TEST(xol_push_rbp)
{
	struct insn_plan p = PLAN(ENTRY, SLOT, 0x55, 0x48, 0x89, 0xe5);

	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.addr, ENTRY);
	ck_assert_uint_eq(p.len, 1);
	ck_assert_uint_eq(p.slot_len, 6);
	ck_assert_uint_eq(p.slot[0], 0x55);
	ck_assert_uint_eq(p.slot[1], 0xe9);
	/* 0x401001 - 0x500006 */
	ck_assert_int_eq(rd32(p.slot + 2), -0xff005);
	ck_assert_uint_eq(p.slot[2], 0xfb);
	ck_assert_uint_eq(p.slot[3], 0x0f);
	ck_assert_uint_eq(p.slot[4], 0xf0);
	ck_assert_uint_eq(p.slot[5], 0xff);
	ck_assert_ptr_nonnull(strstr(p.text, "push"));
	ck_assert_ptr_nonnull(strstr(p.text, "rbp"));
	check_xol_tail(&p, SLOT);

	/* Slot below the code: a positive jump back. */
	p = PLAN(ENTRY, 0x300000, 0x55);
	ck_assert_int_eq(rd32(p.slot + 2), 0x401001 - 0x300006);
	check_xol_tail(&p, 0x300000);
}
END_TEST

START_TEST(xol_endbr64)
{
	struct insn_plan p = PLAN(ENTRY, SLOT, 0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5);

	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.addr, ENTRY + 4);
	ck_assert_uint_eq(p.len, 1);
	ck_assert_uint_eq(p.slot[0], 0x55);
	ck_assert_int_eq(rd32(p.slot + 2), (int64_t)(ENTRY + 5) - (int64_t)(SLOT + 6));
	check_xol_tail(&p, SLOT);

	/* endbr64 then a call: the call is emulated from entry+4. */
	p = PLAN(ENTRY, SLOT, 0xf3, 0x0f, 0x1e, 0xfa, 0xe8, 0x10, 0x00, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_CALL);
	ck_assert_uint_eq(p.addr, ENTRY + 4);
	ck_assert_uint_eq(p.target, ENTRY + 4 + 5 + 0x10);

	/* endbr64 twice: the second one is an ordinary instruction. */
	p = PLAN(ENTRY, SLOT, 0xf3, 0x0f, 0x1e, 0xfa, 0xf3, 0x0f, 0x1e, 0xfa);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.addr, ENTRY + 4);
	ck_assert_uint_eq(p.len, 4);
	check_xol_tail(&p, SLOT);
}
END_TEST

START_TEST(xol_ordinary)
{
	static const uint8_t sub[] = {0x48, 0x83, 0xec, 0x18}; /* sub $0x18,%rsp */
	static const uint8_t movabs[] = {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8};
	struct insn_plan p = plan_of(sub, sizeof(sub), ENTRY, SLOT);

	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.len, 4);
	ck_assert_mem_eq(p.slot, sub, 4);
	check_xol_tail(&p, SLOT);
	ck_assert_ptr_nonnull(strstr(p.text, "sub"));

	p = plan_of(movabs, sizeof(movabs), ENTRY, SLOT);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.len, 10);
	ck_assert_mem_eq(p.slot, movabs, 10);
	check_xol_tail(&p, SLOT);

	/* ret, syscall, xor, nop: all run out of line. */
	p = PLAN(ENTRY, SLOT, 0xc3);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.len, 1);
	p = PLAN(ENTRY, SLOT, 0xc2, 0x08, 0x00);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.len, 3);
	p = PLAN(ENTRY, SLOT, 0x0f, 0x05);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.len, 2);
	p = PLAN(ENTRY, SLOT, 0x31, 0xc0);
	ck_assert_int_eq(p.kind, INSN_XOL);
	p = PLAN(ENTRY, SLOT, 0x90);
	ck_assert_int_eq(p.kind, INSN_XOL);
	check_xol_tail(&p, SLOT);
}
END_TEST

START_TEST(emulate_call)
{
	struct insn_plan p = PLAN(ENTRY, SLOT, 0xe8, 0x78, 0x56, 0x34, 0x12);

	ck_assert_int_eq(p.kind, INSN_CALL);
	ck_assert_uint_eq(p.len, 5);
	ck_assert_uint_eq(p.target, ENTRY + 5 + 0x12345678);

	p = PLAN(ENTRY, SLOT, 0xe8, 0xe0, 0xff, 0xff, 0xff);
	ck_assert_int_eq(p.kind, INSN_CALL);
	ck_assert_uint_eq(p.target, ENTRY + 5 - 0x20);

	/* High addresses: targets are full 64-bit. */
	p = PLAN(0x7ffff7fc1000ULL, SLOT, 0xe8, 0x00, 0x00, 0x00, 0x80);
	ck_assert_int_eq(p.kind, INSN_CALL);
	ck_assert_uint_eq(p.target, 0x7ffff7fc1005ULL - 0x80000000ULL);

	/* bnd call is still a call. */
	p = PLAN(ENTRY, SLOT, 0xf2, 0xe8, 0x10, 0x00, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_CALL);
	ck_assert_uint_eq(p.len, 6);
	ck_assert_uint_eq(p.target, ENTRY + 6 + 0x10);
}
END_TEST

START_TEST(emulate_jmp)
{
	struct insn_plan p = PLAN(ENTRY, SLOT, 0xeb, 0xfe);

	ck_assert_int_eq(p.kind, INSN_JMP);
	ck_assert_uint_eq(p.len, 2);
	ck_assert_uint_eq(p.target, ENTRY);

	p = PLAN(ENTRY, SLOT, 0xeb, 0x7f);
	ck_assert_int_eq(p.kind, INSN_JMP);
	ck_assert_uint_eq(p.target, ENTRY + 2 + 0x7f);

	p = PLAN(ENTRY, SLOT, 0xe9, 0x00, 0x10, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_JMP);
	ck_assert_uint_eq(p.len, 5);
	ck_assert_uint_eq(p.target, ENTRY + 5 + 0x1000);

	p = PLAN(ENTRY, SLOT, 0xe9, 0x00, 0xf0, 0xff, 0xff);
	ck_assert_int_eq(p.kind, INSN_JMP);
	ck_assert_uint_eq(p.target, ENTRY + 5 - 0x1000);

	/* bnd jmp (a PLT-style tail jump) is a plain jmp. */
	p = PLAN(ENTRY, SLOT, 0xf2, 0xe9, 0x00, 0x01, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_JMP);
	ck_assert_uint_eq(p.len, 6);
	ck_assert_uint_eq(p.target, ENTRY + 6 + 0x100);
}
END_TEST

START_TEST(emulate_jcc)
{
	for (int cc = 0; cc < 16; cc++) {
		uint8_t s[2] = {(uint8_t)(0x70 + cc), 0xf0}; /* rel8 -16 */
		uint8_t nr[6] = {0x0f, (uint8_t)(0x80 + cc), 0, 0, 0, 0};
		struct insn_plan p;

		p = plan_of(s, sizeof(s), ENTRY, SLOT);
		ck_assert_int_eq(p.kind, INSN_JCC);
		ck_assert_int_eq(p.cond, cc);
		ck_assert_uint_eq(p.len, 2);
		ck_assert_uint_eq(p.target, ENTRY + 2 - 16);
		ck_assert_uint_eq(p.slot_len, 0);

		s[1] = 0x22;
		p = plan_of(s, sizeof(s), ENTRY, SLOT);
		ck_assert_int_eq(p.kind, INSN_JCC);
		ck_assert_uint_eq(p.target, ENTRY + 2 + 0x22);

		wr32(nr + 2, 0x12345);
		p = plan_of(nr, sizeof(nr), ENTRY, SLOT);
		ck_assert_int_eq(p.kind, INSN_JCC);
		ck_assert_int_eq(p.cond, cc);
		ck_assert_uint_eq(p.len, 6);
		ck_assert_uint_eq(p.target, ENTRY + 6 + 0x12345);

		wr32(nr + 2, -0x300);
		p = plan_of(nr, sizeof(nr), ENTRY, SLOT);
		ck_assert_int_eq(p.kind, INSN_JCC);
		ck_assert_uint_eq(p.target, ENTRY + 6 - 0x300);
	}
}
END_TEST

START_TEST(emulate_jrcxz)
{
	struct insn_plan p = PLAN(ENTRY, SLOT, 0xe3, 0x05);

	ck_assert_int_eq(p.kind, INSN_JCC);
	ck_assert_int_eq(p.cond, 16);
	ck_assert_uint_eq(p.len, 2);
	ck_assert_uint_eq(p.target, ENTRY + 7);

	/* jecxz (67 e3) tests ecx only: refused, not mis-emulated. */
	p = PLAN(ENTRY, SLOT, 0x67, 0xe3, 0x05);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
}
END_TEST

/* Check a RIP-relative XOL plan: same absolute target from the slot. */
static void check_riprel(const uint8_t *code, size_t n, unsigned disp_off, uint64_t entry,
			 uint64_t slot)
{
	struct insn_plan p = plan_of(code, n, entry, slot);
	uint64_t abs = entry + n + (int64_t)rd32(code + disp_off);

	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_uint_eq(p.len, n);
	ck_assert_uint_eq(slot + n + (int64_t)rd32(p.slot + disp_off), abs);
	ck_assert_int_eq((int64_t)rd32(p.slot + disp_off), (int64_t)(abs - (slot + n)));
	/* Every byte but the displacement is copied unchanged. */
	ck_assert_mem_eq(p.slot, code, disp_off);
	ck_assert_mem_eq(p.slot + disp_off + 4, code + disp_off + 4, n - disp_off - 4);
	check_xol_tail(&p, slot);
}

START_TEST(riprel)
{
	/* mov 0x2000(%rip),%rax */
	static const uint8_t load[] = {0x48, 0x8b, 0x05, 0x00, 0x20, 0x00, 0x00};
	/* mov %eax,0x10(%rip) */
	static const uint8_t store[] = {0x89, 0x05, 0x10, 0x00, 0x00, 0x00};
	/* lea -0x100(%rip),%rdi */
	static const uint8_t lea[] = {0x48, 0x8d, 0x3d, 0x00, 0xff, 0xff, 0xff};
	/* cmpq $0x7f,0x1234(%rip): the imm8 follows the displacement */
	static const uint8_t cmpq[] = {0x48, 0x83, 0x3d, 0x34, 0x12, 0x00, 0x00, 0x7f};
	/* movl $0x11223344,0x40(%rip): imm32 after disp32 */
	static const uint8_t movl[] = {0xc7, 0x05, 0x40, 0x00, 0x00, 0x00, 0x44, 0x33, 0x22, 0x11};
	/* push 0x10(%rip) */
	static const uint8_t push[] = {0xff, 0x35, 0x10, 0x00, 0x00, 0x00};
	/* movsd 0x80(%rip),%xmm0 (prefix + 0f escape) */
	static const uint8_t movsd[] = {0xf2, 0x0f, 0x10, 0x05, 0x80, 0x00, 0x00, 0x00};
	static const uint64_t hi = 0x7ffff7a00000ULL;
	static const uint64_t where[][2] = {
	    {ENTRY, SLOT},
	    {ENTRY, 0x300000},
	    {ENTRY, ENTRY + 0x7fff0000ULL},
	    {hi, hi - 0x7fff0000ULL},
	    {hi, hi + 0x1000},
	    {hi, hi - 0x1000},
	};

	for (size_t i = 0; i < sizeof(where) / sizeof(where[0]); i++) {
		uint64_t e = where[i][0], s = where[i][1];

		check_riprel(load, sizeof(load), 3, e, s);
		check_riprel(store, sizeof(store), 2, e, s);
		check_riprel(lea, sizeof(lea), 3, e, s);
		check_riprel(cmpq, sizeof(cmpq), 3, e, s);
		check_riprel(movl, sizeof(movl), 2, e, s);
		check_riprel(push, sizeof(push), 2, e, s);
		check_riprel(movsd, sizeof(movsd), 4, e, s);
	}
}
END_TEST

START_TEST(riprel_exact)
{
	/* mov 0x2000(%rip),%rax at 0x401000, slot at 0x500000. */
	struct insn_plan p = PLAN(ENTRY, SLOT, 0x48, 0x8b, 0x05, 0x00, 0x20, 0x00, 0x00);

	ck_assert_int_eq(p.kind, INSN_XOL);
	/* target 0x403007; from the slot: 0x403007 - 0x500007 */
	ck_assert_int_eq(rd32(p.slot + 3), 0x403007 - 0x500007);
	ck_assert_uint_eq(p.slot[7], 0xe9);
	ck_assert_int_eq(rd32(p.slot + 8), 0x401007 - 0x50000c);
	ck_assert_uint_eq(p.slot_len, 12);
}
END_TEST

START_TEST(out_of_range)
{
	/* RIP-relative target 3 GiB from the slot. */
	struct insn_plan p = PLAN(ENTRY, ENTRY + 3 * GIB, 0x48, 0x8b, 0x05, 0x00, 0x20, 0x00, 0x00);

	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "RIP-relative displacement out of range for the slot");
	ck_assert_uint_eq(p.slot_len, 0);

	/* Slot close to the code, but the data is far in the other direction. */
	p = PLAN(ENTRY, ENTRY - 0x100000, 0x48, 0x8b, 0x05, 0x00, 0x00, 0xff, 0x7f);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "RIP-relative displacement out of range for the slot");
	p = PLAN(ENTRY, ENTRY + 0x100000, 0x48, 0x8b, 0x05, 0x00, 0x00, 0xff, 0x7f);
	ck_assert_int_eq(p.kind, INSN_XOL);

	/* Ordinary instruction, slot too far for the jmp back. */
	p = PLAN(ENTRY, ENTRY + 3 * GIB, 0x55);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "jump back out of range for the slot");
	p = PLAN(0x7f0000000000ULL, 0x7f0000000000ULL - 3 * GIB, 0x55);
	ck_assert_int_eq(p.kind, INSN_REFUSE);

	/* At the edge: a jmp back of exactly INT32_MIN fits, one more does not. */
	p = PLAN(0x100000000ULL, 0x100000000ULL + 0x80000000ULL - 5, 0x55);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 2), INT32_MIN);
	p = PLAN(0x100000000ULL, 0x100000000ULL + 0x80000000ULL - 4, 0x55);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	/* ... and INT32_MAX the other way. */
	p = PLAN(0x100000000ULL + 0x7fffffffULL + 5, 0x100000000ULL, 0x55);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 2), INT32_MAX);
	p = PLAN(0x100000000ULL + 0x80000000ULL + 5, 0x100000000ULL, 0x55);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
}
END_TEST

START_TEST(refuse_junk)
{
	static const uint8_t bad[] = {0x06};			 /* push %es: invalid in 64-bit */
	static const uint8_t trunc[] = {0x48, 0x8b, 0x05, 0x10}; /* cut short */
	static const uint8_t endbr[] = {0xf3, 0x0f, 0x1e, 0xfa};
	struct insn_plan p;

	ck_assert_int_eq(insn_plan(bad, sizeof(bad), ENTRY, SLOT, &p), 0);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "undecodable first instruction");

	ck_assert_int_eq(insn_plan(trunc, sizeof(trunc), ENTRY, SLOT, &p), 0);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "undecodable first instruction");

	ck_assert_int_eq(insn_plan(trunc, 0, ENTRY, SLOT, &p), 0);
	ck_assert_int_eq(p.kind, INSN_REFUSE);

	/* endbr64 and nothing after it. */
	ck_assert_int_eq(insn_plan(endbr, sizeof(endbr), ENTRY, SLOT, &p), 0);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "undecodable first instruction");

	ck_assert_int_eq(insn_plan(bad, sizeof(bad), ENTRY, SLOT, NULL), -1);
}
END_TEST

START_TEST(refuse_int3)
{
	struct insn_plan p = PLAN(ENTRY, SLOT, 0xcc);

	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "already an int3");

	p = PLAN(ENTRY, SLOT, 0xf3, 0x0f, 0x1e, 0xfa, 0xcc);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
	ck_assert_str_eq(p.reason, "already an int3");
	ck_assert_uint_eq(p.addr, ENTRY + 4);

	p = PLAN(ENTRY, SLOT, 0xcd, 0x80); /* int $0x80 */
	ck_assert_int_eq(p.kind, INSN_REFUSE);
}
END_TEST

START_TEST(refuse_indirect)
{
	static const uint8_t cases[][8] = {
	    {2, 0xff, 0xd0},			     /* call *%rax */
	    {3, 0x41, 0xff, 0xd3},		     /* call *%r11 */
	    {6, 0xff, 0x15, 0x10, 0x00, 0x00, 0x00}, /* call *0x10(%rip) */
	    {3, 0xff, 0x50, 0x08},		     /* call *0x8(%rax) */
	    {6, 0xff, 0x2d, 0x10, 0x00, 0x00, 0x00}, /* ljmp *0x10(%rip) */
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct insn_plan p = plan_of(cases[i] + 1, cases[i][0], ENTRY, SLOT);

		ck_assert_int_eq(p.kind, INSN_REFUSE);
		ck_assert_str_eq(p.reason, "indirect branch as first instruction");
	}
}
END_TEST

/* An indirect jmp (a tail call through a pointer: SQLite's sqlite3PagerGet) runs out of line. */
START_TEST(indirect_jmp_xol)
{
	static const uint8_t cases[][9] = {
	    {2, 0xff, 0xe0},				   /* jmp *%rax */
	    {3, 0x41, 0xff, 0xe3},			   /* jmp *%r11 */
	    {6, 0xff, 0xa7, 0x10, 0x01, 0x00, 0x00},	   /* jmp *0x110(%rdi) */
	    {3, 0x3e, 0xff, 0xe0},			   /* notrack jmp *%rax */
	    {7, 0xff, 0x24, 0xc5, 0x00, 0x10, 0x40, 0x00}, /* jmp *0x401000(,%rax,8) */
	};
	struct insn_plan p;

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		p = plan_of(cases[i] + 1, cases[i][0], ENTRY, SLOT);
		ck_assert_int_eq(p.kind, INSN_XOL);
		ck_assert_uint_eq(p.len, cases[i][0]);
		ck_assert_mem_eq(p.slot, cases[i] + 1, cases[i][0]);
	}
	/* jmp *0x10(%rip) at ENTRY reads ENTRY+6+0x10: from the slot, the same word. */
	p = PLAN(ENTRY, SLOT, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 2), (int32_t)(ENTRY + 6 + 0x10 - (SLOT + 6)));
	/* bnd jmp *0x10(%rip) */
	p = PLAN(ENTRY, SLOT, 0xf2, 0xff, 0x25, 0x10, 0x00, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 3), (int32_t)(ENTRY + 7 + 0x10 - (SLOT + 7)));
}
END_TEST

/* capstone 4 says disp_size 2 for 0x66-prefixed SSE with a RIP-relative operand: still moved. */
START_TEST(riprel_sse_66)
{
	/* movdqa 0xe08(%rip),%xmm0; ucomisd 0x10(%rip),%xmm0 */
	struct insn_plan p = PLAN(ENTRY, SLOT, 0x66, 0x0f, 0x6f, 0x05, 0x08, 0x0e, 0x00, 0x00);

	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 4), (int32_t)(ENTRY + 8 + 0xe08 - (SLOT + 8)));
	p = PLAN(ENTRY, SLOT, 0x66, 0x0f, 0x2e, 0x05, 0x10, 0x00, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 4), (int32_t)(ENTRY + 8 + 0x10 - (SLOT + 8)));
	/* cmpl $5,0x10(%rip): the displacement sits before the immediate */
	p = PLAN(ENTRY, SLOT, 0x83, 0x3d, 0x10, 0x00, 0x00, 0x00, 0x05);
	ck_assert_int_eq(p.kind, INSN_XOL);
	ck_assert_int_eq(rd32(p.slot + 2), (int32_t)(ENTRY + 7 + 0x10 - (SLOT + 7)));
	ck_assert_uint_eq(p.slot[6], 0x05);
}
END_TEST

START_TEST(refuse_loop)
{
	for (uint8_t op = 0xe0; op <= 0xe2; op++) {
		uint8_t c[2] = {op, 0x10};
		struct insn_plan p = plan_of(c, 2, ENTRY, SLOT);

		ck_assert_int_eq(p.kind, INSN_REFUSE);
		ck_assert_str_eq(p.reason, "loop instruction");
	}
}
END_TEST

START_TEST(refuse_other_branches)
{
	/* 66 e8: a 16-bit call on AMD, a 32-bit one on Intel. */
	struct insn_plan p = PLAN(ENTRY, SLOT, 0x66, 0xe8, 0x10, 0x00, 0x00, 0x00);

	ck_assert_int_eq(p.kind, INSN_REFUSE);
	/* xbegin: its abort target is RIP-relative and cannot be emulated. */
	p = PLAN(ENTRY, SLOT, 0xc7, 0xf8, 0x10, 0x00, 0x00, 0x00);
	ck_assert_int_eq(p.kind, INSN_REFUSE);
}
END_TEST

START_TEST(text_fits)
{
	/* A long instruction with a long disassembly still fits text[]. */
	struct insn_plan p =
	    PLAN(ENTRY, SLOT, 0x62, 0xf1, 0x7c, 0x48, 0x10, 0x84, 0xc8, 0x00, 0x10, 0x00, 0x00);

	ck_assert_uint_lt(strlen(p.text), sizeof(p.text));
	p = PLAN(ENTRY, SLOT, 0x55);
	ck_assert_uint_gt(strlen(p.text), 0);
}
END_TEST

/* Reference condition, written per mnemonic. */
static int ref_cond(int cc, int cf, int pf, int zf, int sf, int of)
{
	switch (cc) {
	case 0x0:
		return of; /* jo */
	case 0x1:
		return !of; /* jno */
	case 0x2:
		return cf; /* jb */
	case 0x3:
		return !cf; /* jae */
	case 0x4:
		return zf; /* je */
	case 0x5:
		return !zf; /* jne */
	case 0x6:
		return cf | zf; /* jbe */
	case 0x7:
		return !cf && !zf; /* ja */
	case 0x8:
		return sf; /* js */
	case 0x9:
		return !sf; /* jns */
	case 0xa:
		return pf; /* jp */
	case 0xb:
		return !pf; /* jnp */
	case 0xc:
		return sf ^ of; /* jl */
	case 0xd:
		return sf == of; /* jge */
	case 0xe:
		return zf | (sf ^ of); /* jle */
	case 0xf:
		return !zf && sf == of; /* jg */
	}
	return -1;
}

START_TEST(cond_table)
{
	for (int cc = 0; cc < 16; cc++) {
		for (unsigned m = 0; m < 32; m++) {
			int cf = m & 1, pf = (m >> 1) & 1, zf = (m >> 2) & 1;
			int sf = (m >> 3) & 1, of = (m >> 4) & 1;
			/* bit 1 is always set; other flags must not matter */
			uint64_t fl = 0x2 | 0x10 | 0x200 | (uint64_t)cf | (uint64_t)pf << 2 |
				      (uint64_t)zf << 6 | (uint64_t)sf << 7 | (uint64_t)of << 11;

			ck_assert_int_eq(insn_cond_true(cc, fl, 0),
					 ref_cond(cc, cf, pf, zf, sf, of));
			ck_assert_int_eq(insn_cond_true(cc, fl & ~0x212ULL, 12345),
					 ref_cond(cc, cf, pf, zf, sf, of));
		}
	}
	/* Spot checks from real EFLAGS values. */
	ck_assert_int_eq(insn_cond_true(0x4, 0x246, 0), 1); /* ZF PF: je taken */
	ck_assert_int_eq(insn_cond_true(0x5, 0x246, 0), 0);
	ck_assert_int_eq(insn_cond_true(0xc, 0x282, 0), 1); /* SF: jl taken */
	ck_assert_int_eq(insn_cond_true(0xf, 0x202, 0), 1); /* nothing: jg taken */
	ck_assert_int_eq(insn_cond_true(0xc, 0xa82, 0), 0); /* SF == OF: jl not taken */
	/* jrcxz */
	ck_assert_int_eq(insn_cond_true(16, 0x246, 0), 1);
	ck_assert_int_eq(insn_cond_true(16, 0x246, 1), 0);
	ck_assert_int_eq(insn_cond_true(16, 0, 0x100000000ULL), 0);
	ck_assert_int_eq(insn_cond_true(17, 0, 0), 0);
	ck_assert_int_eq(insn_cond_true(-1, 0xfff, 0), 0);
}
END_TEST

/* Is the call `c` (n bytes) at the end of 16 bytes of `pad` a return site? */
static int site_with(const uint8_t *c, size_t n, uint8_t pad)
{
	uint8_t buf[16];

	memset(buf, pad, sizeof(buf));
	memcpy(buf + sizeof(buf) - n, c, n);
	return insn_is_return_site(buf, sizeof(buf));
}

START_TEST(return_sites)
{
	static const uint8_t calls[][10] = {
	    {5, 0xe8, 0x10, 0x20, 0x00, 0x00},			       /* call rel32 */
	    {5, 0xe8, 0xf0, 0xff, 0xff, 0xff},			       /* call back */
	    {6, 0xf2, 0xe8, 0x10, 0x00, 0x00, 0x00},		       /* bnd call */
	    {2, 0xff, 0xd0},					       /* call *%rax */
	    {2, 0xff, 0xd7},					       /* call *%rdi */
	    {3, 0x41, 0xff, 0xd3},				       /* call *%r11 */
	    {3, 0x3e, 0xff, 0xd0},				       /* notrack call *%rax */
	    {6, 0xff, 0x15, 0x12, 0x34, 0x00, 0x00},		       /* call *disp(%rip) */
	    {2, 0xff, 0x10},					       /* call *(%rax) */
	    {3, 0xff, 0x50, 0x08},				       /* call *0x8(%rax) */
	    {6, 0xff, 0x90, 0x00, 0x01, 0x00, 0x00},		       /* call *0x100(%rax) */
	    {3, 0xff, 0x14, 0x24},				       /* call *(%rsp) */
	    {4, 0xff, 0x54, 0x24, 0x08},			       /* call *0x8(%rsp) */
	    {7, 0xff, 0x94, 0x24, 0x00, 0x01, 0x00, 0x00},	       /* call *0x100(%rsp) */
	    {5, 0x41, 0xff, 0x54, 0x24, 0x08},			       /* call *0x8(%r12) */
	    {7, 0xff, 0x14, 0xc5, 0x00, 0x10, 0x40, 0x00},	       /* call *0x401000(,%rax,8) */
	    {4, 0x41, 0xff, 0x14, 0xdc},			       /* call *(%r12,%rbx,8) */
	    {3, 0x41, 0xff, 0x55, 0x00},			       /* call *0x0(%r13) (cut) */
	    {4, 0x41, 0xff, 0x55, 0x00},			       /* call *0x0(%r13) */
	    {9, 0x64, 0x48, 0xff, 0x14, 0x25, 0x28, 0x00, 0x00, 0x00}, /* call *%fs:0x28 */
	};
	/* Code that is not the end of a call. */
	static const uint8_t others[][10] = {
	    {4, 0x48, 0x89, 0xe5, 0x90},	     /* mov %rsp,%rbp; nop */
	    {4, 0x48, 0x83, 0xec, 0x10},	     /* sub $0x10,%rsp */
	    {2, 0xff, 0xe0},			     /* jmp *%rax */
	    {2, 0xff, 0x20},			     /* jmp *(%rax) */
	    {6, 0xff, 0x25, 0x12, 0x34, 0x00, 0x00}, /* jmp *disp(%rip) */
	    {5, 0xe9, 0x10, 0x20, 0x00, 0x00},	     /* jmp rel32 */
	    {2, 0xff, 0xc0},			     /* inc %eax */
	    {3, 0xff, 0x50, 0x08},		     /* call, not ending here */
	    {5, 0x5d, 0xc3, 0x0f, 0x1f, 0x00},	     /* pop; ret; nopl */
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		if (i == 17)
			continue; /* the cut form is checked below */
		ck_assert_msg(site_with(calls[i] + 1, calls[i][0], 0x90) == 1, "call %zu", i);
		ck_assert_msg(site_with(calls[i] + 1, calls[i][0], 0x00) == 1, "call %zu", i);
		ck_assert_msg(site_with(calls[i] + 1, calls[i][0], 0xcc) == 1, "call %zu", i);
	}
	for (size_t i = 0; i < sizeof(others) / sizeof(others[0]); i++) {
		uint8_t c[12];
		size_t n = others[i][0];

		memcpy(c, others[i] + 1, n);
		if (i == 7) { /* the call is followed by one more byte */
			c[n++] = 0x90;
		}
		ck_assert_msg(site_with(c, n, 0x90) == 0, "other %zu", i);
		ck_assert_msg(site_with(c, n, 0xcc) == 0, "other %zu", i);
	}
	/* ff 55 needs its disp8: 3 bytes are not a whole call. */
	ck_assert_int_eq(site_with(calls[17] + 1, 3, 0x90), 0);

	/* Short buffers: exactly the call, or less than it. */
	ck_assert_int_eq(insn_is_return_site((const uint8_t[]){0xff, 0xd0}, 2), 1);
	ck_assert_int_eq(insn_is_return_site((const uint8_t[]){0x10, 0x00, 0x00, 0x00}, 4), 0);
	ck_assert_int_eq(insn_is_return_site((const uint8_t[]){0xd0}, 1), 0);
	ck_assert_int_eq(insn_is_return_site(NULL, 0), 0);
}
END_TEST

static volatile uintptr_t seen_ra;

__attribute__((noinline)) static void note_return_address(void)
{
	seen_ra = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" ::: "memory");
}

static void (*volatile indirect_fn)(void) = note_return_address;

START_TEST(return_site_real)
{
	/* Real compiler-generated calls: direct and through a pointer. */
	note_return_address();
	ck_assert_int_eq(insn_is_return_site((const uint8_t *)seen_ra - 16, 16), 1);
	indirect_fn();
	ck_assert_int_eq(insn_is_return_site((const uint8_t *)seen_ra - 16, 16), 1);
}
END_TEST

/*
 * Run XOL plans for real: build tiny routines in an RWX page, plan their
 * first instruction with the slot in the same page, and call the slot.
 */
START_TEST(run_xol)
{
	static const uint8_t frame_fn[] = {
	    0x55,			  /* push %rbp */
	    0x48, 0x89, 0xe5,		  /* mov %rsp,%rbp */
	    0xb8, 0x2a, 0x00, 0x00, 0x00, /* mov $42,%eax */
	    0x5d,			  /* pop %rbp */
	    0xc3,			  /* ret */
	};
	uint8_t *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base, magic = 0x1122334455667788ULL;
	struct insn_plan p;
	uint64_t (*fn)(void);

	if (pg == MAP_FAILED)
		return; /* W^X enforced here: nothing to run */
	base = (uint64_t)(uintptr_t)pg;
	memset(pg, 0xcc, 4096);

	/* 1: push %rbp out of line, then the rest of the routine in place. */
	memcpy(pg, frame_fn, sizeof(frame_fn));
	ck_assert_int_eq(insn_plan(pg, sizeof(frame_fn), base, base + 0x800, &p), 0);
	ck_assert_int_eq(p.kind, INSN_XOL);
	memcpy(pg + 0x800, p.slot, p.slot_len);
	pg[0] = 0xcc; /* the breakpoint is left in place */
	fn = (uint64_t(*)(void))(uintptr_t)(pg + 0x800);
	ck_assert_uint_eq(fn() & 0xffffffff, 42);

	/* 2: mov disp(%rip),%rax; ret -- reads the magic word at +0x400. */
	memcpy(pg + 0x100, (const uint8_t[]){0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3}, 8);
	wr32(pg + 0x103, 0x400 - 0x107);
	memcpy(pg + 0x400, &magic, sizeof(magic));
	ck_assert_int_eq(insn_plan(pg + 0x100, 8, base + 0x100, base + 0x900, &p), 0);
	ck_assert_int_eq(p.kind, INSN_XOL);
	memcpy(pg + 0x900, p.slot, p.slot_len);
	pg[0x100] = 0xcc;
	fn = (uint64_t(*)(void))(uintptr_t)(pg + 0x900);
	ck_assert_uint_eq(fn(), magic);

	/* 3: lea disp(%rip),%rax; ret -- the slot computes the original address. */
	memcpy(pg + 0x200, (const uint8_t[]){0x48, 0x8d, 0x05, 0, 0, 0, 0, 0xc3}, 8);
	wr32(pg + 0x203, 0x300 - 0x207);
	ck_assert_int_eq(insn_plan(pg + 0x200, 8, base + 0x200, base + 0xa00, &p), 0);
	ck_assert_int_eq(p.kind, INSN_XOL);
	memcpy(pg + 0xa00, p.slot, p.slot_len);
	pg[0x200] = 0xcc;
	fn = (uint64_t(*)(void))(uintptr_t)(pg + 0xa00);
	ck_assert_uint_eq(fn(), base + 0x300);

	munmap(pg, 4096);
}
END_TEST

/* ---- the fast entry patch (jmp to a stub) ---- */

static const uint8_t frame42[] = {
    0x55,			  /* push %rbp */
    0x48, 0x89, 0xe5,		  /* mov %rsp,%rbp */
    0xb8, 0x2a, 0x00, 0x00, 0x00, /* mov $42,%eax */
    0x5d,			  /* pop %rbp */
    0xc3,			  /* ret */
};

START_TEST(stub_layout)
{
	const uint64_t entry = 0x401000, stub_addr = 0x400000, retrap = 0x3ff000;
	struct insn_stub st;
	uint8_t fn[sizeof(frame42) + 4];

	ck_assert_int_eq(
	    insn_plan_stub(frame42, sizeof(frame42), entry, stub_addr, retrap, 0, 0, NULL, &st), 0);
	ck_assert_uint_eq(st.addr, entry);
	ck_assert_uint_eq(st.len, 9); /* push, mov, mov $42: whole instructions */
	ck_assert_uint_eq(st.jmp[0], 0xe9);
	ck_assert_int_eq(rd32(st.jmp + 1), (int32_t)(stub_addr - (entry + 5)));
	for (unsigned i = 5; i < st.len; i++)
		ck_assert_uint_eq(st.jmp[i], 0xcc);
	ck_assert_uint_eq(st.trap_off, 9);
	ck_assert_uint_eq(st.code[st.trap_off], 0xcc);
	/* movabs $retrap,%r11 right after the int3 */
	ck_assert_uint_eq(st.code[10], 0x49);
	ck_assert_uint_eq(st.code[11], 0xbb);
	ck_assert_mem_eq(st.code + 12, &retrap, 8);
	ck_assert_uint_eq(st.plain_off, 24);
	/* the moved instructions, then jmp back to entry + 9 */
	ck_assert_mem_eq(st.code + 29, frame42, 9);
	ck_assert_uint_eq(st.code[38], 0xe9);
	ck_assert_int_eq(rd32(st.code + 39), (int32_t)(entry + 9 - (stub_addr + 43)));
	ck_assert_uint_eq(st.code_len, 43);

	/* a library's stub, far from the program's return trap */
	ck_assert_int_eq(insn_plan_stub(frame42, sizeof(frame42), 0x7f0000401000ULL,
					0x7f0000400000ULL, retrap, 0, 0, NULL, &st),
			 0);
	ck_assert_mem_eq(st.code + 12, &retrap, 8);

	/* endbr64 stays at the entry: the jmp goes after it */
	memcpy(fn, (const uint8_t[]){0xf3, 0x0f, 0x1e, 0xfa}, 4);
	memcpy(fn + 4, frame42, sizeof(frame42));
	ck_assert_int_eq(insn_plan_stub(fn, sizeof(fn), entry, stub_addr, retrap, 0, 0, NULL, &st),
			 0);
	ck_assert_uint_eq(st.addr, entry + 4);
	ck_assert_uint_eq(st.len, 9);
}
END_TEST

START_TEST(stub_refusals)
{
	const uint64_t entry = 0x401000, stub_addr = 0x400000, retrap = 0x3ff000;
	struct insn_stub st;
	/* call *%rax; xor %eax,%eax; ret: a call that would return into the stub */
	static const uint8_t early_branch[] = {0xff, 0xd0, 0x31, 0xc0, 0xc3, 0x90, 0x90, 0x90};
	/* xor %eax,%eax; ret: shorter than a jmp */
	static const uint8_t tiny[] = {0x31, 0xc0, 0xc3};
	/* push %rbp; xor %eax,%eax; inc %eax; ... ; jne entry+1 (into the covered bytes) */
	static const uint8_t loop_in[] = {
	    0x55, 0x31, 0xc0, 0xff, 0xc0, 0x83, 0xf8, 0x0a, 0x75, 0xf7, 0x5d, 0xc3,
	};
	/* a far RIP-relative operand cannot be moved 2 GiB away */
	static const uint8_t far[] = {0x48, 0x8b, 0x05, 0x00, 0x00, 0x00, 0x70, 0xc3};

	ck_assert_int_eq(insn_plan_stub(early_branch, sizeof(early_branch), entry, stub_addr,
					retrap, 0, 0, NULL, &st),
			 1);
	ck_assert_str_eq(st.reason, "a branch among the first 5 bytes");
	ck_assert_int_eq(
	    insn_plan_stub(tiny, sizeof(tiny), entry, stub_addr, retrap, 0, 0, NULL, &st), 1);
	ck_assert_ptr_nonnull(st.reason);
	ck_assert_int_eq(
	    insn_plan_stub(loop_in, sizeof(loop_in), entry, stub_addr, retrap, 0, 0, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "a branch lands inside the first 5 bytes");
	ck_assert_int_eq(
	    insn_plan_stub(far, sizeof(far), 0x7fff00000000ull, 0x1000, 0x1000, 0, 0, NULL, &st),
	    1);
	/* the stub itself out of reach of the jmp */
	ck_assert_int_eq(insn_plan_stub(frame42, sizeof(frame42), 0x7fff00000000ull, 0x1000,
					0x7fff00000000ull, 0, 0, NULL, &st),
			 1);
}
END_TEST

/*
 * The walk over the whole routine decodes with lendec and falls back to
 * capstone instruction by instruction (x87): a branch after them into
 * the covered bytes is still found; AVX-512 that capstone 4 cannot decode
 * (kmovq) lendec knows, and what neither decodes refuses the routine.
 */
START_TEST(stub_walk_mixed)
{
	/*
	 * push %rbp; xor %eax,%eax; inc %eax; fldz; fstp %st(0);
	 * vmovdqu64 (%rdi),%zmm0; cmp $10,%eax; jne entry+1; pop %rbp; ret
	 */
	uint8_t code[] = {
	    0x55, 0x31, 0xc0, 0xff, 0xc0, 0xd9, 0xee, 0xdd, 0xd8, 0x62, 0xf1,
	    0xfe, 0x48, 0x6f, 0x07, 0x83, 0xf8, 0x0a, 0x75, 0xed, 0x5d, 0xc3,
	};
	/* kmovq %rbx,%k1 (capstone 4 cannot decode it, lendec can); nop */
	static const uint8_t kmov[] = {0xc4, 0xe1, 0xfb, 0x92, 0xcb, 0x90};
	/* vaddph %zmm1,%zmm0,%zmm0 (AVX512-FP16's EVEX map 5: neither can) */
	static const uint8_t fp16[] = {0x62, 0xf5, 0x7c, 0x48, 0x58, 0xc1};
	struct insn_stub st;

	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "a branch lands inside the first 5 bytes");
	code[19] = 0xec; /* jne entry: not inside */
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.len, 5);
	memcpy(code + 9, kmov, sizeof(kmov));
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 0);
	memcpy(code + 9, fp16, sizeof(fp16));
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "routine not fully decodable");
}
END_TEST

/*
 * rdpkru and wrpkru, which capstone 4 cannot decode, in a routine and in
 * the code before it (pkey_get after pkey_set's end in libc): the walks
 * go on over them (lendec knows them), the first bytes are moved as
 * usual; with a prefix, unknown, and the routine refused as before.
 */
START_TEST(stub_walk_pkru)
{
	/*
	 * pkey_get: cmp $15,%edi; ja err; xor %ecx,%ecx; rdpkru; lea (%rdi,%rdi),%ecx;
	 * shr %cl,%eax; and $3,%eax; ret; nopl; err: mov $-1,%eax; ret
	 */
	uint8_t code[] = {
	    0x83, 0xff, 0x0f, 0x77, 0x13, 0x31, 0xc9, 0x0f, 0x01, 0xee,
	    0x8d, 0x0c, 0x3f, 0xd3, 0xe8, 0x83, 0xe0, 0x03, 0xc3, 0x0f,
	    0x1f, 0x44, 0x00, 0x00, 0xb8, 0xff, 0xff, 0xff, 0xff, 0xc3,
	};
	/* pkey_set's end: wrpkru; xor %eax,%eax; ret */
	static const uint8_t before[] = {0x0f, 0x01, 0xef, 0x31, 0xc0, 0xc3};
	struct insn_gap gap = {0};
	struct insn_stub st;

	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.len, 5);
	gap.near = before;
	gap.near_addr = ENTRY - sizeof(before);
	gap.near_len = sizeof(before);
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.len, 5);
	/*
	 * a branch into the first 5 bytes after the rdpkru is still seen: no
	 * padding for a short jmp, and the routine cannot be moved whole
	 * (that copy is capstone's, which cannot decode rdpkru): refused
	 */
	code[19] = 0xeb; /* the padding: jmp entry+3 */
	code[20] = (uint8_t)(3 - 21);
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	code[19] = 0x0f;
	code[20] = 0x1f;
	/* data16 rdpkru (66 0f 01 ee): neither decoder knows it */
	code[5] = 0x66; /* in place of xor %ecx,%ecx: 66 0f 01 ee, then a nop */
	code[6] = 0x0f;
	code[7] = 0x01;
	code[8] = 0xee;
	code[9] = 0x90;
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "routine not fully decodable");
}
END_TEST

static jmp_buf stub_env;
static uint64_t stub_got;

static void stub_back(uint64_t v)
{
	stub_got = v;
	longjmp(stub_env, 1);
}

START_TEST(stub_run)
{
	uint8_t *pg = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint64_t base, magic = 0x1122334455667788ULL, (*fn)(void);
	volatile int hooked_once = 0;
	struct insn_stub st;
	uint8_t *tramp;

	if (pg == MAP_FAILED)
		return; /* W^X enforced here: nothing to run */
	base = (uint64_t)(uintptr_t)pg;
	memset(pg, 0xcc, 4096);
	/* The return trap stand-in: hand RAX to stub_back (which longjmps home). */
	tramp = pg + 0xf00;
	memcpy(tramp, (const uint8_t[]){0x48, 0x89, 0xc7, 0x48, 0x83, 0xe4, 0xf0, 0x48, 0xb9}, 9);
	{
		uint64_t a = (uint64_t)(uintptr_t)stub_back;
		memcpy(tramp + 9, &a, 8);
	}
	tramp[17] = 0xff; /* call *%rcx */
	tramp[18] = 0xd1;

	/* 1: the routine patched with its jmp; the stub's int3 made a nop (the
	 * tracer would resume right after it): the return lands on the trap. */
	memcpy(pg, frame42, sizeof(frame42));
	ck_assert_int_eq(
	    insn_plan_stub(pg, sizeof(frame42), base, base + 0x800, base + 0xf00, 0, 0, NULL, &st),
	    0);
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg + st.addr - base, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90;
	fn = (uint64_t(*)(void))(uintptr_t)pg;
	if (!setjmp(stub_env)) {
		hooked_once = 1;
		fn();
		ck_abort_msg("the hooked return did not reach the trap");
	}
	ck_assert_int_eq(hooked_once, 1);
	ck_assert_uint_eq(stub_got & 0xffffffff, 42);

	/* 2: the plain continuation returns normally. */
	fn = (uint64_t(*)(void))(uintptr_t)(pg + 0x800 + st.plain_off);
	ck_assert_uint_eq(fn() & 0xffffffff, 42);

	/* 3: a RIP-relative load among the moved bytes still reads its word. */
	memcpy(pg + 0x100, (const uint8_t[]){0x48, 0x8b, 0x05, 0, 0, 0, 0, 0xc3}, 8);
	wr32(pg + 0x103, 0x400 - 0x107);
	memcpy(pg + 0x400, &magic, sizeof(magic));
	ck_assert_int_eq(insn_plan_stub(pg + 0x100, 8, base + 0x100, base + 0x880, base + 0xf00, 0,
					0, NULL, &st),
			 0);
	memcpy(pg + 0x880, st.code, st.code_len);
	memcpy(pg + 0x100, st.jmp, st.len);
	fn = (uint64_t(*)(void))(uintptr_t)(pg + 0x880 + st.plain_off);
	ck_assert_uint_eq(fn(), magic);
	munmap(pg, 4096);
}
END_TEST

static jmp_buf page_env;
static uint64_t page_got, page_which;

static void page_back1(uint64_t v)
{
	page_got = v;
	page_which = 1;
	longjmp(page_env, 1);
}

static void page_back2(uint64_t v)
{
	page_got = v;
	page_which = 2;
	longjmp(page_env, 1);
}

/* Call f from one call site (one return address), not as a tail call. */
__attribute__((noinline)) static uint64_t call_once_site(uint64_t (*f)(void))
{
	volatile uint64_t v = f();

	return v;
}

/* At `at`: mov %rax,%rdi; and $-16,%rsp; movabs $fn,%rcx; call *%rcx. */
static void put_tramp(uint8_t *at, void (*fn)(uint64_t))
{
	uint64_t a = (uint64_t)(uintptr_t)fn;

	memcpy(at, (const uint8_t[]){0x48, 0x89, 0xc7, 0x48, 0x83, 0xe4, 0xf0, 0x48, 0xb9}, 9);
	memcpy(at + 9, &a, 8);
	at[17] = 0xff;
	at[18] = 0xd1;
}

/*
 * Two pages to run code in: int3 filler, the second one an event page
 * (*ep, zeroed) at base + 0x1000. NULL when it cannot be mapped.
 */
static uint8_t *code_page(uint64_t *base, struct insn_event_page **ep)
{
	uint8_t *pg = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC,
			   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (pg == MAP_FAILED)
		return NULL;
	*base = (uint64_t)(uintptr_t)pg;
	memset(pg, 0xcc, 8192);
	*ep = (struct insn_event_page *)(pg + 0x1000);
	memset(*ep, 0, sizeof(**ep));
	return pg;
}

/*
 * Routine code fn[0..n) at the start of a code_page, patched with a timed
 * stub at base + 0x800 (the return trap at base + 0xf00, the event page at
 * base + 0x1000) that reports itself as event ev.
 */
static void put_stub(uint8_t *pg, uint64_t base, const uint8_t *fn, size_t n, uint32_t ev,
		     struct insn_stub *st)
{
	memcpy(pg, fn, n);
	ck_assert_int_eq(
	    insn_plan_stub(pg, n, base, base + 0x800, base + 0xf00, base + 0x1000, ev, NULL, st),
	    0);
	memcpy(pg + 0x800, st->code, st->code_len);
	memcpy(pg, st->jmp, st->len);
}

START_TEST(stub_event_page)
{
	uint8_t *pg;
	struct insn_event_page *ep;
	uint64_t base, first_ret, (*fn)(void);
	volatile int step = 0;
	struct insn_stub st;
	uint8_t site[INSN_RSITE_SIZE];

	pg = code_page(&base, &ep);
	if (!pg)
		return;
	put_tramp(pg + 0xf00, page_back1); /* the common return trap stand-in */
	put_tramp(pg + 0xe00, page_back2); /* a return site's trap stand-in */
	put_stub(pg, base, frame42, sizeof(frame42), 7, &st);
	pg[0x800 + st.trap_off] = 0x90; /* as if the tracer resumed after the int3 */
	fn = (uint64_t(*)(void))(uintptr_t)pg;

	/* 1: the key is not the return address: the common trap, and the page
	 * says which entry, the return address and the slot. */
	ep->hook_key = 1;
	ep->hook_val = base + 0xe00;
	if (!setjmp(page_env)) {
		step = 1;
		call_once_site(fn);
		ck_abort_msg("no return trap");
	}
	ck_assert_int_eq(step, 1);
	ck_assert_uint_eq(page_which, 1);
	ck_assert_uint_eq(page_got & 0xffffffff, 42);
	ck_assert_uint_eq(ep->ev, 7);
	ck_assert_uint_ne(ep->ret, 0);
	ck_assert_uint_ne(ep->rsp, 0);
	/* the TSC before the stop and after it (the int3 made a nop here) */
	ck_assert_uint_ne(ep->t_trap, 0);
	ck_assert_uint_ge(ep->t_go, ep->t_trap);
	first_ret = ep->ret;

	/* 2: the key is this call's return address: the tracer's value is written. */
	ep->hook_key = first_ret;
	ep->ev = 0;
	if (!setjmp(page_env)) {
		step = 2;
		call_once_site(fn);
		ck_abort_msg("no return trap");
	}
	ck_assert_int_eq(step, 2);
	ck_assert_uint_eq(page_which, 2);
	ck_assert_uint_eq(page_got & 0xffffffff, 42);
	ck_assert_uint_eq(ep->ret, first_ret);

	/* A return site's trap: page writes, int3, jmp to its return address. */
	insn_rsite_code(0x1122334455667788ull, 0x0102030405060708ull, site);
	ck_assert_uint_eq(site[0], 0x4c); /* mov %r11,-0x8(%rsp) */
	ck_assert_uint_eq(site[5], 0x49); /* movabs $page,%r11 */
	ck_assert_uint_eq(site[INSN_RSITE_TRAP], 0xcc);
	ck_assert_uint_eq(site[INSN_RSITE_TRAP + 21], 0x4c); /* mov -0x8(%rsp),%r11 */
	ck_assert_uint_eq(site[INSN_RSITE_TRAP + 26], 0xff);
	ck_assert_uint_eq(site[INSN_RSITE_TRAP + 27], 0x25);
	ck_assert_uint_eq(rd32(site + INSN_RSITE_TRAP + 28), 0);
	{
		uint64_t r, pa;

		memcpy(&r, site + INSN_RSITE_TRAP + 32, 8);
		memcpy(&pa, site + 7, 8);
		ck_assert_uint_eq(r, 0x0102030405060708ull);
		ck_assert_uint_eq(pa, 0x1122334455667788ull);
	}
	/* the common return trap without a page is a bare int3 */
	ck_assert_uint_eq(insn_return_trap(0, site), 1);
	ck_assert_uint_eq(site[0], 0xcc);
	ck_assert_uint_eq(insn_return_trap(base, site), 33);
	ck_assert_uint_le(33, 40); /* SCRATCH_SYSCALL follows it */
	ck_assert_uint_eq(site[32], 0xcc);
	munmap(pg, 8192);
}
END_TEST

/*
 * A return site's trap run for real (its int3 made a nop): it is entered
 * by a `ret` with the return value in RAX:RDX, writes the page, and goes
 * on to the call site with RAX and RDX as they were.
 */
START_TEST(rsite_keeps_return_value)
{
	uint8_t *pg;
	struct insn_event_page *ep;
	unsigned __int128 (*fn)(void), v;
	uint64_t base, rsite, page;

	pg = code_page(&base, &ep);
	if (!pg)
		return;
	page = base + 0x1000;
	rsite = base + 0x400;
	pg[0x300] = 0xc3; /* the "call site": a ret back to this test */
	insn_rsite_code(page, base + 0x300, pg + 0x400);
	pg[0x400 + INSN_RSITE_TRAP] = 0x90;
	/* movabs $A,%rax; movabs $B,%rdx; jmp rsite */
	{
		uint64_t a = 0x1111222233334444ull, b = 0x5555666677778888ull;
		int32_t d = (int32_t)(rsite - (base + 25));

		pg[0] = 0x48;
		pg[1] = 0xb8;
		memcpy(pg + 2, &a, 8);
		pg[10] = 0x48;
		pg[11] = 0xba;
		memcpy(pg + 12, &b, 8);
		pg[20] = 0xe9;
		memcpy(pg + 21, &d, 4);
	}
	fn = (unsigned __int128 (*)(void))(uintptr_t)pg;
	v = fn();
	ck_assert_uint_eq((uint64_t)v, 0x1111222233334444ull);
	ck_assert_uint_eq((uint64_t)(v >> 64), 0x5555666677778888ull);
	ck_assert_uint_eq(ep->ev, INSN_EV_RETURN_SITE);
	ck_assert_uint_ne(ep->rsp, 0);
	ck_assert_uint_ne(ep->t_trap, 0);
	ck_assert_uint_ge(ep->t_go, ep->t_trap);
	munmap(pg, 8192);
}
END_TEST

/*
 * r11 through the return trap and a return site's trap, run for real: both
 * address the page through it, and a caller built with -fipa-ra (GCC -O2)
 * may keep a value there across a call to a routine it knows leaves r11
 * alone (Lua's leaveblock across getlocalvardesc crashed on the page's
 * address). Entered by a jmp with r11 set, they must reach the "call site"
 * (mov %r11,%rax; ret) with it as it was.
 */
START_TEST(traps_keep_r11)
{
	static const uint64_t r11 = 0x0badc0ffee0ddf00ull;
	struct insn_event_page *ep;
	uint64_t base, page, (*fn)(void);
	uint8_t *pg = code_page(&base, &ep);
	size_t n;
	int32_t d;

	if (!pg)
		return;
	page = base + 0x1000;
	fn = (uint64_t(*)(void))(uintptr_t)pg;
	/* the call site: mov %r11,%rax; ret */
	pg[0x300] = 0x4c;
	pg[0x301] = 0x89;
	pg[0x302] = 0xd8;
	pg[0x303] = 0xc3;
	/* movabs $r11,%r11; jmp rel32 (to the trap at 0x400 or 0x600) */
	pg[0] = 0x49;
	pg[1] = 0xbb;
	memcpy(pg + 2, &r11, 8);
	pg[10] = 0xe9;

	/* a return site's trap, its int3 a nop */
	insn_rsite_code(page, base + 0x300, pg + 0x400);
	pg[0x400 + INSN_RSITE_TRAP] = 0x90;
	d = (int32_t)(0x400 - 15);
	memcpy(pg + 11, &d, 4);
	ck_assert_uint_eq(fn(), r11);
	ck_assert_uint_eq(ep->ev, INSN_EV_RETURN_SITE);

	/* the return trap, its int3 a jmp to the call site (as the tracer sets RIP) */
	ep->ev = 0;
	n = insn_return_trap(page, pg + 0x600);
	d = (int32_t)(0x300 - (0x600 + (int32_t)n - 1 + 5));
	pg[0x600 + n - 1] = 0xe9;
	memcpy(pg + 0x600 + n, &d, 4);
	d = (int32_t)(0x600 - 15);
	memcpy(pg + 11, &d, 4);
	ck_assert_uint_eq(fn(), r11);
	ck_assert_uint_eq(ep->ev, INSN_EV_RETURN);
	ck_assert_uint_ne(ep->rsp, 0);
	munmap(pg, 8192);
}
END_TEST

/*
 * The timed stub's plain path, which the tracer resumes at instead of
 * after the int3 (a routine it does not hook): the registers the stub used
 * around the stop -- RDX holds the TSC then, and is a routine's third
 * argument -- are the caller's again when the routine's code runs.
 */
START_TEST(stub_plain_keeps_arguments)
{
	static const uint8_t add13[] = {
	    0x48, 0x89, 0xd0, /* mov %rdx,%rax */
	    0x48, 0x01, 0xf8, /* add %rdi,%rax */
	    0xc3,	      /* ret */
	};
	struct insn_event_page *ep;
	struct insn_stub st;
	uint64_t base, (*fn)(uint64_t, uint64_t, uint64_t);
	uint8_t *pg = code_page(&base, &ep);
	long d;

	if (!pg)
		return;
	put_stub(pg, base, add13, sizeof(add13), 3, &st);
	/* as if the tracer set RIP to plain_off at the stop: jmp rel8 over the int3 */
	d = (long)st.plain_off - (long)(st.trap_off + 2);
	ck_assert(d > 0 && d < 128);
	pg[0x800 + st.trap_off] = 0xeb;
	pg[0x800 + st.trap_off + 1] = (uint8_t)d;
	fn = (uint64_t(*)(uint64_t, uint64_t, uint64_t))(uintptr_t)pg;
	ck_assert_uint_eq(fn(1, 2, 40), 41);
	ck_assert_uint_eq(ep->ev, 3);
	ck_assert_uint_ne(ep->t_trap, 0);
	munmap(pg, 8192);
}
END_TEST

/*
 * An entry that compares and branches (test %rdi,%rdi; je): the stub moves
 * the je too, re-encoded as je rel32 to its own target, and runs it.
 */
START_TEST(stub_moves_jcc)
{
	static const uint8_t pick[] = {
	    0x48, 0x85, 0xff,		  /* test %rdi,%rdi */
	    0x74, 0x06,			  /* je +6 (to the second mov) */
	    0xb8, 0x01, 0x00, 0x00, 0x00, /* mov $1,%eax */
	    0xc3,			  /* ret */
	    0xb8, 0x02, 0x00, 0x00, 0x00, /* mov $2,%eax */
	    0xc3,			  /* ret */
	};
	struct insn_event_page *ep;
	struct insn_stub st;
	uint64_t base, (*fn)(uint64_t);
	uint8_t *pg = code_page(&base, &ep);

	if (!pg)
		return;
	memcpy(pg, pick, sizeof(pick));
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(pick), base, base + 0x800, 0, 0, 1, NULL, &st),
			 0);
	ck_assert_uint_eq(st.len, 5);
	ck_assert_ptr_nonnull(memmem(st.code, st.code_len, "\x0f\x84", 2));
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90; /* no tracer here: go on past the stop */
	fn = (uint64_t(*)(uint64_t))(uintptr_t)pg;
	ck_assert_uint_eq(fn(0) & 0xffffffff, 2);
	ck_assert_uint_eq(fn(7) & 0xffffffff, 1);
	munmap(pg, 8192);
}
END_TEST

/* A callee that returns its own return address: mov (%rsp),%rax; ret */
static const uint8_t callee[] = {0x48, 0x8b, 0x04, 0x24, 0xc3};

/*
 * Entries whose covered bytes end with an indirect call: through memory,
 * RIP-relative (sub $8,%rsp; call *hook(%rip), GCC's wrappers of its
 * targetm hooks), and through a register (mov %rdi,%rax; call *%rax). The
 * stub pushes the routine's own return address and jumps through the
 * call's operand: the callee sees the routine's return address (call_ret).
 * One that reads RSP (the push moves it) is refused.
 */
START_TEST(stub_emulates_indirect_call)
{
	static const uint8_t via_mem[] = {
	    0x48, 0x83, 0xec, 0x08,		/* sub $8,%rsp */
	    0xff, 0x15, 0x56, 0x00, 0x00, 0x00, /* call *0x56(%rip): the pointer at 0x60 */
	    0x48, 0x83, 0xc4, 0x08,		/* add $8,%rsp */
	    0xc3,				/* ret */
	};
	static const uint8_t via_reg[] = {
	    0x48, 0x89, 0xf8, /* mov %rdi,%rax */
	    0xff, 0xd0,	      /* call *%rax */
	    0xc3,	      /* ret */
	};
	static const uint8_t via_rsp[] = {
	    0x48, 0x83, 0xec, 0x08, /* sub $8,%rsp */
	    0xff, 0x54, 0x24, 0x08, /* call *8(%rsp) */
	    0x48, 0x83, 0xc4, 0x08, /* add $8,%rsp */
	    0xc3,		    /* ret */
	};
	struct insn_event_page *ep;
	struct insn_stub st;
	uint64_t base, ptr, (*fn)(uint64_t);
	uint8_t *pg = code_page(&base, &ep);

	if (!pg)
		return;
	memcpy(pg, via_mem, sizeof(via_mem));
	memcpy(pg + 0x40, callee, sizeof(callee));
	ptr = base + 0x40;
	memcpy(pg + 0x60, &ptr, 8);
	ck_assert_int_eq(
	    insn_plan_stub(pg, sizeof(via_mem), base, base + 0x800, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.len, 10);
	ck_assert_uint_eq(st.call_ret, base + 10);
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90; /* no tracer here: go on past the stop */
	fn = (uint64_t(*)(uint64_t))(uintptr_t)pg;
	ck_assert_uint_eq(fn(0), base + 10);

	memcpy(pg + 0x100, via_reg, sizeof(via_reg));
	ck_assert_int_eq(insn_plan_stub(pg + 0x100, sizeof(via_reg), base + 0x100, base + 0xa00, 0,
					0, 1, NULL, &st),
			 0);
	ck_assert_uint_eq(st.len, 5);
	ck_assert_uint_eq(st.call_ret, base + 0x105);
	memcpy(pg + 0xa00, st.code, st.code_len);
	memcpy(pg + 0x100, st.jmp, st.len);
	pg[0xa00 + st.trap_off] = 0x90;
	fn = (uint64_t(*)(uint64_t))(uintptr_t)(pg + 0x100);
	ck_assert_uint_eq(fn(base + 0x40), base + 0x105);

	ck_assert_int_eq(insn_plan_stub(via_rsp, sizeof(via_rsp), base + 0x200, base + 0xc00, 0, 0,
					1, NULL, &st),
			 1);
	ck_assert_str_eq(st.reason, "a branch among the first 5 bytes");
	munmap(pg, 8192);
}
END_TEST

/*
 * An entry whose covered bytes end with a relative call (push %rbx; call
 * f): the stub emulates the call, and the callee sees the routine's own
 * return address, which the stub says (call_ret).
 */
START_TEST(stub_emulates_call)
{
	static const uint8_t caller[] = {
	    0x53,			  /* push %rbx */
	    0xe8, 0x3a, 0x00, 0x00, 0x00, /* call +0x3a (to 0x40) */
	    0x5b,			  /* pop %rbx */
	    0xc3,			  /* ret */
	};
	struct insn_event_page *ep;
	struct insn_stub st;
	uint64_t base, (*fn)(void);
	uint8_t *pg = code_page(&base, &ep);

	if (!pg)
		return;
	memcpy(pg, caller, sizeof(caller));
	memcpy(pg + 0x40, callee, sizeof(callee));
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(caller), base, base + 0x800, 0, 0, 1, NULL, &st),
			 0);
	ck_assert_uint_eq(st.len, 6);
	ck_assert_uint_eq(st.call_ret, base + 6);
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90; /* no tracer here: go on past the stop */
	fn = (uint64_t(*)(void))(uintptr_t)pg;
	ck_assert_uint_eq(fn(), base + 6);
	/* a routine without a call in its first bytes emulates none */
	memcpy(pg + 0x100, frame42, sizeof(frame42));
	ck_assert_int_eq(insn_plan_stub(pg + 0x100, sizeof(frame42), base + 0x100, base + 0x800, 0,
					0, 1, NULL, &st),
			 0);
	ck_assert_uint_eq(st.call_ret, 0);
	munmap(pg, 8192);
}
END_TEST

/*
 * A loop back to the third instruction (+4): only 4 bytes before it, no
 * 5-byte jmp. fn(n, a) = a + 2n. Its padding after the ret (6 bytes).
 */
static const uint8_t loop4[] = {
    0x53,				/* 0x00 push %rbx */
    0x48, 0x89, 0xfb,			/* 0x01 mov %rdi,%rbx */
    0x48, 0x83, 0xc6, 0x02,		/* 0x04 add $2,%rsi  <- the loop */
    0x48, 0xff, 0xcb,			/* 0x08 dec %rbx */
    0x75, 0xf7,				/* 0x0b jne 0x04 */
    0x48, 0x89, 0xf0,			/* 0x0d mov %rsi,%rax */
    0x5b,				/* 0x10 pop %rbx */
    0xc3,				/* 0x11 ret */
    0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00, /* 0x12 nopw 0(%rax,%rax): padding */
};

/* Patch pg[at..] with a short entry's jmp rel8 and its padding's jmp rel32, the stub at 0x800. */
static void put_short(uint8_t *pg, uint64_t base, size_t at, const struct insn_stub *st)
{
	ck_assert_uint_ne(st->pad_addr, 0);
	memcpy(pg + 0x800, st->code, st->code_len);
	memcpy(pg + (st->pad_addr - base), st->pad, 5);
	memcpy(pg + at, st->jmp, st->len);
	pg[0x800 + st->trap_off] = 0x90; /* no tracer here: go on past the stop */
}

START_TEST(stub_short_entry)
{
	static const uint8_t prev[] = {0xb8, 0x07, 0x00, 0x00, 0x00, 0xc3}; /* mov $7,%eax; ret */
	struct insn_event_page *ep;
	struct insn_stub st;
	struct insn_gap gap;
	uint64_t base, (*fn)(uint64_t, uint64_t), (*pf)(void);
	uint8_t *pg = code_page(&base, &ep), code[sizeof(loop4)];

	if (!pg)
		return;
	/* 1: the padding after its own ret */
	memcpy(pg, loop4, sizeof(loop4));
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(loop4), base, base + 0x800, 0, 0, 1, NULL, &st),
			 0);
	ck_assert_uint_eq(st.len, 4);
	ck_assert_uint_eq(st.pad_addr, base + 0x12);
	ck_assert_uint_eq(st.jmp[0], 0xeb);
	ck_assert_uint_eq(st.pad[0], 0xe9);
	put_short(pg, base, 0, &st);
	fn = (uint64_t(*)(uint64_t, uint64_t))(uintptr_t)pg;
	ck_assert_uint_eq(fn(3, 10), 16);
	ck_assert_uint_eq(fn(1, 0), 2);

	/* 2: none of its own, but the gap after the routine before it (int3s) */
	memset(pg, 0xcc, 0x800);
	memcpy(pg + 0x100, prev, sizeof(prev));
	memcpy(pg + 0x110, loop4, 0x12);
	gap = (struct insn_gap){
	    .addr = base + 0x100, .bytes = pg + 0x100, .code_len = sizeof(prev), .len = 0x10};
	/* (without it, small and a leaf, it would run whole in its stub) */
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x110, 0x12, base + 0x110, base + 0x800, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.whole, 0x12);
	ck_assert_uint_eq(st.pad_addr, 0);
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x110, 0x12, base + 0x110, base + 0x800, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.whole, 0);
	ck_assert_uint_eq(st.pad_addr, base + 0x10b);
	put_short(pg, base, 0x110, &st);
	fn = (uint64_t(*)(uint64_t, uint64_t))(uintptr_t)(pg + 0x110);
	pf = (uint64_t(*)(void))(uintptr_t)(pg + 0x100);
	ck_assert_uint_eq(fn(2, 1), 5);
	ck_assert_uint_eq(pf() & 0xffffffff, 7);

	/* 3: padding that a branch reaches, or after a call, is no padding */
	memcpy(code, loop4, sizeof(loop4));
	memcpy(code + 0x0d, (const uint8_t[]){0xeb, 0x03, 0x90}, 3); /* jmp 0x12; nop */
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.pad_addr, 0); /* not a short entry: moved whole */
	ck_assert_uint_eq(st.whole, sizeof(code));
	memcpy(pg + 0x100, (const uint8_t[]){0xe8, 0, 0, 0, 0, 0xcc}, 6); /* call; int3 */
	gap.code_len = 5;
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x110, 0x12, base + 0x110, base + 0x800, 0, 0, 1, &gap, &st), 1);
	/* a loop to +1: one byte is no room for a jmp rel8 */
	ck_assert_int_eq(
	    insn_plan_stub(loop4 + 3, sizeof(loop4) - 3, ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);

	/*
	 * 4: too long to move whole (66 bytes), no padding of its own nor a gap
	 * before it, 10 bytes of padding after its end (insn_gap.tail: cc1's
	 * integer_zerop): the first 5 of them; with 9, none (the routine after
	 * it may take the last 5 as its gap).
	 */
	memset(pg, 0xcc, 0x800);
	memcpy(pg + 0x200, loop4, 0x0d);
	for (size_t k = 0; k < 16; k++)
		memcpy(pg + 0x20d + 3 * k, (const uint8_t[]){0x48, 0x89, 0xf0}, 3);
	memcpy(pg + 0x23d, loop4 + 0x0d, 5);
	memcpy(pg + 0x242, (const uint8_t[]){0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x90}, 10);
	gap = (struct insn_gap){.tail = 10};
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x200, 0x42, base + 0x200, base + 0x800, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason,
			 "a branch lands inside the first 5 bytes, no padding within reach");
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x200, 0x4c, base + 0x200, base + 0x800, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.len, 4);
	ck_assert_uint_eq(st.pad_addr, base + 0x242);
	put_short(pg, base, 0x200, &st);
	fn = (uint64_t(*)(uint64_t, uint64_t))(uintptr_t)(pg + 0x200);
	ck_assert_uint_eq(fn(3, 10), 16);
	ck_assert_uint_eq(fn(1, 0), 2);
	/*
	 * 5: a jcc before the loop's target (test %edi,%edi; je; then the
	 * loop: cc1's low_bitmask_len): it moves into the stub, re-encoded,
	 * and the short entry holds. Without the padding after it, small and
	 * a leaf, it runs whole in its stub.
	 */
	memset(pg + 0x300, 0xcc, 0x40);
	memcpy(pg + 0x300,
	       (const uint8_t[]){
		   0x85, 0xff,					/* 0x00 test %edi,%edi */
		   0x74, 0x08,					/* 0x02 je 0x0c */
		   0x48, 0x83, 0xc6, 0x02,			/* 0x04 add $2,%rsi  <- the loop */
		   0xff, 0xcf,					/* 0x08 dec %edi */
		   0x75, 0xf8,					/* 0x0a jne 0x04 */
		   0x48, 0x89, 0xf0,				/* 0x0c mov %rsi,%rax */
		   0xc3,					/* 0x0f ret */
		   0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x90, /* 0x10 padding */
	       },
	       0x1a);
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x300, 0x10, base + 0x300, base + 0x800, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.whole, 0x10);
	gap = (struct insn_gap){.tail = 10};
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x300, 0x1a, base + 0x300, base + 0x800, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.whole, 0);
	ck_assert_uint_eq(st.len, 4);
	ck_assert_uint_eq(st.pad_addr, base + 0x310);
	put_short(pg, base, 0x300, &st);
	fn = (uint64_t(*)(uint64_t, uint64_t))(uintptr_t)(pg + 0x300);
	ck_assert_uint_eq(fn(0, 7), 7);
	ck_assert_uint_eq(fn(3, 10), 16);
	gap.tail = 9;
	memcpy(pg + 0x200, loop4, 4);
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x200, 0x4b, base + 0x200, base + 0x800, 0, 0, 1, &gap, &st), 1);
	munmap(pg, 8192);
}
END_TEST

/*
 * A syscall among the first 5 bytes (glibc's __read_nocancel: xor
 * %eax,%eax; syscall): the instructions before it take a short entry, the
 * syscall stays in place. Its padding after its end: 10 bytes; or 8, then
 * code that is no routine's entry (glibc's memcpy@GLIBC_2.2.5: the tail
 * runs up to the next routine known, 16 bytes on); 8 up to the next
 * routine's entry are not enough (it may take their last 5 as its gap).
 */
START_TEST(stub_short_syscall)
{
	static const uint8_t rd[] = {
	    0x31, 0xc0,		    /* 0x00 xor %eax,%eax */
	    0x0f, 0x05,		    /* 0x02 syscall: read(fd, buf, n) */
	    0x48, 0x83, 0xc0, 0x01, /* 0x04 add $1,%rax */
	    0xc3,		    /* 0x08 ret */
	};
	static const uint8_t pad10[] = {0x66, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0, 0x90};
	static const uint8_t pad8_code[] = {
	    0x0f, 0x1f, 0x84, 0, 0, 0,	  0,	0,     /* nopl: 8 bytes */
	    0xb8, 0x07, 0,    0, 0, 0xc3, 0xcc, 0xcc}; /* mov; ret */
	struct insn_event_page *ep;
	struct insn_stub st;
	struct insn_gap gap = {.tail = 10};
	uint64_t base;
	long (*fn)(long, long, long);
	uint8_t *pg = code_page(&base, &ep);

	if (!pg)
		return;
	memset(pg, 0xcc, 0x800);
	memcpy(pg, rd, sizeof(rd));
	memcpy(pg + sizeof(rd), pad10, sizeof(pad10));
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(rd), base, base + 0x800, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "a branch among the first 5 bytes");
	ck_assert_int_eq(
	    insn_plan_stub(pg, sizeof(rd) + 10, base, base + 0x800, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.len, 2);
	ck_assert_uint_eq(st.pad_addr, base + sizeof(rd));
	put_short(pg, base, 0, &st);
	fn = (long (*)(long, long, long))(uintptr_t)pg;
	ck_assert_int_eq(fn(-1, 0, 0), -EBADF + 1);

	/* 8 bytes of padding, then code within the tail: no routine's entry */
	memset(pg, 0xcc, 0x800);
	memcpy(pg, rd, sizeof(rd));
	memcpy(pg + sizeof(rd), pad8_code, sizeof(pad8_code));
	gap.tail = 16;
	ck_assert_int_eq(
	    insn_plan_stub(pg, sizeof(rd) + 16, base, base + 0x800, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.pad_addr, base + sizeof(rd));
	put_short(pg, base, 0, &st);
	ck_assert_int_eq(fn(-1, 0, 0), -EBADF + 1);
	/* the same 8 bytes up to the next routine's entry */
	memcpy(pg, rd, sizeof(rd));
	gap.tail = 8;
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(rd) + 8, base, base + 0x800, 0, 0, 1, &gap, &st),
			 1);
	munmap(pg, 8192);
}
END_TEST

/*
 * A jcc and a ret among the covered bytes, not last (test %edi,%edi; jne;
 * xor %eax,%eax; ret): the jcc re-encoded to its own target, the ret run
 * in the stub. And a routine that is a load and a ret (5 bytes).
 */
START_TEST(stub_moves_branch_and_ret)
{
	static const uint8_t early[] = {
	    0x85, 0xff,			  /* 0x0 test %edi,%edi */
	    0x75, 0x03,			  /* 0x2 jne 0x7 */
	    0x31, 0xc0,			  /* 0x4 xor %eax,%eax */
	    0xc3,			  /* 0x6 ret */
	    0xb8, 0x05, 0x00, 0x00, 0x00, /* 0x7 mov $5,%eax */
	    0xc3,			  /* 0xc ret */
	};
	static const uint8_t status[] = {
	    0x0f, 0xb6, 0x47, 0x0a, /* movzbl 0xa(%rdi),%eax */
	    0xc3,		    /* ret */
	};
	static const uint8_t bytes[16] = {[10] = 0x2a};
	struct insn_event_page *ep;
	struct insn_stub st;
	uint64_t base, (*fn)(uint64_t), (*get)(const uint8_t *);
	uint8_t *pg = code_page(&base, &ep);

	if (!pg)
		return;
	memcpy(pg, early, sizeof(early));
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(early), base, base + 0x800, 0, 0, 1, NULL, &st),
			 0);
	ck_assert_uint_eq(st.len, 6);
	ck_assert_ptr_nonnull(memmem(st.code, st.code_len, "\x0f\x85", 2)); /* jne rel32 */
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90; /* no tracer here: go on past the stop */
	fn = (uint64_t(*)(uint64_t))(uintptr_t)pg;
	ck_assert_uint_eq(fn(0) & 0xffffffff, 0);
	ck_assert_uint_eq(fn(1) & 0xffffffff, 5);

	memcpy(pg + 0x100, status, sizeof(status));
	ck_assert_int_eq(insn_plan_stub(pg + 0x100, sizeof(status), base + 0x100, base + 0x900, 0,
					0, 2, NULL, &st),
			 0);
	ck_assert_uint_eq(st.len, 5);
	memcpy(pg + 0x900, st.code, st.code_len);
	memcpy(pg + 0x100, st.jmp, st.len);
	pg[0x900 + st.trap_off] = 0x90;
	get = (uint64_t(*)(const uint8_t *))(uintptr_t)(pg + 0x100);
	ck_assert_uint_eq(get(bytes) & 0xffffffff, 0x2a);
	munmap(pg, 8192);
}
END_TEST

/*
 * Routines shorter than a jmp: the jmp goes across the routine and the
 * padding after it (insn_gap.tail), and the whole routine runs in its
 * stub. Refused with no padding after it, or when it runs on into what
 * follows.
 */
START_TEST(stub_tiny_routine)
{
	static const uint8_t getter[] = {
	    0x48, 0x8b, 0x47, 0x08, /* mov 0x8(%rdi),%rax */
	    0xc3,		    /* ret (5 bytes: no tail needed) */
	};
	static const uint8_t zero[] = {
	    0x31, 0xc0,			  /* xor %eax,%eax */
	    0xc3,			  /* ret */
	    0x0f, 0x1f, 0x44, 0x00, 0x00, /* nopl 0(%rax,%rax): padding */
	};
	static const uint8_t load[] = {
	    0x8b, 0x47, 0x04,	    /* mov 0x4(%rdi),%eax */
	    0xc3,		    /* ret */
	    0xcc, 0xcc, 0xcc, 0xcc, /* int3 fill */
	};
	static const uint8_t cet[] = {
	    0xf3, 0x0f, 0x1e, 0xfa, /* endbr64 */
	    0x31, 0xc0,		    /* xor %eax,%eax */
	    0xc3,		    /* ret */
	    0x90, 0x90, 0x90,	    /* nops */
	};
	static const uint8_t packed[] = {
	    0x48, 0x89, 0xf8, /* mov %rdi,%rax */
	    0xc3,	      /* ret */
	    0x48, 0x89, 0xf8, /* the next routine: mov %rdi,%rax */
	    0xc3,
	};
	static const uint8_t runs_on[] = {
	    0x48, 0x89, 0xf8, /* mov %rdi,%rax: falls into the next */
	    0x90, 0x90, 0x90, 0x90,
	};
	struct insn_event_page *ep;
	struct insn_stub st;
	struct insn_gap gap = {0};
	uint64_t base, (*fn)(const void *);
	uint8_t *pg = code_page(&base, &ep);
	uint32_t w[2] = {5, 9};

	if (!pg)
		return;
	/* without the tail the routine is refused */
	ck_assert_int_eq(insn_plan_stub(zero, 3, ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "a routine shorter than a jmp, without padding after it");
	/* xor; ret; padding: the jmp covers 5 bytes, the stub moves 3 */
	memcpy(pg, zero, sizeof(zero));
	gap.tail = 5;
	ck_assert_int_eq(insn_plan_stub(pg, sizeof(zero), base, base + 0x800, 0, 0, 1, &gap, &st),
			 0);
	ck_assert_uint_eq(st.len, 5);
	ck_assert_uint_eq(st.jmp[0], 0xe9);
	ck_assert_ptr_nonnull(memmem(st.code, st.code_len, zero, 3));
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90; /* no tracer here: go on past the stop */
	fn = (uint64_t(*)(const void *))(uintptr_t)pg;
	ck_assert_uint_eq(fn(NULL) & 0xffffffff, 0);

	/* a load and a ret, int3 fill after it */
	memcpy(pg + 0x100, load, sizeof(load));
	gap.tail = 4;
	ck_assert_int_eq(insn_plan_stub(pg + 0x100, sizeof(load), base + 0x100, base + 0x900, 0, 0,
					2, &gap, &st),
			 0);
	memcpy(pg + 0x900, st.code, st.code_len);
	memcpy(pg + 0x100, st.jmp, st.len);
	pg[0x900 + st.trap_off] = 0x90;
	fn = (uint64_t(*)(const void *))(uintptr_t)(pg + 0x100);
	ck_assert_uint_eq(fn(w) & 0xffffffff, 9);

	/* endbr64 stays: the jmp after it, across xor; ret and two nops */
	gap.tail = 3;
	ck_assert_int_eq(insn_plan_stub(cet, sizeof(cet), ENTRY, SLOT, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.addr, ENTRY + 4);
	ck_assert_uint_eq(st.len, 5);

	/* 5 bytes are no tiny routine: the tail is not needed, nor covered */
	gap.tail = 0;
	ck_assert_int_eq(insn_plan_stub(getter, sizeof(getter), ENTRY, SLOT, 0, 0, 1, &gap, &st),
			 0);
	ck_assert_uint_eq(st.len, 5);

	/* the next routine right after it: not padding */
	gap.tail = 4;
	ck_assert_int_eq(insn_plan_stub(packed, sizeof(packed), ENTRY, SLOT, 0, 0, 1, &gap, &st),
			 1);
	ck_assert_str_eq(st.reason, "a routine shorter than a jmp, without padding after it");
	/* code that runs on into the padding is no routine to move */
	gap.tail = 4;
	ck_assert_int_eq(insn_plan_stub(runs_on, sizeof(runs_on), ENTRY, SLOT, 0, 0, 1, &gap, &st),
			 1);
	ck_assert_str_eq(st.reason,
			 "a routine shorter than a jmp that runs on into what follows it");
	munmap(pg, 8192);
}
END_TEST

/*
 * A routine entered past its first instruction by the code before it
 * (glibc's mempcpy: mov %rdi,%rax; add %rdx,%rax; jmp memmove+3): that
 * code's branches (insn_gap.near) count as the routine's own. The jmp
 * would cover memmove+3: a short entry instead, through padding.
 */
START_TEST(stub_entered_inside)
{
	static const uint8_t code[] = {
	    /* 0x00 pcpy: */
	    0x48, 0x89, 0xf8,				    /* 0x00 mov %rdi,%rax */
	    0x48, 0x01, 0xf0,				    /* 0x03 add %rsi,%rax */
	    0xeb, 0x0b,					    /* 0x06 jmp 0x13 (move+3) */
	    0x0f, 0x1f, 0x84, 0x00, 0x00, 0x00, 0x00, 0x00, /* 0x08 nopl: padding */
	    /* 0x10 move: */
	    0x48, 0x89, 0xf8,	    /* 0x10 mov %rdi,%rax */
	    0x48, 0x83, 0xc0, 0x01, /* 0x13 add $1,%rax */
	    0xc3,		    /* 0x17 ret */
	};
	struct insn_event_page *ep;
	struct insn_stub st;
	struct insn_gap gap = {0};
	uint64_t base, (*move)(uint64_t), (*pcpy)(uint64_t, uint64_t);
	uint8_t *pg = code_page(&base, &ep);

	if (!pg)
		return;
	memcpy(pg, code, sizeof(code));
	/* alone, move looks like any routine: a jmp over its first 7 bytes */
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x10, 8, base + 0x10, base + 0x800, 0, 0, 1, NULL, &st), 0);
	ck_assert_uint_eq(st.len, 7);
	/* with the code before it, refused (not moved whole: it is entered) but through padding */
	gap.near_addr = base;
	gap.near = pg;
	gap.near_len = 0x10;
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x10, 8, base + 0x10, base + 0x800, 0, 0, 1, &gap, &st), 1);
	ck_assert_str_eq(st.reason,
			 "a branch lands inside the first 5 bytes, and other code enters it");
	/* pcpy's padding (after its jmp, which nothing reaches) takes the jmp rel32 */
	gap.addr = base;
	gap.bytes = pg;
	gap.code_len = 8;
	gap.len = 0x10;
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x10, 8, base + 0x10, base + 0x800, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.len, 3);
	ck_assert_uint_eq(st.pad_addr, base + 0x0b);
	put_short(pg, base, 0x10, &st);
	move = (uint64_t(*)(uint64_t))(uintptr_t)(pg + 0x10);
	pcpy = (uint64_t(*)(uint64_t, uint64_t))(uintptr_t)pg;
	ck_assert_uint_eq(move(41), 42);
	ck_assert_uint_eq(pcpy(40, 2), 43); /* past the stub, as before */
	/* code before it that cannot be decoded (an instruction cut short): no guess */
	gap.bytes = NULL;
	gap.near = (const uint8_t[]){0x90, 0x48, 0x8b};
	gap.near_addr = base + 0x10 - 3;
	gap.near_len = 3;
	ck_assert_int_eq(
	    insn_plan_stub(code + 0x10, 8, base + 0x10, base + 0x800, 0, 0, 1, &gap, &st), 1);
	ck_assert_str_eq(st.reason, "the code before it not fully decodable");
	munmap(pg, 8192);
}
END_TEST

/*
 * An indirect function's target has a guessed end (insn_gap.open_end):
 * an instruction cut by the end, or code that cannot be decoded after a
 * ret, ends the walk without a refusal; code that cannot be decoded where
 * the routine runs on still refuses.
 */
START_TEST(stub_open_end)
{
	uint8_t fn[40];
	struct insn_stub st;
	struct insn_gap gap = {0};
	static const uint8_t body[] = {
	    0x48, 0x89, 0xf8,	    /* mov %rdi,%rax */
	    0x48, 0x83, 0xc0, 0x01, /* add $1,%rax */
	    0xc3,		    /* ret */
	};

	memcpy(fn, body, sizeof(body));
	fn[8] = 0x48; /* an instruction cut by the end */
	fn[9] = 0x8b;
	ck_assert_int_eq(insn_plan_stub(fn, 10, ENTRY, SLOT, 0, 0, 1, &gap, &st), 1);
	ck_assert_str_eq(st.reason, "routine not fully decodable");
	gap.open_end = true;
	ck_assert_int_eq(insn_plan_stub(fn, 10, ENTRY, SLOT, 0, 0, 1, &gap, &st), 0);
	ck_assert_uint_eq(st.len, 7);
	/* after the ret, a byte that is no instruction in 64-bit mode, then code */
	memset(fn + 8, 0x90, sizeof(fn) - 8);
	fn[8] = 0x06;
	ck_assert_int_eq(insn_plan_stub(fn, sizeof(fn), ENTRY, SLOT, 0, 0, 1, &gap, &st), 0);
	gap.open_end = false;
	ck_assert_int_eq(insn_plan_stub(fn, sizeof(fn), ENTRY, SLOT, 0, 0, 1, &gap, &st), 1);
	/* where the routine runs on into it: refused, a guess or not */
	gap.open_end = true;
	fn[7] = 0x90; /* the ret a nop */
	ck_assert_int_eq(insn_plan_stub(fn, sizeof(fn), ENTRY, SLOT, 0, 0, 1, &gap, &st), 1);
	ck_assert_str_eq(st.reason, "routine not fully decodable");
}
END_TEST

/*
 * A loop back to the second instruction and no padding within reach: a
 * small leaf routine runs whole in its stub, its branches re-aimed at the
 * copy (a linked list's length, as python's _PyWeakref_GetWeakrefCount).
 * Refused with a call, a branch out of it, or code before it that enters
 * its body.
 */
START_TEST(stub_whole_routine)
{
	static const uint8_t count[] = {
	    0x31, 0xc0,		    /* 0x00 xor %eax,%eax */
	    0x48, 0x85, 0xff,	    /* 0x02 test %rdi,%rdi  <- the loop */
	    0x74, 0x09,		    /* 0x05 je 0x10 */
	    0x48, 0x8b, 0x7f, 0x08, /* 0x07 mov 0x8(%rdi),%rdi */
	    0x48, 0xff, 0xc0,	    /* 0x0b inc %rax */
	    0xeb, 0xf2,		    /* 0x0e jmp 0x02 */
	    0xc3,		    /* 0x10 ret */
	};
	static const uint8_t runs_on[] = {
	    0x31, 0xc0,	      /* 0x0 xor %eax,%eax */
	    0xff, 0xc0,	      /* 0x2 inc %eax  <- the loop */
	    0x83, 0xf8, 0x03, /* 0x4 cmp $3,%eax */
	    0x75, 0xf9,	      /* 0x7 jne 0x2 */
	};
	struct node {
		long v;
		struct node *next;
	} nodes[4] = {{0, &nodes[1]}, {0, &nodes[2]}, {0, &nodes[3]}, {0, NULL}};
	struct insn_event_page *ep;
	struct insn_stub st;
	struct insn_gap gap = {0};
	uint64_t base, (*fn)(const struct node *);
	uint8_t *pg = code_page(&base, &ep), code[sizeof(count)];

	if (!pg)
		return;
	memcpy(pg + 0x40, count, sizeof(count));
	ck_assert_int_eq(
	    insn_plan_stub(pg + 0x40, sizeof(count), base + 0x40, base + 0x800, 0, 0, 1, NULL, &st),
	    0);
	ck_assert_uint_eq(st.whole, sizeof(count));
	ck_assert_uint_eq(st.len, 5);
	ck_assert_uint_eq(st.pad_addr, 0);
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg + 0x40, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90;		    /* no tracer here: go on past the stop */
	memset(pg + 0x45, 0xcc, sizeof(count) - 5); /* nothing runs the original any more */
	fn = (uint64_t(*)(const struct node *))(uintptr_t)(pg + 0x40);
	ck_assert_uint_eq(fn(nodes), 4);
	ck_assert_uint_eq(fn(&nodes[2]), 2);
	ck_assert_uint_eq(fn(NULL), 0);

	/* one that runs on at its end goes on there, after the copy */
	memcpy(pg + 0x80, runs_on, sizeof(runs_on));
	pg[0x80 + sizeof(runs_on)] = 0xc3; /* what follows it: ret */
	ck_assert_int_eq(insn_plan_stub(pg + 0x80, sizeof(runs_on), base + 0x80, base + 0x900, 0, 0,
					2, NULL, &st),
			 0);
	ck_assert_uint_eq(st.whole, sizeof(runs_on));
	memcpy(pg + 0x900, st.code, st.code_len);
	memcpy(pg + 0x80, st.jmp, st.len);
	pg[0x900 + st.trap_off] = 0x90;
	fn = (uint64_t(*)(const struct node *))(uintptr_t)(pg + 0x80);
	ck_assert_uint_eq(fn(NULL) & 0xffffffff, 3);

	/* a branch out of it (a cold part may come back into the original) */
	memcpy(code, count, sizeof(count));
	code[6] = 0x20; /* je 0x27 */
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason,
			 "a branch lands inside the first 5 bytes, and one leaves the routine");
	/* a call */
	memcpy(code, count, sizeof(count));
	memcpy(code + 7, (const uint8_t[]){0xe8, 0, 0, 0, 0}, 5); /* call; then 2 bytes */
	code[12] = 0x90;
	code[13] = 0x90;
	ck_assert_int_eq(insn_plan_stub(code, sizeof(code), ENTRY, SLOT, 0, 0, 1, NULL, &st), 1);
	ck_assert_str_eq(st.reason, "a branch lands inside the first 5 bytes, and a call or an "
				    "indirect branch in the routine");
	/* code before it that jumps into its body */
	gap.near = (const uint8_t[]){0xeb, 0x0c}; /* jmp entry+0xb */
	gap.near_addr = ENTRY - 2;
	gap.near_len = 2;
	ck_assert_int_eq(insn_plan_stub(count, sizeof(count), ENTRY, SLOT, 0, 0, 1, &gap, &st), 1);
	ck_assert_str_eq(st.reason,
			 "a branch lands inside the first 5 bytes, and other code enters it");
	munmap(pg, 8192);
}
END_TEST

START_TEST(stub_count)
{
	uint8_t *pg;
	struct insn_event_page *ep;
	struct insn_stub st;
	uint64_t base, (*fn)(void);

	pg = code_page(&base, &ep);
	if (!pg)
		return;
	memcpy(pg, frame42, sizeof(frame42));
	/* Counting (no return trap): the plain path follows the stop at once. */
	ck_assert_int_eq(
	    insn_plan_stub(pg, sizeof(frame42), base, base + 0x800, 0, base + 0x1000, 5, NULL, &st),
	    0);
	ck_assert_uint_eq(st.plain_off, st.trap_off + 1);
	memcpy(pg + 0x800, st.code, st.code_len);
	memcpy(pg, st.jmp, st.len);
	pg[0x800 + st.trap_off] = 0x90;
	fn = (uint64_t(*)(void))(uintptr_t)pg;
	/* the routine returns normally, and the page says which entry */
	ck_assert_uint_eq(call_once_site(fn) & 0xffffffff, 42);
	ck_assert_uint_eq(ep->ev, 5);
	munmap(pg, 8192);
}
END_TEST

/* Exit probes: the `ret`s of a whole routine, and what makes it refuse. */
START_TEST(exit_scan)
{
	uint8_t fn[] = {
	    0x49, 0x3b, 0x66, 0x10,	  /* 0x00 cmp 0x10(%r14),%rsp */
	    0x76, 0x07,			  /* 0x04 jbe 0x0d */
	    0x31, 0xc0,			  /* 0x06 xor %eax,%eax */
	    0xc3,			  /* 0x08 ret */
	    0x48, 0x85, 0xc0,		  /* 0x09 test %rax,%rax */
	    0xc3,			  /* 0x0c ret */
	    0xe8, 0x00, 0x10, 0x00, 0x00, /* 0x0d call (out of it: fine) */
	    0xeb, 0xec,			  /* 0x12 jmp 0x00 (its own entry) */
	    0xcc, 0xcc,			  /* 0x14 padding */
	};
	uint64_t rets[4];
	size_t n;
	const char *why;

	ck_assert_int_eq(insn_scan_exits(fn, sizeof(fn), ENTRY, rets, 4, &n, &why), 0);
	ck_assert_ptr_null(why);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(rets[0], ENTRY + 0x08);
	ck_assert_uint_eq(rets[1], ENTRY + 0x0c);
	/* more returns than room */
	ck_assert_int_eq(insn_scan_exits(fn, sizeof(fn), ENTRY, rets, 1, &n, &why), 1);
	ck_assert_str_eq(why, "too many return instructions");
	/* a jmp out of the routine: a tail call, its exit unseen */
	fn[0x12] = 0xeb;
	fn[0x13] = 0x10;
	ck_assert_int_eq(insn_scan_exits(fn, sizeof(fn), ENTRY, rets, 4, &n, &why), 1);
	ck_assert_str_eq(why, "leaves by a jump (a tail call)");
	fn[0x13] = 0xec;
	/* ret imm16 */
	fn[0x0c] = 0xc2;
	ck_assert_int_eq(insn_scan_exits(fn, 0x0f, ENTRY, rets, 4, &n, &why), 1);
	ck_assert_str_eq(why, "returns with `ret imm`");
	/* bytes that are no instruction */
	fn[0x0c] = 0xd6;
	ck_assert_int_eq(insn_scan_exits(fn, sizeof(fn), ENTRY, rets, 4, &n, &why), 1);
	ck_assert_str_eq(why, "not fully decodable");
}
END_TEST

/*
 * Go's in-process exits: where a jmp over each `ret`'s epilogue may start
 * (insn_go_exits), and the stub that runs the epilogue (insn_plan_go_exit).
 */
START_TEST(go_exit_covers)
{
	uint8_t fn[] = {
	    0x49, 0x3b, 0x66, 0x10,	  /* 00 cmp 0x10(%r14),%rsp */
	    0x76, 0x17,			  /* 04 jbe 0x1d */
	    0x48, 0x83, 0xec, 0x18,	  /* 06 sub $0x18,%rsp */
	    0x48, 0x85, 0xc0,		  /* 0a test %rax,%rax */
	    0x74, 0x09,			  /* 0d je 0x18 */
	    0x48, 0x8b, 0x6c, 0x24, 0x10, /* 0f mov 0x10(%rsp),%rbp */
	    0x48, 0x83, 0xc4, 0x18,	  /* 14 add $0x18,%rsp */
	    0xc3,			  /* 18 ret (a branch's target) */
	    0x48, 0x89, 0xd0,		  /* 19 mov %rdx,%rax */
	    0xc3,			  /* 1c ret: 4 bytes, then padding */
	    0xcc, 0xcc, 0xcc, 0xcc,	  /* 1d padding */
	};
	uint64_t rets[2] = {ENTRY + 0x18, ENTRY + 0x1c}, starts[2];
	uint8_t code[INSN_GO_EXIT_SIZE], jmp[16];
	size_t len;
	unsigned trap, full;
	const char *why;

	/* the first: a branch lands on its ret */
	ck_assert_int_eq(insn_go_exits(fn, 0x1d, 4, ENTRY, rets, 2, starts, &why), 1);
	ck_assert_str_eq(why, "a branch lands in the epilogue a jmp at a `ret` would cover");
	/* the je lands before the epilogue: mov and add moved (the first may be a target) */
	fn[0x0e] = 0x00;
	ck_assert_int_eq(insn_go_exits(fn, 0x1d, 4, ENTRY, rets, 2, starts, &why), 0);
	ck_assert_uint_eq(starts[0], ENTRY + 0x14);
	/* the last: the ret and the padding after the routine */
	ck_assert_uint_eq(starts[1], ENTRY + 0x1c);
	/* no padding: the ret before mov %rdx,%rax cannot move */
	ck_assert_int_eq(insn_go_exits(fn, 0x1d, 0, ENTRY, rets, 2, starts, &why), 1);
	ck_assert_str_eq(why, "the code before a `ret` cannot move (a branch, a call, "
			      "RIP-relative)");
	/* a call's return address (goroutines resume there) covered but first: no */
	{
		const uint8_t f2[] = {0xe8, 0, 0, 0, 0, 0x90, 0xc3};
		uint64_t r2 = ENTRY + 6;

		ck_assert_int_eq(insn_go_exits(f2, sizeof(f2), 0, ENTRY, &r2, 1, starts, &why), 1);
		ck_assert_str_eq(why,
				 "a branch lands in the epilogue a jmp at a `ret` would cover");
		ck_assert_int_eq(insn_go_exits(f2, sizeof(f2), 4, ENTRY, &r2, 1, starts, &why), 0);
		ck_assert_uint_eq(starts[0], ENTRY + 6);
	}

	/* the stub: the epilogue less its ret, then code that records and returns */
	ck_assert_int_eq(insn_plan_go_exit(fn + 0x14, 5, 5, ENTRY + 0x14, ENTRY + 0x1000, 7, code,
					   &len, jmp, &trap, &full),
			 0);
	ck_assert_mem_eq(code, fn + 0x14, 4);
	ck_assert_uint_eq(code[trap], 0xcc);
	ck_assert_uint_eq(len, trap + 1u);
	ck_assert_uint_eq(jmp[0], 0xe9);
	ck_assert_int_eq((int32_t)(jmp[1] | jmp[2] << 8 | jmp[3] << 16 | (uint32_t)jmp[4] << 24),
			 0x1000 - 0x14 - 5);
	/* a ret and padding: the jmp covers both */
	ck_assert_int_eq(insn_plan_go_exit((const uint8_t[]){0xc3}, 1, 5, ENTRY, ENTRY + 0x1000, 7,
					   code, &len, jmp, &trap, &full),
			 0);
	ck_assert_uint_eq(trap + 1u, len);
	/* not a ret at the end, or out of reach */
	ck_assert_int_eq(insn_plan_go_exit(fn + 0x0f, 5, 5, ENTRY, ENTRY + 0x1000, 7, code, &len,
					   jmp, &trap, &full),
			 1);
	ck_assert_int_eq(insn_plan_go_exit(fn + 0x14, 5, 5, ENTRY, ENTRY + (1ull << 32), 7, code,
					   &len, jmp, &trap, &full),
			 1);
}
END_TEST

/* Two plans of one stub are the same, byte for byte and in what they note. */
static void same_stub(const struct insn_stub *a, const struct insn_stub *b, const char *what)
{
	ck_assert_msg(a->addr == b->addr && a->len == b->len && a->code_len == b->code_len &&
			  a->pad_addr == b->pad_addr && a->call_ret == b->call_ret &&
			  a->whole == b->whole && a->trap_off == b->trap_off &&
			  a->plain_off == b->plain_off && a->full_off == b->full_off &&
			  a->throttle_off == b->throttle_off && a->n_rel == b->n_rel,
		      "%s: the stubs' fields differ", what);
	ck_assert_uint_le(a->n_rel, INSN_REL_MAX);
	ck_assert_msg(!memcmp(a->code, b->code, a->code_len), "%s: the stubs' code differs", what);
	ck_assert_msg(!memcmp(a->jmp, b->jmp, sizeof(a->jmp)), "%s: the jmps differ", what);
	ck_assert_msg(!memcmp(a->pad, b->pad, sizeof(a->pad)), "%s: the padding differs", what);
	ck_assert_msg(!memcmp(a->rel, b->rel, a->n_rel * sizeof(a->rel[0])),
		      "%s: the stubs' relocations differ", what);
}

/*
 * insn_stub_move: a stub planned for one place (a PIE's load bias, the
 * stub's address, the return trap, trampoline and event page), moved to
 * another, is the stub planned there, for each shape (RIP-relative
 * operands, a jcc, an emulated call, a short entry, a routine moved whole,
 * endbr64) and each kind of stub (classic with and without an event page,
 * counting, and the probes' modes), its patch number another (a library in
 * another program); one that no longer reaches is refused, and a probe
 * moved to a patch number without a counter.
 */
START_TEST(stub_move)
{
	static const uint8_t rip2[] = {
	    0xf3, 0x0f, 0x1e, 0xfa,		      /* endbr64 */
	    0x48, 0x8b, 0x05, 0x00, 0x10, 0x00, 0x00, /* mov 0x1000(%rip),%rax */
	    0x48, 0x8d, 0x15, 0xf0, 0xff, 0xff, 0xff, /* lea -0x10(%rip),%rdx */
	    0xc3,				      /* ret */
	};
	static const uint8_t pick[] = {
	    0x48, 0x85, 0xff, 0x74, 0x06, 0xb8, 0x01, 0x00, 0x00,
	    0x00, 0xc3, 0xb8, 0x02, 0x00, 0x00, 0x00, 0xc3,
	};
	static const uint8_t caller[] = {0x53, 0xe8, 0x3a, 0x00, 0x00, 0x00, 0x5b, 0xc3};
	static const uint8_t count[] = {
	    0x31, 0xc0, 0x48, 0x85, 0xff, 0x74, 0x09, 0x48, 0x8b,
	    0x7f, 0x08, 0x48, 0xff, 0xc0, 0xeb, 0xf2, 0xc3,
	};
	/* a loop back to its second instruction, a RIP-relative load in it: moved whole */
	static const uint8_t whole_rip[] = {
	    0x31, 0xc0,				/* xor %eax,%eax */
	    0x03, 0x05, 0x00, 0x20, 0x00, 0x00, /* add 0x2000(%rip),%eax  <- the loop */
	    0xff, 0xcf,				/* dec %edi */
	    0x75, 0xf6,				/* jne 2 */
	    0xc3,				/* ret */
	};
	static const struct {
		const uint8_t *code;
		size_t n;
		const char *name;
	} fns[] = {
	    {frame42, sizeof(frame42), "frame42"},
	    {rip2, sizeof(rip2), "rip2"},
	    {pick, sizeof(pick), "pick"},
	    {caller, sizeof(caller), "caller"},
	    {loop4, sizeof(loop4), "loop4"},
	    {count, sizeof(count), "count"},
	    {whole_rip, sizeof(whole_rip), "whole_rip"},
	};
	const struct insn_place a = {.bias = 0x555555554000ull,
				     .stub = 0x555555754000ull,
				     .retrap = 0x555555753000ull,
				     .tramp = 0x555555753040ull,
				     .page = 0x7ffff7ff0000ull,
				     .patch = 7};
	const struct insn_place b = {.bias = 0x5612aaa9d000ull,
				     .stub = 0x5612aa79d000ull,
				     .retrap = 0x5612aa79c000ull,
				     .tramp = 0x5612aa79c040ull,
				     .page = 0x7ffff7fd0000ull,
				     .patch = 4000};
	struct insn_place far = b;
	struct insn_stub st, fresh;
	int moved = 0;

	far.stub = b.bias + 3 * GIB;
	for (size_t f = 0; f < sizeof(fns) / sizeof(fns[0]); f++) {
		const uint64_t off = 0x1100;

		for (int kind = 0; kind < 7; kind++) {
			const struct insn_place *pl[3] = {&a, &b, &far};
			struct insn_stub s3[3];
			int rc[3];
			char what[64];

			snprintf(what, sizeof(what), "%s, kind %d", fns[f].name, kind);
			for (int k = 0; k < 3; k++) {
				const struct insn_place *p = pl[k];

				if (kind < 3) /* classic: timed with a page, without, counting */
					rc[k] = insn_plan_stub(fns[f].code, fns[f].n, p->bias + off,
							       p->stub, kind == 2 ? 0 : p->retrap,
							       kind == 1 ? 0 : p->page,
							       p->patch + 1, NULL, &s3[k]);
				else
					rc[k] = insn_plan_probe(
					    fns[f].code, fns[f].n, p->bias + off, p->stub, p->tramp,
					    p->retrap, p->patch, (enum insn_probe_mode)(kind - 3),
					    NULL, &s3[k]);
			}
			ck_assert_msg(rc[0] == 0 && rc[1] == 0, "%s: not planned", what);
			ck_assert_uint_ne(s3[0].n_rel, 0);
			/* moved from a to b: as planned at b; and back */
			st = s3[0];
			ck_assert_int_eq(insn_stub_move(&st, &a, &b), 0);
			same_stub(&st, &s3[1], what);
			ck_assert_int_eq(insn_stub_move(&st, &b, &a), 0);
			same_stub(&st, &s3[0], what);
			/* the stub 3 GiB from its code: refused both ways */
			ck_assert_int_eq(rc[2], 1);
			ck_assert_msg(s3[2].placed, "%s: a reach refusal not said placed", what);
			st = s3[0];
			ck_assert_int_eq(insn_stub_move(&st, &a, &far), 1);
			if (kind >= 3) { /* a probe: no counter for that patch number */
				struct insn_place nctr = b;

				nctr.patch = PROBE_CTR_N;
				st = s3[0];
				ck_assert_int_eq(insn_stub_move(&st, &a, &nctr), 1);
			}
			moved++;
		}
	}
	ck_assert_int_eq(moved, 7 * 7);
	/* the shapes: the short entry's padding, the call, the whole routine moved */
	ck_assert_int_eq(
	    insn_plan_stub(loop4, sizeof(loop4), a.bias, a.stub, a.retrap, 0, 1, NULL, &fresh), 0);
	ck_assert_uint_eq(fresh.pad_addr, a.bias + 0x12);
	st = fresh;
	ck_assert_int_eq(insn_stub_move(&st, &a, &b), 0);
	ck_assert_uint_eq(st.pad_addr, b.bias + 0x12);
	ck_assert_int_eq(insn_plan_stub(whole_rip, sizeof(whole_rip), a.bias, a.stub, a.retrap, 0,
					1, NULL, &fresh),
			 0);
	ck_assert_uint_eq(fresh.whole, sizeof(whole_rip));
	ck_assert_int_eq(
	    insn_plan_stub(caller, sizeof(caller), a.bias, a.stub, a.retrap, 0, 1, NULL, &fresh),
	    0);
	st = fresh;
	ck_assert_int_eq(insn_stub_move(&st, &a, &b), 0);
	ck_assert_uint_eq(st.call_ret, b.bias + 6);

	/* refused on its code alone (a call first): not placed, whatever the addresses */
	ck_assert_int_eq(insn_plan_stub((const uint8_t[]){0xff, 0xd0, 0x31, 0xc0, 0xc3, 0x90}, 6,
					a.bias, a.stub, a.retrap, 0, 1, NULL, &fresh),
			 1);
	ck_assert(!fresh.placed);
}
END_TEST

static Suite *insn_suite(void)
{
	Suite *s = suite_create("insn");
	TCase *tc;

	tc = tcase_create("xol");
	tcase_add_test(tc, xol_push_rbp);
	tcase_add_test(tc, xol_endbr64);
	tcase_add_test(tc, xol_ordinary);
	tcase_add_test(tc, riprel);
	tcase_add_test(tc, riprel_exact);
	tcase_add_test(tc, out_of_range);
	tcase_add_test(tc, text_fits);
	tcase_add_test(tc, run_xol);
	tcase_add_test(tc, stub_layout);
	tcase_add_test(tc, stub_refusals);
	tcase_add_test(tc, stub_run);
	tcase_add_test(tc, stub_event_page);
	tcase_add_test(tc, rsite_keeps_return_value);
	tcase_add_test(tc, traps_keep_r11);
	tcase_add_test(tc, stub_plain_keeps_arguments);
	tcase_add_test(tc, stub_count);
	tcase_add_test(tc, stub_moves_jcc);
	tcase_add_test(tc, stub_emulates_call);
	tcase_add_test(tc, stub_emulates_indirect_call);
	tcase_add_test(tc, stub_moves_branch_and_ret);
	tcase_add_test(tc, stub_short_entry);
	tcase_add_test(tc, stub_short_syscall);
	tcase_add_test(tc, stub_walk_mixed);
	tcase_add_test(tc, stub_walk_pkru);
	tcase_add_test(tc, stub_tiny_routine);
	tcase_add_test(tc, stub_entered_inside);
	tcase_add_test(tc, stub_open_end);
	tcase_add_test(tc, stub_whole_routine);
	tcase_add_test(tc, stub_move);
	suite_add_tcase(s, tc);

	tc = tcase_create("emulate");
	tcase_add_test(tc, emulate_call);
	tcase_add_test(tc, emulate_jmp);
	tcase_add_test(tc, emulate_jcc);
	tcase_add_test(tc, emulate_jrcxz);
	tcase_add_test(tc, cond_table);
	suite_add_tcase(s, tc);

	tc = tcase_create("refuse");
	tcase_add_test(tc, refuse_junk);
	tcase_add_test(tc, refuse_int3);
	tcase_add_test(tc, refuse_indirect);
	tcase_add_test(tc, indirect_jmp_xol);
	tcase_add_test(tc, riprel_sse_66);
	tcase_add_test(tc, refuse_loop);
	tcase_add_test(tc, refuse_other_branches);
	suite_add_tcase(s, tc);

	tc = tcase_create("return_site");
	tcase_add_test(tc, return_sites);
	tcase_add_test(tc, exit_scan);
	tcase_add_test(tc, go_exit_covers);
	tcase_add_test(tc, return_site_real);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(insn_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	insn_cleanup();
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
