// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_lendec.c - Check suite for lendec.c: hand-written instructions of
 * every class, then the fast decoder against capstone over real code.
 */
#include "../src/arch/x86_64/lendec.h"

#include <capstone/capstone.h>
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AT 0x1000ULL
#define NOTGT ((uint64_t)-1)

static csh cs;

/* capstone as the stub walks read it (keep in step with insn_int.h's is_pad, ends_flow). */
static unsigned cs_flags(const cs_insn *in, uint64_t *target)
{
	const cs_x86 *x = &in->detail->x86;
	unsigned f = 0;

	for (unsigned i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == X86_GRP_BRANCH_RELATIVE && x->op_count >= 1 &&
		    x->operands[0].type == X86_OP_IMM) {
			f |= X86_LD_BRANCH;
			*target = (uint64_t)x->operands[0].imm;
		}
	if (in->id == X86_INS_NOP || in->id == X86_INS_INT3)
		f |= X86_LD_PAD;
	if (in->id == X86_INS_JMP || in->id == X86_INS_RET || in->id == X86_INS_UD2)
		f |= X86_LD_ENDS;
	return f;
}

struct hand {
	const char *what;
	uint8_t b[16];
	unsigned n;   /* bytes given */
	unsigned len; /* expected length, 0: unknown */
	unsigned flags;
	uint64_t target; /* expected branch target */
};

#define BR X86_LD_BRANCH
#define PAD X86_LD_PAD
#define END X86_LD_ENDS

