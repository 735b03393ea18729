// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * trace.c - the ptrace engine. next_stop() waits for a stop; dispatch()
 * turns it into accounting events (enter, leave, chain, unwind_to,
 * thread_exit) and resumes the thread. All bookkeeping lives in account.c.
 */
#include "fortstat/trace.h"

#include <elf.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <sched.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
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

#include "fortstat/account.h"
#include "fortstat/books.h"
#include "fortstat/cli.h"
#include "fortstat/clock.h"
#include "fortstat/inject.h"
#include "fortstat/procmem.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/precheck.h"
#include "fortstat/names.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"

#ifndef MAP_FIXED_NOREPLACE
#define MAP_FIXED_NOREPLACE 0x100000
#endif

/*
 * The program's first scratch page starts with a header: byte 0 is the
 * return trap (insn_return_trap: its int3 is retrap_trap), SCRATCH_SYSCALL
 * holds injected system calls, SCRATCH_CALLRET is the int3 that injected
 * calls return to; slots follow.
 */
#define SCRATCH_HDR 64
#define RSITE_MAX 1024 /* return sites with a trap of their own, a process */
#define SCRATCH_SYSCALL 32
#define SCRATCH_CALLRET 48

/*
 * The event memory: the page, then a slot a thread (INSN_EV_SLOT_SIZE
 * bytes each) for stops that cannot use the shared page (see seg_slow).
 */
#define EV_PAGE 4096
#define EV_SLOTS 1024
#define EV_SIZE (EV_PAGE + EV_SLOTS * INSN_EV_SLOT_SIZE)
#define EV_SIGACT 0x800 /* room in the event page for a struct ksigaction */

/* The kernel's struct sigaction on x86-64 (rt_sigaction, 8-byte sigset). */
struct ksigaction {
	uint64_t handler, flags, restorer, mask;
};
#define KSA_NODEFER 0x40000000u
#define KSA_RESETHAND 0x80000000u

/* ---- tracer state ---- */

struct patch {
	uint64_t trap;	 /* runtime address of the int3 */
	uint32_t routine; /* ACCT_NONE for an unwinder hook that is not timed */
	bool unhook;	 /* an unwinder entry: put the original return addresses back */
	bool rehook;	 /* a catch handler's start: hook the surviving frames again */
	bool stub;	 /* a jmp to a stub (trap is the stub's int3), not an int3 at entry */
	unsigned plain_off; /* stub: where to resume without hooking the return */
	uint64_t jmp_addr;  /* stub: where the jmp was written */
	unsigned orig_len;  /* stub: bytes the jmp covers */
	uint8_t orig_bytes[16], jmp[16];
	uint64_t got;	 /* a PLT stub: resume at the address in this GOT slot */
	uint8_t orig;	 /* the byte the int3 replaced */
	bool rdebug;	 /* the dynamic linker's _dl_debug_state: libraries changed */
	bool dead;	 /* its library was unloaded: not ours any more */
	bool noreturn;	 /* never rewrite its return */
	struct insn_plan plan;
	uint64_t slot; /* runtime address of its XOL slot */
};

struct tthread {
	pid_t tid;
	struct fs_clock clk; /* the thread's CPU clock (wall when it cannot be had) */
	uint64_t c0, clast;  /* first and last readings of clk */
	struct stamp now;    /* both clocks at its last stop, never going backwards */
	bool exiting;	 /* PTRACE_EVENT_EXIT seen */
	bool unhooked;	 /* its return addresses were put back for an unwinder */
	bool vfork_child; /* a vfork child sharing our memory */
	int defer_sig;	  /* a signal that arrived during an injected call: deliver it next */
	size_t proc;	  /* its process: index in tracer.procs */
	int slot;	  /* its slot after the event page, -1: none (see seg_slow) */
	bool in_trap_handler; /* runs the program's SIGTRAP handler (see trap_handler_check) */
	bool seg_ok;	  /* its last stop had timestamps: the next segment is measurable */
	uint64_t seg_c, seg_w; /* the clocks at that stop */
};

/* A shared library of the program (-l). */
struct tmodule {
	char *path;	 /* as the dynamic linker names it (l_name) */
	char *real;	 /* realpath: the same file loaded again is the same module */
	char *name;	 /* soname, else file name: what reports show */
	bool matched;	 /* an -l pattern matches it */
	bool unwinder;	 /* libgcc_s or libunwind: entries hooked, never timed */
	bool loaded, seen;
	uint64_t lm;	 /* its link_map in the program */
	uint64_t bias;	 /* l_addr */
	bool have_routines;
	size_t first, n; /* its routines in the table */
	size_t p0, np;	 /* its patches, while loaded */
};

enum child_kind { CHILD_UNKNOWN, CHILD_FORK, CHILD_VFORK };

struct pending {
	pid_t pid;
	pid_t parent;		/* thread that forked it (0 until the event is seen) */
	enum child_kind kind;
	bool stopped;		/* its first stop was seen and it waits */
};

/* What fortstat knows of one traced process (one image of it). */
struct pstate {
	struct symtab *st;
	struct books *books; /* its accounting, both clocks */
	pid_t leader;	    /* its process id */
	int memfd;
	uint64_t bias;
	uint64_t scratch;  /* base of the scratch pages */
	uint64_t retrap;   /* address of the return trap (written over return addresses) */
	uint64_t retrap_trap; /* address of its int3 */
	uint64_t page_addr;   /* the event page in the program (0: none) */
	uint64_t rsites;      /* the return sites' traps (insn_rsite_code), with the page */
	size_t rsite_n;	      /* traps made */
	struct u64map rsite_map; /* return address -> its trap */
	struct patch *patches;
	size_t n_patches, cap_patches;
	bool follow_dl;        /* a dynamic executable: follow its dynamic linker */
	bool shstk_checked;    /* the first stop looked for a CET shadow stack */
	struct ksigaction trap_act; /* the program's SIGTRAP action, while a thread handles one */
	bool no_rewrite;       /* ... and found one: count calls, rewrite no return */
	uint64_t rdebug;       /* runtime address of the dynamic linker's r_debug */
	struct tmodule *mods;  /* shared libraries seen */
	size_t n_mods;
	struct u64map traps;   /* int3 address -> index into patches */
	struct u64map retsite; /* return address -> 1 (a call precedes it) or 0 */
	struct u64map orphans; /* slot -> original return address of a frame popped
				* by stack pointer whose slot may still return
				* (another stack: swapcontext); 0 = none */
	double cpu_total_ns;   /* CPU time of threads that have ended */
	uint64_t wall0;
	char *path;	       /* the image's file (owned), NULL for the program's first */
	bool own_st;	       /* st (and path) belong to this state: an image exec'ed (-f) */
	bool ended;	       /* exited, exec'ed a new image, or let go */
	bool execed;	       /* ended by exec'ing a new image */
	int status;	       /* its wait status, when it exited */
	uint64_t wall1;	       /* when it ended */
};

struct tracer {
	const struct options *o;
	struct pstate ps;      /* the process of the thread being handled */
	struct pstate **procs; /* every process followed (-f); procs[i]->... saved copies */
	size_t n_procs;
	size_t cur;	       /* index in procs of the state loaded in ps */
	bool lib_hit[CLI_MAX_LIBS]; /* -l pattern matched a library */
	struct names *names, *exclude; /* -n, -x: applied to libraries as they load */
	struct tthread **thr;  /* threads, by open addressing on tid */
	size_t thr_cap, thr_n;
	struct pending *pend;
	size_t n_pend;
	pid_t program;	       /* the program's process id */
	bool done;
	bool program_done;     /* the program itself has ended (children may run on, -f) */
	int status;	       /* the program's wait status */
	bool pinned;	       /* fortstat and the program run on one CPU */
	char note[160];	       /* how the run went, when it is worth a line */
	cpu_set_t orig_mask;   /* fortstat's mask before pinning: the program's own */
	struct trace_result *res;
	struct insn_event_page *page; /* the event page, fortstat's side (NULL: none) */
	int page_fd;	       /* its memfd, inherited by the program until the exec stop */
	bool fast_off;	       /* the page can no longer be trusted (threads, processes) */
	/* The stops' cost, measured per segment (see seg_measure); NULL: not measured. */
	struct acct_ovh *seg[2]; /* on the CPU clock, on the wall clock */
	double tsc_ns;		 /* ns per TSC tick */
	uint8_t slot_used[EV_SLOTS]; /* threads' slots after the event page */
	double est[FS_N_CLOCKS];     /* a stop's overhead when it cannot be measured */
	double acc_n, acc_c, acc_w;  /* measures taken so far: count, sums (CPU clock, wall) */
};

static volatile sig_atomic_t forward_pid;

static void forward_signal(int sig)
{
	/* SIGTERM/SIGHUP to fortstat alone: the program gets it as without us. */
	if (forward_pid > 0)
		kill(forward_pid, sig);
}

/* ---- threads ---- */

static size_t thr_slot(const struct tracer *tr, pid_t tid)
{
	size_t i = ((size_t)tid * 2654435761u) & (tr->thr_cap - 1);

	while (tr->thr[i] && tr->thr[i]->tid != tid)
		i = (i + 1) & (tr->thr_cap - 1);
	return i;
}

static struct tthread *thr_find(const struct tracer *tr, pid_t tid)
{
	if (!tr->thr_cap)
		return NULL;
	return tr->thr[thr_slot(tr, tid)];
}

static void thr_insert(struct tracer *tr, struct tthread *th)
{
	if ((tr->thr_n + 1) * 2 > tr->thr_cap) {
		struct tthread **old = tr->thr;
		size_t oldcap = tr->thr_cap;

		tr->thr_cap = oldcap ? oldcap * 2 : 16;
		tr->thr = xcalloc(tr->thr_cap, sizeof(*tr->thr));
		for (size_t i = 0; i < oldcap; i++)
			if (old[i])
				tr->thr[thr_slot(tr, old[i]->tid)] = old[i];
		free(old);
	}
	tr->thr[thr_slot(tr, th->tid)] = th;
	tr->thr_n++;
}

static void thr_remove(struct tracer *tr, pid_t tid)
{
	size_t i, j;

	if (!tr->thr_cap)
		return;
	i = thr_slot(tr, tid);
	if (!tr->thr[i])
		return;
	if (tr->thr[i]->slot >= 0)
		tr->slot_used[tr->thr[i]->slot] = 0;
	fs_clock_close(&tr->thr[i]->clk);
	free(tr->thr[i]);
	tr->thr[i] = NULL;
	tr->thr_n--;
	/* Re-insert the cluster after the hole (linear probing deletion). */
	for (j = (i + 1) & (tr->thr_cap - 1); tr->thr[j]; j = (j + 1) & (tr->thr_cap - 1)) {
		struct tthread *t = tr->thr[j];
		tr->thr[j] = NULL;
		tr->thr[thr_slot(tr, t->tid)] = t;
	}
}

/* Thread th's slot, on fortstat's side. */
static struct insn_event_page *thr_slot_page(struct tracer *tr, const struct tthread *th)
{
	return (struct insn_event_page *)((char *)tr->page + EV_PAGE +
					  (size_t)th->slot * INSN_EV_SLOT_SIZE);
}

static uint64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Read both clocks of a stopped thread: its CPU clock and the wall clock.
 * Sets th->now, never going backwards.
 */
static void thr_stamp(struct tracer *tr, struct tthread *th)
{
	uint64_t c = fs_clock_read(&th->clk), w = wall_now();

	(void)tr;
	if (c > th->clast)
		th->clast = c;
	if (c > th->now.t[CLOCK_KIND_CPU])
		th->now.t[CLOCK_KIND_CPU] = c;
	if (w > th->now.t[CLOCK_KIND_WALL])
		th->now.t[CLOCK_KIND_WALL] = w;
}

