// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_probe.c - the in-process probes' code (src/probe/stubs.c),
 * run for real in the test process: a routine behind a probe stub, the
 * return trampoline, and a thread area at this thread's GS base (which
 * Linux user code leaves unused). What the ring and the shadow stack hold
 * after each call is the ABI the tracer reads (evabi.h).
 */
#include <asm/prctl.h>
#include <check.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "fortstat/evabi.h"
#include "fortstat/insn.h"
#include "fortstat/procmem.h"

/* add13(a, b, c) = a + c: reads its first and third arguments. */
static const uint8_t add13[] = {
    0x48, 0x89, 0xd0, /* mov %rdx,%rax */
    0x48, 0x01, 0xf8, /* add %rdi,%rax */
    0xc3,	      /* ret */
};

/* as add13, but first leaves a shadow entry behind, as a longjmp over a frame would */
static const uint8_t leave_stale[] = {
    0x48, 0x89, 0xd0,				 /* mov %rdx,%rax */
    0x48, 0x01, 0xf8,				 /* add %rdi,%rax */
    0x65, 0x48, 0xff, 0x04, 0x25, 0x18, 0, 0, 0, /* incq %gs:PROBE_DEPTH */
    0xc3,					 /* ret */
};

/*
 * as add13, and then fortstat dies: its liveness word (its address in rsi)
 * gets the robust futex's FUTEX_OWNER_DIED, the thread id cleared
 */
static const uint8_t add13_gone[] = {
    0x48, 0x89, 0xd0,			/* mov %rdx,%rax */
    0x48, 0x01, 0xf8,			/* add %rdi,%rax */
    0xc7, 0x06, 0x00, 0x00, 0x00, 0x40, /* movl $0x40000000,(%rsi) */
    0xc3,				/* ret */
};

/* loop(a, b) = b + 2a: a loop back to +4, no room for a 5-byte jmp; padding after its ret */
static const uint8_t loop4[] = {
    0x53,				/* push %rbx */
    0x48, 0x89, 0xfb,			/* mov %rdi,%rbx */
    0x48, 0x83, 0xc6, 0x02,		/* add $2,%rsi  <- the loop */
    0x48, 0xff, 0xcb,			/* dec %rbx */
    0x75, 0xf7,				/* jne +4 */
    0x48, 0x89, 0xf0,			/* mov %rsi,%rax */
    0x5b,				/* pop %rbx */
    0xc3,				/* ret */
    0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00, /* nopw 0(%rax,%rax): padding */
};

struct rig {
	uint8_t *code; /* routine at 0, trampoline at 0x400, stub at 0x800 */
	uint8_t *area; /* this thread's area */
	struct insn_stub st;
};

static long set_gs(void *base)
{
	return syscall(SYS_arch_prctl, ARCH_SET_GS, (unsigned long)(uintptr_t)base);
}

static uint64_t hdr(const struct rig *r, unsigned off)
{
	uint64_t v;

	memcpy(&v, r->area + off, 8);
	return v;
}

static const struct probe_event *event(const struct rig *r, uint64_t i)
{
	return (const struct probe_event *)(const void *)(r->area + PROBE_RING +
							  (i % PROBE_RING_N) * PROBE_EV_SIZE);
}

/* The liveness word, from the area (in the tracer: the event page's EV_ALIVE). */
#define ALIVE_AT (PROBE_AREA_SIZE - 8)