static const struct hand hands[] = {
    /* padding */
    {"nop", {0x90}, 1, 1, PAD, 0},
    {"xchg %ax,%ax", {0x66, 0x90}, 2, 2, PAD, 0},
    {"nopl (%rax)", {0x0f, 0x1f, 0x00}, 3, 3, PAD, 0},
    {"nopl 0(%rax)", {0x0f, 0x1f, 0x40, 0}, 4, 4, PAD, 0},
    {"nopl 0(%rax,%rax)", {0x0f, 0x1f, 0x44, 0, 0}, 5, 5, PAD, 0},
    {"nopw 0(%rax,%rax)", {0x66, 0x0f, 0x1f, 0x44, 0, 0}, 6, 6, PAD, 0},
    {"nopl 0L(%rax)", {0x0f, 0x1f, 0x80, 0, 0, 0, 0}, 7, 7, PAD, 0},
    {"nopl 0L(%rax,%rax)", {0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, 8, 8, PAD, 0},
    {"cs nopw", {0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, 10, 10, PAD, 0},
    {"data16 cs nopw", {0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0}, 11, 11, PAD, 0},
    {"15-byte nopw",
     {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},
     15,
     15,
     PAD,
     0},
    {"16 bytes",
     {0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0},
     16,
     0,
     0,
     0},
    {"int3", {0xcc}, 1, 1, PAD, 0},
    {"xchg %eax,%r8d", {0x41, 0x90}, 2, 2, 0, 0},
    {"endbr64 (not padding)", {0xf3, 0x0f, 0x1e, 0xfa}, 4, 4, 0, 0},
    {"endbr32", {0xf3, 0x0f, 0x1e, 0xfb}, 4, 4, 0, 0},
    {"hint nop 0f 1e (unknown)", {0x0f, 0x1e, 0xc0}, 3, 0, 0, 0},
    {"data16 nop (66 66 90)", {0x66, 0x66, 0x90}, 3, 3, PAD, 0},
    {"cs nop (unknown)", {0x2e, 0x90}, 2, 0, 0, 0},
    {"rex.W nop (unknown)", {0x48, 0x90}, 2, 0, 0, 0},
    {"pause (unknown)", {0xf3, 0x90}, 2, 0, 0, 0},
    /* ends of the flow */
    {"ret", {0xc3}, 1, 1, END, 0},
    {"repz ret", {0xf3, 0xc3}, 2, 2, END, 0},
    {"ret $8", {0xc2, 8, 0}, 3, 3, END, 0},
    {"ud2", {0x0f, 0x0b}, 2, 2, END, 0},
    {"jmp *%rax", {0xff, 0xe0}, 2, 2, END, 0},
    {"notrack jmp *%rax", {0x3e, 0xff, 0xe0}, 3, 3, END, 0},
    {"jmp *%r11", {0x41, 0xff, 0xe3}, 3, 3, END, 0},
    {"jmp *0(%rip)", {0xff, 0x25, 0, 0, 0, 0}, 6, 6, END, 0},
    {"jmp *0(,%rax,8)", {0xff, 0x24, 0xc5, 0, 0, 0, 0}, 7, 7, END, 0},
    {"call *%rax", {0xff, 0xd0}, 2, 2, 0, 0},
    {"call *0(%rip)", {0xff, 0x15, 0, 0, 0, 0}, 6, 6, 0, 0},
    {"hlt", {0xf4}, 1, 1, 0, 0},
    /* relative branches */
    {"jmp rel8", {0xeb, 0x10}, 2, 2, BR | END, AT + 0x12},
    {"jmp rel8 to itself", {0xeb, 0xfe}, 2, 2, BR | END, AT},
    {"jmp rel32", {0xe9, 0, 1, 0, 0}, 5, 5, BR | END, AT + 0x105},
    {"bnd jmp rel32", {0xf2, 0xe9, 0, 1, 0, 0}, 6, 6, BR | END, AT + 0x106},
    {"je rel8", {0x74, 0x05}, 2, 2, BR, AT + 7},
    {"jg rel8 back", {0x7f, 0x80}, 2, 2, BR, AT + 2 - 128},
    {"je rel32", {0x0f, 0x84, 0x10, 0, 0, 0}, 6, 6, BR, AT + 0x16},
    {"jne rel32 back", {0x0f, 0x85, 0xf0, 0xff, 0xff, 0xff}, 6, 6, BR, AT + 6 - 16},
    {"call rel32", {0xe8, 0, 0, 0, 0}, 5, 5, BR, AT + 5},
    {"call rel32 back", {0xe8, 0xfb, 0xff, 0xff, 0xff}, 5, 5, BR, AT},
    {"loopne", {0xe0, 0x02}, 2, 2, BR, AT + 4},
    {"loope", {0xe1, 0x02}, 2, 2, BR, AT + 4},
    {"loop", {0xe2, 0xfe}, 2, 2, BR, AT},
    {"jrcxz", {0xe3, 0x02}, 2, 2, BR, AT + 4},
    {"xbegin", {0xc7, 0xf8, 0x10, 0, 0, 0}, 6, 6, BR, AT + 0x16},
    {"xabort", {0xc6, 0xf8, 0x01}, 3, 3, 0, 0},
    {"jmp rel16 (unknown)", {0x66, 0xe9, 0, 1}, 4, 0, 0, 0},
    {"retw (unknown)", {0x66, 0xc3}, 2, 0, 0, 0},
    {"rex.W jmp *%rax", {0x48, 0xff, 0xe0}, 3, 3, END, 0},
    {"bnd ret", {0xf2, 0xc3}, 2, 2, END, 0},
    {"ljmp *(%rax) (unknown)", {0xff, 0x28}, 2, 0, 0, 0},
    /* legacy prefixes */
    {"lock cmpxchg", {0xf0, 0x48, 0x0f, 0xb1, 0x17}, 5, 5, 0, 0},
    {"lock addl $1,(%rdi)", {0xf0, 0x83, 0x07, 0x01}, 4, 4, 0, 0},
    {"lock xadd", {0xf0, 0x0f, 0xc1, 0x07}, 4, 4, 0, 0},
    {"lock decl", {0xf0, 0xff, 0x0f}, 3, 3, 0, 0},
    {"lock or %eax,(%rdi)", {0xf0, 0x09, 0x07}, 3, 3, 0, 0},
    {"lock add reg (unknown)", {0xf0, 0x01, 0xc0}, 3, 0, 0, 0},
    {"lock mov (unknown)", {0xf0, 0x89, 0x07}, 3, 0, 0, 0},
    {"mov %fs:0x28,%rax", {0x64, 0x48, 0x8b, 0x04, 0x25, 0x28, 0, 0, 0}, 9, 9, 0, 0},
    {"mov %gs:0,%rax", {0x65, 0x48, 0x8b, 0x04, 0x25, 0, 0, 0, 0}, 9, 9, 0, 0},
    {"cs mov", {0x2e, 0x48, 0x8b, 0x00}, 4, 4, 0, 0},
    {"ss mov", {0x36, 0x8b, 0x00}, 3, 3, 0, 0},
    {"es mov", {0x26, 0x8b, 0x00}, 3, 3, 0, 0},
    {"addr32 mov", {0x67, 0x8b, 0x00}, 3, 3, 0, 0},
    {"rep stos", {0xf3, 0x48, 0xab}, 3, 3, 0, 0},
    {"repne scasb", {0xf2, 0xae}, 2, 2, 0, 0},
    {"REX before a prefix (unknown)", {0x48, 0x66, 0x8b, 0x00}, 4, 0, 0, 0},
    /* ModRM, SIB, displacements */
    {"mov (%rsp)", {0x8b, 0x04, 0x24}, 3, 3, 0, 0},
    {"mov 8(%rsp)", {0x8b, 0x44, 0x24, 8}, 4, 4, 0, 0},
    {"mov 0x100(%rsp)", {0x8b, 0x84, 0x24, 0, 1, 0, 0}, 7, 7, 0, 0},
    {"mov abs32 (SIB, no base)", {0x8b, 0x04, 0x25, 0, 0, 0, 0}, 7, 7, 0, 0},
    {"mov 0(,%rax,1)", {0x8b, 0x04, 0x05, 0, 0, 0, 0}, 7, 7, 0, 0},
    {"mov 0(%rbp)", {0x8b, 0x45, 0}, 3, 3, 0, 0},
    {"mov 0(%rbp,%riz)", {0x8b, 0x44, 0x25, 0}, 4, 4, 0, 0},
    {"mov 0(%r13)", {0x41, 0x8b, 0x45, 0}, 4, 4, 0, 0},
    {"mov RIP-relative", {0x4c, 0x8b, 0x05, 0, 0, 0, 0}, 7, 7, 0, 0},
    {"movl $1, RIP-relative", {0xc7, 0x05, 0, 0, 0, 0, 1, 0, 0, 0}, 10, 10, 0, 0},
    {"movw $1, RIP-relative", {0x66, 0xc7, 0x05, 0, 0, 0, 0, 1, 0}, 9, 9, 0, 0},
    /* immediates */
    {"mov $imm32", {0xb8, 1, 0, 0, 0}, 5, 5, 0, 0},
    {"mov $imm16", {0x66, 0xb8, 1, 0}, 4, 4, 0, 0},
    {"mov $imm32,%r11d", {0x41, 0xbb, 1, 0, 0, 0}, 6, 6, 0, 0},
    {"movabs $imm64", {0x48, 0xb8, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 10, 0, 0},
    {"movabs $imm64 (66 ignored)", {0x66, 0x49, 0xbb, 1, 2, 3, 4, 5, 6, 7, 8}, 11, 11, 0, 0},
    {"add $imm16,%cx", {0x66, 0x81, 0xc1, 0x34, 0x12}, 5, 5, 0, 0},
    {"add $imm32,%ecx", {0x81, 0xc1, 0x78, 0x56, 0x34, 0x12}, 6, 6, 0, 0},
    {"add $imm32,%rsp", {0x48, 0x81, 0xc4, 0, 1, 0, 0}, 7, 7, 0, 0},
    {"sub $8,%rsp", {0x48, 0x83, 0xec, 8}, 4, 4, 0, 0},
    {"cmp $imm16,%ax", {0x66, 0x3d, 0x34, 0x12}, 4, 4, 0, 0},
    {"cmp $imm32,%eax", {0x3d, 0x78, 0x56, 0x34, 0x12}, 5, 5, 0, 0},
    {"cmp $imm32,%rax", {0x48, 0x3d, 0x78, 0x56, 0x34, 0x12}, 6, 6, 0, 0},
    {"push $imm32", {0x68, 0, 0, 0, 0}, 5, 5, 0, 0},
    {"push $imm8", {0x6a, 1}, 2, 2, 0, 0},
    {"imul $imm32", {0x69, 0xc0, 0x10, 0, 0, 0}, 6, 6, 0, 0},
    {"imul $imm16", {0x66, 0x69, 0xc0, 0x10, 0}, 5, 5, 0, 0},
    {"imul $imm8", {0x6b, 0xc0, 0x10}, 3, 3, 0, 0},
    {"enter", {0xc8, 0x10, 0, 1}, 4, 4, 0, 0},
    {"test $imm8,%cl", {0xf6, 0xc1, 1}, 3, 3, 0, 0},
    {"testb $1,8(%rsp)", {0xf6, 0x44, 0x24, 8, 1}, 5, 5, 0, 0},
    {"test $imm32,%ecx", {0xf7, 0xc1, 1, 0, 0, 0}, 6, 6, 0, 0},
    {"test $imm16,%cx", {0x66, 0xf7, 0xc1, 1, 0}, 5, 5, 0, 0},
    {"test $imm8 (f6 /1)", {0xf6, 0xc8, 1}, 3, 3, 0, 0},
    {"test $imm32 (f7 /1)", {0xf7, 0xc8, 1, 0, 0, 0}, 6, 6, 0, 0},
    {"neg %al", {0xf6, 0xd8}, 2, 2, 0, 0},
    {"neg %eax", {0xf7, 0xd8}, 2, 2, 0, 0},
    {"mov moffs64,%eax", {0xa1, 1, 2, 3, 4, 5, 6, 7, 8}, 9, 9, 0, 0},
    {"mov %rax,moffs64", {0x48, 0xa3, 1, 2, 3, 4, 5, 6, 7, 8}, 10, 10, 0, 0},
    {"int $0x80", {0xcd, 0x80}, 2, 2, 0, 0},
    /* the 0f map */
    {"movzbl", {0x0f, 0xb6, 0x07}, 3, 3, 0, 0},
    {"imul r/m", {0x0f, 0xaf, 0xc1}, 3, 3, 0, 0},
    {"syscall", {0x0f, 0x05}, 2, 2, 0, 0},
    {"cpuid", {0x0f, 0xa2}, 2, 2, 0, 0},
    {"rdtsc", {0x0f, 0x31}, 2, 2, 0, 0},
    {"bt $3", {0x0f, 0xba, 0xe0, 3}, 4, 4, 0, 0},
    {"shld $4", {0x0f, 0xa4, 0xc2, 4}, 4, 4, 0, 0},
    {"popcnt", {0xf3, 0x0f, 0xb8, 0xc1}, 4, 4, 0, 0},
    {"movdqa RIP-relative", {0x66, 0x0f, 0x6f, 0x05, 0, 0, 0, 0}, 8, 8, 0, 0},
    {"pshufd", {0x66, 0x0f, 0x70, 0xc1, 0x1b}, 5, 5, 0, 0},
    {"psrldq", {0x66, 0x0f, 0x73, 0xd8, 4}, 5, 5, 0, 0},
    {"cmpps", {0x0f, 0xc2, 0xc1, 1}, 4, 4, 0, 0},
    {"pinsrw", {0x66, 0x0f, 0xc4, 0xc1, 1}, 5, 5, 0, 0},
    {"mfence", {0x0f, 0xae, 0xf0}, 3, 3, 0, 0},
    {"prefetcht0", {0x0f, 0x18, 0x08}, 3, 3, 0, 0},
    {"prefetchw", {0x0f, 0x0d, 0x08}, 3, 3, 0, 0},
    {"prefetch (unknown: capstone 4 fails)", {0x0f, 0x0d, 0x00}, 3, 0, 0, 0},
    {"prefetchwt1 (unknown: capstone 4 fails)", {0x0f, 0x0d, 0x10}, 3, 0, 0, 0},
    {"rdfsbase", {0xf3, 0x48, 0x0f, 0xae, 0xc0}, 5, 5, 0, 0},
    {"lfence", {0x0f, 0xae, 0xe8}, 3, 3, 0, 0},
    {"0f ae e9 (unknown: capstone 4 fails)", {0x0f, 0xae, 0xe9}, 3, 0, 0, 0},
    {"rex.W lfence (unknown: capstone 4 fails)", {0x48, 0x0f, 0xae, 0xe8}, 4, 0, 0, 0},
    {"lea reg,reg (unknown)", {0x48, 0x8d, 0xc0}, 3, 0, 0, 0},
    {"mov %cr0 (unknown)", {0x0f, 0x20, 0xc0}, 3, 0, 0, 0},
    {"fwait (unknown)", {0x9b}, 1, 0, 0, 0},
    {"cmpxchg16b", {0x48, 0x0f, 0xc7, 0x0f}, 4, 4, 0, 0},
    {"rdseed", {0x0f, 0xc7, 0xf8}, 3, 3, 0, 0},
    {"cmovne", {0x48, 0x0f, 0x45, 0xc1}, 4, 4, 0, 0},
    {"sete", {0x0f, 0x94, 0xc0}, 3, 3, 0, 0},
    {"xgetbv", {0x0f, 0x01, 0xd0}, 3, 3, 0, 0},
    {"rdrand", {0x48, 0x0f, 0xc7, 0xf0}, 4, 4, 0, 0},
    {"3DNow! pfmul", {0x0f, 0x0f, 0xc1, 0xb4}, 4, 4, 0, 0},
    {"3DNow! pfadd mem", {0x0f, 0x0f, 0x47, 0x08, 0x9e}, 5, 5, 0, 0},
    /* 0f 38, 0f 3a */
    {"pshufb", {0x66, 0x0f, 0x38, 0x00, 0xc1}, 5, 5, 0, 0},
    {"ptest", {0x66, 0x0f, 0x38, 0x17, 0xc1}, 5, 5, 0, 0},
    {"crc32q", {0xf2, 0x48, 0x0f, 0x38, 0xf1, 0xc1}, 6, 6, 0, 0},
    {"movbe", {0x0f, 0x38, 0xf0, 0x07}, 4, 4, 0, 0},
    {"palignr", {0x66, 0x0f, 0x3a, 0x0f, 0xc1, 8}, 6, 6, 0, 0},
    {"pcmpistri", {0x66, 0x0f, 0x3a, 0x63, 0xc1, 0x1a}, 6, 6, 0, 0},
    {"pclmulqdq", {0x66, 0x0f, 0x3a, 0x44, 0xc1, 0}, 6, 6, 0, 0},
    {"pextrd RIP-relative", {0x66, 0x0f, 0x3a, 0x16, 0x05, 0, 0, 0, 0, 1}, 10, 10, 0, 0},
    /* VEX */
    {"vzeroupper", {0xc5, 0xf8, 0x77}, 3, 3, 0, 0},
    {"vmovdqa (%rdi),%ymm0", {0xc5, 0xfd, 0x6f, 0x07}, 4, 4, 0, 0},
    {"vmovdqu 0x20(%rdi),%ymm1", {0xc5, 0xfe, 0x6f, 0x4f, 0x20}, 5, 5, 0, 0},
    {"vpshufd", {0xc5, 0xfd, 0x70, 0xc1, 0x1b}, 5, 5, 0, 0},
    {"vpmovmskb", {0xc5, 0xfd, 0xd7, 0xc1}, 4, 4, 0, 0},
    {"vpshufb (c4, map 2)", {0xc4, 0xe2, 0x7d, 0x00, 0xc1}, 5, 5, 0, 0},
    {"vpalignr (map 3)", {0xc4, 0xe3, 0x7d, 0x0f, 0xc1, 8}, 6, 6, 0, 0},
    {"vbroadcastss RIP-relative", {0xc4, 0xe2, 0x79, 0x18, 0x05, 0, 0, 0, 0}, 9, 9, 0, 0},
    {"vmovdqu (%r14)", {0xc4, 0xc1, 0x7e, 0x6f, 0x06}, 5, 5, 0, 0},
    {"66 before VEX (unknown)", {0x66, 0xc5, 0xfd, 0x6f, 0x07}, 5, 0, 0, 0},
    {"66 before EVEX (unknown)", {0x66, 0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x07}, 7, 0, 0, 0},
    {"EVEX, map 0 (unknown)", {0x62, 0xf0, 0x7d, 0x48, 0x74, 0xc1}, 6, 0, 0, 0},
    {"EVEX, P1's fixed bit clear (unknown)", {0x62, 0xf1, 0x79, 0x48, 0x74, 0xc1}, 6, 0, 0, 0},
    {"EVEX, map 5 (AVX512-FP16: unknown)", {0x62, 0xf5, 0x7c, 0x48, 0x58, 0xc1}, 6, 0, 0, 0},
    {"knot with a memory operand (invalid)", {0xc5, 0xf8, 0x44, 0x07}, 4, 0, 0, 0},
    {"truncated EVEX", {0x62, 0xf1, 0xfe, 0x48, 0x6f}, 5, 0, 0, 0},
    /* XOP, pop, x87, invalid, truncated */
    {"XOP vprotb (unknown)", {0x8f, 0xe8, 0x78, 0xc0, 0xc1, 4}, 6, 0, 0, 0},
    {"pop %rax (8f)", {0x8f, 0xc0}, 2, 2, 0, 0},
    {"pop (%r8)", {0x41, 0x8f, 0x00}, 3, 3, 0, 0},
    {"fldz (x87: unknown)", {0xd9, 0xee}, 2, 0, 0, 0},
    {"push %es (invalid)", {0x06}, 1, 0, 0, 0},
    {"truncated call", {0xe8, 0, 0}, 3, 0, 0, 0},
    {"truncated 0f", {0x0f}, 1, 0, 0, 0},
    {"prefix only", {0x66}, 1, 0, 0, 0},
    {"truncated SIB", {0x8b, 0x04}, 2, 0, 0, 0},
    {"truncated disp32", {0x8b, 0x05, 0, 0}, 4, 0, 0, 0},
};

/* Each hand-written instruction: the expected answer, and capstone agrees. */
START_TEST(hand_written)
{
	const struct hand *h = &hands[_i];
	struct x86_ld d;
	unsigned len = x86_lendec(h->b, h->n, AT, &d);

	ck_assert_msg(len == h->len, "%s: length %u, want %u", h->what, len, h->len);
	if (!len)
		return;
	ck_assert_msg(d.len == len && d.flags == h->flags, "%s: flags %#x, want %#x", h->what,
		      d.flags, h->flags);
	if (h->flags & BR)
		ck_assert_msg(d.target == h->target, "%s: target %#llx, want %#llx", h->what,
			      (unsigned long long)d.target, (unsigned long long)h->target);
	/* and capstone reads it the same way */
	{
		const uint8_t *p = h->b;
		size_t left = h->n;
		uint64_t a = AT, t = NOTGT;
		cs_insn *in = cs_malloc(cs);

		ck_assert_ptr_nonnull(in);
		ck_assert_msg(cs_disasm_iter(cs, &p, &left, &a, in), "%s: capstone fails", h->what);
		ck_assert_msg(in->size == len, "%s: capstone says %u bytes", h->what, in->size);
		ck_assert_msg(cs_flags(in, &t) == d.flags, "%s: capstone's flags %#x", h->what,
			      cs_flags(in, &t));
		if (d.flags & BR)
			ck_assert_uint_eq(t, d.target);
		cs_free(in, 1);
	}
}
END_TEST

/*
 * AVX-512 as glibc's EVEX string routines hold it (memchr, strlen... on a
 * CPU with AVX-512), with the lengths GNU objdump gives: the mask
 * registers' instructions under VEX and EVEX in its maps 1, 2 and 3.
 * Capstone 4 fails on many (kmovq, kortestq, vpcmpeqb to a mask,
 * vptestnmb, vpbroadcastb); where it decodes one it must agree. None is a
 * branch, padding or an end of the flow.
 */
static const struct hand avx512[] = {
    {"kmovq %rbx,%k1", {0xc4, 0xe1, 0xfb, 0x92, 0xcb}, 5, 5, 0, 0},
    {"kmovq %k4,%rdx", {0xc4, 0xe1, 0xfb, 0x93, 0xd4}, 5, 5, 0, 0},
    {"kmovd %k0,%eax", {0xc5, 0xfb, 0x93, 0xc0}, 4, 4, 0, 0},
    {"kmovq %r11,%k2", {0xc4, 0xc1, 0xfb, 0x92, 0xd3}, 5, 5, 0, 0},
    {"kortestq %k0,%k0", {0xc4, 0xe1, 0xf8, 0x98, 0xc0}, 5, 5, 0, 0},
    {"kmovw (%rdi),%k1", {0xc5, 0xf8, 0x90, 0x0f}, 4, 4, 0, 0},
    {"kmovw %k1,0x10(%rdi)", {0xc5, 0xf8, 0x91, 0x4f, 0x10}, 5, 5, 0, 0},
    {"kshiftrq $0x20,%k1,%k2", {0xc4, 0xe3, 0xf9, 0x31, 0xd1, 0x20}, 6, 6, 0, 0},
    {"vptestnmb %zmm1,%zmm1,%k4{%k1}", {0x62, 0xf2, 0x76, 0x49, 0x26, 0xe1}, 6, 6, 0, 0},
    {"vpbroadcastb (%rax),%zmm3", {0x62, 0xf2, 0x7d, 0x48, 0x78, 0x18}, 6, 6, 0, 0},
    {"vpbroadcastb (%rdi,%rcx,1),%zmm2", {0x62, 0xf2, 0x7d, 0x48, 0x78, 0x14, 0x0f}, 7, 7, 0, 0},
    {"vpcmpeqb %zmm2,%zmm0,%k0 (map 3, imm8)",
     {0x62, 0xf3, 0x7d, 0x48, 0x3f, 0xc2, 0x00},
     7,
     7,
     0,
     0},
    {"vpcmpeqb (%r11),%zmm3,%k6{%k1}", {0x62, 0xd1, 0x65, 0x49, 0x74, 0x33}, 6, 6, 0, 0},
    {"vmovdqu64 (%rdi),%zmm0", {0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x07}, 6, 6, 0, 0},
    {"vmovdqu64 0x40(%rdi),%zmm0 (disp8*64)", {0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x47, 1}, 7, 7, 0, 0},
    {"vmovdqu64 (%rdi),%ymm16", {0x62, 0xe1, 0xfe, 0x28, 0x6f, 0x07}, 6, 6, 0, 0},
    {"vpminub (map 1)", {0x62, 0xf1, 0x7d, 0x48, 0xda, 0xc1}, 6, 6, 0, 0},
    {"vpshufd $0x1b (map 1, imm8)", {0x62, 0xf1, 0x7d, 0x48, 0x70, 0xc1, 0x1b}, 7, 7, 0, 0},
    {"vmovdqu64 0x12345678(%rip),%zmm1",
     {0x62, 0xf1, 0xfe, 0x48, 0x6f, 0x0d, 0x78, 0x56, 0x34, 0x12},
     10,
     10,
     0,
     0},
};

START_TEST(beyond_capstone_avx512)
{
	const struct hand *h = &avx512[_i];
	const uint8_t *p = h->b;
	size_t left = h->n;
	uint64_t a = AT, t = NOTGT;
	cs_insn *in = cs_malloc(cs);
	struct x86_ld d;

	ck_assert_ptr_nonnull(in);
	ck_assert_msg(x86_lendec(h->b, h->n, AT, &d) == h->len, "%s: length %u, want %u", h->what,
		      d.len, h->len);
	ck_assert_msg(d.flags == 0, "%s: flags %#x", h->what, d.flags);
	if (cs_disasm_iter(cs, &p, &left, &a, in)) {
		ck_assert_msg(in->size == h->len, "%s: capstone says %u bytes", h->what, in->size);
		ck_assert_uint_eq(cs_flags(in, &t), 0);
	}
	cs_free(in, 1);
}
END_TEST

/*
 * rdpkru, wrpkru: capstone 4 fails on them, lendec knows them (three
 * bytes, no operand: the walks over pkey_get, pkey_set and their
 * neighbours go on); with any prefix, unknown. A capstone that decodes
 * them must agree.
 */
static bool is_pkru(const uint8_t *b, size_t n)
{
	return n >= 3 && b[0] == 0x0f && b[1] == 0x01 && (b[2] == 0xee || b[2] == 0xef);
}

START_TEST(beyond_capstone)
{
	static const uint8_t known[][3] = {{0x0f, 0x01, 0xee}, {0x0f, 0x01, 0xef}};
	static const uint8_t unknown[][4] = {{0x66, 0x0f, 0x01, 0xee},
					     {0x48, 0x0f, 0x01, 0xef},
					     {0xf3, 0x0f, 0x01, 0xee},
					     {0xf0, 0x0f, 0x01, 0xef}};
	cs_insn *in = cs_malloc(cs);
	struct x86_ld d;

	ck_assert_ptr_nonnull(in);
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		const uint8_t *p = known[i];
		size_t left = 3;
		uint64_t a = AT, t = NOTGT;

		ck_assert_uint_eq(x86_lendec(known[i], 3, AT, &d), 3);
		ck_assert_uint_eq(d.flags, 0);
		ck_assert(is_pkru(known[i], 3));
		if (cs_disasm_iter(cs, &p, &left, &a, in)) {
			ck_assert_uint_eq(in->size, 3);
			ck_assert_uint_eq(cs_flags(in, &t), 0);
		}
	}
	for (size_t i = 0; i < sizeof(unknown) / sizeof(unknown[0]); i++)
		ck_assert_uint_eq(x86_lendec(unknown[i], 4, AT, &d), 0);
	cs_free(in, 1);
}
END_TEST

/* An instruction lendec decodes where capstone 4 fails: objdump's to judge (objdump_agrees). */
struct beyond {
	uint64_t addr;
	unsigned len;
};

struct tally {
	size_t insns, answered, bad;
	struct beyond *by; /* this file's, while it is crossed */
	size_t n_by, cap_by, beyond;
};

/*
 * code[0..n) at addr, linearly: capstone's instructions (one byte on when
 * it fails), each against the fast decoder where it answers.
 */
static void cross(const uint8_t *code, size_t n, uint64_t addr, const char *file, struct tally *t)
{
	cs_insn *in = cs_malloc(cs);
	size_t off = 0;

	ck_assert_ptr_nonnull(in);
	while (off < n) {
		const uint8_t *p = code + off;
		size_t left = n - off;
		uint64_t a = addr + off, tgt = NOTGT;
		struct x86_ld d;
		unsigned len = x86_lendec(code + off, n - off, addr + off, &d);
		unsigned f;

		if (!cs_disasm_iter(cs, &p, &left, &a, in)) {
			if (len == 3 && is_pkru(code + off, n - off)) {
				off += len; /* known beyond capstone 4 (beyond_capstone) */
				continue;
			}
			if (len) { /* AVX-512 (EVEX, the mask registers): objdump judges */
				if (t->n_by == t->cap_by) {
					t->cap_by = t->cap_by ? 2 * t->cap_by : 1024;
					t->by = realloc(t->by, t->cap_by * sizeof(*t->by));
					ck_assert_ptr_nonnull(t->by);
				}
				t->by[t->n_by].addr = addr + off;
				t->by[t->n_by++].len = len;
				off += len; /* as the walks go on */
				continue;
			}
			off++;
			continue;
		}
		t->insns++;
		if (len) {
			t->answered++;
			f = cs_flags(in, &tgt);
			if (len != in->size || f != d.flags || ((f & BR) && tgt != d.target)) {
				if (t->bad++ < 20) {
					fprintf(stderr,
						"%s %#llx: %s %s: capstone %u bytes %#x %#llx, "
						"lendec %u %#x %#llx:",
						file, (unsigned long long)in->address, in->mnemonic,
						in->op_str, in->size, f, (unsigned long long)tgt,
						len, d.flags, (unsigned long long)d.target);
					for (unsigned k = 0; k < in->size; k++)
						fprintf(stderr, " %02x", in->bytes[k]);
					fprintf(stderr, "\n");
				}
			}
		}
		off += in->size;
	}
	cs_free(in, 1);
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The instructions of file that lendec decoded where capstone 4 fails
 * (t->by), against GNU objdump's disassembly of the same addresses (which
 * knows AVX-512): each must start an instruction of objdump's and end where
 * objdump's next one starts. The mismatches are added to t->bad.
 */
static void objdump_agrees(const char *file, struct tally *t)
{
	uint64_t lo = (uint64_t)-1, hi = 0, *starts = NULL;
	size_t n = 0, cap = 0, bad = 0;
	char cmd[8192], line[512];
	FILE *f;

	if (!t->n_by)
		return;
	for (size_t i = 0; i < t->n_by; i++) {
		lo = t->by[i].addr < lo ? t->by[i].addr : lo;
		hi = t->by[i].addr + 16 > hi ? t->by[i].addr + 16 : hi;
	}
	snprintf(cmd, sizeof(cmd),
		 "objdump -d -w --no-show-raw-insn --start-address=%#llx --stop-address=%#llx "
		 "'%s' 2>/dev/null",
		 (unsigned long long)lo, (unsigned long long)hi, file);
	f = popen(cmd, "r");
	ck_assert_ptr_nonnull(f);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long a;
		char tab;

		if (sscanf(line, " %llx:%c", &a, &tab) != 2 || tab != '\t')
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 65536;
			starts = realloc(starts, cap * sizeof(*starts));
			ck_assert_ptr_nonnull(starts);
		}
		starts[n++] = a;
	}
	ck_assert_int_eq(pclose(f), 0);
	ck_assert_msg(n > 0, "objdump printed no instruction of %s", file);
	qsort(starts, n, sizeof(*starts), u64_cmp);
	for (size_t i = 0; i < t->n_by; i++) {
		uint64_t a = t->by[i].addr, *at = bsearch(&a, starts, n, sizeof(*starts), u64_cmp);

		if (at && (at + 1 == starts + n || at[1] == a + t->by[i].len))
			continue;
		if (bad++ < 20)
			fprintf(stderr, "%s %#llx: lendec says %u bytes, objdump %s\n", file,
				(unsigned long long)a, t->by[i].len,
				at ? "another length" : "no instruction there");
	}
	t->bad += bad;
	t->beyond += t->n_by;
	t->n_by = 0;
	free(starts);
}

