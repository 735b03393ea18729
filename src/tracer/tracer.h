/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracer.h - private to src/tracer/ and src/probe/: the state of a traced
 * run that the whole tracer shares (processes, threads, patches,
 * libraries), with the parts each mechanism owns in its own header
 * (attach.h, gate.h, ../probe/areas.h...), and the thread table
 * (thread.c). What each mechanism gives the others is in its header:
 * proc.h, patch.h, patches.h, modules.h, retaddr.h, memcall.h, golang.h,
 * sample.h, evpage.h, sigtrap.h, ticker.h, dispatch.h, wait.h, session.h,
 * result.h; the probes' ../probe/areas.h and ../probe/drain.h.
 * The public contract is include/fortstat/trace.h. Every function acts on
 * a stopped thread; ptrace calls may fail with ESRCH (the thread is gone),
 * which is an event, never an error.
 */
#ifndef FORTSTAT_TRACER_H
#define FORTSTAT_TRACER_H

#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/user.h>

#include "fortstat/alloc.h"
#include "fortstat/arch.h"
#include "fortstat/books.h"
#include "fortstat/clock.h"
#include "fortstat/trace.h"
#include "fortstat/usage.h"
#include "fortstat/evabi.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/seccomp.h"
#include "fortstat/sample.h"
#include "attach.h"
#include "../probe/cswitch.h"
#include "evpage.h"
#include "golang.h"
#include "memcall.h"
#include "../probe/areas.h"
#include "sample.h"
#include "gate.h"
#include "stop.h"

struct books;
struct names;
struct plancache;
struct pc_image;
struct routine;
struct symtab;
struct trace_result;
struct trace_section;

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
#define RSITE_MAX 1024	   /* return sites with a trap of their own, a process */
#define SCRATCH_SYSCALL 40 /* after the return trap (40 bytes at most) */
#define SCRATCH_CALLRET 48

struct patch {
	uint64_t trap;	    /* runtime address of the int3 */
	uint32_t routine;   /* ACCT_NONE for an unwinder hook that is not timed */
	bool unhook;	    /* an unwinder entry: put the original return addresses back */
	bool rehook;	    /* a catch handler's start: hook the surviving frames again */
	bool stub;	    /* a jmp to a stub (trap is the stub's int3), not an int3 at entry */
	unsigned plain_off; /* stub: where to resume without hooking the return */
	uint64_t jmp_addr;  /* stub: where the jmp was written */
	unsigned orig_len;  /* stub: bytes the jmp covers */
	uint8_t orig_bytes[16], jmp[16];
	uint64_t pad_addr; /* stub: a short entry's padding, which holds its jmp rel32 (0: none) */
	uint8_t pad_orig[5], pad_jmp[5];
	uint64_t got;	 /* a PLT stub: resume at the address in this GOT slot */
	uint8_t orig;	 /* the byte the int3 replaced */
	bool rdebug;	 /* the dynamic linker's _dl_debug_state: libraries changed */
	bool dead;	 /* its library was unloaded: not ours any more */
	bool noreturn;	 /* never rewrite its return */
	bool exit_probe; /* Go: an int3 on one of routine's `ret`s (golang.c) */
	bool go_hook;	 /* Go: runtime.morestack or runtime.goexit1, not timed (golang.c) */
	struct insn_plan plan;
	uint64_t slot;	   /* runtime address of its XOL slot */
	uint64_t throttle; /* a timed probe: its throttle flag's address (0: none) */
	uint64_t call_ret; /* stub: the return address of the call it emulates (0: none) */
	bool throttled;	   /* ... set: its calls are counted in-process, not timed */
	bool removed;	   /* an int3 entry throttled: the original byte is back (trap_throttle) */
	uint8_t alloc;	   /* --alloc: an allocator (enum alloc_fn), never timed (memcall.c) */
};
struct tthread {
	pid_t tid;
	struct fs_clock clk;	/* the thread's CPU clock (wall when it cannot be had) */
	uint64_t c0, clast;	/* first and last readings of clk */
	struct stamp now;	/* both clocks at its last stop, never going backwards */
	bool exiting;		/* PTRACE_EVENT_EXIT seen */
	bool unhooked;		/* its return addresses were put back for an unwinder */
	bool vfork_child;	/* a vfork child sharing our memory */
	int defer_sig;		/* a signal that arrived during an injected call: deliver it next */
	size_t proc;		/* its process: index in tracer.procs */
	bool in_trap_handler;	/* runs the program's SIGTRAP handler (see trap_handler_check) */
	struct seg_thr seg;	/* the segment timing's (evpage.h) */
	struct go_thr go;	/* a Go program's (golang.h) */
	struct attach_thr att;	/* -p: held by fortstat (attach.h) */
	struct probe_thr probe; /* in-process probes' (../probe/areas.h) */
	struct sampler smp; /* --sample: its instruction pointer sampled (sample.c), fd -1: none */
	struct usage_reading u0; /* its CPU time as the kernel counted it when first seen */
	uint64_t w0;		 /* ... and the wall clock then */
	struct mem_call mem;	 /* --alloc: the allocator call it is in (memcall.c) */
};
/* A shared library of the program (-l). */
struct tmodule {
	char *path;    /* as the dynamic linker names it (l_name) */
	char *real;    /* realpath: the same file loaded again is the same module */
	char *name;    /* soname, else file name: what reports show */
	bool matched;  /* an -l pattern matches it */
	bool unwinder; /* libgcc_s or libunwind: entries hooked, never timed */
	bool loaded, seen;
	uint64_t lm;   /* its link_map in the program */
	uint64_t bias; /* l_addr */
	bool have_routines;
	size_t first, n; /* its routines in the table */
	size_t p0, np;	 /* its patches, while loaded */
};
enum child_kind { CHILD_UNKNOWN, CHILD_FORK, CHILD_VFORK };

