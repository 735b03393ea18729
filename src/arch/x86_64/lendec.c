// SPDX-License-Identifier: GPL-2.0-or-later
/* lendec.c - x86-64 instruction lengths, branches, padding (see lendec.h). */
#include "lendec.h"

#include <stdbool.h>

/* What follows an opcode, one byte per opcode. */
#define N 0x00 /* nothing */
#define M 0x01 /* a ModRM (SIB, displacement) */
#define B 0x02 /* an imm8 */
#define Z 0x04 /* an imm16 (0x66) or imm32 */
#define X 0x08 /* unknown: invalid in 64-bit mode, a prefix here, or not handled */
#define S 0x10 /* handled by its own case */
#define MB (M | B)
#define MZ (M | Z)

/* The one-byte map (prefixes and REX are consumed before it: X here). */
// clang-format off
static const uint8_t map0[256] = {
	/*        0   1   2   3   4   5   6   7   8   9   a   b   c   d   e   f */
	/* 00 */ M,  M,  M,  M,  B,  Z,  X,  X,  M,  M,  M,  M,  B,  Z,  X,  S,
	/* 10 */ M,  M,  M,  M,  B,  Z,  X,  X,  M,  M,  M,  M,  B,  Z,  X,  X,
	/* 20 */ M,  M,  M,  M,  B,  Z,  X,  X,  M,  M,  M,  M,  B,  Z,  X,  X,
	/* 30 */ M,  M,  M,  M,  B,  Z,  X,  X,  M,  M,  M,  M,  B,  Z,  X,  X,
	/* 40 */ X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,  X,
	/* 50 */ N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,  N,
	/* 60 */ X,  X,  S,  M,  X,  X,  X,  X,  Z,  MZ, B,  MB, N,  N,  N,  N,
	/* 70 */ S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,
	/* 80 */ MB, MZ, X,  MB, M,  M,  M,  M,  M,  M,  M,  M,  S,  S,  S,  S,
	/* 90 */ S,  N,  N,  N,  N,  N,  N,  N,  N,  N,  X,  X,  N,  N,  N,  N,
	/* a0 */ S,  S,  S,  S,  N,  N,  N,  N,  B,  Z,  N,  N,  N,  N,  N,  N,
	/* b0 */ B,  B,  B,  B,  B,  B,  B,  B,  S,  S,  S,  S,  S,  S,  S,  S,
	/* c0 */ MB, MB, S,  S,  S,  S,  S,  S,  S,  N,  X,  X,  S,  B,  X,  X,
	/* d0 */ M,  M,  M,  M,  X,  X,  X,  N,  X,  X,  X,  X,  X,  X,  X,  X,
	/* e0 */ S,  S,  S,  S,  B,  B,  B,  B,  S,  S,  X,  S,  N,  N,  N,  N,
	/* f0 */ X,  X,  X,  X,  N,  N,  S,  S,  N,  N,  N,  N,  N,  N,  S,  S,
};
// clang-format on

/* The 0f map. */
// clang-format off
static const uint8_t map1[256] = {
	/*        0   1   2   3   4   5   6   7   8   9   a   b   c   d   e   f */
	/* 00 */ S,  S,  M,  M,  X,  N,  N,  N,  N,  N,  X,  S,  X,  S,  X,  X,
	/* 10 */ M,  M,  M,  M,  M,  M,  M,  M,  S,  X,  X,  X,  X,  X,  S,  S,
	/* 20 */ X,  X,  X,  X,  X,  X,  X,  X,  M,  M,  M,  M,  M,  M,  M,  M,
	/* 30 */ N,  N,  N,  N,  N,  X,  X,  X,  S,  X,  S,  X,  X,  X,  X,  X,
	/* 40 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
	/* 50 */ S,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
	/* 60 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  S,  S,  M,  M,
	/* 70 */ MB, S,  S,  S,  M,  M,  M,  N,  X,  X,  X,  X,  S,  S,  M,  M,
	/* 80 */ S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,  S,
	/* 90 */ M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,
	/* a0 */ N,  N,  N,  M,  MB, M,  X,  X,  N,  N,  X,  M,  MB, M,  S,  M,
	/* b0 */ M,  M,  M,  M,  M,  M,  M,  M,  S,  X,  S,  M,  M,  M,  M,  M,
	/* c0 */ M,  M,  MB, M,  MB, S,  MB, S,  N,  N,  N,  N,  N,  N,  N,  N,
	/* d0 */ S,  M,  M,  M,  M,  M,  S,  S,  M,  M,  M,  M,  M,  M,  M,  M,
	/* e0 */ M,  M,  M,  M,  M,  M,  S,  M,  M,  M,  M,  M,  M,  M,  M,  M,
	/* f0 */ S,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  M,  X,
};
// clang-format on