/* The executable sections of file, up to max bytes in all. Returns 0 if the file is absent. */
static int cross_file(const char *file, size_t max, struct tally *t)
{
	int fd = open(file, O_RDONLY);
	Elf_Scn *scn = NULL;
	size_t done = 0;
	Elf *e;

	if (fd < 0)
		return 0;
	ck_assert_int_ne(elf_version(EV_CURRENT), EV_NONE);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) { /* a directory, a Fortran module... */
		if (e)
			elf_end(e);
		close(fd);
		return 0;
	}
	while ((scn = elf_nextscn(e, scn)) && done < max) {
		GElf_Shdr sh;
		Elf_Data *data;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
		    !(sh.sh_flags & SHF_EXECINSTR))
			continue;
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf)
			continue;
		{
			size_t n = data->d_size < max - done ? data->d_size : max - done;

			cross(data->d_buf, n, sh.sh_addr, file, t);
			done += n;
		}
	}
	elf_end(e);
	close(fd);
	objdump_agrees(file, t);
	return 1;
}

START_TEST(against_capstone_libc)
{
	struct tally t = {0};

	ck_assert(cross_file("/lib/x86_64-linux-gnu/libc.so.6", (size_t)-1, &t));
	fprintf(stderr,
		"libc: %zu instructions, lendec answers %zu (%.2f %%), %zu differ; "
		"%zu more where capstone fails, judged by objdump\n",
		t.insns, t.answered, 100.0 * (double)t.answered / (double)t.insns, t.bad, t.beyond);
	free(t.by);
	/* glibc's EVEX string routines (memchr, strlen... for AVX-512 CPUs) */
	ck_assert_msg(t.beyond >= 500, "only %zu instructions beyond capstone in libc", t.beyond);
	ck_assert_uint_eq(t.bad, 0);
	ck_assert_msg(t.answered * 100 >= t.insns * 99, "lendec answers under 99 %% of libc");
}
END_TEST

