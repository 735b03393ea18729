// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * retaddr.c - return addresses: an entry hooks its caller's return, a return puts it
 * back; return sites with traps of their own; frames unwound by stack pointer
 * (longjmp, exceptions) and orphans; the unwinder sees the original addresses.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/clock.h"
#include "fortstat/inject.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/names.h"
#include "fortstat/precheck.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "tracer.h"
#include "evpage.h"
#include "memcall.h"
#include "patches.h"
#include "../probe/areas.h"
#include "retaddr.h"

/*
 * The trap of return site ret, made on first use (one write to the
 * program); the common return trap when RSITE_MAX are made.
 */
static uint64_t rsite_for(struct tracer *tr, uint64_t ret)
{
	uint8_t code[INSN_RSITE_SIZE];
	uint64_t t;

	if (u64map_get(&tr->ps->rsite_map, ret, &t))
		return t;
	if (tr->ps->rsite_n == RSITE_MAX)
		return tr->ps->retrap;
	t = tr->ps->rsites + tr->ps->rsite_n * INSN_RSITE_SIZE;
	insn_rsite_code(tr->ps->page_addr, ret, code);
	if (mem_write(tr->ps->memfd, t, code, sizeof(code)) < 0)
		return tr->ps->retrap;
	tr->ps->rsite_n++;
	u64map_put(&tr->ps->rsite_map, ret, t);
	return t;
}

static int return_site_ok(struct tracer *tr, uint64_t ret)
{
	uint8_t before[16];
	uint64_t v;

	if (u64map_get(&tr->ps->retsite, ret, &v))
		return (int)v;
	if (patch_call_site(tr->ps, ret))
		return 1; /* a call that its routine's stub emulates */
	v = 0;
	if (ret >= sizeof(before) &&
	    mem_read(tr->ps->memfd, ret - sizeof(before), before, sizeof(before)) == 0)
		v = (uint64_t)insn_is_return_site(before, sizeof(before));
	u64map_put(&tr->ps->retsite, ret, v);
	return (int)v;
}

struct undo_ctx {
	int fd;
	const struct pstate *ps;
};

static void undo_frame(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	struct undo_ctx *u = arg;
	uint64_t cur;

	(void)routine;
	/* Only where the slot still holds our trap (chained frames share one). */
	if (mem_read(u->fd, slot, &cur, sizeof(cur)) == 0 && is_hooked(u->ps, cur))
		mem_write(u->fd, slot, &ret, sizeof(ret));
}

/*
 * Put back, in the memory behind `fd` (a forked copy of the current
 * process), the return addresses hooked in thread tid's open frames.
 */
void frames_undo(struct tracer *tr, int fd, pid_t tid)
{
	struct undo_ctx u = {.fd = fd, .ps = tr->ps};

	books_frames(tr->ps->books, tid, undo_frame, &u);
}

/*
 * Frames whose slot lies below sp are gone (longjmp, exceptions) or live on
 * another stack (swapcontext): close them, but keep their return addresses,
 * so that a return through a slot of another stack still finds its way.
 */
static __attribute__((noinline)) bool unwind_below_slow(struct tracer *tr, struct tthread *th,
							uint64_t sp, uint64_t *top_slot)
{
	uint32_t routine;
	uint64_t slot, ret;

	while (books_top(tr->ps->books, th->tid, &routine, &slot, &ret) == 0) {
		if (slot >= sp) {
			*top_slot = slot;
			return true;
		}
		ev_leave(tr, th, &ret);
		u64map_put(&tr->ps->orphans, slot, ret);
	}
	return false;
}

/* The usual event (each drained one): no frame below sp, the top one read once. */
static inline bool unwind_below_top(struct tracer *tr, struct tthread *th, uint64_t sp,
				    uint64_t *top_slot)
{
	uint64_t slot;

	if (books_top(tr->ps->books, th->tid, NULL, &slot, NULL) == 0 && slot >= sp) {
		*top_slot = slot;
		return true;
	}
	return unwind_below_slow(tr, th, sp, top_slot);
}

static void unwind_below(struct tracer *tr, struct tthread *th, uint64_t sp)
{
	uint64_t top;

	unwind_below_top(tr, th, sp, &top);
}

/*
 * An entry that an in-process probe recorded (drain.c), as handle_entry
 * takes one at a trap: the frames below its slot are gone; a tail call
 * (`chained`: the slot held the trampoline already) continues the frame
 * of its slot, or is counted; a call closes a frame left in its slot. A
 * routine that never returns (`noreturn`: its stub hooked nothing) is
 * counted, no frame opened: it has no return to close one.
 */