/* A routine (fn, n bytes) behind a probe stub for patch 7; false: no rig here. */
static bool rig_up(struct rig *r, const uint8_t *fn, size_t n, enum insn_probe_mode mode)
{
	unsigned full;
	uint64_t base;

	memset(r, 0, sizeof(*r));
	r->code = mmap(NULL, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	r->area =
	    mmap(NULL, PROBE_AREA_SIZE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (r->code == MAP_FAILED || r->area == MAP_FAILED)
		return false;
	base = (uint64_t)(uintptr_t)r->code;
	memset(r->code, 0xcc, 8192);
	memcpy(r->code, fn, n);
	/* the classic return trap is never reached here: an int3 at 0x300 */
	ck_assert_uint_le(insn_probe_trampoline(base + 0x300, r->code + 0x400, &full),
			  INSN_PROBE_TRAMP_SIZE);
	/* a full ring's stop: RIP just after the tkill's syscall */
	ck_assert_uint_eq(r->code[0x400 + full - 2], 0x0f);
	ck_assert_uint_eq(r->code[0x400 + full - 1], 0x05);
	ck_assert_int_eq(insn_plan_probe(r->code, n, base, base + 0x800, base + 0x400, base + 0x300,
					 7, mode, NULL, &r->st),
			 0);
	ck_assert_uint_le(r->st.code_len, INSN_STUB_SIZE);
	memcpy(r->code + 0x800, r->st.code, r->st.code_len);
	if (r->st.pad_addr) /* a short entry: its padding's jmp rel32 first */
		memcpy(r->code + (r->st.pad_addr - base), r->st.pad, 5);
	memcpy(r->code + (r->st.addr - base), r->st.jmp, r->st.len);
	memcpy(r->area + PROBE_SELF, &r->area, 8);
	{
		uint64_t cap = PROBE_RING_N, alive = ALIVE_AT;
		uint32_t tid = 1234; /* fortstat lives */

		memcpy(r->area + PROBE_CAP, &cap, 8);
		memcpy(r->area + PROBE_ALIVE, &alive, 8);
		memcpy(r->area + ALIVE_AT, &tid, 4);
	}
	return set_gs(r->area) == 0;
}

static void rig_down(struct rig *r)
{
	set_gs(NULL);
	munmap(r->code, 8192);
	munmap(r->area, PROBE_AREA_SIZE);
}

static uint64_t call3(const struct rig *r, uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t (*fn)(uint64_t, uint64_t, uint64_t) =
	    (uint64_t(*)(uint64_t, uint64_t, uint64_t))(uintptr_t)r->code;

	return fn(a, b, c);
}

/* A short entry (jmp rel8 to its padding, jmp rel32 there) reaches the fast path. */
START_TEST(short_entry)
{
	struct rig r;

	if (!rig_up(&r, loop4, sizeof(loop4), INSN_PROBE_TIMED))
		return;
	ck_assert_uint_eq(r.st.len, 4);
	ck_assert_uint_eq(r.st.pad_addr, (uint64_t)(uintptr_t)r.code + 0x12);
	ck_assert_uint_eq(call3(&r, 3, 10, 0), 16);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 2);
	ck_assert_uint_eq(event(&r, 0)->word, PROBE_W_ENTRY | 7);
	ck_assert_uint_eq(event(&r, 1)->word, PROBE_W_RETURN);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	rig_down(&r);
}
END_TEST

START_TEST(entry_and_return)
{
	struct rig r;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_TIMED))
		return;
	ck_assert_uint_eq(call3(&r, 1, 2, 40), 41);
	ck_assert_uint_eq(call3(&r, 5, 0, 5), 10);
	/* two calls: entry, return, entry, return; the shadow stack empty again */
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 4);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	for (uint64_t i = 0; i < 4; i++) {
		const struct probe_event *e = event(&r, i);

		ck_assert_uint_eq(e->word, i % 2 ? PROBE_W_RETURN : (PROBE_W_ENTRY | 7));
		ck_assert_uint_eq(e->slot, event(&r, i & ~1ull)->slot);
		if (i)
			ck_assert_uint_ge(e->tsc, event(&r, i - 1)->tsc);
	}
	/* the entry names the original return address (in this test), not the trampoline */
	for (uint64_t i = 0; i < 4; i += 2) {
		ck_assert_uint_ne(event(&r, i)->ret, 0);
		ck_assert_uint_ne(event(&r, i)->ret, (uint64_t)(uintptr_t)r.code + 0x400);
	}
	ck_assert_uint_eq(event(&r, 1)->ret, 41); /* the return event holds RAX */
	rig_down(&r);
}
END_TEST

/*
 * An allocator's probe (--alloc): its entry event holds RDI and RSI where a
 * timed entry has its return address and TSC, and its return is hooked as
 * any: the trampoline's event holds RAX; the routine's arguments and result
 * are untouched.
 */