START_TEST(against_capstone_more)
{
	static const char *const files[] = {
	    "/usr/lib/gcc/x86_64-linux-gnu/12/cc1",
	    "/lib/x86_64-linux-gnu/libm.so.6",
	    "/lib/x86_64-linux-gnu/libstdc++.so.6",
	    BUILDDIR "/fortstat",
	};
	struct tally t = {0};
	char path[4096];
	DIR *dir;
	struct dirent *de;

	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
		if (cross_file(files[i], 6u << 20, &t))
			fprintf(stderr, "%s: checked\n", files[i]);
	/* the fixtures the e2e tests trace, when built (make check builds them) */
	dir = opendir(BUILDDIR "/fixtures/bin");
	while (dir && (de = readdir(dir))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/fixtures/bin/%s", BUILDDIR, de->d_name);
		cross_file(path, 1u << 20, &t);
	}
	if (dir)
		closedir(dir);
	fprintf(stderr,
		"others: %zu instructions, lendec answers %zu (%.2f %%), %zu differ; "
		"%zu more where capstone fails, judged by objdump\n",
		t.insns, t.answered, 100.0 * (double)t.answered / (double)t.insns, t.bad, t.beyond);
	free(t.by);
	ck_assert_uint_eq(t.bad, 0);
}
END_TEST