void entry_recorded(struct tracer *tr, struct tthread *th, uint32_t routine, uint64_t slot,
		    uint64_t ret, bool chained, bool noreturn)
{
	uint64_t top_slot, old;

	if (chained) {
		if (unwind_below_top(tr, th, slot, &top_slot) && top_slot == slot)
			ev_chain(tr, th, routine);
		else
			ev_count(tr, th, routine);
		return;
	}
	unwind_below(tr, th, slot + 1); /* the frames below, then one left in its slot */
	if (tr->ps->orphans.n && u64map_get(&tr->ps->orphans, slot, &old) && old)
		u64map_put(&tr->ps->orphans, slot, 0);
	if (noreturn)
		ev_count(tr, th, routine);
	else
		ev_enter(tr, th, routine, slot, ret);
}

/* A return that the trampoline recorded: through the slot of the top frame. */
void return_recorded(struct tracer *tr, struct tthread *th, uint64_t slot)
{
	uint64_t top_slot;

	if (unwind_below_top(tr, th, slot, &top_slot) && top_slot == slot)
		ev_leave(tr, th, NULL);
}

struct hook_ctx {
	int fd;
	const struct pstate *ps;
	uint64_t to; /* rehook: the trap to write where a slot holds its frame's ret */
	bool back;   /* true: trap -> ret (unhook); false: ret -> trap (rehook) */
};

static void swap_frame(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	struct hook_ctx *h = arg;
	uint64_t cur, put = h->back ? ret : h->to;

	(void)routine;
	if (mem_read(h->fd, slot, &cur, sizeof(cur)) == 0 &&
	    (h->back ? is_hooked(h->ps, cur) : cur == ret))
		mem_write(h->fd, slot, &put, sizeof(put));
}

struct frame_list {
	uint64_t *slot, *ret;
	size_t n, cap;
};

static void collect_frame(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	struct frame_list *l = arg;

	(void)routine;
	if (l->n == l->cap) {
		l->cap = l->cap ? 2 * l->cap : 64;
		l->slot = xrealloc(l->slot, l->cap * sizeof(*l->slot));
		l->ret = xrealloc(l->ret, l->cap * sizeof(*l->ret));
	}
	l->slot[l->n] = slot;
	l->ret[l->n++] = ret;
}

/*
 * Put thread th's original return addresses back (the unwinder will read
 * them). Top frame first: where frames share a slot, the newest owns it.
 */
static void unhook_thread(struct tracer *tr, struct tthread *th)
{
	struct hook_ctx h = {.fd = tr->ps->memfd, .ps = tr->ps, .back = true};
	struct frame_list l = {0};

	books_frames(tr->ps->books, th->tid, collect_frame, &l);
	for (size_t i = l.n; i-- > 0;)
		swap_frame(0, l.slot[i], l.ret[i], &h);
	free(l.slot);
	free(l.ret);
	th->unhooked = true;
	probe_unhooked(tr, th, true);
}

void frames_restore(struct tracer *tr, struct tthread *th)
{
	unhook_thread(tr, th);
}

void orphans_restore(struct tracer *tr)
{
	struct u64map *m = &tr->ps->orphans;

	for (size_t i = 0; i < m->cap; i++) {
		uint64_t cur;

		if (!m->keys[i] || !m->vals[i])
			continue;
		if (mem_read(tr->ps->memfd, m->keys[i], &cur, sizeof(cur)) == 0 &&
		    is_hooked(tr->ps, cur))
			mem_write(tr->ps->memfd, m->keys[i], &m->vals[i], sizeof(m->vals[i]));
	}
}

/* Rewrite the return addresses of the frames that survived the unwinder. */
static void rehook_thread(struct tracer *tr, struct tthread *th)
{
	struct hook_ctx h = {
	    .fd = tr->ps->memfd, .ps = tr->ps, .to = tr->ps->retrap, .back = false};

	books_frames(tr->ps->books, th->tid, swap_frame, &h);
	th->unhooked = false;
	probe_unhooked(tr, th, false);
}

struct callout_ctx {
	uint64_t lo, hi;
	bool found;
};

static void callout_frame(uint32_t routine, uint64_t slot, uint64_t ret, void *arg)
{
	struct callout_ctx *c = arg;

	(void)routine;
	(void)slot;
	if (ret >= c->lo && ret < c->hi)
		c->found = true;
}