START_TEST(alloc_entry)
{
	struct rig r;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_ALLOC))
		return;
	ck_assert_uint_eq(call3(&r, 100, 7, 23), 123);
	ck_assert_uint_eq(call3(&r, 64, 0x1000, 0), 64);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 4);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	ck_assert_uint_eq(event(&r, 0)->word, PROBE_W_ENTRY | 7);
	ck_assert_uint_eq(event(&r, 0)->ret, 100);
	ck_assert_uint_eq(event(&r, 0)->tsc, 7);
	ck_assert_uint_eq(event(&r, 1)->word, PROBE_W_RETURN);
	ck_assert_uint_eq(event(&r, 1)->ret, 123);
	ck_assert_uint_eq(event(&r, 1)->slot, event(&r, 0)->slot);
	ck_assert_uint_eq(event(&r, 2)->ret, 64);
	ck_assert_uint_eq(event(&r, 2)->tsc, 0x1000);
	ck_assert_uint_eq(event(&r, 3)->ret, 64);
	rig_down(&r);
}
END_TEST

/*
 * fortstat is gone (its liveness word's thread id cleared): a call is a
 * plain one, nothing recorded, its return address left alone.
 */
START_TEST(tracer_gone)
{
	struct rig r;
	uint32_t died = 0x40000000; /* FUTEX_OWNER_DIED */

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_TIMED))
		return;
	memcpy(r.area + ALIVE_AT, &died, 4);
	ck_assert_uint_eq(call3(&r, 1, 2, 40), 41);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 0);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	/* no area of its own (PROBE_F_TRAP): still a plain call, not the classic int3 */
	memcpy(r.area + PROBE_FLAGS, &(uint64_t){PROBE_F_TRAP}, 8);
	ck_assert_uint_eq(call3(&r, 2, 0, 3), 5);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 0);
	rig_down(&r);
}
END_TEST

/* The reader of full_ring: a SIGURG handler in the place of the tracer. */
static uint8_t *urg_area;
static volatile int urg_calls;

static void urg_drain(int sig)
{
	uint64_t head;

	(void)sig;
	urg_calls++;
	/* all read but the event the thread took and waits to write (one thread) */
	memcpy(&head, urg_area + PROBE_HEAD, 8);
	head--;
	memcpy(urg_area + PROBE_TAIL, &head, 8);
}

/*
 * A full ring: the probe sends its thread SIGURG (the tracer's stop; here
 * a handler reads the ring), then looks again and records. Every register
 * the routine and its caller see is as before; a thread that blocks
 * SIGURG gets it all the same, and its mask back.
 */
START_TEST(full_ring)
{
	struct sigaction sa = {.sa_handler = urg_drain}, old;
	struct rig r;
	uint64_t cap = 1;
	sigset_t urg, mask;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_TIMED))
		return;
	urg_area = r.area;
	urg_calls = 0;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGURG, &sa, &old), 0);
	memcpy(r.area + PROBE_CAP, &cap, 8);
	ck_assert_uint_eq(call3(&r, 1, 2, 40), 41);
	sigemptyset(&urg);
	sigaddset(&urg, SIGURG);
	sigprocmask(SIG_BLOCK, &urg, NULL);
	ck_assert_uint_eq(call3(&r, 5, 0, 5), 10);
	sigprocmask(SIG_UNBLOCK, &urg, &mask);
	ck_assert(sigismember(&mask, SIGURG)); /* blocked again after the probe's stop */
	sigaction(SIGURG, &old, NULL);
	/* the return found the ring full (one event), and each entry after it */
	ck_assert_int_eq(urg_calls, 3);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 4);
	for (uint64_t i = 0; i < 4; i++)
		ck_assert_uint_eq(event(&r, i)->word, i % 2 ? PROBE_W_RETURN : (PROBE_W_ENTRY | 7));
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	rig_down(&r);
}
END_TEST

/*
 * fortstat dies while a call is open and its ring is full: the return
 * finds no reader and goes back without its event, with no stop (with
 * no handler of SIGURG here, one would kill the test).
 */