static struct tthread *thr_new(struct tracer *tr, pid_t tid)
{
	struct tthread *th = xcalloc(1, sizeof(*th));

	th->tid = tid;
	th->proc = tr->cur;
	th->slot = -1;
	for (int k = 0; tr->page && k < EV_SLOTS; k++) {
		if (!tr->slot_used[k]) {
			tr->slot_used[k] = 1;
			th->slot = k;
			memset((char *)tr->page + EV_PAGE + (size_t)k * INSN_EV_SLOT_SIZE, 0,
			       INSN_EV_SLOT_SIZE);
			break;
		}
	}
	if (tr->o->count_only || fs_clock_open(&th->clk, 1, tr->ps.leader, tid) < 0)
		fs_clock_open(&th->clk, 0, tr->ps.leader, tid); /* no clocks, gone or refused: wall */
	th->c0 = th->clast = fs_clock_read(&th->clk);
	thr_stamp(tr, th);
	thr_insert(tr, th);
	return th;
}

/* Account a thread's clock as ended (its CPU time joins the program's). */
static void thr_end(struct tracer *tr, struct tthread *th)
{
	if (th->clk.src != FS_CLOCK_WALL)
		tr->ps.cpu_total_ns += (double)(th->clast - th->c0);
}

/* ---- CPU placement (--pin) ---- */

/*
 * A ptrace stop costs several times more when the tracer and the tracee wake
 * each other across CPUs. Pin both to one CPU when that cannot change what
 * the program does; the program inherits the mask from fortstat.
 */
static void pin_start(struct tracer *tr)
{
	enum pin_mode mode = tr->o->pin;
	cpu_set_t one;
	int cpu;

	if (mode == PIN_NEVER || sched_getaffinity(0, sizeof(tr->orig_mask), &tr->orig_mask) < 0)
		return;
	if (CPU_COUNT(&tr->orig_mask) < 2)
		return;
	if (mode == PIN_AUTO && tr->ps.st->parallel_runtime) {
		fs_info(1, "not pinning: the program uses OpenMP or TBB");
		return;
	}
	cpu = sched_getcpu();
	if (cpu < 0 || !CPU_ISSET(cpu, &tr->orig_mask))
		for (cpu = 0; !CPU_ISSET(cpu, &tr->orig_mask); cpu++)
			;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one) == 0) {
		tr->pinned = true;
		fs_info(1, "fortstat and the program run on CPU %d (--pin=%s)", cpu,
			mode == PIN_ALWAYS ? "always" : "auto");
	}
}

/* Give one task of the program its own CPU mask back. */
static void unpin_task(struct tracer *tr, pid_t tid)
{
	if (tr->pinned)
		sched_setaffinity(tid, sizeof(tr->orig_mask), &tr->orig_mask);
}

/* The program has a second thread: every task and fortstat get their mask back. */
static void unpin_all(struct tracer *tr, pid_t also)
{
	if (!tr->pinned)
		return;
	for (size_t i = 0; i < tr->thr_cap; i++)
		if (tr->thr[i])
			unpin_task(tr, tr->thr[i]->tid);
	unpin_task(tr, also);
	sched_setaffinity(0, sizeof(tr->orig_mask), &tr->orig_mask);
	tr->pinned = false;
	fs_info(1, "the program started a second thread: CPU masks restored");
}

/* ---- the unwinder ---- */

/*
 * Routines that read return addresses from the stack (C++ exceptions,
 * forced unwinding, backtraces). When a thread enters one, its original
 * return addresses are put back; they are rewritten again at its next stop
 * for the frames that survived.
 */
static bool is_unwinder_name(const char *s)
{
	static const char *const names[] = {
		"__cxa_throw", "__cxa_rethrow", "_Unwind_RaiseException", "_Unwind_Resume",
		"_Unwind_Resume_or_Rethrow", "_Unwind_ForcedUnwind", "_Unwind_Backtrace",
		"backtrace", "__backtrace", "pthread_exit", "__pthread_unwind",
		"__pthread_unwind_next", "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return true;
	/* std::__throw_out_of_range and friends */
	return !strncmp(s, "_ZSt", 4) && strstr(s, "__throw_") != NULL;
}

/* Where a catch handler starts: the unwinding is over. */
static bool is_rehook_name(const char *s)
{
	return !strcmp(s, "__cxa_begin_catch");
}

static bool is_rehook(const struct routine *r)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (is_rehook_name(r->names[i]))
			return true;
	return false;
}

static bool is_unwinder(const struct routine *r)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (is_unwinder_name(r->names[i]))
			return true;
	return false;
}

/* ---- patching ---- */

/*
 * Map `size` bytes of scratch (read+exec) in the program within reach of
 * [lo, hi), by a system call run in thread tid (at RIP at the exec stop,
 * else in the program's first scratch page). Returns 0 and *base, or -errno.
 */
static int map_scratch(struct tracer *tr, pid_t tid, uint64_t lo, uint64_t hi, size_t size,
		       uint64_t *base, int *deferred)
{
	long args[6], ret;
	int err;

	err = find_gap(tid, lo, hi, size, base);
	if (err)
		return err;
	args[0] = (long)*base;
	args[1] = (long)size;
	args[2] = PROT_READ | PROT_EXEC;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	args[4] = -1;
	args[5] = 0;
	if (tr->ps.scratch)
		err = inject_syscall_at(tid, tr->ps.memfd, tr->ps.scratch + SCRATCH_SYSCALL, SYS_mmap, args,
					&ret, deferred);
	else
		err = inject_syscall(tid, tr->ps.memfd, SYS_mmap, args, &ret);
	if (err)
		return err;
	if ((uint64_t)ret != *base)
		return ret < 0 && ret > -4096 ? (int)ret : -EEXIST;
	return 0;
}

static struct patch *patch_new(struct tracer *tr)
{
	if (tr->ps.n_patches == tr->ps.cap_patches) {
		tr->ps.cap_patches = tr->ps.cap_patches ? 2 * tr->ps.cap_patches : 64;
		tr->ps.patches = xrealloc(tr->ps.patches, tr->ps.cap_patches * sizeof(*tr->ps.patches));
	}
	memset(&tr->ps.patches[tr->ps.n_patches], 0, sizeof(*tr->ps.patches));
	return &tr->ps.patches[tr->ps.n_patches];
}

/*
 * The fast entry patch (insn_plan_stub): a jmp to a stub that swaps the
 * return address itself. Fills p and the stub's bytes at `slot_buf`;
 * returns false when the routine must get the plain int3 instead.
 * FORTSTAT_NO_STUBS=1 turns it off (bench/overhead compares both).
 */
static bool try_stub(struct tracer *tr, const struct routine *r, uint64_t entry,
		     struct patch *p, uint8_t *slot_buf)
{
	static int off = -1;
	struct insn_stub stub;
	uint8_t *code;
	size_t len = (size_t)r->size;

	if (off < 0)
		off = getenv("FORTSTAT_NO_STUBS") && *getenv("FORTSTAT_NO_STUBS") != '0';
	/* A routine of unknown size (an indirect function's target) cannot be
	 * checked for branches; one that never returns is never hooked. */
	if (off || (r->flags & RT_IFUNC) || (!tr->o->count_only && (r->flags & RT_NORETURN)) ||
	    !(r->flags & RT_SELECTED) || len < 5 || len > 65536)
		return false;
	code = xmalloc(len);
	if (mem_read(tr->ps.memfd, entry, code, len) < 0 ||
	    insn_plan_stub(code, len, entry, p->slot, tr->o->count_only ? 0 : tr->ps.retrap,
			   tr->ps.page_addr,
			   (uint32_t)(p - tr->ps.patches) + 1, &stub) != 0) {
		if (stub.reason)
			fs_info(2, "%s: int3 patch (%s)", r->display ? r->display : r->names[0],
				stub.reason);
		free(code);
		return false;
	}
	p->stub = true;
	p->jmp_addr = stub.addr;
	p->orig_len = stub.len;
	memcpy(p->orig_bytes, code + (stub.addr - entry), stub.len);
	memcpy(p->jmp, stub.jmp, stub.len);
	p->plain_off = stub.plain_off;
	p->trap = p->slot + stub.trap_off;
	p->routine = (uint32_t)(r - tr->ps.st->r);
	p->noreturn = false;
	p->orig = 0xcc;
	memcpy(slot_buf, stub.code, stub.code_len);
	free(code);
	return true;
}

enum patch_mode {
	PATCH_OWN,   /* the program's own routines, its unwinder entries and PLT stubs */
	PATCH_LIB,   /* routines of a library appended to the table (-l) */
	PATCH_HOOKS, /* only the unwinder entries of a library (not timed) */
};

/* Is routine r to be patched in this mode (timed, or hooked for the unwinder)? */
static bool patch_wanted(const struct tracer *tr, const struct routine *r, enum patch_mode mode,
			 bool *hook)
{
	*hook = !tr->o->count_only && (is_unwinder(r) || is_rehook(r));
	if (mode == PATCH_HOOKS)
		return *hook;
	if (mode == PATCH_LIB)
		*hook = *hook && (r->flags & RT_SELECTED);
	return (r->flags & RT_SELECTED) || *hook;
}

/*
 * Patch routines [from, to) of table `tab`, loaded at `bias`: plan each
 * entry, write the out-of-line slots to new scratch pages near them, then
 * the int3s. The program itself (PATCH_OWN) also gets its PLT stubs into
 * the unwinder hooked, and a scratch page even with nothing to patch when
 * the dynamic linker is followed. Routines that cannot be patched lose
 * RT_SELECTED. Runs in the stopped thread tid. Returns 0 or -errno (said).
 */