/* Valid legacy 0f 38 opcodes (ModRM, no immediate). */
static bool map2_ok(unsigned op)
{
	return op <= 0x0b || op == 0x10 || op == 0x14 || op == 0x15 || op == 0x17 ||
	       (op >= 0x1c && op <= 0x1e) || (op >= 0x20 && op <= 0x25) ||
	       (op >= 0x28 && op <= 0x2b) || (op >= 0x30 && op <= 0x35) ||
	       (op >= 0x37 && op <= 0x41) || (op >= 0x80 && op <= 0x82) ||
	       (op >= 0xc8 && op <= 0xcd) || op == 0xcf || (op >= 0xdb && op <= 0xdf) ||
	       op == 0xf0 || op == 0xf1 || op == 0xf5 || op == 0xf6 || op == 0xf8 || op == 0xf9;
}

/* Valid legacy 0f 3a opcodes (ModRM and imm8). */
static bool map3_ok(unsigned op)
{
	return (op >= 0x08 && op <= 0x0f) || (op >= 0x14 && op <= 0x17) ||
	       (op >= 0x20 && op <= 0x22) || (op >= 0x40 && op <= 0x42) || op == 0x44 ||
	       (op >= 0x60 && op <= 0x63) || op == 0xcc || op == 0xce || op == 0xcf || op == 0xdf;
}

/* The 3DNow! opcodes (the imm8 after the ModRM). */
static bool amd3dnow(unsigned op)
{
	switch (op) {
	case 0x0c:
	case 0x0d:
	case 0x1c:
	case 0x1d:
	case 0x8a:
	case 0x8e:
	case 0x90:
	case 0x94:
	case 0x96:
	case 0x97:
	case 0x9a:
	case 0x9e:
	case 0xa0:
	case 0xa4:
	case 0xa6:
	case 0xa7:
	case 0xaa:
	case 0xae:
	case 0xb0:
	case 0xb4:
	case 0xb6:
	case 0xb7:
	case 0xbb:
	case 0xbf:
		return true;
	default:
		return false;
	}
}

/* Decoding state of one instruction. */
struct ld {
	const uint8_t *c;
	size_t left;
	size_t pos;
	bool p66, p67, rep, repne, lock;
	uint8_t rex;
	size_t npfx; /* legacy prefixes */
};

static int byte(struct ld *s, size_t at)
{
	return at < s->left && at < 15 ? s->c[at] : -1;
}

/* The ModRM at s->pos and what it brings (SIB, displacement). False: out of bytes. */
static bool modrm(struct ld *s)
{
	int m = byte(s, s->pos), sib;
	unsigned mod, rm;

	if (m < 0)
		return false;
	s->pos++;
	mod = (unsigned)m >> 6;
	rm = (unsigned)m & 7;
	if (mod == 3)
		return true;
	if (rm == 4) {
		sib = byte(s, s->pos);
		if (sib < 0)
			return false;
		s->pos++;
		if (mod == 0 && (sib & 7) == 5)
			s->pos += 4;
	} else if (mod == 0 && rm == 5) {
		s->pos += 4; /* RIP-relative disp32 */
	}
	if (mod == 1)
		s->pos += 1;
	else if (mod == 2)
		s->pos += 4;
	return true;
}

/* The reg field of the ModRM at s->pos, -1 if none. */
static int reg_of(struct ld *s)
{
	int m = byte(s, s->pos);

	return m < 0 ? -1 : (m >> 3) & 7;
}