START_TEST(tracer_gone_full_ring)
{
	struct rig r;
	uint64_t cap = 1;
	uint32_t w;

	if (!rig_up(&r, add13_gone, sizeof(add13_gone), INSN_PROBE_TIMED))
		return;
	memcpy(r.area + PROBE_CAP, &cap, 8);
	ck_assert_uint_eq(call3(&r, 1, (uint64_t)(uintptr_t)(r.area + ALIVE_AT), 40), 41);
	memcpy(&w, r.area + ALIVE_AT, 4);
	ck_assert_uint_eq(w, 0x40000000);
	ck_assert_uint_eq(event(&r, 0)->word, PROBE_W_ENTRY | 7); /* the entry, while it lived */
	ck_assert_uint_eq(event(&r, 1)->word, 0);		  /* no return: the ring was full */
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);		  /* popped all the same */
	rig_down(&r);
}
END_TEST

/* every_step's rig, and what its SIGTRAP handler saw */
static struct rig *step_rig;
static volatile int step_entered, step_nested, step_wrong;

static bool in_range(uint64_t pc, uint64_t lo, uint64_t n)
{
	return pc >= lo && pc < lo + n;
}

/*
 * The trap flag's SIGTRAP after each instruction of the stepped call: a
 * signal handler that calls the timed routine itself (as a program's
 * handler calls its own timed routines), wherever it interrupts the
 * stub's or the trampoline's code. Back in the test's code, the flag is
 * cleared.
 */
static void step_trap(int sig, siginfo_t *si, void *ctx)
{
	ucontext_t *uc = ctx;
	uint64_t pc = (uint64_t)uc->uc_mcontext.gregs[REG_RIP];
	uint64_t base = (uint64_t)(uintptr_t)step_rig->code;

	(void)sig;
	(void)si;
	if (in_range(pc, base + 0x400, INSN_PROBE_TRAMP_SIZE) ||
	    in_range(pc, base + 0x800, step_rig->st.code_len)) {
		step_nested++;
		if (call3(step_rig, 2, 0, 3) != 5)
			step_wrong++;
	}
	if (in_range(pc, base, 8192))
		step_entered = 1;
	else if (step_entered)
		uc->uc_mcontext.gregs[REG_EFL] &= ~0x100L; /* the call is back: stop stepping */
}

/*
 * A signal handler that runs a timed routine interrupts the probe's code
 * at every instruction in turn, its entry stub's and its trampoline's
 * (single steps: the trap flag): each nested call is recorded and returns
 * where it should, and so does the interrupted one. The trampoline once
 * popped its shadow entry before reading the return address from it: a
 * handler between the two took that entry for its own, and the routine
 * returned into the handler's caller (issue 27: a sigreturn on a frame
 * that was none, SIGSEGV).
 */
START_TEST(handler_at_every_step)
{
	struct sigaction sa = {.sa_sigaction = step_trap, .sa_flags = SA_SIGINFO}, old;
	struct rig r;
	uint64_t v;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_TIMED))
		return;
	step_rig = &r;
	step_entered = step_nested = step_wrong = 0;
	sigemptyset(&sa.sa_mask);
	ck_assert_int_eq(sigaction(SIGTRAP, &sa, &old), 0);
	/* the trap flag set below the red zone: a trap after each instruction from here */
	__asm__ volatile("lea -128(%%rsp),%%rsp; pushfq; orq $0x100,(%%rsp); popfq;"
			 "lea 128(%%rsp),%%rsp" ::
			     : "memory", "cc");
	v = call3(&r, 1, 2, 40);
	__asm__ volatile("" ::: "memory");
	sigaction(SIGTRAP, &old, NULL);
	ck_assert_uint_eq(v, 41);
	ck_assert_int_eq(step_wrong, 0);
	/* the stub's fast path and the trampoline: some 60 instructions */
	ck_assert_int_ge(step_nested, 40);
	/* every call, nested or not, entered and returned; the shadow stack empty */
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 2 + 2 * (uint64_t)step_nested);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	for (uint64_t i = 0, open = 0; i < hdr(&r, PROBE_HEAD); i++) {
		uint64_t w = event(&r, i)->word;

		ck_assert(w == (PROBE_W_ENTRY | 7) || w == PROBE_W_RETURN);
		open += w == PROBE_W_RETURN ? -1 : 1;
		ck_assert_uint_le(open, 2);
	}
	rig_down(&r);
}
END_TEST