static int patch_routines(struct tracer *tr, pid_t tid, struct symtab *tab, size_t from,
			  size_t to, uint64_t bias, enum patch_mode mode, int *deferred)
{
	struct symtab *st = tab;
	bool own = mode == PATCH_OWN;
	const char *what = own ? st->path : mode == PATCH_LIB ? st->r[from].module : st->path;
	uint64_t lo = UINT64_MAX, hi = 0, base;
	size_t n = 0, size, k = 0, hdr = own ? SCRATCH_HDR : 0, p0 = tr->ps.n_patches;
	uint8_t *buf;
	int err;

	for (size_t i = from; i < to; i++) {
		bool hook;

		if (!patch_wanted(tr, &st->r[i], mode, &hook))
			continue;
		n++;
		if (st->r[i].addr + bias < lo)
			lo = st->r[i].addr + bias;
		if (st->r[i].addr + st->r[i].size + bias > hi)
			hi = st->r[i].addr + st->r[i].size + bias;
	}
	if (!n && !(own && tr->ps.follow_dl))
		return 0;
	if (!n) { /* a page for the return trap and injected code only */
		lo = st->e_entry + bias;
		hi = lo + 1;
	}
	size = (hdr + n * INSN_STUB_SIZE + 4095) & ~(size_t)4095;
	if (own && tr->ps.page_addr)
		size += RSITE_MAX * INSN_RSITE_SIZE;
	err = map_scratch(tr, tid, lo, hi, size, &base, deferred);
	if (err) {
		if (err == -ENOSPC)
			fs_error("%s: no free address range within 2 GiB of its code", what);
		else
			fs_error("%s: cannot map scratch pages in the program: %s", what,
				 strerror(-err));
		return err;
	}
	buf = xmalloc(size);
	memset(buf, 0xcc, size);
	if (own) {
		tr->ps.scratch = base;
		tr->ps.retrap = base;
		tr->ps.retrap_trap = base + insn_return_trap(tr->ps.page_addr, buf) - 1;
		if (tr->ps.page_addr)
			tr->ps.rsites = base + size - RSITE_MAX * INSN_RSITE_SIZE;
	}
	fs_info(2, "%s: scratch pages at 0x%" PRIx64 " (%zu bytes)", what, base, size);

	for (size_t i = from; i < to; i++) {
		struct routine *r = &st->r[i];
		struct patch *p;
		uint8_t code[32];
		uint64_t entry = r->addr + bias;
		size_t len = r->size < sizeof(code) ? (size_t)r->size : sizeof(code);
		const char *name = r->display ? r->display : r->names[0];
		bool hook;

		if (!patch_wanted(tr, r, mode, &hook))
			continue;
		p = patch_new(tr);
		p->slot = base + hdr + k * INSN_STUB_SIZE;
		if (!hook && try_stub(tr, r, entry, p, buf + hdr + k * INSN_STUB_SIZE)) {
			fs_info(2, "patch %s at 0x%" PRIx64 ": jmp to a stub (%u bytes moved)", name,
				p->jmp_addr, p->orig_len);
			tr->ps.n_patches++;
			k++;
			continue;
		}
		err = mem_read(tr->ps.memfd, entry, code, len);
		if (!err)
			insn_plan(code, len, entry, p->slot, &p->plan);
		if (err || p->plan.kind == INSN_REFUSE) {
			fs_info(1, "not %s %s: %s", hook ? "hooking" : "timing", name,
				err ? "its code cannot be read" : p->plan.reason);
			r->flags &= ~(unsigned)RT_SELECTED;
			continue;
		}
		p->trap = p->plan.addr;
		p->unhook = hook && is_unwinder(r);
		p->rehook = hook && !p->unhook;
		p->routine = mode != PATCH_HOOKS && (r->flags & RT_SELECTED) ? (uint32_t)i : ACCT_NONE;
		p->noreturn = (r->flags & RT_NORETURN) != 0;
		p->orig = code[p->plan.addr - entry];
		if (p->plan.kind == INSN_XOL)
			memcpy(buf + hdr + k * INSN_STUB_SIZE, p->plan.slot, p->plan.slot_len);
		fs_info(2, "patch %s at 0x%" PRIx64 ": %s (%s)", name, p->trap, p->plan.text,
			p->plan.kind == INSN_XOL ? "out of line" : "emulated");
		tr->ps.n_patches++;
		k++;
	}
	/* Calls through the executable's PLT into the unwinder (dynamic C++). */
	for (size_t j = 0; own && !tr->o->count_only && j < st->n_plt; j++) {
		struct patch *p;

		if (!is_unwinder_name(st->plt[j].name) && !is_rehook_name(st->plt[j].name))
			continue;
		p = patch_new(tr);
		p->trap = st->plt[j].jmp + bias;
		p->got = st->plt[j].got + bias;
		p->unhook = is_unwinder_name(st->plt[j].name);
		p->rehook = !p->unhook;
		p->routine = ACCT_NONE;
		if (mem_read(tr->ps.memfd, p->trap, &p->orig, 1) < 0)
			continue;
		fs_info(2, "hook %s@plt at 0x%" PRIx64, st->plt[j].name, p->trap);
		tr->ps.n_patches++;
	}
	err = mem_write(tr->ps.memfd, base, buf, size);
	free(buf);
	if (err) {
		fs_error("%s: cannot write scratch pages: %s", what, strerror(-err));
		return err;
	}
	for (size_t j = p0; j < tr->ps.n_patches; j++) {
		static const uint8_t int3 = 0xcc;
		const struct patch *p = &tr->ps.patches[j];

		if (p->stub)
			err = mem_write(tr->ps.memfd, p->jmp_addr, p->jmp, p->orig_len);
		else
			err = mem_write(tr->ps.memfd, p->trap, &int3, 1);
		if (err) {
			fs_error("%s: cannot patch 0x%" PRIx64 ": %s", what, tr->ps.patches[j].trap,
				 strerror(-err));
			return err;
		}
		u64map_put(&tr->ps.traps, tr->ps.patches[j].trap, (uint32_t)j);
	}
	return 0;
}

/*
 * Follow the dynamic linker (for -l): a breakpoint on _dl_debug_state, which
 * it calls with r_debug.r_state RT_CONSISTENT after each change of the
 * library list (at start, dlopen, dlclose). Its body is a bare `ret`, which
 * the breakpoint emulates.
 */
static void setup_rdebug(struct tracer *tr)
{
	struct symtab *st = tr->ps.st;
	uint64_t base, dbg, rdebug;
	uint8_t code[8];
	struct patch *p;
	size_t off = 0;
	static const uint8_t endbr64[4] = { 0xf3, 0x0f, 0x1e, 0xfa }, int3 = 0xcc;

	if (auxv_get(tr->ps.leader, AT_BASE, &base) < 0 || !base ||
	    symtab_symbol(st->interp, "_dl_debug_state", &dbg) < 0 ||
	    symtab_symbol(st->interp, "_r_debug", &rdebug) < 0 ||
	    mem_read(tr->ps.memfd, dbg + base, code, sizeof(code)) < 0) {
		if (tr->o->n_libs)
			fs_warn("-l: cannot follow the dynamic linker %s: no library will be timed",
				st->interp);
		else
			fs_info(1, "cannot follow the dynamic linker %s", st->interp);
		return;
	}
	if (!memcmp(code, endbr64, sizeof(endbr64)))
		off = 4;
	if (code[off] != 0xc3) {
		if (tr->o->n_libs)
			fs_warn("-l: %s: _dl_debug_state is not a bare return: no library will be "
				"timed",
				st->interp);
		return;
	}
	p = patch_new(tr);
	p->trap = dbg + base + off;
	p->orig = 0xc3;
	p->routine = ACCT_NONE;
	p->rdebug = true;
	if (mem_write(tr->ps.memfd, p->trap, &int3, 1) < 0)
		return;
	u64map_put(&tr->ps.traps, p->trap, (uint32_t)tr->ps.n_patches);
	tr->ps.n_patches++;
	tr->ps.rdebug = rdebug + base;
	fs_info(2, "following the dynamic linker: r_debug at 0x%" PRIx64 ", breakpoint at 0x%" PRIx64,
		tr->ps.rdebug, dbg + base + off);
}

/*
 * Map the event page (the memfd the program inherited from fortstat) into
 * the program at its first exec stop, and close that descriptor there, before
 * any of the program's code runs.
 */
static void map_event_page(struct tracer *tr)
{
	long args[6] = { 0, EV_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, tr->page_fd, 0 }, ret;
	long cargs[6] = { tr->page_fd, 0, 0, 0, 0, 0 };

	if (tr->page_fd < 0)
		return;
	if (inject_syscall(tr->ps.leader, tr->ps.memfd, SYS_mmap, args, &ret) == 0 && ret > 0)
		tr->ps.page_addr = (uint64_t)ret;
	inject_syscall(tr->ps.leader, tr->ps.memfd, SYS_close, cargs, &ret);
	tr->page_fd = -1; /* the program's first image only */
	fs_info(2, "event page at 0x%" PRIx64, tr->ps.page_addr);
}

static int setup_image(struct tracer *tr)
{
	struct symtab *st = tr->ps.st;
	size_t n = 0;
	int err;

	map_event_page(tr);

	if (st->pie) {
		uint64_t entry;
		err = auxv_get(tr->ps.leader, AT_ENTRY, &entry);
		if (err) {
			fs_error("%s: cannot read the load address: %s", st->path, strerror(-err));
			return err;
		}
		tr->ps.bias = entry - st->e_entry;
	}
	for (size_t i = 0; i < st->n; i++)
		n += (st->r[i].flags & RT_SELECTED) != 0;
	fs_info(1, "load bias 0x%" PRIx64 ", %zu routines to patch", tr->ps.bias, n);
	if (tr->o->n_libs && (st->is_static || !st->interp))
		fs_warn("-l: %s is statically linked: its library routines are its own (see --all)",
			st->path);
	/*
	 * Libraries are followed for -l, and to hook the unwinder of
	 * libgcc_s wherever it is reached from (a C++ exception thrown inside
	 * libstdc++, backtrace(), pthread_exit): it must read the original
	 * return addresses. Count-only rewrites none.
	 */
	tr->ps.follow_dl = !st->is_static && st->interp && (tr->o->n_libs || !tr->o->count_only);
	err = patch_routines(tr, tr->ps.leader, st, 0, st->n, tr->ps.bias, PATCH_OWN, NULL);
	if (err)
		return err;
	if (tr->ps.follow_dl)
		setup_rdebug(tr);
	return 0;
}

/* ---- shared libraries (-l) ---- */

/* struct r_debug and struct link_map of glibc (the parts read). */
#define RDEBUG_MAP 8
#define RDEBUG_STATE 24
#define RT_CONSISTENT 0

struct lm_entry {
	uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};

/* Read a NUL-terminated string of the program into buf (truncated). */
static int read_cstr(int fd, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got + 1 < size) {
		size_t chunk = 64 - (addr + got) % 64; /* never past a page end */
		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		if (mem_read(fd, addr + got, buf + got, chunk) < 0)
			return -EIO;
		for (size_t i = got; i < got + chunk; i++)
			if (!buf[i])
				return 0;
		got += chunk;
	}
	buf[got] = '\0';
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Which -l patterns match a library known by these names? Marks them hit. */
static bool lib_wanted(struct tracer *tr, const char *const *mod_names)
{
	bool any = false;

	for (size_t k = 0; k < tr->o->n_libs; k++) {
		const char *pat = tr->o->libs[k];

		for (size_t i = 0; mod_names[i]; i++) {
			if (names_lib_match(pat, strlen(pat), mod_names[i])) {
				tr->lib_hit[k] = true;
				any = true;
				break;
			}
		}
	}
	return any;
}

/*
 * Find what an indirect function of a library resolves to, by calling its
 * resolver in the program (after relocation, as the dynamic linker did),
 * and add the target to the library's table under the function's name.
 */
static void resolve_ifuncs(struct tracer *tr, struct tthread *th, struct symtab *lib,
			   uint64_t bias)
{
	uint64_t hwcap = 0;

	auxv_get(tr->ps.leader, AT_HWCAP, &hwcap);
	for (size_t i = 0; i < lib->n_ifuncs; i++) {
		uint64_t target;
		int err = inject_call(th->tid, tr->ps.memfd, lib->ifuncs[i].resolver + bias,
				      tr->ps.scratch + SCRATCH_CALLRET, hwcap, &target, &th->defer_sig);

		if (err || target < bias) {
			fs_info(1, "not timing %s: its resolver %s", lib->ifuncs[i].name,
				err ? strerror(-err) : "returned nothing usable");
			continue;
		}
		fs_info(2, "%s resolves to 0x%" PRIx64, lib->ifuncs[i].name, target);
		symtab_add_routine(lib, target - bias, 32, lib->ifuncs[i].name);
	}
}

/* A library appeared: read it, choose its routines, patch them. */
static void module_load(struct tracer *tr, struct tthread *th, struct tmodule *m)
{
	struct symtab lib;
	size_t n_sel;
	int err;

	if (!m->have_routines) {
		const char *mod_names[5];

		err = symtab_load(m->real, &lib);
		if (err) {
			if (err == SYMTAB_ENOSYMS)
				symtab_free(&lib);
			fs_warn("-l: %s: %s", m->path, symtab_strerror(err));
			m->matched = false;
			return;
		}
		free(m->name);
		m->name = xstrdup(lib.soname ? lib.soname : base_name(m->path));
		mod_names[0] = m->name;
		mod_names[1] = m->path;
		mod_names[2] = m->real;
		mod_names[3] = NULL;
		resolve_ifuncs(tr, th, &lib, m->bias);
		n_sel = symtab_select_module(&lib, tr->names, tr->exclude, mod_names);
		m->first = symtab_append(tr->ps.st, &lib, m->name);
		m->n = tr->ps.st->n - m->first;
		m->have_routines = true;
		books_grow(tr->ps.books, tr->ps.st->n);
		fs_info(1, "%s: %zu routines to time", m->name, n_sel);
	}
	m->p0 = tr->ps.n_patches;
	if (m->n)
		patch_routines(tr, th->tid, tr->ps.st, m->first, m->first + m->n, m->bias, PATCH_LIB,
			       &th->defer_sig);
	m->np = tr->ps.n_patches - m->p0;
	fs_info(1, "%s loaded at 0x%" PRIx64 ": %zu routines patched", m->name, m->bias, m->np);
}