/*
 * Is thread th, entering patch p, running code that the unwinder called
 * while it walks the stack (a personality routine of the program's own, as
 * Rust's, and what that calls)? Then the walk is not over and the original
 * return addresses must stay: the entry's own return address, or one of
 * an open frame, lies in the unwinder's library.
 */
static bool in_unwinder_callout(struct tracer *tr, struct tthread *th, const arch_regs *regs,
				const struct patch *p)
{
	struct callout_ctx c = {.lo = tr->ps->unw_lo, .hi = tr->ps->unw_hi};
	uint64_t ret = 0;

	if (!c.lo)
		return false;
	if (p->stub)
		ret = arch_stub_ret(regs);
	else
		mem_read(tr->ps->memfd, arch_sp(regs), &ret, sizeof(ret));
	if (ret >= c.lo && ret < c.hi)
		return true;
	books_frames(tr->ps->books, th->tid, callout_frame, &c);
	return c.found;
}

void handle_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p)
{
	pid_t tid = th->tid;
	uint64_t ret, slot = arch_sp(regs);
	uint32_t top;
	uint64_t top_slot, top_ret;

	unwind_below(tr, th, slot);
	if (p->alloc) { /* --alloc: an allocator, never timed (memcall.c) */
		memcall_entry(tr, th, regs, p);
		return;
	}
	/*
	 * Entering the unwinder: it must read the real return addresses. They
	 * are hooked again at the next entry into the program's own code (a
	 * destructor, the code after a backtrace) or at a catch's start, not
	 * at an entry into a library routine: with -l, those are what the
	 * unwinder calls (the personality routine) while it still walks the
	 * stack.
	 */
	if (p->unhook)
		unhook_thread(tr, th);
	else if (th->unhooked &&
		 (p->rehook || p->routine == ACCT_NONE || !tr->ps->st->r[p->routine].module) &&
		 (p->rehook || !in_unwinder_callout(tr, th, regs, p)))
		rehook_thread(tr, th);
	/*
	 * The unwinder's entries, and a catch handler's start (__cxa_begin_catch:
	 * the unwinding is over, the frames thrown through were popped by stack
	 * pointer above and the survivors hooked again), are passed through; a
	 * PLT stub goes on at its GOT slot's target.
	 */
	if (p->unhook || p->rehook) {
		if (p->routine != ACCT_NONE)
			ev_count(tr, th, p->routine);
		if (p->got) {
			uint64_t to;

			if (mem_read(tr->ps->memfd, p->got, &to, sizeof(to)) == 0)
				arch_set_pc(tid, to);
			return;
		}
		goto resume;
	}
	if (tr->o->count_only || tr->ps->no_rewrite) {
		ev_count(tr, th, p->routine);
		goto resume;
	}
	if (p->stub) {
		/* The stub loaded the return address (arch_stub_ret) and will hook it. */
		ret = arch_stub_ret(regs);
		if (p->noreturn) { /* an entry-only probe's stub: it hooks nothing */
			entry_recorded(tr, th, p->routine, slot, ret, is_hooked(tr->ps, ret), true);
			goto resume;
		}
		if (is_hooked(tr->ps, ret)) {
			if (books_top(tr->ps->books, tid, &top, &top_slot, &top_ret) == 0 &&
			    top_slot == slot)
				ev_chain(tr, th, p->routine);
			else
				ev_count(tr, th, p->routine);
			if (fast_ok(tr)) { /* keep the trap that is there */
				tr->page->hook_val = ret;
				tr->page->hook_key = ret;
			} else if (th->seg.ok) { /* r10 is the thread's slot (seg_slow) */
				thr_slot_page(tr, th)->hook_val = ret;
				thr_slot_page(tr, th)->hook_key = ret;
			}
			return; /* the stub writes a trap where one already is */
		}
		if (return_site_ok(tr, ret)) {
			unwind_below(tr, th, slot + 1);
			if (tr->ps->orphans.n) {
				uint64_t old;
				if (u64map_get(&tr->ps->orphans, slot, &old) && old)
					u64map_put(&tr->ps->orphans, slot, 0);
			}
			ev_enter(tr, th, p->routine, slot, ret);
			/*
			 * Single-threaded: tell the stub this return site's own trap
			 * (the return then costs no register write). With more
			 * threads the pair stays as it is: a stub whose return
			 * address is not its key writes the common trap.
			 */
			if (tr->ps->rsites && fast_ok(tr)) {
				tr->page->hook_val = rsite_for(tr, ret);
				tr->page->hook_key = ret;
			} else if (tr->ps->rsites && th->seg.ok) { /* r10: its slot */
				thr_slot_page(tr, th)->hook_val = rsite_for(tr, ret);
				thr_slot_page(tr, th)->hook_key = ret;
			}
			return; /* resumes after the int3: the stub hooks the return */
		}
		ev_count(tr, th, p->routine);
		goto resume;
	}
	errno = 0;
	ret = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, slot, 0);
	if (errno)
		return;
	if (is_hooked(tr->ps, ret)) {
		/* Tail call: entered by a jump with our trap as return address. */
		if (books_top(tr->ps->books, tid, &top, &top_slot, &top_ret) == 0 &&
		    top_slot == slot)
			ev_chain(tr, th, p->routine);
		else
			ev_count(tr, th, p->routine);
	} else if (!p->noreturn && return_site_ok(tr, ret)) {
		/*
		 * A call (not a tail call) whose return address sits in the slot
		 * of an open frame: that frame returned unseen (an unwinder had
		 * its return address back). Close it.
		 */
		unwind_below(tr, th, slot + 1);
		if (ptrace(PTRACE_POKEDATA, tid, slot, tr->ps->retrap) < 0)
			return;
		if (tr->ps->orphans.n) {
			uint64_t old;
			if (u64map_get(&tr->ps->orphans, slot, &old) && old)
				u64map_put(&tr->ps->orphans, slot, 0); /* overwritten */
		}
		ev_enter(tr, th, p->routine, slot, ret);
	} else {
		ev_count(tr, th, p->routine);
	}