/* Frames left on the shadow stack above the returning one (longjmp) are dropped. */
START_TEST(stale_entries_dropped)
{
	struct rig r;

	if (!rig_up(&r, leave_stale, sizeof(leave_stale), INSN_PROBE_TIMED))
		return;
	ck_assert_uint_eq(call3(&r, 1, 2, 40), 41);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	ck_assert_uint_eq(call3(&r, 2, 0, 3), 5);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 4);
	rig_down(&r);
}
END_TEST

/* The ring wraps: the tracer's tail moved on, the program's head goes past the end. */
START_TEST(ring_wraps)
{
	struct rig r;
	uint64_t start = PROBE_RING_N - 1;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_TIMED))
		return;
	memcpy(r.area + PROBE_HEAD, &start, 8);
	memcpy(r.area + PROBE_TAIL, &start, 8);
	ck_assert_uint_eq(call3(&r, 3, 0, 4), 7);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), PROBE_RING_N + 1);
	ck_assert_uint_eq(event(&r, start)->word, PROBE_W_ENTRY | 7);
	ck_assert_uint_eq(event(&r, start + 1)->word, PROBE_W_RETURN); /* slot 0 again */
	rig_down(&r);
}
END_TEST

/* -c: the thread's counter of the patch, no event, no hook. */
START_TEST(count_only)
{
	struct rig r;
	uint64_t c;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_COUNT))
		return;
	for (int i = 0; i < 1000; i++)
		ck_assert_uint_eq(call3(&r, (uint64_t)i, 9, 1), (uint64_t)i + 1);
	memcpy(&c, r.area + PROBE_CTR + 8 * 7, 8);
	ck_assert_uint_eq(c, 1000);
	ck_assert_uint_eq(hdr(&r, PROBE_NCOUNT), 1000);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 0);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	rig_down(&r);
}
END_TEST

/*
 * A routine that never returns (exit, longjmp): its entry recorded, its
 * return address left as it is, nothing on the shadow stack. (add13 does
 * return, straight to its caller: no return event.)
 */
START_TEST(entry_only)
{
	struct rig r;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_ENTRY))
		return;
	ck_assert_uint_eq(call3(&r, 1, 2, 40), 41);
	ck_assert_uint_eq(call3(&r, 5, 0, 5), 10);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 2);
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	for (uint64_t i = 0; i < 2; i++) {
		ck_assert_uint_eq(event(&r, i)->word, PROBE_W_ENTRY | 7);
		ck_assert_uint_ne(event(&r, i)->ret, 0);
		ck_assert_uint_ne(event(&r, i)->ret, (uint64_t)(uintptr_t)r.code + 0x400);
	}
	ck_assert_uint_ge(event(&r, 1)->tsc, event(&r, 0)->tsc);
	rig_down(&r);
}
END_TEST

/* A throttled probe: its flag set, its calls are counted in the thread's counter only. */
START_TEST(throttled)
{
	struct rig r;
	uint64_t c;

	if (!rig_up(&r, add13, sizeof(add13), INSN_PROBE_TIMED))
		return;
	ck_assert_uint_eq(call3(&r, 1, 2, 40), 41);
	ck_assert_uint_ne(r.st.throttle_off, 0);
	r.code[0x800 + r.st.throttle_off] = 1;
	for (int i = 0; i < 100; i++)
		ck_assert_uint_eq(call3(&r, (uint64_t)i, 0, 2), (uint64_t)i + 2);
	memcpy(&c, r.area + PROBE_CTR + 8 * 7, 8);
	ck_assert_uint_eq(c, 100);
	ck_assert_uint_eq(hdr(&r, PROBE_HEAD), 2); /* the first call's entry and return only */
	ck_assert_uint_eq(hdr(&r, PROBE_DEPTH), 0);
	ck_assert_uint_eq(hdr(&r, PROBE_NCOUNT), 100);
	ck_assert_uint_eq(event(&r, 0)->word, PROBE_W_ENTRY | 7);
	ck_assert_uint_eq(event(&r, 1)->word, PROBE_W_RETURN);
	/* timed again: its events say how many calls took the count path before them */
	r.code[0x800 + r.st.throttle_off] = 0;
	ck_assert_uint_eq(call3(&r, 5, 0, 2), 7);
	ck_assert_uint_eq(event(&r, 2)->word, PROBE_W_ENTRY | 7 | 100ull << PROBE_W_NCOUNT_SHIFT);
	ck_assert_uint_eq(event(&r, 3)->word, PROBE_W_RETURN | 100ull << PROBE_W_NCOUNT_SHIFT);
	ck_assert_uint_ge(event(&r, 3)->tsc, event(&r, 2)->tsc);
	rig_down(&r);
}
END_TEST