struct pending {
	pid_t pid;
	pid_t parent; /* thread that forked it (0 until the event is seen) */
	enum child_kind kind;
	bool stopped; /* its first stop was seen and it waits */
};
/* What fortstat knows of one traced process (one image of it). */
struct pstate {
	struct symtab *st;
	struct books *books; /* its accounting, both clocks */
	pid_t leader;	     /* its process id */
	int memfd;
	uint64_t bias;
	uint64_t scratch;	 /* base of the scratch pages */
	uint64_t retrap;	 /* address of the return trap (written over return addresses) */
	uint64_t retrap_trap;	 /* address of its int3 */
	uint64_t page_addr;	 /* the event page in the program (0: none) */
	uint64_t rsites;	 /* the return sites' traps (insn_rsite_code), with the page */
	size_t rsite_n;		 /* traps made */
	struct u64map rsite_map; /* return address -> its trap */
	struct patch *patches;
	size_t n_patches, cap_patches;
	bool follow_dl;		    /* a dynamic executable: follow its dynamic linker */
	bool shstk_checked;	    /* the first stop looked for a CET shadow stack */
	struct ksigaction trap_act; /* the program's SIGTRAP action, while a thread handles one */
	bool no_rewrite;	    /* ... and found one: count calls, rewrite no return */
	struct golang *go;	 /* a Go program: its goroutines and exit probes (NULL: not Go) */
	uint64_t rdebug;	 /* runtime address of the dynamic linker's r_debug */
	uint64_t unw_lo, unw_hi; /* the unwinder's library's code (libgcc_s), 0 0: none */
	struct tmodule *mods;	 /* shared libraries seen */
	size_t n_mods;
	struct u64map traps;	 /* int3 address -> index into patches */
	bool probes;		 /* in-process probes (src/probe/): its stubs record, no stop */
	struct probe_proc probe; /* ... their drain's bookkeeping (../probe/areas.h) */
	uint64_t n_trap_calls;	 /* entries of timed routines that were ptrace stops */
	uint64_t n_trap_stops;	 /* ... and their stops: entries, returns through a trap */
	uint64_t n_not_followed; /* processes it started let go untimed (no -f): trace_section */
	uint64_t probe_tramp;	 /* the probes' return trampoline (written over return addresses) */
	uint64_t probe_full;	 /* RIP at the trampoline's full ring's SIGURG */
	struct u64map pfull;	 /* RIP at the stubs' full rings' SIGURG -> 1 */
	struct u64map retsite;	 /* return address -> 1 (a call precedes it) or 0 */
	struct u64map callret;	 /* a stub's emulated call: its return address -> patch + 1 */
	struct u64map orphans;	 /* slot -> original return address of a frame popped
				  * by stack pointer whose slot may still return
				  * (another stack: swapcontext); 0 = none */
	double cpu_total_ns;	 /* CPU time of threads that have ended */
	struct trace_thread_usage *tu; /* ... their user and system time (thr_end) */
	size_t n_tu, cap_tu;
	uint64_t wall0;
	char *path;		 /* the image's file (owned), NULL for the program's first */
	bool own_st;		 /* st (and path) belong to this state: an image exec'ed (-f) */
	bool ended;		 /* exited, exec'ed a new image, or let go */
	bool compacted;		 /* ... and kept small since (proc.c's ps_compact) */
	bool execed;		 /* ended by exec'ing a new image */
	int status;		 /* its wait status, when it exited */
	uint64_t wall1;		 /* when it ended */
	struct psamples *smp;	 /* --sample: its samples (sample.c, owned), NULL: none yet */
	struct pc_image *pc_own; /* its file in the plan cache, whose throttles the next
				  * execs of it take (plancache_carry), NULL: none */
};
struct tracer {
	const struct trace_opts *o;
	struct pstate *ps;     /* the process of the thread being handled: one of procs */
	struct pstate **procs; /* every process followed (-f), in order of appearance */
	size_t n_procs;
	size_t cur;		       /* index in procs of the state loaded in ps */
	bool lib_hit[TRACE_MAX_LIBS];  /* -l pattern matched a library */
	struct names *names, *exclude; /* -n, -x: applied to libraries as they load */
	struct u64map thr;	       /* threads: tid + 1 -> struct tthread * */
	struct pending *pend;
	size_t n_pend;
	pid_t program; /* the program's process id */
	bool done;
	bool program_done;   /* the program itself has ended (children may run on, -f) */
	int status;	     /* the program's wait status */
	bool pinned;	     /* fortstat and the program run on one CPU */
	char note[160];	     /* how the run went, when it is worth a line */
	size_t n_refused;    /* selected routines that could not be patched */
	cpu_set_t orig_mask; /* fortstat's mask before pinning: the program's own */
	struct trace_result *res;
	struct insn_event_page *page; /* the event page, fortstat's side (NULL: none) */
	int page_fd;		      /* its memfd, inherited by the program until the exec stop */
	int mem_fd;		      /* -f: fortstat's own descriptor of it, for images exec'ed */
	bool fast_off;		      /* the page can no longer be trusted (threads, processes) */
	struct seg_run seg;	      /* the stops' cost, measured per segment (evpage.h) */
	double tsc_ns;		      /* ns per TSC tick */
	/* -p: the threads' instruction pointers at attach: no stub's jmp may cover one */
	const uint64_t *avoid_pc;
	size_t n_avoid;
	size_t ev_size;		 /* bytes of the event memory (EV_SIZE, PROBE_MEM_SIZE) */
	struct probe_run probe;	 /* in-process probes' (../probe/areas.h) */
	struct attach_state att; /* -p (attach.h) */
	struct gate gate;	 /* -p: the threads' seccomp filters (gate.c) */
	int n_cpus;		 /* CPUs the program may run on (trace_usage) */
	struct sample_run smp;	 /* --sample's (sample.h) */
	struct plancache *pc; /* files exec'ed: tables and plans for their next exec (NULL: none) */
};
/* ---- shared by the whole tracer ---- */

