// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seccomp.c - a process's seccomp filters, read from the kernel, and run on
 * a system call fortstat would inject, before it does: a filter may kill
 * the process for a call it never makes itself.
 */
#include "fortstat/seccomp.h"
#include "fortstat/util.h"

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>

#ifndef PTRACE_SECCOMP_GET_FILTER
#define PTRACE_SECCOMP_GET_FILTER 0x420c
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS 0x80000000u
#endif
#ifndef SECCOMP_RET_USER_NOTIF
#define SECCOMP_RET_USER_NOTIF 0x7fc00000u
#endif
#ifndef SECCOMP_RET_LOG
#define SECCOMP_RET_LOG 0x7ffc0000u
#endif
#ifndef SECCOMP_RET_ACTION_FULL
#define SECCOMP_RET_ACTION_FULL 0xffff0000u
#endif

#define MAX_INSNS 4096	 /* BPF_MAXINSNS: the kernel loads no longer filter */
#define MAX_FILTERS 4096 /* a bound on the kernel's list (32,768 instructions in all) */
#define DATA_SIZE 64	 /* sizeof(struct seccomp_data) */

/* The 32-bit word at offset k of the call's struct seccomp_data (little-endian). */
static uint32_t data_word(const struct scf_call *c, uint32_t k)
{
	uint64_t v;

	switch (k) {
	case 0:
		return (uint32_t)c->nr;
	case 4:
		return c->arch;
	default:
		v = k < 16 ? c->ip : c->args[(k - 16) / 8];
		return (k & 4) ? (uint32_t)(v >> 32) : (uint32_t)v;
	}
}

/* A or X operated on by an ALU instruction; false when it is none of the subset's. */
static bool alu(uint16_t code, uint32_t *a, uint32_t x, uint32_t k, bool *div0)
{
	uint32_t s = BPF_SRC(code) == BPF_X ? x : k;

	switch (BPF_OP(code)) {
	case BPF_ADD:
		*a += s;
		break;
	case BPF_SUB:
		*a -= s;
		break;
	case BPF_MUL:
		*a *= s;
		break;
	case BPF_DIV:
		if (!s)
			*div0 = true; /* the program returns 0 there */
		else
			*a /= s;
		break;
	case BPF_AND:
		*a &= s;
		break;
	case BPF_OR:
		*a |= s;
		break;
	case BPF_XOR:
		*a ^= s;
		break;
	case BPF_LSH: /* by a constant >= 32: refused at load */
		*a <<= s & 31;
		break;
	case BPF_RSH:
		*a >>= s & 31;
		break;
	case BPF_NEG:
		*a = -*a;
		break;
	default:
		return false;
	}
	return true;
}

/* A conditional jump's condition; false in *ok when it is none of the subset's. */
static bool cond(uint16_t code, uint32_t a, uint32_t s, bool *ok)
{
	*ok = true;
	switch (BPF_OP(code)) {
	case BPF_JEQ:
		return a == s;
	case BPF_JGT:
		return a > s;
	case BPF_JGE:
		return a >= s;
	case BPF_JSET:
		return (a & s) != 0;
	default:
		*ok = false;
		return false;
	}
}

int scf_run(const struct scf_insn *prog, size_t n, const struct scf_call *c, uint32_t *ret)
{
	uint32_t a = 0, x = 0, mem[BPF_MEMWORDS] = {0};

	if (!prog || !n || n > MAX_INSNS)
		return -EINVAL;
	for (size_t pc = 0; pc < n; pc++) {
		const struct scf_insn *i = &prog[pc];
		uint32_t k = i->k;
		bool div0 = false, ok, t;

		switch (i->code) {
		case BPF_LD | BPF_W | BPF_ABS:
			if (k >= DATA_SIZE || (k & 3))
				return -EINVAL;
			a = data_word(c, k);
			continue;
		case BPF_LD | BPF_W | BPF_LEN:
			a = DATA_SIZE;
			continue;
		case BPF_LDX | BPF_W | BPF_LEN:
			x = DATA_SIZE;
			continue;
		case BPF_LD | BPF_IMM:
			a = k;
			continue;
		case BPF_LDX | BPF_IMM:
			x = k;
			continue;
		case BPF_MISC | BPF_TAX:
			x = a;
			continue;
		case BPF_MISC | BPF_TXA:
			a = x;
			continue;
		case BPF_LD | BPF_MEM:
		case BPF_LDX | BPF_MEM:
		case BPF_ST:
		case BPF_STX:
			if (k >= BPF_MEMWORDS)
				return -EINVAL;
			if (i->code == (BPF_LD | BPF_MEM))
				a = mem[k];
			else if (i->code == (BPF_LDX | BPF_MEM))
				x = mem[k];
			else
				mem[k] = i->code == BPF_ST ? a : x;
			continue;
		case BPF_RET | BPF_K:
			*ret = k;
			return 0;
		case BPF_RET | BPF_A:
			*ret = a;
			return 0;
		case BPF_JMP | BPF_JA:
			if (k >= n - pc - 1)
				return -EINVAL;
			pc += k;
			continue;
		default:
			break;
		}
		if (BPF_CLASS(i->code) == BPF_ALU &&
		    (i->code & ~(BPF_OP(0xff) | BPF_X)) == BPF_ALU) {
			if (BPF_OP(i->code) == BPF_NEG && BPF_SRC(i->code) == BPF_X)
				return -EINVAL;
			if (!alu(i->code, &a, x, k, &div0))
				return -EINVAL;
			if (div0) {
				*ret = 0;
				return 0;
			}
			continue;
		}
		if (BPF_CLASS(i->code) != BPF_JMP || (i->code & ~(BPF_OP(0xff) | BPF_X)) != BPF_JMP)
			return -EINVAL;
		t = cond(i->code, a, BPF_SRC(i->code) == BPF_X ? x : k, &ok);
		if (!ok || (size_t)i->jt >= n - pc - 1 || (size_t)i->jf >= n - pc - 1)
			return -EINVAL;
		pc += t ? i->jt : i->jf;
	}
	return -EINVAL; /* ran off the end: the kernel demands a return last */
}