/* No placeholder of the assembled code is left in what is planned. */
START_TEST(no_placeholders)
{
	static const uint8_t marks[][4] = {
	    {0x11, 0x11, 0x11, 0x11}, {0x22, 0x22, 0x22, 0x22}, {0x33, 0x33, 0x33, 0x33},
	    {0x44, 0x44, 0x44, 0x44}, {0x55, 0x55, 0x55, 0x55},
	};
	/* the trampoline, and the call before it (INSN_PROBE_TRAMP_CALL bytes) */
	uint8_t room[INSN_PROBE_TRAMP_CALL + INSN_PROBE_TRAMP_SIZE];
	uint8_t *tramp = room + INSN_PROBE_TRAMP_CALL;
	struct insn_stub st;
	unsigned full;
	size_t n = insn_probe_trampoline(0x1000, tramp, &full);

	ck_assert_int_eq(insn_plan_probe(add13, sizeof(add13), 0x400000, 0x500000, 0x600000,
					 0x700000, 3, INSN_PROBE_TIMED, NULL, &st),
			 0);
	for (size_t m = 0; m < sizeof(marks) / sizeof(marks[0]); m++) {
		ck_assert_ptr_null(memmem(st.code, st.code_len, marks[m], 4));
		ck_assert_ptr_null(memmem(room, INSN_PROBE_TRAMP_CALL + n, marks[m], 4));
	}
	/* call *-0x80(%rsp): a hooked entry's, its return address the trampoline */
	ck_assert_mem_eq(room, ((const uint8_t[]){0xff, 0x54, 0x24, 0x80}), 4);
	/* a full ring's stop: just after a syscall (tkill) */
	ck_assert_uint_eq(st.code[st.full_off - 2], 0x0f);
	ck_assert_uint_eq(st.code[st.full_off - 1], 0x05);
	ck_assert_uint_eq(tramp[full - 2], 0x0f);
	ck_assert_uint_eq(tramp[full - 1], 0x05);
	ck_assert_uint_eq(st.code[st.trap_off], 0xcc);
	ck_assert_uint_eq(st.jmp[0], 0xe9);
}
END_TEST

/*
 * The patching's read cache (procmem.c), on this process's own memory:
 * reads inside the copy come from it (a change made behind its back is not
 * seen), writes through mem_write reach both, reads outside go to memory,
 * and after mem_cache_end every read does.
 */
START_TEST(mem_cache)
{
	static uint8_t mem[3 * 4096];
	uint8_t b[16];
	int fd = mem_open(getpid());

	ck_assert_int_ge(fd, 0);
	memset(mem, 0x11, sizeof(mem));
	ck_assert_uint_eq(mem_cache_begin(fd, (uint64_t)(uintptr_t)(mem + 4096), 4096), 4096);
	mem[4096 + 10] = 0x22; /* behind the copy's back */
	ck_assert_int_eq(mem_read(fd, (uint64_t)(uintptr_t)(mem + 4096 + 8), b, 4), 0);
	ck_assert_uint_eq(b[2], 0x11);
	/* a write across the copy's end: both parts land, the copy keeps its part */
	memset(b, 0x33, sizeof(b));
	ck_assert_int_eq(mem_write(fd, (uint64_t)(uintptr_t)(mem + 2 * 4096 - 4), b, 8), 0);
	ck_assert_uint_eq(mem[2 * 4096 + 3], 0x33);
	ck_assert_int_eq(mem_read(fd, (uint64_t)(uintptr_t)(mem + 2 * 4096 - 6), b, 4), 0);
	ck_assert_uint_eq(b[0], 0x11);
	ck_assert_uint_eq(b[2], 0x33);
	/* across the copy's end: from memory */
	mem[2 * 4096] = 0x44;
	ck_assert_int_eq(mem_read(fd, (uint64_t)(uintptr_t)(mem + 2 * 4096 - 1), b, 2), 0);
	ck_assert_uint_eq(b[1], 0x44);
	mem_cache_end();
	ck_assert_int_eq(mem_read(fd, (uint64_t)(uintptr_t)(mem + 4096 + 10), b, 1), 0);
	ck_assert_uint_eq(b[0], 0x22);
	/* nothing readable: no copy */
	ck_assert_uint_eq(mem_cache_begin(fd, 8, 4096), 0);
	close(fd);
}
END_TEST