/*
 * The unwinder's library appeared (libgcc_s: C++ exceptions, backtrace,
 * thread cancellation, from wherever they start): hook its entries so that
 * it finds the original return addresses on the stack.
 */
static void module_hook(struct tracer *tr, struct tthread *th, struct tmodule *m)
{
	struct symtab lib;

	m->p0 = tr->ps.n_patches;
	m->np = 0;
	if (tr->o->count_only)
		return;
	if (symtab_load(m->real, &lib) != 0) {
		symtab_free(&lib); /* a stripped one holds the image's facts */
		return;
	}
	patch_routines(tr, th->tid, &lib, 0, lib.n, m->bias, PATCH_HOOKS, &th->defer_sig);
	symtab_free(&lib);
	m->np = tr->ps.n_patches - m->p0;
	fs_info(1, "%s loaded at 0x%" PRIx64 ": %zu unwinder entries hooked", m->path, m->bias,
		m->np);
}

/* A library went away (dlclose): its patches went with it. Counts are kept. */
static void module_unload(struct tracer *tr, struct tmodule *m)
{
	for (size_t j = m->p0; j < m->p0 + m->np; j++)
		tr->ps.patches[j].dead = true;
	m->np = 0;
	m->loaded = false;
	/* Return sites cached in its code may become another library's. */
	u64map_free(&tr->ps.retsite);
	if (m->matched)
		fs_info(1, "%s unloaded", m->name);
}

/* The link_map entry (lm, l_addr, l_name) is in the list: make sure we know it. */
static void module_seen(struct tracer *tr, struct tthread *th, uint64_t lm, uint64_t bias,
			const char *path)
{
	char real[PATH_MAX];
	const char *mod_names[4];
	struct tmodule *m = NULL;

	for (size_t i = 0; i < tr->ps.n_mods; i++) {
		if (tr->ps.mods[i].loaded && tr->ps.mods[i].lm == lm && tr->ps.mods[i].bias == bias) {
			tr->ps.mods[i].seen = true;
			return;
		}
	}
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (size_t i = 0; i < tr->ps.n_mods && !m; i++)
		if (!tr->ps.mods[i].loaded && !strcmp(tr->ps.mods[i].real, real))
			m = &tr->ps.mods[i];
	if (!m) {
		tr->ps.mods = xrealloc(tr->ps.mods, (tr->ps.n_mods + 1) * sizeof(*tr->ps.mods));
		m = &tr->ps.mods[tr->ps.n_mods++];
		memset(m, 0, sizeof(*m));
		m->path = xstrdup(path);
		m->real = xstrdup(real);
		m->name = xstrdup(base_name(path));
		mod_names[0] = m->path;
		mod_names[1] = m->real;
		mod_names[2] = NULL;
		/*
		 * The dynamic linker itself is never patched (it runs our
		 * breakpoint); the unwinder's library only gets its entries
		 * hooked, never timed.
		 */
		m->unwinder = !strncmp(base_name(real), "libgcc_s", 8) ||
			      !strncmp(base_name(real), "libunwind", 9);
		m->matched = strcmp(base_name(real), base_name(tr->ps.st->interp)) != 0 &&
			     strncmp(base_name(real), "ld-linux", 8) != 0 &&
			     lib_wanted(tr, mod_names);
		if (m->matched && m->unwinder) {
			fs_warn("-l: %s is the unwinder's library: its entries are hooked, not timed",
				base_name(real));
			m->matched = false;
		}
	}
	m->lm = lm;
	m->bias = bias;
	m->loaded = m->seen = true;
	if (m->matched)
		module_load(tr, th, m);
	else if (m->unwinder)
		module_hook(tr, th, m);
}

/* The dynamic linker's list is consistent again: compare it with ours. */
static void modules_sync(struct tracer *tr, struct tthread *th)
{
	uint64_t lm = 0;
	size_t guard = 0;

	for (size_t i = 0; i < tr->ps.n_mods; i++)
		tr->ps.mods[i].seen = false;
	mem_read(tr->ps.memfd, tr->ps.rdebug + RDEBUG_MAP, &lm, sizeof(lm));
	for (; lm && guard < 100000; guard++) {
		struct lm_entry e;
		char path[PATH_MAX];

		if (mem_read(tr->ps.memfd, lm, &e, sizeof(e)) < 0)
			break;
		/* The program itself and the vDSO have no file of their own here. */
		if (e.l_name && read_cstr(tr->ps.memfd, e.l_name, path, sizeof(path)) == 0 &&
		    path[0] == '/')
			module_seen(tr, th, lm, e.l_addr, path);
		lm = e.l_next;
	}
	for (size_t i = 0; i < tr->ps.n_mods; i++)
		if (tr->ps.mods[i].loaded && !tr->ps.mods[i].seen)
			module_unload(tr, &tr->ps.mods[i]);
}

/* The thread stopped on _dl_debug_state: look at the libraries, then return. */
static void handle_rdebug(struct tracer *tr, struct tthread *th)
{
	struct user_regs_struct regs;
	int32_t state = -1;
	uint64_t ra;

	if (mem_read(tr->ps.memfd, tr->ps.rdebug + RDEBUG_STATE, &state, sizeof(state)) == 0 &&
	    state == RT_CONSISTENT)
		modules_sync(tr, th);
	/* Emulate its `ret` (injected calls above restored every register). */
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs) < 0 ||
	    mem_read(tr->ps.memfd, regs.rsp, &ra, sizeof(ra)) < 0)
		return;
	regs.rip = ra;
	regs.rsp += 8;
	ptrace(PTRACE_SETREGS, th->tid, 0, &regs);
}

/*
 * Undo every patch and every rewritten return address in the memory of
 * `pid`, a forked copy of thread `parent`'s process, before letting it go.
 */
static bool is_hooked(const struct pstate *ps, uint64_t v);
static bool fast_ok(struct tracer *tr);
static uint64_t rsite_for(struct tracer *tr, uint64_t ret);

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

static void release_fork_child(struct tracer *tr, pid_t pid, pid_t parent)
{
	struct undo_ctx u = { .ps = &tr->ps };
	int fd = mem_open(pid);

	if (fd >= 0) {
		for (size_t j = 0; j < tr->ps.n_patches; j++) {
			const struct patch *p = &tr->ps.patches[j];

			if (p->dead)
				continue;
			if (p->stub)
				mem_write(fd, p->jmp_addr, p->orig_bytes, p->orig_len);
			else
				mem_write(fd, p->trap, &p->orig, 1);
		}
		u.fd = fd;
		if (parent)
			books_frames(tr->ps.books, parent, undo_frame, &u);
		close(fd);
	}
	fs_info(1, "forked child %d: patches undone, not followed", (int)pid);
	unpin_task(tr, pid);
	ptrace(PTRACE_DETACH, pid, 0, 0);
}

/* ---- the hot path ---- */

static int return_site_ok(struct tracer *tr, uint64_t ret)
{
	uint8_t before[16];
	uint64_t v;

	if (u64map_get(&tr->ps.retsite, ret, &v))
		return (int)v;
	v = 0;
	if (ret >= sizeof(before) && mem_read(tr->ps.memfd, ret - sizeof(before), before,
					      sizeof(before)) == 0)
		v = (uint64_t)insn_is_return_site(before, sizeof(before));
	u64map_put(&tr->ps.retsite, ret, v);
	return (int)v;
}

/* Resume the thread past the displaced instruction of patch p. */
/* Set RIP alone: one word, about 1 us cheaper a stop than PTRACE_SETREGS. */
static int set_rip(pid_t tid, uint64_t rip)
{
	if (ptrace(PTRACE_POKEUSER, tid, offsetof(struct user_regs_struct, rip), rip) < 0)
		return -errno;
	return 0;
}

/*
 * Resume the thread past the displaced instruction of patch p. `regs` is
 * complete unless `rip_only` (count-only: only RIP was read).
 */
static int resume_patched(struct tracer *tr, pid_t tid, struct user_regs_struct *regs,
			  const struct patch *p, bool rip_only)
{
	const struct insn_plan *pl = &p->plan;
	uint64_t next = pl->addr + pl->len;

	if (p->stub)
		return set_rip(tid, p->slot + p->plain_off);
	if (pl->kind == INSN_XOL)
		return set_rip(tid, p->slot);
	if (pl->kind == INSN_JMP)
		return set_rip(tid, pl->target);
	if (rip_only && ptrace(PTRACE_GETREGS, tid, 0, regs) < 0)
		return -errno;
	switch (pl->kind) {
	case INSN_XOL:
	case INSN_JMP:
		break;
	case INSN_CALL:
		regs->rsp -= 8;
		if (ptrace(PTRACE_POKEDATA, tid, regs->rsp, next) < 0)
			return -errno;
		regs->rip = pl->target;
		break;
	case INSN_JCC:
		return set_rip(tid, insn_cond_true(pl->cond, regs->eflags, regs->rcx) ? pl->target
										 : next);
	case INSN_REFUSE:
		return -EINVAL;
	}
	if (ptrace(PTRACE_SETREGS, tid, 0, regs) < 0)
		return -errno;
	return 0;
}

/* Events go to the process's books, stamped with the thread's clocks at this stop. */
static void ev_enter(struct tracer *tr, struct tthread *th, uint32_t r, uint64_t slot,
		     uint64_t ret, uint64_t t)
{
	(void)t;
	books_enter(tr->ps.books, th->tid, r, slot, ret, &th->now);
}

static void ev_count(struct tracer *tr, struct tthread *th, uint32_t r)
{
	books_count(tr->ps.books, th->tid, r);
}

static void ev_chain(struct tracer *tr, struct tthread *th, uint32_t r, uint64_t t)
{
	(void)t;
	books_chain(tr->ps.books, th->tid, r, &th->now);
}

static int ev_leave(struct tracer *tr, struct tthread *th, uint64_t t, uint64_t *ret)
{
	(void)t;
	return books_leave(tr->ps.books, th->tid, &th->now, ret);
}

static void ev_thread_exit(struct tracer *tr, struct tthread *th)
{
	books_thread_exit(tr->ps.books, th->tid, &th->now);
}

/*
 * Frames whose slot lies below sp are gone (longjmp, exceptions) or live on
 * another stack (swapcontext): close them, but keep their return addresses,
 * so that a return through a slot of another stack still finds its way.
 */
static void unwind_below(struct tracer *tr, struct tthread *th, uint64_t sp, uint64_t t)
{
	uint32_t routine;
	uint64_t slot, ret;

	while (books_top(tr->ps.books, th->tid, &routine, &slot, &ret) == 0 && slot < sp) {
		ev_leave(tr, th, t, &ret);
		u64map_put(&tr->ps.orphans, slot, ret);
	}
}

struct hook_ctx {
	int fd;
	const struct pstate *ps;
	uint64_t to;	   /* rehook: the trap to write where a slot holds its frame's ret */
	bool back;	   /* true: trap -> ret (unhook); false: ret -> trap (rehook) */
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
	struct hook_ctx h = { .fd = tr->ps.memfd, .ps = &tr->ps, .back = true };
	struct frame_list l = { 0 };

	books_frames(tr->ps.books, th->tid, collect_frame, &l);
	for (size_t i = l.n; i-- > 0;)
		swap_frame(0, l.slot[i], l.ret[i], &h);
	free(l.slot);
	free(l.ret);
	th->unhooked = true;
}