static int mod_of(struct ld *s)
{
	int m = byte(s, s->pos);

	return m < 0 ? -1 : m >> 6;
}

/* The instruction ends at s->pos: within the code and 15 bytes? */
static unsigned done(struct ld *s, struct x86_ld *d)
{
	if (s->pos > s->left || s->pos > 15)
		return 0;
	d->len = (unsigned)s->pos;
	return d->len;
}

/* A relative branch whose n-byte displacement ends the instruction. */
static unsigned branch(struct ld *s, unsigned n, uint64_t addr, struct x86_ld *d)
{
	int64_t rel;

	/* A 16-bit operand or address size, REX: never guess (capstone differs). */
	if (s->p66 || s->p67 || s->rex)
		return 0;
	s->pos += n;
	if (!done(s, d))
		return 0;
	if (n == 1)
		rel = (int8_t)s->c[s->pos - 1];
	else
		rel =
		    (int32_t)((uint32_t)s->c[s->pos - 4] | (uint32_t)s->c[s->pos - 3] << 8 |
			      (uint32_t)s->c[s->pos - 2] << 16 | (uint32_t)s->c[s->pos - 1] << 24);
	d->flags |= X86_LD_BRANCH;
	d->target = addr + d->len + (uint64_t)rel;
	return d->len;
}

/* ModRM, then the immediate that the table's flags say. */
static unsigned operands(struct ld *s, unsigned f, struct x86_ld *d)
{
	if ((f & M) && !modrm(s))
		return 0;
	if (f & B)
		s->pos += 1;
	if ((f & Z) && s->p66 && (s->rep || s->repne))
		return 0; /* capstone 4 then reads an imm32 */
	if (f & Z)
		s->pos += (s->p66 && !(s->rex & 8)) ? 2 : 4;
	return done(s, d);
}

/*
 * Is op in the VEX map's valid set (what follows: ModRM, imm8 for map 3)?
 * The mask instructions are vex_mask's.
 */
static bool vex_ok(unsigned map, unsigned op)
{
	if (map == 1)
		return (op >= 0x10 && op <= 0x17) || (op >= 0x28 && op <= 0x2f) ||
		       (op >= 0x50 && op <= 0x7f) || op == 0xae || op == 0xc2 ||
		       (op >= 0xc4 && op <= 0xc6) || (op >= 0xd0 && op <= 0xfe);
	if (map == 2)
		return op <= 0x0f || op == 0x13 || (op >= 0x16 && op <= 0x1a) ||
		       (op >= 0x1c && op <= 0x1e) || (op >= 0x20 && op <= 0x25) ||
		       (op >= 0x28 && op <= 0x41) || (op >= 0x45 && op <= 0x47) ||
		       (op >= 0x58 && op <= 0x5a) || op == 0x78 || op == 0x79 || op == 0x8c ||
		       op == 0x8e || (op >= 0x90 && op <= 0x9f) || (op >= 0xa6 && op <= 0xaf) ||
		       (op >= 0xb6 && op <= 0xbf) || (op >= 0xdb && op <= 0xdf) || op == 0xf2 ||
		       op == 0xf3 || (op >= 0xf5 && op <= 0xf7);
	if (map == 3)
		return op <= 0x02 || (op >= 0x04 && op <= 0x06) || (op >= 0x08 && op <= 0x0f) ||
		       (op >= 0x14 && op <= 0x19) || op == 0x1d || (op >= 0x20 && op <= 0x22) ||
		       (op >= 0x38 && op <= 0x39) || (op >= 0x40 && op <= 0x42) || op == 0x44 ||
		       op == 0x46 || (op >= 0x4a && op <= 0x4c) || op == 0xdf || op == 0xf0;
	return false;
}

/*
 * AVX-512's mask instructions under VEX, which capstone 4 fails on (kmovd
 * %k0,%eax and kortestd in glibc's EVEX string routines, selected on a CPU
 * with AVX-512): kand, kandn, knot, kor, kxnor, kxor, kadd, kunpck (map 1,
 * 41..4b, registers only), kmov (90: to a mask from a mask or memory, 91:
 * to memory, 92 and 93: from and to a general register), kortest and ktest
 * (98, 99), kshiftr and kshiftl (map 3, 30..33, an imm8). `mod`: the
 * ModRM's, -1 if none.
 */