/*
 * The patching's batched writes (procmem.c), on this process's own memory:
 * pieces far apart written alone, pieces within `join` as one span whose
 * bytes between them stay as they were, the later of two overlapping
 * pieces on top, the batch emptied; an unwritable span reports its start.
 */
START_TEST(mem_batch)
{
	static uint8_t mem[4 * 4096];
	const uint8_t jmp[5] = {0xe9, 1, 2, 3, 4}, one = 0xcc, two[2] = {0x77, 0x88};
	struct mem_batch b = {0};
	uint64_t at = 1, base = (uint64_t)(uintptr_t)mem;
	int fd = mem_open(getpid());

	ck_assert_int_ge(fd, 0);
	memset(mem, 0x90, sizeof(mem));
	mem_batch_add(&b, base + 3 * 4096, &one, 1); /* far: alone */
	mem_batch_add(&b, base + 102, two, 2);
	mem_batch_add(&b, base + 40, jmp, 5);  /* within join of the next: one span */
	mem_batch_add(&b, base + 100, jmp, 5); /* over the two at 102, added later: wins */
	mem_batch_add(&b, base + 200, two, 2); /* and after it, not under it */
	mem[60] = 0x55;			       /* between pieces: kept */
	ck_assert_int_eq(mem_batch_write(fd, &b, 256, &at), 0);
	ck_assert_uint_eq(b.n, 0);
	ck_assert_mem_eq(mem + 40, jmp, 5);
	ck_assert_uint_eq(mem[45], 0x90);
	ck_assert_uint_eq(mem[60], 0x55);
	ck_assert_mem_eq(mem + 100, jmp, 5);
	ck_assert_uint_eq(mem[200], 0x77);
	ck_assert_uint_eq(mem[201], 0x88);
	ck_assert_uint_eq(mem[3 * 4096], 0xcc);
	ck_assert_uint_eq(mem[3 * 4096 + 1], 0x90);
	ck_assert_uint_eq(at, 1); /* untouched when all went well */
	/* nothing mapped at 8: the error and where */
	mem_batch_add(&b, 8, &one, 1);
	mem_batch_add(&b, 12, &one, 1);
	ck_assert_int_lt(mem_batch_write(fd, &b, 256, &at), 0);
	ck_assert_uint_eq(at, 8);
	mem_batch_free(&b);
	close(fd);
}
END_TEST

static Suite *probe_suite(void)
{
	Suite *s = suite_create("probe");
	TCase *tc = tcase_create("run");

	tcase_add_test(tc, entry_and_return);
	tcase_add_test(tc, alloc_entry);
	tcase_add_test(tc, short_entry);
	tcase_add_test(tc, stale_entries_dropped);
	tcase_add_test(tc, ring_wraps);
	tcase_add_test(tc, count_only);
	tcase_add_test(tc, throttled);
	tcase_add_test(tc, entry_only);
	tcase_add_test(tc, no_placeholders);
	tcase_add_test(tc, mem_cache);
	tcase_add_test(tc, mem_batch);
	tcase_add_test(tc, full_ring);
	tcase_add_test(tc, tracer_gone);
	tcase_add_test(tc, tracer_gone_full_ring);
	tcase_add_test(tc, handler_at_every_step);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(probe_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
