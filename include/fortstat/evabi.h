/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * evabi.h - the ABI between the tracer and the code it writes into the
 * program (entry stubs, the return trap, return sites' traps): the layout
 * of the event memory they share and the event words. Both sides must agree
 * byte for byte; the program can write this memory too, so the tracer
 * checks every index it reads from it.
 */
#ifndef FORTSTAT_EVABI_H
#define FORTSTAT_EVABI_H

#include <stdint.h>

/*
 * The event page: memory shared by the tracer and the program. With one
 * (`page` not 0), the stub writes {return address, slot, ev} there before
 * its int3 and the return trap writes {-, rsp, INSN_EV_RETURN}: a tracer that
 * knows the program has a single thread reads the stop's facts from its own
 * mapping instead of the registers. It clears `ev` at every stop.
 *
 * The stub's hook path and a return site's trap also read the TSC just
 * before their int3 and just after it (t_trap, t_go): between one stop's
 * t_go and the next one's t_trap the program ran its own code, so the
 * tracer learns how much of each segment its clocks charged was the stops'
 * (the kernel's and the tracer's) -- measured in the run itself, where the
 * calibration can only predict it. At the stop, EAX:EDX hold t_trap too
 * and the register that addresses the page (r10 in a stub, r11 in a return
 * site's trap) still does: t_go and the hook pair are read through it, so
 * a tracer that cannot trust the shared page (threads) points it at a slot
 * of the thread's own (INSN_EV_SLOT_SIZE bytes, the same layout). Every
 * register the code uses is put back before the routine's code or its
 * caller's runs again, call-clobbered ones too: a caller built with GCC's
 * -fipa-ra keeps values in them across calls to routines it knows.
 */
struct insn_event_page {
	uint64_t ret; /* entry: the return address */
	uint64_t rsp; /* entry: RSP (the slot); return: RSP after the ret */
	uint32_t ev;  /* 0: nothing; k+1: the entry of patch k; INSN_EV_RETURN* */
	uint32_t pad;
	uint64_t hook_val; /* written by the tracer: the stub writes hook_val over */
	uint64_t hook_key; /* the return address when it equals hook_key, else the trap */
	uint64_t t_trap;   /* the TSC just before the int3 (an entry stub, a site's trap) */
	uint64_t t_go;	   /* the TSC just after it, once resumed (the tracer clears it) */
};
#define INSN_EV_SLOT_SIZE 64		/* a thread's slot: an insn_event_page */
#define INSN_EV_RETURN 0xffffffffu	/* the common return trap (the tracer sets RIP) */
#define INSN_EV_RETURN_SITE 0xfffffffeu /* a return site's own trap (it jumps back itself) */

/*
 * The event memory as mapped: the page (an insn_event_page at offset 0,
 * room for a struct ksigaction at EV_SIGACT), then EV_SLOTS slots of
 * INSN_EV_SLOT_SIZE bytes, one a thread, for stops that cannot use the
 * shared page (more than one thread or process).
 */
#define EV_PAGE 4096
#define EV_SLOTS 1024
#define EV_SIZE (EV_PAGE + EV_SLOTS * INSN_EV_SLOT_SIZE)
#define EV_SIGACT 0x800
/*
 * fortstat's liveness word (u32): its thread id while it runs the program;
 * the kernel clears those bits (FUTEX_OWNER_DIED, a robust futex's death)
 * when fortstat dies, even by SIGKILL, before its tracees are let go. The
 * probes read it (PROBE_ALIVE) and then no longer wait for a reader.
 */
#define EV_ALIVE 0xc00
#define EV_ALIVE_TID 0x3fffffffu /* FUTEX_TID_MASK */

/*
 * In-process probes (--probes): each thread of the program has an area of
 * the event memory, its GS base (set by the tracer at the thread's first
 * stop), laid out as below. The entry stub and the return trampoline
 * record events in its ring and keep the original return addresses on its
 * shadow stack; the tracer reads the ring only while the thread is stopped
 * (every stop of the thread drains it first; a full ring stops the thread).
 * Everything here is written by the program too: the tracer checks each
 * index it reads and trusts no event it cannot match.
 */
#define PROBE_SELF 0x00	 /* u64: the area's own address in the program */
#define PROBE_HEAD 0x08	 /* u64: the next ring index to take (the program's) */
#define PROBE_TAIL 0x10	 /* u64: the next ring index to read (the tracer's) */
#define PROBE_DEPTH 0x18 /* u64: shadow stack entries in use */
#define PROBE_FLAGS 0x20 /* u64: PROBE_F_TRAP: no area, take the trap path */
#define PROBE_F_TRAP 1u
#define PROBE_CAP 0x28	  /* u64: events the ring may hold (<= PROBE_RING_N; the tracer's) */
#define PROBE_NCOUNT 0x30 /* u64: calls the count path took (each event carries it) */
/* s64: EV_ALIVE's offset from the area (the same in every process of -f) */
#define PROBE_ALIVE 0x38
#define PROBE_SHADOW 0x40				/* the shadow stack: {slot, ret} entries */
#define PROBE_SHADOW_N 4096				/* shadow entries (a call deeper traps) */
#define PROBE_RING (PROBE_SHADOW + PROBE_SHADOW_N * 16) /* the ring of events */
#define PROBE_RING_N 16384				/* events (a power of 2) */
#define PROBE_EV_SIZE 32				/* {tsc, slot, ret, word} */
#define PROBE_CTR (PROBE_RING + PROBE_RING_N * PROBE_EV_SIZE) /* -c: a u64 a patch */
#define PROBE_CTR_N 65536 /* patches counted in-process (higher ones trap) */
#define PROBE_AREA_SIZE ((PROBE_CTR + PROBE_CTR_N * 8 + 4095) & ~4095)
#define PROBE_AREAS 128	  /* areas; the first is the trap-only area */
#define PROBE_OFF EV_SIZE /* where the areas start in the event memory */
#define PROBE_MEM_SIZE (EV_SIZE + (uint64_t)PROBE_AREAS * PROBE_AREA_SIZE)

/* An event: written last, `word` commits it (0: not yet written). */
struct probe_event {
	uint64_t tsc;  /* the TSC at the entry, or at the return */
	uint64_t slot; /* the return address's slot (RSP at the entry) */
	uint64_t ret;  /* entry: the original return address (the trampoline: chained) */
	uint64_t word; /* PROBE_W_ENTRY | patch, or PROBE_W_RETURN; PROBE_NCOUNT's low bits above */
};
#define PROBE_W_ENTRY (1ull << 32)
#define PROBE_W_RETURN (2ull << 32)
/*
 * Go (golang.c): an exit probe at one of a routine's `ret`s, `| patch` (its
 * entry's). A Go event's slot is the depth of RSP in its goroutine's stack
 * (g.stack.hi - RSP) and its ret the goroutine (g, R14), at entries too.
 */
#define PROBE_W_EXIT (3ull << 32)
#define PROBE_W_KIND (3ull << 32)
#define PROBE_W_NCOUNT_SHIFT 34 /* the count path's calls so far, modulo 2^30 */
#define PROBE_W_NCOUNT_MASK (~0ull << PROBE_W_NCOUNT_SHIFT)

#endif