static bool vex_mask(unsigned map, unsigned op, int mod)
{
	if (mod < 0)
		return false;
	if (map == 1 && op == 0x90)
		return true;
	if (map == 1 && op == 0x91)
		return mod != 3;
	if (map == 1)
		return mod == 3 &&
		       ((op >= 0x41 && op <= 0x47 && op != 0x43) || op == 0x4a || op == 0x4b ||
			op == 0x92 || op == 0x93 || op == 0x98 || op == 0x99);
	return map == 3 && mod == 3 && op >= 0x30 && op <= 0x33;
}

/* Map 1 opcodes that take an imm8 under VEX. */
static bool vex_imm8(unsigned map, unsigned op)
{
	return map == 3 || (map == 1 && ((op >= 0x70 && op <= 0x73) || op == 0xc2 ||
					 (op >= 0xc4 && op <= 0xc6)));
}

/* VEX (c4, c5) at s->pos: in 64-bit mode never les or lds. */
static unsigned vex(struct ld *s, int first, struct x86_ld *d)
{
	unsigned map, op;
	int b1, o;

	/* Any of these before a VEX prefix is #UD. */
	if (s->p66 || s->rep || s->repne || s->lock || s->rex)
		return 0;
	b1 = byte(s, s->pos + 1);
	if (b1 < 0)
		return 0;
	if (first == 0xc5) {
		map = 1;
		s->pos += 2;
	} else {
		map = (unsigned)b1 & 0x1f;
		s->pos += 3;
	}
	o = byte(s, s->pos);
	if (o < 0)
		return 0;
	op = (unsigned)o;
	s->pos++;
	if (!vex_ok(map, op) && !vex_mask(map, op, mod_of(s)))
		return 0;
	if (map == 1 && op == 0x77)
		return done(s, d); /* vzeroupper, vzeroall */
	return operands(s, M | (vex_imm8(map, op) ? B : 0), d);
}

/*
 * EVEX (62) at s->pos, AVX-512: in 64-bit mode never bound. Four bytes of
 * prefix (62, P0, P1, P2), the opcode, a ModRM always (its SIB and
 * displacement as under VEX: a compressed disp8 is one byte still), an
 * imm8 where VEX has one. Only the maps 1, 2 and 3 with P0's reserved bits
 * clear and P1's fixed bit set (AVX512-FP16's maps 5 and 6, APX: unknown).
 * Capstone 4 decodes some and fails on others (vpcmpb to a mask,
 * vptestnmb, vpbroadcastb from a register): the walks need only the length
 * and that none is a branch.
 */
static unsigned evex(struct ld *s, struct x86_ld *d)
{
	int p0, p1, o;
	unsigned map;

	if (s->p66 || s->rep || s->repne || s->lock || s->rex)
		return 0;
	p0 = byte(s, s->pos + 1);
	p1 = byte(s, s->pos + 2);
	if (p0 < 0 || p1 < 0 || byte(s, s->pos + 3) < 0)
		return 0;
	map = (unsigned)p0 & 3;
	if (map == 0 || (p0 & 0x0c) || !(p1 & 0x04))
		return 0;
	s->pos += 4;
	o = byte(s, s->pos);
	if (o < 0)
		return 0;
	s->pos++;
	return operands(s, M | (vex_imm8(map, (unsigned)o) ? B : 0), d);
}