/* Rewrite the return addresses of the frames that survived the unwinder. */
static void rehook_thread(struct tracer *tr, struct tthread *th)
{
	struct hook_ctx h = { .fd = tr->ps.memfd, .ps = &tr->ps, .to = tr->ps.retrap, .back = false };

	books_frames(tr->ps.books, th->tid, swap_frame, &h);
	th->unhooked = false;
}

static void handle_entry(struct tracer *tr, struct tthread *th, struct user_regs_struct *regs,
			 const struct patch *p, uint64_t t)
{
	pid_t tid = th->tid;
	uint64_t ret, slot = regs->rsp;
	uint32_t top;
	uint64_t top_slot, top_ret;

	unwind_below(tr, th, slot, t);
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
		 (p->rehook || p->routine == ACCT_NONE || !tr->ps.st->r[p->routine].module))
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
			errno = 0;
			regs->rip = (uint64_t)ptrace(PTRACE_PEEKDATA, tid, p->got, 0);
			if (!errno)
				set_rip(tid, regs->rip);
			return;
		}
		goto resume;
	}
	if (tr->o->count_only || tr->ps.no_rewrite) {
		ev_count(tr, th, p->routine);
		goto resume;
	}
	if (p->stub) {
		/* The stub read the return address into r11 and will hook it. */
		ret = regs->r11;
		if (is_hooked(&tr->ps, ret)) {
			if (books_top(tr->ps.books, tid, &top, &top_slot, &top_ret) == 0 &&
			    top_slot == slot)
				ev_chain(tr, th, p->routine, t);
			else
				ev_count(tr, th, p->routine);
			if (fast_ok(tr)) { /* keep the trap that is there */
				tr->page->hook_val = ret;
				tr->page->hook_key = ret;
			} else if (th->seg_ok) { /* r10 is the thread's slot (seg_slow) */
				thr_slot_page(tr, th)->hook_val = ret;
				thr_slot_page(tr, th)->hook_key = ret;
			}
			return; /* the stub writes a trap where one already is */
		}
		if (return_site_ok(tr, ret)) {
			unwind_below(tr, th, slot + 1, t);
			if (tr->ps.orphans.n) {
				uint64_t old;
				if (u64map_get(&tr->ps.orphans, slot, &old) && old)
					u64map_put(&tr->ps.orphans, slot, 0);
			}
			ev_enter(tr, th, p->routine, slot, ret, t);
			/*
			 * Single-threaded: tell the stub this return site's own trap
			 * (the return then costs no register write). With more
			 * threads the pair stays as it is: a stub whose return
			 * address is not its key writes the common trap.
			 */
			if (tr->ps.rsites && fast_ok(tr)) {
				tr->page->hook_val = rsite_for(tr, ret);
				tr->page->hook_key = ret;
			} else if (tr->ps.rsites && th->seg_ok) { /* r10: its slot */
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
	if (is_hooked(&tr->ps, ret)) {
		/* Tail call: entered by a jump with our trap as return address. */
		if (books_top(tr->ps.books, tid, &top, &top_slot, &top_ret) == 0 && top_slot == slot)
			ev_chain(tr, th, p->routine, t);
		else
			ev_count(tr, th, p->routine);
	} else if (!p->noreturn && return_site_ok(tr, ret)) {
		/*
		 * A call (not a tail call) whose return address sits in the slot
		 * of an open frame: that frame returned unseen (an unwinder had
		 * its return address back). Close it.
		 */
		unwind_below(tr, th, slot + 1, t);
		if (ptrace(PTRACE_POKEDATA, tid, slot, tr->ps.retrap) < 0)
			return;
		if (tr->ps.orphans.n) {
			uint64_t old;
			if (u64map_get(&tr->ps.orphans, slot, &old) && old)
				u64map_put(&tr->ps.orphans, slot, 0); /* overwritten */
		}
		ev_enter(tr, th, p->routine, slot, ret, t);
	} else {
		ev_count(tr, th, p->routine);
	}
resume:
	resume_patched(tr, tid, regs, p, false);
}

static void handle_return(struct tracer *tr, struct tthread *th, struct user_regs_struct *regs,
			  uint64_t t, bool site)
{
	uint64_t ret;

	uint64_t slot = regs->rsp - 8, top_slot, top_ret;
	uint32_t top;

	/* `ret` popped the slot: it was at rsp-8. Frames below it are gone. */
	unwind_below(tr, th, slot, t);
	if (books_top(tr->ps.books, th->tid, &top, &top_slot, &top_ret) == 0 && top_slot == slot) {
		ev_leave(tr, th, t, &ret);
	} else if (u64map_get(&tr->ps.orphans, slot, &ret) && ret) {
		/* a frame closed earlier, returning on another stack */
		u64map_put(&tr->ps.orphans, slot, 0);
	} else if (site) {
		return; /* a return site's trap knows where to go: nothing to account */
	} else {
		fs_error("thread %d returned through fortstat's trap from 0x%" PRIx64
			 " with no frame to return to",
			 (int)th->tid, slot);
		kill(tr->ps.leader, SIGKILL);
		return;
	}
	if (!site)
		set_rip(th->tid, ret);
}

/* Is v what fortstat writes over return addresses (the return trap, a site's trap)? */
static bool is_hooked(const struct pstate *ps, uint64_t v)
{
	return v == ps->retrap ||
	       (ps->rsites && v >= ps->rsites && v < ps->rsites + ps->rsite_n * INSN_RSITE_SIZE &&
		(v - ps->rsites) % INSN_RSITE_SIZE == 0);
}

/* Is pc the int3 of a return site's trap? */
static bool is_rsite_trap(const struct pstate *ps, uint64_t pc)
{
	return ps->rsites && pc >= ps->rsites &&
	       pc < ps->rsites + ps->rsite_n * INSN_RSITE_SIZE &&
	       (pc - ps->rsites) % INSN_RSITE_SIZE == INSN_RSITE_TRAP;
}

/*
 * The trap of return site ret, made on first use (one write to the
 * program); the common return trap when RSITE_MAX are made.
 */
static uint64_t rsite_for(struct tracer *tr, uint64_t ret)
{
	uint8_t code[INSN_RSITE_SIZE];
	uint64_t t;

	if (u64map_get(&tr->ps.rsite_map, ret, &t))
		return t;
	if (tr->ps.rsite_n == RSITE_MAX)
		return tr->ps.retrap;
	t = tr->ps.rsites + tr->ps.rsite_n * INSN_RSITE_SIZE;
	insn_rsite_code(tr->ps.page_addr, ret, code);
	if (mem_write(tr->ps.memfd, t, code, sizeof(code)) < 0)
		return tr->ps.retrap;
	tr->ps.rsite_n++;
	u64map_put(&tr->ps.rsite_map, ret, t);
	return t;
}

/*
 * A CET user shadow stack (enabled by the C library at start, for every
 * thread) keeps its own copy of each return address: a rewritten one would
 * end the program with a control-protection fault. Checked at the first
 * stop, before any is rewritten; then calls are counted, never timed.
 */
static void check_shstk(struct tracer *tr, struct tthread *th)
{
	tr->ps.shstk_checked = true;
	if (precheck_thread_shstk(th->tid) == 1) {
		tr->ps.no_rewrite = true;
		snprintf(tr->note, sizeof(tr->note),
			 "the program runs with a CET shadow stack: calls counted, not timed");
		fs_warn("%s (return addresses cannot be rewritten)", tr->note);
	}
}

/*
 * May the stop's facts be taken from the event page? Only while the
 * program has had a single thread and a single process: with two, their
 * writes could cross (the page is shared by all of them).
 */
static bool fast_ok(struct tracer *tr)
{
	if (!tr->page || !tr->ps.page_addr || tr->fast_off)
		return false;
	if (tr->thr_n > 1 || tr->n_procs > 1) {
		tr->fast_off = true;
		return false;
	}
	return true;
}

/*
 * Measure the segment a breakpoint stop ends. An entry stub's or a return
 * site's stop leaves the TSC of just before its int3 on the event page,
 * and the code resumed after the previous such stop left the TSC of just
 * after it (t_go, cleared here at every one): in between the program ran
 * its own code. What the clocks advanced beyond that is the stops' cost.
 * Any other stop (an int3 patch, the common return trap) breaks the chain.
 */
static void seg_add(struct tracer *tr, struct tthread *th, uint64_t t_trap,
		    struct insn_event_page *ev, uint64_t c, uint64_t w);

static void ovh_add(struct tracer *tr, struct tthread *th, double o_c, double o_w);

static void seg_measure(struct tracer *tr, struct tthread *th, uint32_t ev)
{
	struct insn_event_page *pg = tr->page;
	uint64_t c = th->now.t[CLOCK_KIND_CPU], w = th->now.t[CLOCK_KIND_WALL];

	if (!fast_ok(tr))
		return; /* seg_slow, once the registers are read */
	if (!tr->seg[0] || !ev || ev == INSN_EV_RETURN) {
		th->seg_ok = false;
		ovh_add(tr, th, NAN, NAN);
		return;
	}
	seg_add(tr, th, pg->t_trap, pg, c, w);
}

/*
 * A stop's overhead joins thread th's, for its net times (thr_vtime): what
 * was measured (o_c on the CPU clock, o_w on the wall; NAN: nothing), or
 * the mean of what was measured so far, or before 100 measures the
 * calibration's. A CPU-clock measure under half that is a segment whose
 * thread was preempted (the CPU clock stopped, the TSC did not): the mean
 * stands for it.
 */
static void ovh_add(struct tracer *tr, struct tthread *th, double o_c, double o_w)
{
	bool warm = tr->acc_n >= 100;
	double mc = warm ? tr->acc_c / tr->acc_n : tr->est[CLOCK_KIND_CPU];
	double mw = warm ? tr->acc_w / tr->acc_n : tr->est[CLOCK_KIND_WALL];

	if (!isnan(o_c) && !isnan(o_w) && o_c >= mc / 2) {
		tr->acc_n++;
		tr->acc_c += o_c;
		tr->acc_w += o_w;
	} else {
		o_c = mc;
		if (isnan(o_w))
			o_w = mw;
	}
	books_stop_cost(tr->ps.books, th->tid, (double[FS_N_CLOCKS]){ o_c, o_w });
}

/* One segment of thread th measured: it ends at TSC t_trap, `ev` holds its t_go. */
static void seg_add(struct tracer *tr, struct tthread *th, uint64_t t_trap,
		    struct insn_event_page *ev, uint64_t c, uint64_t w)
{
	if (th->seg_ok && ev->t_go && t_trap > ev->t_go) {
		double u = (double)(t_trap - ev->t_go) * tr->tsc_ns;
		double o_c = NAN, o_w = (double)(w - th->seg_w) - u;

		if (th->clk.src != FS_CLOCK_WALL) {
			o_c = (double)(c - th->seg_c) - u;
			acct_ovh_add(tr->seg[0], o_c);
		}
		acct_ovh_add(tr->seg[1], o_w);
		ovh_add(tr, th, o_c, o_w);
	} else {
		ovh_add(tr, th, NAN, NAN);
	}
	th->seg_ok = true;
	th->seg_c = c;
	th->seg_w = w;
	ev->t_go = 0;
}

/*
 * The same measure when the shared page cannot be trusted (more than one
 * thread or process): the stub or the return site's trap left t_trap in
 * EAX:EDX, read with the registers; the register it addresses the page
 * with (`reg`: 10 in a stub, 11 in a return site's trap, 0: a stop with no
 * timestamps) is pointed at the thread's own slot, where the code after
 * the int3 writes t_go and reads the hook pair. Costs one PTRACE_POKEUSER
 * on a path that already reads all the registers.
 */
static void seg_slow(struct tracer *tr, struct tthread *th, struct user_regs_struct *regs,
		     int reg)
{
	uint64_t c = th->now.t[CLOCK_KIND_CPU], w = th->now.t[CLOCK_KIND_WALL];
	uint64_t addr;

	if (!reg || !tr->seg[0] || th->slot < 0 || !tr->ps.page_addr) {
		th->seg_ok = false;
		ovh_add(tr, th, NAN, NAN);
		return;
	}
	addr = tr->ps.page_addr + EV_PAGE + (uint64_t)th->slot * INSN_EV_SLOT_SIZE;
	if (ptrace(PTRACE_POKEUSER, th->tid,
		   reg == 10 ? offsetof(struct user_regs_struct, r10)
			     : offsetof(struct user_regs_struct, r11),
		   addr) < 0) {
		th->seg_ok = false;
		ovh_add(tr, th, NAN, NAN);
		return;
	}
	if (reg == 10)
		regs->r10 = addr;
	else
		regs->r11 = addr;
	seg_add(tr, th, (regs->rdx << 32) | (regs->rax & 0xffffffffu), thr_slot_page(tr, th), c,
		w);
}

/* Is pc inside code fortstat wrote for the process (a stub, a return site's trap)? */
static bool in_our_code(const struct pstate *ps, uint64_t pc)
{
	if (ps->rsites && pc >= ps->rsites && pc < ps->rsites + RSITE_MAX * INSN_RSITE_SIZE)
		return true;
	for (size_t i = 0; i < ps->n_patches; i++) {
		const struct patch *p = &ps->patches[i];

		if (p->stub && !p->dead && pc >= p->slot && pc < p->slot + INSN_STUB_SIZE)
			return true;
	}
	return false;
}

/*
 * A program may forbid rdtsc (prctl PR_SET_TSC, PR_TSC_SIGSEGV: sandboxes,
 * record-and-replay): then the stubs' and return sites' TSC reads fault.
 * Such a SIGSEGV is fortstat's, not the program's: the rdtsc becomes a
 * 2-byte nop (the stores that follow write what RAX and RDX held, restored
 * right after), the thread goes on, and the run's stops are not measured
 * any more (the calibration's f1 and f2 stand). Returns 1 when it was that.
 */
static int rdtsc_refused(struct tracer *tr, struct tthread *th)
{
	static const uint8_t rdtsc[2] = { 0x0f, 0x31 }, nop2[2] = { 0x66, 0x90 };
	uint8_t code[2];
	uint64_t pc;

	errno = 0;
	pc = (uint64_t)ptrace(PTRACE_PEEKUSER, th->tid, offsetof(struct user_regs_struct, rip), 0);
	if (errno || !in_our_code(&tr->ps, pc) || mem_read(tr->ps.memfd, pc, code, 2) < 0 ||
	    memcmp(code, rdtsc, 2) || mem_write(tr->ps.memfd, pc, nop2, 2) < 0)
		return 0;
	if (tr->seg[0]) {
		fs_info(1, "the program forbids rdtsc (PR_SET_TSC): stops not measured in the run");
		free(tr->seg[0]);
		free(tr->seg[1]);
		tr->seg[0] = tr->seg[1] = NULL;
	}
	return 1;
}

/* ---- the program's own SIGTRAP handler ---- */

/*
 * Read (set NULL) or set the program's SIGTRAP action with a system call
 * run in thread th, through the event page. Returns 0 or -1.
 */
static int trap_action(struct tracer *tr, struct tthread *th, const struct ksigaction *set,
		       struct ksigaction *old)
{
	struct ksigaction *buf = (struct ksigaction *)((char *)tr->page + EV_SIGACT);
	uint64_t a = tr->ps.page_addr + EV_SIGACT;
	long args[6] = { SIGTRAP, set ? (long)a : 0, set ? 0 : (long)a, 8, 0, 0 }, ret;

	if (!tr->page || !tr->ps.page_addr || !tr->ps.scratch)
		return -1;
	if (set)
		*buf = *set;
	if (inject_syscall_at(th->tid, tr->ps.memfd, tr->ps.scratch + SCRATCH_SYSCALL,
			      SYS_rt_sigaction, args, &ret, &th->defer_sig) < 0 ||
	    ret < 0)
		return -1;
	if (old)
		*old = *buf;
	return 0;
}

/*
 * The program's own SIGTRAP is about to be delivered to thread th: with a
 * handler that runs with SIGTRAP blocked (no SA_NODEFER, no SA_RESETHAND),
 * note the action. A breakpoint hit in that handler makes the kernel
 * reset it to SIG_DFL and unblock SIGTRAP (a forced signal may not be
 * blocked), which would end the program at its next SIGTRAP.
 */
static void trap_handler_enter(struct tracer *tr, struct tthread *th)
{
	struct ksigaction cur;
	siginfo_t si;
	int have_si;

	if (th->in_trap_handler)
		return;
	/* The signal goes on from the injection's last stop: with its own siginfo. */
	have_si = ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si) == 0;
	if (trap_action(tr, th, NULL, &cur) < 0)
		return;
	if (have_si)
		ptrace(PTRACE_SETSIGINFO, th->tid, 0, &si);
	if (cur.handler <= 1 /* SIG_DFL, SIG_IGN */ || (cur.flags & (KSA_NODEFER | KSA_RESETHAND)))
		return;
	tr->ps.trap_act = cur;
	th->in_trap_handler = true;
}

/*
 * After a breakpoint of thread th, which may run the program's SIGTRAP
 * handler: if the kernel reset the action, put it back and block SIGTRAP
 * again, as the handler had it; if the action is intact, SIGTRAP was not
 * blocked: the handler is over.
 */
static void trap_handler_check(struct tracer *tr, struct tthread *th)
{
	struct ksigaction cur;
	uint64_t mask;

	if (trap_action(tr, th, NULL, &cur) < 0 || cur.handler != 0) {
		th->in_trap_handler = false; /* over (or changed by the program) */
		return;
	}
	if (trap_action(tr, th, &tr->ps.trap_act, NULL) < 0)
		return;
	if (ptrace(PTRACE_GETSIGMASK, th->tid, sizeof(mask), &mask) == 0) {
		mask |= 1ull << (SIGTRAP - 1);
		ptrace(PTRACE_SETSIGMASK, th->tid, sizeof(mask), &mask);
	}
	fs_info(2, "thread %d: SIGTRAP handler put back after a breakpoint in it", (int)th->tid);
}

/* A SIGTRAP stop: returns 1 if it was ours (handled), 0 to pass it on. */
static int handle_trap(struct tracer *tr, struct tthread *th, uint64_t t, uint32_t ev)
{
	struct user_regs_struct regs;
	uint64_t idx;
	uint64_t pc;

	if (ev && fast_ok(tr)) {
		/* The stub or the return trap said what this stop is: no registers read. */
		memset(&regs, 0, sizeof(regs));
		regs.rsp = tr->page->rsp;
		if (!tr->ps.shstk_checked)
			check_shstk(tr, th);
		if (ev == INSN_EV_RETURN || ev == INSN_EV_RETURN_SITE) {
			handle_return(tr, th, &regs, t, ev == INSN_EV_RETURN_SITE);
			return 1;
		}
		if (ev - 1 < tr->ps.n_patches && tr->ps.patches[ev - 1].stub &&
		    !tr->ps.patches[ev - 1].dead) {
			regs.r11 = tr->page->ret;
			handle_entry(tr, th, &regs, &tr->ps.patches[ev - 1], t);
			return 1;
		}
	}
	if (tr->o->count_only) {
		/* The stub said which routine: nothing to read, nothing to set. */
		if (ev && ev != INSN_EV_RETURN && ev != INSN_EV_RETURN_SITE && fast_ok(tr) &&
		    ev - 1 < tr->ps.n_patches && tr->ps.patches[ev - 1].stub &&
		    !tr->ps.patches[ev - 1].dead) {
			ev_count(tr, th, tr->ps.patches[ev - 1].routine);
			return 1;
		}
		/* Count-only needs RIP alone (no frames, no return address). */
		errno = 0;
		regs.rip = (uint64_t)ptrace(PTRACE_PEEKUSER, th->tid,
					    offsetof(struct user_regs_struct, rip), 0);
		if (errno)
			return 1; /* gone */
		if (!u64map_get(&tr->ps.traps, regs.rip - 1, &idx) || tr->ps.patches[idx].dead)
			return 0;
		if (tr->ps.patches[idx].rdebug) {
			handle_rdebug(tr, th);
			return 1;
		}
		ev_count(tr, th, tr->ps.patches[idx].routine);
		if (!tr->ps.patches[idx].stub) /* a stub goes on by itself */
			resume_patched(tr, th->tid, &regs, &tr->ps.patches[idx], true);
		return 1;
	}
	if (ptrace(PTRACE_GETREGS, th->tid, 0, &regs) < 0)
		return 1; /* gone */
	if (!tr->ps.shstk_checked)
		check_shstk(tr, th);
	pc = regs.rip - 1;
	/*
	 * RIP-1 on one of our int3s is decisive: no instruction of the program
	 * starts at RIP there (we overwrote the first byte of one), so only our
	 * breakpoint can have left RIP at that address.
	 */
	if (pc == tr->ps.retrap_trap || is_rsite_trap(&tr->ps, pc)) {
		seg_slow(tr, th, &regs, pc == tr->ps.retrap_trap ? 0 : 11);
		handle_return(tr, th, &regs, t, pc != tr->ps.retrap_trap);
		return 1;
	}
	if (!u64map_get(&tr->ps.traps, pc, &idx) || tr->ps.patches[idx].dead) {
		th->seg_ok = false;
		return 0;
	}
	if (tr->ps.patches[idx].rdebug) {
		th->seg_ok = false;
		handle_rdebug(tr, th);
		return 1;
	}
	seg_slow(tr, th, &regs, tr->ps.patches[idx].stub ? 10 : 0);
	handle_entry(tr, th, &regs, &tr->ps.patches[idx], t);
	return 1;
}

/* ---- processes (-f) ---- */

/* Process state i: the loaded copy when it is the current one. */
static struct pstate *ps_get(struct tracer *tr, size_t i)
{
	return i == tr->cur ? &tr->ps : tr->procs[i];
}

/* Make process state i the current one (tr->ps). */
static void ps_switch(struct tracer *tr, size_t i)
{
	if (i == tr->cur)
		return;
	*tr->procs[tr->cur] = tr->ps;
	tr->ps = *tr->procs[i];
	tr->cur = i;
}

static size_t ps_add(struct tracer *tr, const struct pstate *init)
{
	tr->procs = xrealloc(tr->procs, (tr->n_procs + 1) * sizeof(*tr->procs));
	tr->procs[tr->n_procs] = xmalloc(sizeof(**tr->procs));
	*tr->procs[tr->n_procs] = *init;
	return tr->n_procs++;
}

/* Any live process state, or -1. */
static long ps_find_any(struct tracer *tr)
{
	for (size_t i = 0; i < tr->n_procs; i++)
		if (!ps_get(tr, i)->ended)
			return (long)i;
	return -1;
}

/* The live (not ended) process state of process pid, or -1. */
static long ps_find(struct tracer *tr, pid_t pid)
{
	for (size_t i = 0; i < tr->n_procs; i++)
		if (!ps_get(tr, i)->ended && ps_get(tr, i)->leader == pid)
			return (long)i;
	return -1;
}

/* A process state ended now (exit, exec, let go). */
static void ps_end(struct pstate *ps, int status)
{
	if (ps->ended)
		return;
	ps->ended = true;
	ps->status = status;
	ps->wall1 = wall_now();
}

/*
 * -f: a forked child carries the patches of its parent's image: time it as
 * a process of its own. The return addresses rewritten in the parent's
 * frames are put back in the child (those calls are not timed there).
 */
static void follow_fork_child(struct tracer *tr, pid_t pid, pid_t parent)
{
	struct tthread *pth = thr_find(tr, parent);
	struct undo_ctx u;
	struct pstate ns;
	int fd;

	if (pth)
		ps_switch(tr, pth->proc);
	fd = mem_open(pid);
	if (fd < 0) {
		release_fork_child(tr, pid, parent);
		return;
	}
	u.fd = fd;
	u.ps = &tr->ps;
	if (parent)
		books_frames(tr->ps.books, parent, undo_frame, &u);
	ns = tr->ps;
	ns.leader = pid;
	ns.memfd = fd;
	ns.books = books_new_like(tr->ps.books, ns.st->n);
	ns.patches = xmalloc((ns.cap_patches ? ns.cap_patches : 1) * sizeof(*ns.patches));
	memcpy(ns.patches, tr->ps.patches, ns.n_patches * sizeof(*ns.patches));
	u64map_dup(&ns.traps, &tr->ps.traps);
	u64map_dup(&ns.rsite_map, &tr->ps.rsite_map);
	memset(&ns.retsite, 0, sizeof(ns.retsite));
	memset(&ns.orphans, 0, sizeof(ns.orphans));
	ns.mods = xmalloc((ns.n_mods ? ns.n_mods : 1) * sizeof(*ns.mods));
	for (size_t i = 0; i < ns.n_mods; i++) {
		ns.mods[i] = tr->ps.mods[i];
		ns.mods[i].path = xstrdup(tr->ps.mods[i].path);
		ns.mods[i].real = xstrdup(tr->ps.mods[i].real);
		ns.mods[i].name = xstrdup(tr->ps.mods[i].name);
	}
	ns.cpu_total_ns = 0;
	ns.wall0 = wall_now();
	ns.path = NULL;
	ns.own_st = false;
	ns.ended = false;
	ps_switch(tr, ps_add(tr, &ns));
	thr_new(tr, pid);
	if (tr->o->pin == PIN_AUTO)
		unpin_all(tr, pid);
	fs_info(1, "forked child %d: followed", (int)pid);
	ptrace(PTRACE_CONT, pid, 0, 0);
}

/*
 * -f: thread th (now its process's only thread, with the process id)
 * exec'ed a new image. Close the old image's clocks and time the new one,
 * patched at this exec stop like the program at its start.
 */
static void follow_exec(struct tracer *tr, struct tthread *th)
{
	char link[64], path[PATH_MAX];
	struct symtab *st = xcalloc(1, sizeof(*st));
	struct pstate ns;
	ssize_t len;
	pid_t pid = th->tid;
	int err;

	if (th->vfork_child) {
		/* It ran in its parent's memory until now: not a process of its own yet. */
		ev_thread_exit(tr, th);
		th->vfork_child = false;
	} else {
		for (size_t i = 0; i < tr->thr_cap; i++) {
			struct tthread *o = tr->thr[i];

			if (o && o->proc == tr->cur) {
				ev_thread_exit(tr, o);
				thr_end(tr, o);
			}
		}
		ps_end(&tr->ps, 0);
		tr->ps.execed = true;
	}
	th->c0 = th->clast = fs_clock_read(&th->clk);
	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	len = readlink(link, path, sizeof(path) - 1);
	path[len > 0 ? len : 0] = '\0';
	err = len > 0 ? symtab_load(path, st) : -errno;
	if (err == SYMTAB_ENOSYMS) {
		/*
		 * Stripped (a shell, a system tool): followed for its children
		 * and, with -l, for its libraries' routines.
		 */
		err = 0;
	}
	if (err) {
		fs_warn("process %d exec'ed %s: %s: not followed", (int)pid, path[0] ? path : "?",
			symtab_strerror(err));
		free(st);
		unpin_task(tr, pid);
		thr_remove(tr, pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return;
	}
	symtab_select(st, tr->names, tr->exclude, tr->o->all);
	memset(&ns, 0, sizeof(ns));
	ns.st = st;
	ns.own_st = true;
	ns.path = xstrdup(path);
	ns.books = books_new_like(tr->ps.books, st->n);
	ns.leader = pid;
	ns.memfd = mem_open(pid);
	ns.wall0 = wall_now();
	ps_switch(tr, ps_add(tr, &ns));
	th->proc = tr->cur;
	if (!st->n && (!tr->o->n_libs || st->is_static)) {
		fs_info(1, "process %d exec'ed %s: no symbols, followed untimed", (int)pid, path);
		return;
	}
	if (setup_image(tr) < 0) {
		fs_warn("process %d exec'ed %s: cannot patch it: not followed", (int)pid, path);
		ps_end(&tr->ps, 0);
		thr_remove(tr, pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return;
	}
	fs_info(1, "process %d exec'ed %s: followed", (int)pid, path);
}

/* ---- processes and events ---- */

static struct pending *pend_find(struct tracer *tr, pid_t pid)
{
	for (size_t i = 0; i < tr->n_pend; i++)
		if (tr->pend[i].pid == pid)
			return &tr->pend[i];
	return NULL;
}

static struct pending *pend_add(struct tracer *tr, pid_t pid)
{
	struct pending *p = pend_find(tr, pid);

	if (p)
		return p;
	tr->pend = xrealloc(tr->pend, (tr->n_pend + 1) * sizeof(*tr->pend));
	p = &tr->pend[tr->n_pend++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static void pend_drop(struct tracer *tr, struct pending *p)
{
	*p = tr->pend[--tr->n_pend];
}

/* A new child process is known and stopped: decide what to do with it. */
static void pend_settle(struct tracer *tr, struct pending *p)
{
	if (!p->stopped || p->kind == CHILD_UNKNOWN)
		return;
	if (p->kind == CHILD_FORK && tr->o->follow) {
		follow_fork_child(tr, p->pid, p->parent);
	} else if (p->kind == CHILD_FORK) {
		release_fork_child(tr, p->pid, p->parent);
	} else {
		/* vfork: it runs in our memory until it execs or exits. */
		struct tthread *pth = thr_find(tr, p->parent), *th;

		if (pth)
			ps_switch(tr, pth->proc);
		th = thr_new(tr, p->pid);
		th->vfork_child = true;
		ptrace(PTRACE_CONT, p->pid, 0, 0);
	}
	pend_drop(tr, p);
}

static pid_t tgid_of(pid_t tid)
{
	char path[48], line[128];
	pid_t tgid = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

static void program_exec(struct tracer *tr);

/* Wait for the first stop of a new child; false if it ended instead. */
static bool wait_first_stop(pid_t pid)
{
	int status;
	pid_t w;

	do
		w = waitpid(pid, &status, __WALL);
	while (w < 0 && errno == EINTR);
	return w == pid && WIFSTOPPED(status);
}

static void handle_event(struct tracer *tr, struct tthread *th, int event, uint64_t t)
{
	unsigned long msg = 0;
	pid_t tid = th->tid;

	switch (event) {
	case PTRACE_EVENT_CLONE:
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg);
		if (event == PTRACE_EVENT_CLONE && tr->o->pin == PIN_AUTO)
			unpin_all(tr, (pid_t)msg);
		if (event != PTRACE_EVENT_CLONE || tgid_of((pid_t)msg) != tr->ps.leader) {
			struct pending *p = pend_add(tr, (pid_t)msg);
			p->parent = tid;
			p->kind = event == PTRACE_EVENT_VFORK ? CHILD_VFORK : CHILD_FORK;
			/* Hold the parent until the child is let go: it may trace it. */
			if (!p->stopped)
				p->stopped = wait_first_stop(p->pid);
			if (!p->stopped) {
				pend_drop(tr, p);
				break;
			}
			pend_settle(tr, p);
		}
		break;
	case PTRACE_EVENT_EXEC:
		if (tr->o->follow) {
			follow_exec(tr, th);
			break;
		}
		if (th->vfork_child || tid != tr->ps.leader) {
			/* A vfork child (or a thread) replaced its image: it no
			 * longer shares our patches. Let it go. */
			ev_thread_exit(tr, th);
			fs_info(1, "process %d exec'ed a new program: not followed", (int)tid);
			thr_end(tr, th);
			unpin_task(tr, tid);
			ptrace(PTRACE_DETACH, tid, 0, 0);
			thr_remove(tr, tid);
			return;
		}
		program_exec(tr);
		return;
	case PTRACE_EVENT_EXIT:
		th->exiting = true;
		ev_thread_exit(tr, th);
		thr_end(tr, th);
		break;
	default:
		break;
	}
	ptrace(PTRACE_CONT, tid, 0, 0);
}

/*
 * The program replaced its image (execve): the new one carries no patches
 * and is not followed. Close every open clock, forget the traps, give the
 * program its CPU mask back and let it run on untraced; its exit status is
 * still ours to wait for.
 */
static void program_exec(struct tracer *tr)
{
	for (size_t i = 0; i < tr->thr_cap; i++) {
		struct tthread *th = tr->thr[i];

		if (!th)
			continue;
		ev_thread_exit(tr, th);
		thr_end(tr, th);
	}
	u64map_free(&tr->ps.traps);
	tr->ps.n_patches = 0;
	snprintf(tr->note, sizeof(tr->note),
		 "the program exec'ed a new image: timed up to the exec, not followed");
	fs_info(1, "%s", tr->note);
	unpin_task(tr, tr->ps.leader);
	ptrace(PTRACE_DETACH, tr->ps.leader, 0, 0);
	for (size_t i = 0; i < tr->thr_cap; i++) {
		if (tr->thr[i]) {
			fs_clock_close(&tr->thr[i]->clk);
			free(tr->thr[i]);
			tr->thr[i] = NULL;
		}
	}
	tr->thr_n = 0;
}

/* The first stop of a thread or process we have not seen yet. */
static struct tthread *first_stop(struct tracer *tr, pid_t tid, int status)
{
	pid_t tgid = tgid_of(tid);
	struct pending *p;

	long idx = ps_find(tr, tgid);

	if (idx >= 0) {
		ps_switch(tr, (size_t)idx);
		return thr_new(tr, tid);
	}
	p = pend_find(tr, tid);
	if (p && p->kind == CHILD_VFORK) {
		struct tthread *pth = thr_find(tr, p->parent);

		if (pth)
			ps_switch(tr, pth->proc);
		return thr_new(tr, tid);
	}
	/* A new process whose parent's event may not have arrived yet. */
	p = pend_add(tr, tid);
	p->stopped = true;
	(void)status;
	pend_settle(tr, p);
	return NULL;
}

static void dispatch(struct tracer *tr, pid_t tid, int status)
{
	struct tthread *th = thr_find(tr, tid);
	uint64_t t;
	uint32_t ev;
	int sig, event;

	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		long idx;

		if (th) {
			ps_switch(tr, th->proc);
			if (!th->exiting) {
				ev_thread_exit(tr, th);
				thr_end(tr, th);
			}
			thr_remove(tr, tid);
		}
		idx = ps_find(tr, tid);
		if (idx >= 0)
			ps_end(ps_get(tr, (size_t)idx), status);
		if (tid == tr->program) {
			tr->status = status;
			tr->program_done = true;
		}
		/* With -f, followed processes may outlive the program. */
		tr->done = tr->program_done && ps_find_any(tr) < 0;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	if (!th) {
		th = first_stop(tr, tid, status);
		if (!th)
			return;
	}
	ps_switch(tr, th->proc);
	thr_stamp(tr, th);
	t = th->now.t[CLOCK_KIND_CPU];
	sig = WSTOPSIG(status);
	event = status >> 16;
	/* Every stop consumes what the event page says (it only holds for this one). */
	ev = 0;
	if (tr->page && tr->page->ev) {
		ev = tr->page->ev;
		tr->page->ev = 0;
	}
	if (sig == SIGTRAP && event == 0) {
		seg_measure(tr, th, ev);
		if (handle_trap(tr, th, t, ev)) {
			if (th->in_trap_handler)
				trap_handler_check(tr, th);
			ptrace(PTRACE_CONT, tid, 0, th->defer_sig);
			th->defer_sig = 0;
			return;
		}
	} else if (event == PTRACE_EVENT_STOP) {
		if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
			ptrace(PTRACE_LISTEN, tid, 0, 0); /* group-stop: stay stopped */
		else
			ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	} else if (sig == SIGTRAP && event) {
		handle_event(tr, th, event, t);
		return;
	}
	if (sig == SIGSEGV && rdtsc_refused(tr, th)) {
		ptrace(PTRACE_CONT, tid, 0, 0);
		return;
	}
	if (sig == SIGTRAP)
		trap_handler_enter(tr, th);
	/* A signal for the program: deliver it unchanged. */
	ptrace(PTRACE_CONT, tid, 0, sig);
}

/* ---- launch ---- */

static pid_t launch(const char *path, char *const argv[])
{
	pid_t pid = fork();

	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/* Stop so that the parent can seize us before exec. */
		raise(SIGSTOP);
		execv(path, argv);
		fprintf(stderr, "fortstat: error: %s: %s\n", path, strerror(errno));
		_exit(errno == ENOENT ? EXIT_FS_NOTFOUND : EXIT_FS_CANNOT);
	}
	return pid;
}

/* Wait until the child has exec'ed PROGRAM. Returns 0, or the child's end. */
static int wait_exec(struct tracer *tr, int *status)
{
	pid_t pid = tr->ps.leader;

	for (;;) {
		if (waitpid(pid, status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(*status))
			return 1; /* exited before exec */
		if (*status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return 0;
		if (*status >> 16 == PTRACE_EVENT_STOP || WSTOPSIG(*status) == SIGSTOP ||
		    WSTOPSIG(*status) == SIGCONT)
			ptrace(PTRACE_CONT, pid, 0, 0);
		else
			ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(*status));
	}
}

static void tracer_free(struct tracer *tr)
{
	for (size_t i = 0; i < tr->thr_cap; i++) {
		if (tr->thr[i]) {
			fs_clock_close(&tr->thr[i]->clk);
			free(tr->thr[i]);
		}
	}
	free(tr->thr);
	free(tr->pend);
	free(tr->seg[0]);
	free(tr->seg[1]);
	if (tr->n_procs)
		*tr->procs[tr->cur] = tr->ps;
	for (size_t k = 0; k < tr->n_procs; k++) {
		struct pstate *ps = tr->procs[k];

		free(ps->patches);
		for (size_t i = 0; i < ps->n_mods; i++) {
			free(ps->mods[i].path);
			free(ps->mods[i].real);
			free(ps->mods[i].name);
		}
		free(ps->mods);
		u64map_free(&ps->traps);
		u64map_free(&ps->retsite);
		u64map_free(&ps->orphans);
		u64map_free(&ps->rsite_map);
		if (ps->memfd >= 0)
			close(ps->memfd);
		free(ps);
	}
	free(tr->procs);
	if (tr->page)
		munmap(tr->page, EV_SIZE);
}

/* Close the accounting of process state ps and say how it went in *sec. */
static void ps_result(struct tracer *tr, struct pstate *ps, uint64_t wall1,
		      struct trace_section *sec)
{
	double cpu_s, wall_s;

	if (ps->ended)
		wall1 = ps->wall1;
	cpu_s = ps->cpu_total_ns / 1e9;
	wall_s = (double)(wall1 - ps->wall0) / 1e9;
	books_finish(ps->books, wall1);
	sec->pid = ps->leader;
	sec->total_s[CLOCK_KIND_CPU] = cpu_s;
	sec->total_s[CLOCK_KIND_WALL] = wall_s;
	sec->counted_only = ps->no_rewrite;
	sec->execed = ps->execed;
	if (ps->execed)
		snprintf(sec->note, sizeof(sec->note), "exec'ed a new image");
	if (WIFSIGNALED(ps->status)) {
		int sig = WTERMSIG(ps->status);

		sec->term_signal = sig;
		sec->exit_status = 128 + sig;
		snprintf(sec->note, sizeof(sec->note), "killed by signal %d (SIG%s)", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else if (WIFEXITED(ps->status)) {
		sec->exit_status = WEXITSTATUS(ps->status);
	}
}

int trace_run(const char *path, char *const argv[], struct symtab *st, struct books *books,
	      struct names *names, struct names *exclude, const struct options *o,
	      const double est_ns[FS_N_CLOCKS], struct trace_result *res)
{
	struct tracer tr = { .o = o,
			     .ps = { .st = st, .books = books, .memfd = -1 },
			     .names = names, .exclude = exclude };
	struct sigaction sa_ign = { .sa_handler = SIG_IGN }, sa_fwd = { .sa_handler = forward_signal };
	struct sigaction old_int, old_quit, old_term, old_hup;
	struct tthread *th;
	long opts = PTRACE_O_EXITKILL | PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT |
		    PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	int status, err;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	pin_start(&tr);
	/*
	 * The event page: a memfd the program inherits (no CLOEXEC) and maps
	 * at its exec stop. FORTSTAT_NO_SHARED=1 does without (bench/overhead).
	 */
	tr.page_fd = -1;
	for (int k = 0; est_ns && k < FS_N_CLOCKS; k++)
		tr.est[k] = est_ns[k];
	tr.tsc_ns = fs_tsc_ns_per_tick();
	if (!o->count_only && tr.tsc_ns > 0) {
		tr.seg[0] = xcalloc(1, sizeof(*tr.seg[0]));
		tr.seg[1] = xcalloc(1, sizeof(*tr.seg[1]));
	}
	if (!(getenv("FORTSTAT_NO_SHARED") && *getenv("FORTSTAT_NO_SHARED") != '0')) {
		int fd = memfd_create("fortstat-events", 0);
		void *m = MAP_FAILED;

		if (fd >= 0 && ftruncate(fd, EV_SIZE) == 0)
			m = mmap(NULL, EV_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			tr.page = m;
			tr.page_fd = fd;
		} else if (fd >= 0) {
			close(fd);
		}
	}
	fflush(NULL);
	pid = launch(path, argv);
	if (tr.page_fd >= 0)
		close(tr.page_fd); /* the program holds its copy (same number) until its exec stop */
	if (pid < 0) {
		fs_error("cannot fork: %s", strerror((int)-pid));
		return (int)pid;
	}
	tr.ps.leader = pid;
	tr.program = pid;
	res->pid = pid;
	ps_add(&tr, &tr.ps);
	if (waitpid(pid, &status, WSTOPPED) < 0 || !WIFSTOPPED(status) ||
	    ptrace(PTRACE_SEIZE, pid, 0, opts) < 0) {
		int e = errno ? errno : ESRCH;
		pid_t tracer = e == EPERM ? precheck_tracer_pid(pid) : 0;

		if (tracer > 0)
			precheck_say_traced(path, tracer); /* a debugger took it first */
		else
			fs_error("cannot trace %s: %s", path, strerror(e));
		if (e == EPERM)
			res->exit_status = EXIT_FS_CANNOT;
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return -e;
	}
	kill(pid, SIGCONT);
	sigaction(SIGINT, &sa_ign, &old_int);
	sigaction(SIGQUIT, &sa_ign, &old_quit);
	forward_pid = pid;
	sigaction(SIGTERM, &sa_fwd, &old_term);
	sigaction(SIGHUP, &sa_fwd, &old_hup);

	err = wait_exec(&tr, &status);
	if (err != 0) {
		/* exec failed; the child said why */
		res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FS_CANNOT;
		err = -ENOEXEC;
		goto out;
	}
	res->started = true;
	tr.ps.memfd = mem_open(pid);
	if (tr.ps.memfd < 0) {
		fs_error("cannot open the memory of %s: %s", path, strerror(-tr.ps.memfd));
		err = tr.ps.memfd;
		goto kill_out;
	}
	err = setup_image(&tr);
	if (err)
		goto kill_out;
	res->n_patched = tr.ps.n_patches;
	th = thr_new(&tr, pid);
	fs_info(1, "clock: %s", fs_clock_name(&th->clk));
	tr.ps.wall0 = wall_now();
	ptrace(PTRACE_CONT, pid, 0, 0);

	while (!tr.done) {
		pid_t tid = waitpid(-1, &status, __WALL);
		if (tid < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		dispatch(&tr, tid, status);
	}
	{
		uint64_t wall1 = wall_now();
		struct trace_section main_sec;

		*tr.procs[tr.cur] = tr.ps;
		memset(&main_sec, 0, sizeof(main_sec));
		ps_result(&tr, tr.procs[0], wall1, &main_sec);
		res->total_s[CLOCK_KIND_CPU] = main_sec.total_s[CLOCK_KIND_CPU];
		res->total_s[CLOCK_KIND_WALL] = main_sec.total_s[CLOCK_KIND_WALL];
		res->counted_only = main_sec.counted_only;
		/* -f: every other process and image, in order of appearance. */
		if (tr.n_procs > 1)
			res->sections = xcalloc(tr.n_procs - 1, sizeof(*res->sections));
		for (size_t i = 1; i < tr.n_procs; i++) {
			struct pstate *ps = tr.procs[i];
			struct trace_section *sec = &res->sections[res->n_sections++];

			ps_result(&tr, ps, wall1, sec);
			sec->st = ps->st;
			sec->own_st = ps->own_st;
			sec->path = xstrdup(ps->path ? ps->path : path);
			sec->books = ps->books;
		}
		tr.ps = *tr.procs[tr.cur];
	}
	for (size_t k = 0; tr.procs[0]->follow_dl && k < o->n_libs; k++)
		if (!tr.lib_hit[k])
			fs_warn("-l %s: no library of the program matched", o->libs[k]);
	if (tr.note[0])
		snprintf(res->note, sizeof(res->note), "%s", tr.note);
	if (tr.seg[1] && tr.seg[1]->n) {
		res->seg_n = tr.seg[1]->n;
		res->seg_cpu_ns = acct_ovh_estimate(tr.seg[0], true);
		res->seg_wall_ns = acct_ovh_estimate(tr.seg[1], false);
		for (int k = 0; k < 2; k++)
			fs_info(2,
				"stops measured on the %s clock: %" PRIu64
				" segments, median %.3f us, mean %.3f us, estimate %.3f us",
				k ? "wall" : "CPU", tr.seg[k]->n, acct_ovh_median(tr.seg[k]) / 1e3,
				tr.seg[k]->n ? tr.seg[k]->sum / (double)tr.seg[k]->n / 1e3 : 0,
				acct_ovh_estimate(tr.seg[k], !k) / 1e3);
	}
	if (WIFSIGNALED(tr.status)) {
		int sig = WTERMSIG(tr.status);
		res->term_signal = sig;
		res->exit_status = 128 + sig;
		snprintf(res->note, sizeof(res->note), "program killed by signal %d (SIG%s)", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else {
		res->exit_status = WEXITSTATUS(tr.status);
	}
	err = 0;
	goto out;
kill_out:
	kill(pid, SIGKILL);
	/* A killed tracee may still stop once more (PTRACE_EVENT_EXIT). */
	for (;;) {
		pid_t w = waitpid(-1, &status, __WALL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break;
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, w, 0, 0);
	}
	res->exit_status = EXIT_FS_ERROR;
out:
	if (tr.pinned)
		sched_setaffinity(0, sizeof(tr.orig_mask), &tr.orig_mask);
	forward_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	/* Nothing is left behind: reap whatever is still ours. */
	while (waitpid(-1, &status, __WALL | WNOHANG) > 0)
		;
	tracer_free(&tr);
	return err;
}

void trace_result_free(struct trace_result *res)
{
	for (size_t i = 0; i < res->n_sections; i++) {
		struct trace_section *sec = &res->sections[i];

		free(sec->path);
		books_free(sec->books);
		if (sec->own_st) {
			symtab_free(sec->st);
			free(sec->st);
		}
	}
	free(res->sections);
	res->sections = NULL;
	res->n_sections = 0;
}