/* The action as the kernel ranks it: a signed comparison, the lowest acts. */
static int32_t action_rank(uint32_t ret)
{
	return (int32_t)(ret & SECCOMP_RET_ACTION_FULL);
}

uint32_t scf_combine(uint32_t a, uint32_t b)
{
	return action_rank(b) < action_rank(a) ? b : a;
}

int scf_eval(const struct scf_filters *fs, const struct scf_call *c, uint32_t *ret)
{
	uint32_t out = SECCOMP_RET_ALLOW;

	for (size_t i = fs->n; i-- > 0;) {
		uint32_t r;
		int err = scf_run(fs->prog[i], fs->len[i], c, &r);

		if (err)
			return err;
		out = scf_combine(out, r);
	}
	*ret = out;
	return 0;
}

enum scf_effect scf_effect(uint32_t ret)
{
	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
	case SECCOMP_RET_LOG:
		return SCF_RUNS;
	case SECCOMP_RET_ERRNO:
	case SECCOMP_RET_TRACE:
		return SCF_REFUSED;
	case SECCOMP_RET_USER_NOTIF:
		return SCF_ASKS;
	default:
		return SCF_HARMS;
	}
}

const char *scf_says(uint32_t ret, char *buf, size_t size)
{
	uint32_t data = ret & SECCOMP_RET_DATA;

	switch (ret & SECCOMP_RET_ACTION_FULL) {
	case SECCOMP_RET_ALLOW:
		snprintf(buf, size, "allows it");
		break;
	case SECCOMP_RET_LOG:
		snprintf(buf, size, "allows it (logged)");
		break;
	case SECCOMP_RET_ERRNO:
		if (strerrorname_np((int)data))
			snprintf(buf, size, "refuses it (%s)", strerrorname_np((int)data));
		else
			snprintf(buf, size, "refuses it (error %u)", data);
		break;
	case SECCOMP_RET_TRACE:
		snprintf(buf, size, "refuses it (a tracer's to decide)");
		break;
	case SECCOMP_RET_USER_NOTIF:
		snprintf(buf, size, "asks a supervisor process");
		break;
	case SECCOMP_RET_TRAP:
		snprintf(buf, size, "sends it SIGSYS");
		break;
	case SECCOMP_RET_KILL_THREAD:
		snprintf(buf, size, "kills the thread");
		break;
	default:
		snprintf(buf, size, "kills the process");
		break;
	}
	return buf;
}

int scf_read(pid_t tid, struct scf_filters *fs)
{
	memset(fs, 0, sizeof(*fs));
	for (unsigned long i = 0; i < MAX_FILTERS; i++) {
		long n = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, NULL), got;
		struct scf_insn *p;

		if (n < 0 && errno == ENOENT && i > 0)
			return 0; /* past the oldest */
		if (n < 0) {
			int e = errno == ENOENT ? EINVAL : errno;

			scf_free(fs);
			return -e;
		}
		if (n == 0 || n > MAX_INSNS) {
			scf_free(fs);
			return -EINVAL;
		}
		p = xcalloc((size_t)n, sizeof(*p));
		got = ptrace(PTRACE_SECCOMP_GET_FILTER, tid, (void *)i, p);
		if (got != n) { /* struct sock_filter and scf_insn share one layout */
			int e = got < 0 ? errno : EINVAL;

			free(p);
			scf_free(fs);
			return -e;
		}
		fs->prog = xrealloc(fs->prog, (fs->n + 1) * sizeof(*fs->prog));
		fs->len = xrealloc(fs->len, (fs->n + 1) * sizeof(*fs->len));
		fs->prog[fs->n] = p;
		fs->len[fs->n] = (size_t)n;
		fs->n++;
	}
	return 0;
}

void scf_free(struct scf_filters *fs)
{
	for (size_t i = 0; i < fs->n; i++)
		free(fs->prog[i]);
	free(fs->prog);
	free(fs->len);
	memset(fs, 0, sizeof(*fs));
}