/* The 0f map at s->pos (after the 0f). */
static unsigned two_byte(struct ld *s, uint64_t addr, struct x86_ld *d)
{
	int o = byte(s, s->pos), r, mod;
	unsigned op, f;

	if (o < 0)
		return 0;
	op = (unsigned)o;
	s->pos++;
	f = map1[op];
	if (!(f & (X | S)))
		return operands(s, f, d);
	if (f & X)
		return 0;
	r = reg_of(s);
	mod = mod_of(s);
	if (op >= 0x80 && op <= 0x8f)
		return branch(s, 4, addr, d);
	switch (op) {
	case 0x50: /* movmskps, movmskpd, pmovmskb, pextrw: a register operand only */
	case 0xd7:
		return mod == 3 ? operands(s, M, d) : 0;
	case 0xc5:
		return mod == 3 ? operands(s, MB, d) : 0;
	case 0x71: /* psrlw, psraw, psllw $imm8 */
	case 0x72:
		return mod == 3 && (r == 2 || r == 4 || r == 6) && !s->rep && !s->repne
			   ? operands(s, MB, d)
			   : 0;
	case 0x73: /* psrlq, psrldq, psllq, pslldq $imm8 */
		return mod == 3 && (r == 2 || r == 6 || ((r == 3 || r == 7) && s->p66)) &&
			       !s->rep && !s->repne
			   ? operands(s, MB, d)
			   : 0;
	case 0x6c: /* punpcklqdq, punpckhqdq: 66 only */
	case 0x6d:
	case 0xd6: /* movq */
		return s->p66 && !s->rep && !s->repne ? operands(s, M, d) : 0;
	case 0x7c: /* haddpd, haddps, hsubpd, hsubps, addsubpd, addsubps: 66 or f2 */
	case 0x7d:
	case 0xd0:
		return (s->p66 || s->repne) && !s->rep ? operands(s, M, d) : 0;
	case 0xe6: /* cvttpd2dq, cvtpd2dq, cvtdq2pd: 66, f2 or f3 */
		return s->p66 || s->rep || s->repne ? operands(s, M, d) : 0;
	case 0xf0: /* lddqu: f2, memory */
		return s->repne && mod >= 0 && mod != 3 ? operands(s, M, d) : 0;
	case 0x00: /* sldt ... verw */
		return r >= 0 && r <= 5 ? operands(s, M, d) : 0;
	case 0x01:
		if (mod < 0)
			return 0;
		if (mod != 3)
			return r != 5 ? operands(s, M, d) : 0;
		switch (s->c[s->pos]) {
		case 0xc8:
		case 0xc9:
		case 0xca:
		case 0xcb: /* monitor, mwait, clac, stac */
		case 0xd0:
		case 0xd1:
		case 0xd5:
		case 0xd6: /* xgetbv, xsetbv, xend, xtest */
		case 0xf8:
		case 0xf9: /* swapgs, rdtscp */
			return operands(s, M, d);
		case 0xee:
		case 0xef: /* rdpkru, wrpkru (pkey_get, pkey_set): capstone 4 fails; no prefix */
			return s->npfx || s->rex ? 0 : operands(s, M, d);
		default:
			return 0;
		}
	case 0x0b: /* ud2 */
		if (s->p66 || s->rex)
			return 0;
		d->flags |= X86_LD_ENDS;
		return done(s, d);
	case 0x0d: /* prefetchw (capstone 4 fails on prefetch, prefetchwt1) */
		return mod >= 0 && mod != 3 && r == 1 ? operands(s, M, d) : 0;
	case 0x18: /* prefetchnta ... prefetcht2 */
		return mod >= 0 && mod != 3 && r <= 3 ? operands(s, M, d) : 0;
	case 0x1e: /* endbr64, endbr32 (capstone 4 knows them; other hint nops: unknown) */
		if (!s->rep || s->p66 || s->repne || s->lock || s->rex ||
		    (byte(s, s->pos) != 0xfa && byte(s, s->pos) != 0xfb))
			return 0;
		return operands(s, M, d);
	case 0x1f: /* nop r/m */
		if (r != 0 || s->rep || s->repne || s->lock)
			return 0;
		d->flags |= X86_LD_PAD;
		return operands(s, M, d);
	case 0x38: /* 0f 38: ModRM, no immediate */
		o = byte(s, s->pos);
		if (o < 0 || !map2_ok((unsigned)o))
			return 0;
		s->pos++;
		return operands(s, M, d);
	case 0x3a: /* 0f 3a: ModRM and imm8 */
		o = byte(s, s->pos);
		if (o < 0 || !map3_ok((unsigned)o))
			return 0;
		s->pos++;
		return operands(s, MB, d);
	case 0xae:
		if (mod < 0)
			return 0;
		if (mod != 3)
			return operands(s, M, d);
		if (!s->p66 && !s->rep && !s->repne && !s->rex && r >= 5 && !(s->c[s->pos] & 7))
			return operands(s, M,
					d); /* lfence, mfence, sfence (capstone: e8, f0, f8) */
		if (s->rep && !s->p66 && !s->repne && r <= 3) /* rd/wr fs/gs base */
			return operands(s, M, d);
		return 0;
	case 0xb8: /* popcnt */
		return s->rep && !s->repne ? operands(s, M, d) : 0;
	case 0xba: /* bt, bts, btr, btc imm8 */
		return r >= 4 ? operands(s, MB, d) : 0;
	case 0xc7:
		if (mod < 0)
			return 0;
		if (mod != 3)
			return r == 1 ? operands(s, M, d) : 0; /* cmpxchg8b, cmpxchg16b */
		return r >= 6 && !s->rep && !s->repne ? operands(s, M, d) : 0; /* rdrand, rdseed */
	default:
		return 0;
	}
}