resume:
	resume_patched(tr, tid, regs, p, false);
}

void handle_return(struct tracer *tr, struct tthread *th, arch_regs *regs, bool site)
{
	uint64_t ret;

	uint64_t slot = arch_popped_slot(regs), top_slot, top_ret;
	uint32_t top;

	/* An allocator's return (--alloc): charged, and back where it was called from. */
	if (th->mem.fn) {
		uint64_t rax = arch_ret_val(regs);

		/* a return site's trap keeps RAX below RSP (its TSC is in RAX: insn_rsite_code) */
		if (site && mem_read(tr->ps->memfd, arch_sp(regs) - 0x10, &rax, sizeof(rax)) < 0)
			rax = 0;
		if (memcall_return(tr, th, slot, rax, &ret)) {
			arch_set_pc(th->tid, ret);
			return;
		}
	}
	/* `ret` popped the slot (arch_popped_slot). Frames below it are gone. */
	unwind_below(tr, th, slot);
	if (books_top(tr->ps->books, th->tid, &top, &top_slot, &top_ret) == 0 && top_slot == slot) {
		ev_leave(tr, th, &ret);
	} else if (u64map_get(&tr->ps->orphans, slot, &ret) && ret) {
		/* a frame closed earlier, returning on another stack */
		u64map_put(&tr->ps->orphans, slot, 0);
	} else if (site) {
		return; /* a return site's trap knows where to go: nothing to account */
	} else {
		fs_error("thread %d returned through fortstat's trap from 0x%" PRIx64
			 " with no frame to return to",
			 (int)th->tid, slot);
		if (books_top(tr->ps->books, th->tid, &top, &top_slot, &top_ret) == 0)
			fs_info(1, "its top frame: %s, slot 0x%" PRIx64 ", return to 0x%" PRIx64,
				tr->ps->st->r[top].display ? tr->ps->st->r[top].display
							   : tr->ps->st->r[top].names[0],
				top_slot, top_ret);
		probe_dump(tr, th);
		kill(tr->ps->leader, SIGKILL);
		return;
	}
	if (!site)
		arch_set_pc(th->tid, ret);
}

/*
 * A CET user shadow stack (enabled by the C library at start, for every
 * thread) keeps its own copy of each return address: a rewritten one would
 * end the program with a control-protection fault. Checked at the first
 * stop, before any is rewritten; then calls are counted, never timed.
 */
void check_shstk(struct tracer *tr, struct tthread *th)
{
	tr->ps->shstk_checked = true;
	if (precheck_thread_shstk(th->tid) == 1) {
		tr->ps->no_rewrite = true;
		snprintf(tr->note, sizeof(tr->note),
			 "the program runs with a CET shadow stack: calls counted, not timed");
		fs_warn("%s (return addresses cannot be rewritten)", tr->note);
	}
	probe_release(tr);
}