/* The thread in cell `cell` of the table (0 .. tr->thr.cap-1), or NULL: for walking it. */
static inline struct tthread *thr_at(const struct tracer *tr, size_t cell)
{
	return cell < tr->thr.cap && tr->thr.keys[cell]
		   ? (struct tthread *)(uintptr_t)tr->thr.vals[cell]
		   : NULL;
}

/* Events go to the current process's books, stamped with the thread's clocks at this stop. */
static inline void ev_enter(struct tracer *tr, struct tthread *th, uint32_t r, uint64_t slot,
			    uint64_t ret)
{
	books_enter(tr->ps->books, th->tid, r, slot, ret, &th->now);
}

static inline void ev_count(struct tracer *tr, struct tthread *th, uint32_t r)
{
	books_count(tr->ps->books, th->tid, r);
}

static inline void ev_chain(struct tracer *tr, struct tthread *th, uint32_t r)
{
	books_chain(tr->ps->books, th->tid, r, &th->now);
}

static inline int ev_leave(struct tracer *tr, struct tthread *th, uint64_t *ret)
{
	return books_leave(tr->ps->books, th->tid, &th->now, ret);
}

static inline void ev_thread_exit(struct tracer *tr, struct tthread *th)
{
	books_thread_exit(tr->ps->books, th->tid, &th->now);
}