/*
 * A lock prefix on an instruction that takes it (a memory destination):
 * capstone 4 may decode the others either way, so they are unknown.
 */
static bool lockable(const uint8_t *c, size_t left, size_t at)
{
	unsigned op;

	if (at < left && c[at] >= 0x40 && c[at] <= 0x4f)
		at++;
	if (at + 1 >= left)
		return false;
	op = c[at];
	if (op == 0x0f) {
		op = c[++at];
		if (at + 1 >= left ||
		    (op != 0xb0 && op != 0xb1 && op != 0xc0 && op != 0xc1 && op != 0xc7 &&
		     op != 0xab && op != 0xb3 && op != 0xbb && op != 0xba))
			return false;
	} else if (op > 0x31 || (op & 7) > 1) { /* add, or, adc, sbb, and, sub, xor r/m, r */
		if (op != 0x80 && op != 0x81 && op != 0x83 && op != 0x86 && op != 0x87 &&
		    op != 0xf6 && op != 0xf7 && op != 0xfe && op != 0xff)
			return false;
	}
	return c[at + 1] >> 6 != 3;
}

/*
 * Take the legacy prefixes at s->pos (s->pos past them, their flags set):
 * the byte after them, or -1 when the bytes end first.
 */
static int prefixes(struct ld *s)
{
	int o;

	for (;;) {
		o = byte(s, s->pos);
		if (o < 0)
			return -1;
		switch (o) {
		case 0x66:
			s->p66 = true;
			break;
		case 0x67:
			s->p67 = true;
			break;
		case 0xf3:
			s->rep = true;
			break;
		case 0xf2:
			s->repne = true;
			break;
		case 0xf0:
			s->lock = true;
			break;
		case 0x2e:
		case 0x36:
		case 0x3e:
		case 0x26:
		case 0x64:
		case 0x65:
			break;
		default:
			return o;
		}
		s->pos++;
	}
}

/*
 * The one-byte opcode op (s->pos past it; r its ModRM's reg field, or -1)
 * and the operands after it, as x86_lendec.
 */