/*
 * Random instructions (fixed seed; legacy prefixes, REX, escapes and VEX
 * drawn often): wherever capstone decodes one and lendec answers, they
 * agree. Where capstone fails, lendec may still answer for an invalid
 * encoding (a VEX form with the wrong prefix bits...): counted, printed.
 */
START_TEST(random_bytes)
{
	static const uint8_t pf[] = {0x66, 0x67, 0xf2, 0xf3, 0xf0, 0x2e, 0x3e, 0x26,
				     0x36, 0x64, 0x65, 0x40, 0x41, 0x48, 0x49, 0x4c,
				     0x0f, 0x0f, 0xc4, 0xc5, 0x62, 0x8f, 0x38, 0x3a};
	cs_insn *in = cs_malloc(cs);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	size_t answered = 0, bad = 0, cs_fails = 0;

	ck_assert_ptr_nonnull(in);
	for (int i = 0; i < 100000; i++) {
		uint8_t b[15];
		const uint8_t *p = b;
		size_t left = sizeof(b);
		uint64_t a = AT, t = NOTGT;
		struct x86_ld d;
		unsigned len, np;

		for (size_t k = 0; k < sizeof(b); k++) {
			x ^= x << 13; /* xorshift64 */
			x ^= x >> 7;
			x ^= x << 17;
			b[k] = (uint8_t)(x >> 24);
		}
		np = (unsigned)(x >> 40) % 4;
		for (unsigned k = 0; k < np; k++)
			b[k] = pf[(x >> (8 * k)) % sizeof(pf)];
		len = x86_lendec(b, sizeof(b), AT, &d);
		if (!len)
			continue;
		answered++;
		if (!cs_disasm_iter(cs, &p, &left, &a, in)) {
			cs_fails++;
			continue;
		}
		if (in->size != len || cs_flags(in, &t) != d.flags ||
		    ((d.flags & BR) && t != d.target)) {
			if (bad++ < 20) {
				fprintf(stderr,
					"%s %s: capstone %u bytes, lendec %u:", in->mnemonic,
					in->op_str, in->size, len);
				for (unsigned k = 0; k < in->size; k++)
					fprintf(stderr, " %02x", b[k]);
				fprintf(stderr, "\n");
			}
		}
	}
	cs_free(in, 1);
	fprintf(stderr,
		"random: lendec answers %zu of 100000, capstone fails on %zu of them, %zu differ\n",
		answered, cs_fails, bad);
	ck_assert_uint_eq(bad, 0);
}
END_TEST

static Suite *lendec_suite(void)
{
	Suite *s = suite_create("lendec");
	TCase *tc = tcase_create("hand");

	tcase_add_loop_test(tc, hand_written, 0, (int)(sizeof(hands) / sizeof(hands[0])));
	tcase_add_test(tc, beyond_capstone);
	tcase_add_loop_test(tc, beyond_capstone_avx512, 0,
			    (int)(sizeof(avx512) / sizeof(avx512[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("capstone");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, against_capstone_libc);
	tcase_add_test(tc, against_capstone_more);
	tcase_add_test(tc, random_bytes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr;
	int failed;

	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK ||
	    cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK)
		return EXIT_FAILURE;
	cs_option(cs, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
	sr = srunner_create(lendec_suite());
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	cs_close(&cs);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