/* ---- thread.c ---- */

/*
 * A ptrace stop costs several times more when the tracer and the tracee wake
 * each other across CPUs. Pin both to one CPU when that cannot change what
 * the program does; the program inherits the mask from fortstat.
 */
void pin_start(struct tracer *tr);

/*
 * Account a thread's clock as ended (its CPU time joins the program's), and
 * its user and system time as the kernel counted them since it was first
 * seen (or since its last end: a thread that exec'ed goes on in a new image).
 */
void thr_end(struct tracer *tr, struct tthread *th);

/*
 * Thread th's user and system time now, since it was first seen or last
 * ended, with the wall time between (ending at wall time `now`): what
 * thr_end records, for a snapshot too. A thread whose readings cannot be
 * had (gone) gets its CPU clock's time as user time.
 */
struct trace_thread_usage thr_usage(const struct tthread *th, uint64_t now,
				    struct usage_reading *u1);

/*
 * Thread th's user and system time count from now (thr_new's count from
 * zero: a thread or a forked process just made, at its first stop, has not
 * run): the program at its exec stop, a thread seized (-p), a vfork child
 * that exec'ed.
 */
void thr_usage_start(struct tthread *th);

/* How many CPUs the affinity mask of task pid (0: fortstat) allows; 0 when unknown. */
int cpus_of(pid_t pid);

struct tthread *thr_find(const struct tracer *tr, pid_t tid);

/*
 * The signal deferred for thread th (defer_sig), taken to resume it with;
 * 0 while a detach settles (att.settling): it waits for the detach, for a
 * handler started now could interrupt fortstat's code again.
 */
int thr_take_signal(const struct tracer *tr, struct tthread *th);

/* Forget every thread (the program exec'ed untraced, or the run is over). */
void thr_remove_all(struct tracer *tr);

struct tthread *thr_new(struct tracer *tr, pid_t tid);

/*
 * Give thread th a slot after the event page (none yet, the page there):
 * thr_new does; -p, for the threads seized before the page was made.
 */
void thr_give_slot(struct tracer *tr, struct tthread *th);

void thr_remove(struct tracer *tr, pid_t tid);

/*
 * Read both clocks of a stopped thread: its CPU clock and the wall clock.
 * Sets th->now, never going backwards.
 */
void thr_stamp(struct tracer *tr, struct tthread *th);

/* The program has a second thread: every task and fortstat get their mask back. */
void unpin_all(struct tracer *tr, pid_t also);

/* Give one task of the program its own CPU mask back. */
void unpin_task(struct tracer *tr, pid_t tid);

uint64_t wall_now(void);

/*
 * The ptrace options of a launched program (session_start), with
 * PTRACE_O_EXITKILL added where it is to die with fortstat.
 */
#define TRACE_PTRACE_OPTS                                                                          \
	(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |      \
	 PTRACE_O_TRACEVFORK)

#endif