static unsigned one_byte(struct ld *s, unsigned op, int r, uint64_t addr, struct x86_ld *d)
{
	if (op >= 0x70 && op <= 0x7f)
		return branch(s, 1, addr, d);
	if (op >= 0xb8 && op <= 0xbf) { /* mov imm, imm64 with REX.W */
		if (s->p66 && (s->rep || s->repne))
			return 0;
		s->pos += (s->rex & 8) ? 8 : s->p66 ? 2 : 4;
		return done(s, d);
	}
	switch (op) {
	case 0x0f:
		if (byte(s, s->pos) == 0x0f) { /* 3DNow!: ModRM, then the opcode as imm8 */
			s->pos++;
			if (!operands(s, MB, d) || !amd3dnow(s->c[s->pos - 1]))
				return 0;
			return done(s, d);
		}
		return two_byte(s, addr, d);
	case 0xc4:
	case 0xc5:
		s->pos--;
		return vex(s, (int)op, d);
	case 0x62:
		s->pos--;
		return evex(s, d);
	case 0x8f: /* pop r/m; another reg field: XOP or invalid */
		return r == 0 ? operands(s, M, d) : 0;
	case 0x8c: /* mov %sreg (es, cs, ss, ds, fs, gs) */
		return r >= 0 && r <= 5 ? operands(s, M, d) : 0;
	case 0x8e: /* mov to %sreg: not cs */
		return r >= 0 && r <= 5 && r != 1 ? operands(s, M, d) : 0;
	case 0x8d: /* lea: a register operand is invalid */
		return mod_of(s) >= 0 && mod_of(s) != 3 ? operands(s, M, d) : 0;
	case 0x90:
		for (size_t k = 0; k < s->npfx; k++)
			if (s->c[k] != 0x66)
				return 0; /* only 0x66 before a nop */
		if (s->rex == 0x41)	  /* xchg %eax,%r8d */
			return done(s, d);
		if (s->rex)
			return 0;
		d->flags |= X86_LD_PAD;
		return done(s, d);
	case 0xa0:
	case 0xa1:
	case 0xa2:
	case 0xa3: /* mov moffs */
		s->pos += s->p67 ? 4 : 8;
		return done(s, d);
	case 0xc2: /* ret imm16 */
	case 0xc3:
		if (s->p66 || s->rex)
			return 0;
		s->pos += op == 0xc2 ? 2 : 0;
		d->flags |= X86_LD_ENDS;
		return done(s, d);
	case 0xc6:
		if (byte(s, s->pos) == 0xf8) /* xabort imm8 */
			return operands(s, MB, d);
		return r == 0 ? operands(s, MB, d) : 0;
	case 0xc7:
		if (byte(s, s->pos) == 0xf8) { /* xbegin rel32 */
			s->pos++;
			return branch(s, 4, addr, d);
		}
		return r == 0 ? operands(s, MZ, d) : 0;
	case 0xc8: /* enter imm16, imm8 */
		s->pos += 3;
		return done(s, d);
	case 0xcc: /* int3 */
		d->flags |= X86_LD_PAD;
		return done(s, d);
	case 0xe0:
	case 0xe1:
	case 0xe2:
	case 0xe3: /* loopne, loope, loop, jrcxz */
	case 0xeb:
		if (op == 0xeb)
			d->flags |= X86_LD_ENDS;
		return branch(s, 1, addr, d);
	case 0xe8:
	case 0xe9:
		if (op == 0xe9)
			d->flags |= X86_LD_ENDS;
		return branch(s, 4, addr, d);
	case 0xf6:
	case 0xf7:
		if (r < 0)
			return 0;
		if (r >= 2)
			return operands(s, M, d);
		return operands(s, op == 0xf6 ? MB : MZ, d);
	case 0xfe:
		return r == 0 || r == 1 ? operands(s, M, d) : 0;
	case 0xff:
		if (r == 4) { /* jmp r/m */
			if (s->p66)
				return 0;
			d->flags |= X86_LD_ENDS;
			return operands(s, M, d);
		}
		if (r == 2 && s->p66)
			return 0;
		return r == 0 || r == 1 || r == 2 || r == 6 ? operands(s, M, d) : 0;
	default:
		return 0;
	}
}

unsigned x86_lendec(const uint8_t *code, size_t left, uint64_t addr, struct x86_ld *d)
{
	struct ld s = {.c = code, .left = left};
	unsigned op, f;
	int o, r;

	d->len = 0;
	d->flags = 0;
	d->target = 0;
	o = prefixes(&s);
	if (o < 0)
		return 0;
	s.npfx = s.pos;
	if (s.lock && !lockable(code, left, s.pos))
		return 0;
	if (o >= 0x40 && o <= 0x4f) {
		s.rex = (uint8_t)o;
		s.pos++;
		o = byte(&s, s.pos);
		if (o < 0)
			return 0;
	}
	op = (unsigned)o;
	s.pos++;
	f = map0[op];
	if (!(f & (X | S)))
		return operands(&s, f, d);
	if (f & X)
		return 0;
	r = reg_of(&s);
	return one_byte(&s, op, r, addr, d);
}
