/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tracer.h - private to src/tracer/: the state of a traced run (processes,
 * threads, patches, libraries) and what its modules give each other. The
 * public contract is include/fortstat/trace.h. Every function here acts on
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
#include "cswitch.h"
#include "stop.h"

struct books;
struct names;
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
	bool cand;	   /* in pstate.cand: an entry read in the drain under way */
	bool removed;	   /* an int3 entry throttled: the original byte is back (trap_throttle) */
	uint8_t alloc;	   /* --alloc: an allocator (enum alloc_fn), never timed (memcall.c) */
};
/*
 * --alloc: the allocator call a thread is in (fn 0: none); calls it makes
 * itself (realloc's free) are inside it and not counted.
 */
struct mem_call {
	uint8_t fn;	  /* enum alloc_fn */
	bool hooked;	  /* its return address is ours to put back (the traps) */
	uint64_t slot;	  /* its return address's slot */
	uint64_t ret;	  /* ... which held this (hooked) */
	uint64_t args[3]; /* RDI, RSI, RDX at its entry */
};
/*
 * What a drain needs of patch j at each event, beside the records
 * (pstate.hot): 8 bytes a patch, where a record is 288 (a process of
 * 1,400 patches: 11 KiB, in the L1 cache, against a cache miss an event).
 * Made from the records at the next drain (probe_hot_sync: the patches
 * made since); a record's stub, dead, routine, noreturn, throttle,
 * throttled or cand changed after that goes through probe_hot_set.
 */
struct patch_hot {
	uint32_t routine; /* p->routine */
	uint8_t flags;	  /* HOT_* */
};
#define HOT_LIVE 1u	/* a live probe stub of a timed routine: its entries are taken */
#define HOT_NORETURN 2u /* p->noreturn: its stub hooks nothing */
#define HOT_WATCH 4u	/* throttle() is to look at it: a flag, not throttled, no candidate */
#define HOT_ALLOC 8u	/* --alloc: a live allocator's stub, its entries memcall.c's */
struct tthread {
	pid_t tid;
	struct fs_clock clk;   /* the thread's CPU clock (wall when it cannot be had) */
	uint64_t c0, clast;    /* first and last readings of clk */
	struct stamp now;      /* both clocks at its last stop, never going backwards */
	bool exiting;	       /* PTRACE_EVENT_EXIT seen */
	bool unhooked;	       /* its return addresses were put back for an unwinder */
	bool vfork_child;      /* a vfork child sharing our memory */
	int defer_sig;	       /* a signal that arrived during an injected call: deliver it next */
	size_t proc;	       /* its process: index in tracer.procs */
	int slot;	       /* its slot after the event page, -1: none (see seg_slow) */
	bool in_trap_handler;  /* runs the program's SIGTRAP handler (see trap_handler_check) */
	bool seg_ok;	       /* its last stop had timestamps: the next segment is measurable */
	uint64_t seg_c, seg_w; /* the clocks at that stop */
	double last_ovh[FS_N_CLOCKS]; /* what its last stop cost (ovh_add), for a goroutine's net
					 books */
	uint64_t
	    go_cpu_seen; /* its CPU clock when its last goroutine's stop was accounted (golang.c) */
	uint64_t go_cur; /* the g it runs, as the scheduler's hooks saw (0: none, unknown) */
	bool held;	 /* -p: stopped by fortstat to patch or to detach (attach.c) */
	bool held_group; /* ... in a group-stop (SIGSTOP): it stays stopped when let go */
	int area;	 /* in-process probes: its area (0: the trap-only one), -1: none */
	uint64_t p_tsc;	 /* the TSC at its last stop ... */
	struct stamp p_at;  /* ... and its clocks then: events between are interpolated */
	uint64_t p_ncount;  /* the count path's calls (PROBE_NCOUNT) as its last event said */
	uint64_t c_ncount;  /* ... when its counters were last read (drain_counts) */
	struct cswitch cs;  /* its context switches (probes), fd -1: none */
	struct sampler smp; /* --sample: its instruction pointer sampled (sample.c), fd -1: none */
	uint64_t cs_lost_seen;	 /* cs.n_lost when its last loss was counted */
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
	struct patch_hot *hot; /* patches[0 .. n_hot)'s, for the drain (struct patch_hot) */
	/*
	 * Go: calls of patch j counted that were no call (a morestack's
	 * re-entry through the count path), to be taken off its next counts,
	 * whichever thread's (the goroutine may resume on another): uncount[j]
	 * for j < n_uncount (probe_uncount).
	 */
	uint32_t *uncount;
	size_t n_uncount;
	size_t n_hot, cap_hot;
	bool follow_dl;		    /* a dynamic executable: follow its dynamic linker */
	bool shstk_checked;	    /* the first stop looked for a CET shadow stack */
	struct ksigaction trap_act; /* the program's SIGTRAP action, while a thread handles one */
	bool no_rewrite;	    /* ... and found one: count calls, rewrite no return */
	struct golang *go;	 /* a Go program: its goroutines and exit probes (NULL: not Go) */
	uint64_t rdebug;	 /* runtime address of the dynamic linker's r_debug */
	uint64_t unw_lo, unw_hi; /* the unwinder's library's code (libgcc_s), 0 0: none */
	struct tmodule *mods;	 /* shared libraries seen */
	size_t n_mods;
	struct u64map traps; /* int3 address -> index into patches */
	uint32_t *thr_ix;    /* the throttled probes (patch indices): their counters are read */
	size_t n_thr_ix, cap_thr_ix;
	uint32_t *cand; /* probes with an entry in the drain under way (throttle()) */
	size_t n_cand, cap_cand;
	bool probes;		 /* in-process probes (probe.c): its stubs record, no stop */
	uint64_t n_probe_events; /* events (calls, -c) read from its threads' areas */
	uint64_t n_trap_calls;	 /* entries of timed routines that were ptrace stops */
	uint64_t n_trap_stops;	 /* ... and their stops: entries, returns through a trap */
	/*
	 * Stops after which a thread's CPU times were spread over the elapsed
	 * time because the kernel dropped some of its context-switch records
	 * (a switch storm outran the reader), how many records, and the first
	 * threads it happened to (0: none).
	 */
	uint64_t n_cs_lost_windows, n_cs_lost_records;
	int cs_lost_tids[TRACE_LOST_TIDS];
	uint64_t probe_tramp;  /* the probes' return trampoline (written over return addresses) */
	uint64_t probe_full;   /* RIP at the trampoline's full ring's SIGURG */
	struct u64map pfull;   /* RIP at the stubs' full rings' SIGURG -> 1 */
	struct u64map retsite; /* return address -> 1 (a call precedes it) or 0 */
	struct u64map callret; /* a stub's emulated call: its return address -> patch + 1 */
	struct u64map orphans; /* slot -> original return address of a frame popped
				* by stack pointer whose slot may still return
				* (another stack: swapcontext); 0 = none */
	double cpu_total_ns;   /* CPU time of threads that have ended */
	struct trace_thread_usage *tu; /* ... their user and system time (thr_end) */
	size_t n_tu, cap_tu;
	uint64_t wall0;
	char *path;	      /* the image's file (owned), NULL for the program's first */
	bool own_st;	      /* st (and path) belong to this state: an image exec'ed (-f) */
	bool ended;	      /* exited, exec'ed a new image, or let go */
	bool execed;	      /* ended by exec'ing a new image */
	int status;	      /* its wait status, when it exited */
	uint64_t wall1;	      /* when it ended */
	struct psamples *smp; /* --sample: its samples (sample.c, owned), NULL: none yet */
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
	/* The stops' cost, measured per segment (see seg_measure); NULL: not measured. */
	struct acct_ovh *seg[2];     /* on the CPU clock, on the wall clock */
	double tsc_ns;		     /* ns per TSC tick */
	uint8_t slot_used[EV_SLOTS]; /* threads' slots after the event page */
	double est[FS_N_CLOCKS];     /* a stop's overhead when it cannot be measured */
	double acc_n, acc_c, acc_w;  /* measures taken so far: count, sums (CPU clock, wall) */
	/* -p: the threads' instruction pointers at attach: no stub's jmp may cover one */
	const uint64_t *avoid_pc;
	size_t n_avoid;
	size_t ev_size;			/* bytes of the event memory (EV_SIZE, PROBE_MEM_SIZE) */
	uint8_t area_used[PROBE_AREAS]; /* in-process probes: threads' areas */
	bool probe_no_tsc;		/* the program forbids rdtsc: events stamped at stops */
	uint64_t probe_cap;		/* events a thread's ring holds (PROBE_CAP) */
	size_t n_throttled;		/* probes throttled (their counters are read too) */
	const char *attach_active;	/* -p: the routines active at attach (the result's) */
	/* -p: the threads' seccomp filters, read at the attach (syscall_gate) */
	struct scf_filters *sc;
	size_t n_sc;
	bool sc_strict; /* a thread runs in seccomp's strict mode */
	int sc_err;	/* why a thread's filters could not be read (-errno), else 0 */
	int n_cpus;	/* CPUs the program may run on (trace_usage) */
	int sample_err; /* --sample: why perf_event_open was refused (-errno), said once; 0 */
	struct sample_timer sample_timer; /* --sample: when to read every thread's ring */
	struct plancache *pc; /* files exec'ed: tables and plans for their next exec (NULL: none) */
};
enum patch_mode {
	PATCH_OWN,   /* the program's own routines, its unwinder entries and PLT stubs */
	PATCH_LIB,   /* routines of a library appended to the table (-l) */
	PATCH_HOOKS, /* only the unwinder entries of a library (not timed) */
};

/* ---- thread.c ---- */

void ev_chain(struct tracer *tr, struct tthread *th, uint32_t r);

void ev_count(struct tracer *tr, struct tthread *th, uint32_t r);

/* Events go to the process's books, stamped with the thread's clocks at this stop. */
void ev_enter(struct tracer *tr, struct tthread *th, uint32_t r, uint64_t slot, uint64_t ret);

int ev_leave(struct tracer *tr, struct tthread *th, uint64_t *ret);

void ev_thread_exit(struct tracer *tr, struct tthread *th);

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
 * 0 while a detach settles (detach.c): it waits for the detach, for a
 * handler started now could interrupt fortstat's code again.
 */
int thr_take_signal(struct tthread *th);

/* The thread in cell `cell` of the table (0 .. tr->thr.cap-1), or NULL: for walking it. */
struct tthread *thr_at(const struct tracer *tr, size_t cell);

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

/* ---- proc.c ---- */

/* The first stop of a thread or process we have not seen yet. */
struct tthread *first_stop(struct tracer *tr, pid_t tid, int status);

/* A ptrace event of thread th (clone, fork, vfork, exec, exit, other); resumes it. */
void handle_event(struct tracer *tr, struct tthread *th, enum stop_kind kind);

size_t ps_add(struct tracer *tr, const struct pstate *init);

/* A process state ended now (exit, exec, let go). */
void ps_end(struct pstate *ps, int status);

/* The live (not ended) process state of process pid, or -1. */
long ps_find(struct tracer *tr, pid_t pid);

/* Any live process state, or -1. */
long ps_find_any(struct tracer *tr);

/* Process state i: the loaded copy when it is the current one. */
struct pstate *ps_get(struct tracer *tr, size_t i);

/* Make process state i the current one (tr->ps). */
void ps_switch(struct tracer *tr, size_t i);

/* ---- patch.c ---- */

/* Undo every live patch of the current process in the forked copy behind fd. */
void patch_undo_all(struct tracer *tr, int fd);
bool patch_call_site(const struct pstate *ps, uint64_t ret);

struct patch *patch_new(struct tracer *tr);

/*
 * Patch routines [from, to) of table `tab`, loaded at `bias`: plan each
 * entry, write the out-of-line slots to new scratch pages near them, then
 * the int3s. The program itself (PATCH_OWN) also gets its PLT stubs into
 * the unwinder hooked, and a scratch page even with nothing to patch when
 * the dynamic linker is followed. Routines that cannot be patched lose
 * RT_SELECTED. Runs in the stopped thread tid. Returns 0 or -errno (said).
 */
int patch_routines(struct tracer *tr, pid_t tid, struct symtab *tab, size_t from, size_t to,
		   uint64_t bias, enum patch_mode mode, int *deferred);

/* Resume past patch p's displaced instruction; `regs` complete unless rip_only (-c). */
int resume_patched(struct tracer *tr, pid_t tid, arch_regs *regs, const struct patch *p,
		   bool rip_only);

/* ---- modules.c ---- */

/*
 * Patch the current process's image at its exec stop: the event page, the
 * load bias, its routines, and the dynamic linker's rendezvous to follow
 * its libraries. Returns 0 or -errno (said).
 */
int setup_image(struct tracer *tr);

/* The thread stopped on _dl_debug_state: look at the libraries, then return. */
void handle_rdebug(struct tracer *tr, struct tthread *th);

/*
 * Follow the dynamic linker (for -l): a breakpoint on _dl_debug_state, which
 * it calls with r_debug.r_state RT_CONSISTENT after each change of the
 * library list (at start, dlopen, dlclose). Its body is a bare `ret`, which
 * the breakpoint emulates.
 */
void setup_rdebug(struct tracer *tr);

/*
 * Attaching (-p): the libraries already loaded, read from the dynamic
 * linker's list now (when it is consistent), patched as at their load.
 */
void modules_attach(struct tracer *tr, struct tthread *th);

/* ---- retaddr.c ---- */

/*
 * A CET user shadow stack (enabled by the C library at start, for every
 * thread) keeps its own copy of each return address: a rewritten one would
 * end the program with a control-protection fault. Checked at the first
 * stop, before any is rewritten; then calls are counted, never timed.
 */
void check_shstk(struct tracer *tr, struct tthread *th);

void handle_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

void handle_return(struct tracer *tr, struct tthread *th, arch_regs *regs, bool site);

/* Is pc the int3 of a return site's trap? */
bool is_rsite_trap(const struct pstate *ps, uint64_t pc);

/* An entry and a return recorded in-process (probe.c), as handle_entry/handle_return. */
/*
 * memcall.c, --alloc: the allocator routine r is (enum alloc_fn; 0: none or
 * not --alloc); whether its calls can be probed in-process (its block is
 * not written in memory). memcall_entry: the entry of allocator patch p,
 * at a trap (registers read): the call noted, its return hooked, the thread
 * resumed past the entry. memcall_entry_recorded: a probe's entry event (its
 * arguments). memcall_return: a return through `slot` with RAX `rax` (and
 * registers, at a trap, NULL from a probe's event): a call noted there is
 * charged to the books; returns true when the return address was ours
 * alone to put back (*ret: where the thread returns).
 */
/* Is v what fortstat writes over return addresses (the return trap, a site's trap)? */
bool is_hooked(const struct pstate *ps, uint64_t v);
enum alloc_fn memcall_fn(const struct tracer *tr, const struct routine *r);
bool memcall_probe_ok(const struct routine *r);
void memcall_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);
void memcall_entry_recorded(struct tracer *tr, struct tthread *th, const struct patch *p,
			    uint64_t slot, uint64_t rdi, uint64_t rsi);
bool memcall_return(struct tracer *tr, struct tthread *th, uint64_t slot, uint64_t rax,
		    uint64_t *ret);
/* -p's detach: the return address of th's allocator call put back, if fortstat hooked it. */
void memcall_restore(struct tracer *tr, struct tthread *th);
void entry_recorded(struct tracer *tr, struct tthread *th, uint32_t routine, uint64_t slot,
		    uint64_t ret, bool chained, bool noreturn);
void return_recorded(struct tracer *tr, struct tthread *th, uint64_t slot);

/* Put back the return addresses of thread tid's frames in the forked copy behind fd. */
void frames_undo(struct tracer *tr, int fd, pid_t tid);

/*
 * Detaching (-p), all threads stopped: put back every return address
 * hooked in thread th's open frames (top frame first), and those of the
 * current process's orphans.
 */
void frames_restore(struct tracer *tr, struct tthread *th);
void orphans_restore(struct tracer *tr);

/*
 * The ptrace options of a launched program (session_start), with
 * PTRACE_O_EXITKILL added where it is to die with fortstat.
 */
#define TRACE_PTRACE_OPTS                                                                          \
	(PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |      \
	 PTRACE_O_TRACEVFORK)

/* ---- evpage.c ---- */

/*
 * May the stop's facts be taken from the event page? Only while the
 * program has had a single thread and a single process: with two, their
 * writes could cross (the page is shared by all of them).
 */
bool fast_ok(struct tracer *tr);

/*
 * Map the event page (the memfd the program inherited from fortstat) into
 * the program at its first exec stop, and close that descriptor there, before
 * any of the program's code runs.
 */
void map_event_page(struct tracer *tr);

/*
 * -f: a followed process exec'ed a new image, which holds no event memory:
 * at its exec stop it opens fortstat's memfd (tr->mem_fd, through
 * /proc/FORTSTAT/fd), maps it and closes it again, as the program mapped
 * the one it inherited. Sets ps->page_addr; the areas are the same memory
 * as every other process's (one pool). Returns 0 or -errno (none mapped:
 * its calls trap).
 */
int exec_event_memory(struct tracer *tr);

/*
 * -p with probes: the running process inherits nothing of fortstat's, so
 * the event memory (tr->ev_size bytes) is made in it by held thread th
 * (the leader): shared anonymous memory it maps, which fortstat maps too
 * through /proc/PID/map_files (which needs CAP_SYS_ADMIN or
 * CAP_CHECKPOINT_RESTORE); where that is refused, a memfd it creates and
 * maps, opened by fortstat through /proc/PID/fd, its descriptor closed
 * again. Only system calls its seccomp filters let through
 * (syscall_gate). Sets tr->page and ps->page_addr. Returns 0, or -errno
 * with why in `why` (nothing left in it).
 */
int attach_event_memory(struct tracer *tr, struct tthread *th, char *why, size_t n);

/* Detaching: unmap the event memory from the process, by held thread th. */
void detach_event_memory(struct tracer *tr, struct tthread *th);

/*
 * The event memory's liveness word (EV_ALIVE) made fortstat's own robust
 * futex: this thread's id in it, and a robust list of one entry, kept in
 * fortstat's private memory, that names it. When fortstat dies, even by
 * SIGKILL, the kernel clears the id (FUTEX_OWNER_DIED) before it lets the
 * tracees go: the probes then know that no one reads their rings, and fall
 * through to plain calls. evpage_alive_end puts the C library's list back
 * and clears the word, before the memory is unmapped.
 */
void evpage_alive_start(struct tracer *tr);
void evpage_alive_end(struct tracer *tr);

/*
 * -p: a forked child let go (not followed) inherited the event memory, and
 * its thread the GS base of its parent's area: both taken out of it, as at
 * the detach, by a system call run in the child, stopped (its memory behind
 * fd; a signal meanwhile into *deferred). A launched program's children
 * keep them, unused.
 */
void fork_child_memory(struct tracer *tr, pid_t pid, int fd, int *deferred);

/*
 * A program may forbid rdtsc (prctl PR_SET_TSC, PR_TSC_SIGSEGV: sandboxes,
 * record-and-replay): then the stubs' and return sites' TSC reads fault.
 * Such a SIGSEGV is fortstat's, not the program's: the rdtsc becomes a
 * 2-byte nop (the stores that follow write what RAX and RDX held, restored
 * right after), the thread goes on, and the run's stops are not measured
 * any more (the calibration's f1 and f2 stand). Returns 1 when it was that.
 */
int rdtsc_refused(struct tracer *tr, struct tthread *th);

bool seg_measure(struct tracer *tr, struct tthread *th, uint32_t ev);

/*
 * What a stop has been charged on each clock so far, ns: the mean measured
 * once 100 stops were, else the calibration's estimate (trace_run's est_ns).
 */
void stop_cost_mean(const struct tracer *tr, double out[FS_N_CLOCKS]);

/* What process ps's calls through the traps cost (n_trap_stops stops), ns, into out. */
void trap_cost(const struct tracer *tr, const struct pstate *ps, double out[FS_N_CLOCKS]);

/* What a stop's registers hold of the segment it ends (seg_slow). */
enum seg_how {
	SEG_NO_TSC, /* nothing: an int3 patch, the common return trap */
	SEG_STUB,   /* an entry stub's stop */
	SEG_RSITE,  /* a return site's trap */
};

/* Measure the segment a stop ends from its registers (the page cannot be trusted). */
void seg_slow(struct tracer *tr, struct tthread *th, arch_regs *regs, enum seg_how how);

/* Thread th's slot, on fortstat's side. */
struct insn_event_page *thr_slot_page(struct tracer *tr, const struct tthread *th);

/* ---- sigtrap.c ---- */

/*
 * After a breakpoint of thread th, which may run the program's SIGTRAP
 * handler: if the kernel reset the action, put it back and block SIGTRAP
 * again, as the handler had it; if the action is intact, SIGTRAP was not
 * blocked: the handler is over.
 */
void trap_handler_check(struct tracer *tr, struct tthread *th);

/*
 * The program's own SIGTRAP is about to be delivered to thread th: with a
 * handler that runs with SIGTRAP blocked (no SA_NODEFER, no SA_RESETHAND),
 * note the action. A breakpoint hit in that handler makes the kernel
 * reset it to SIG_DFL and unblock SIGTRAP (a forced signal may not be
 * blocked), which would end the program at its next SIGTRAP.
 */
void trap_handler_enter(struct tracer *tr, struct tthread *th);

/* ---- ticker.c ---- */

/* Set by fortstat's signal handlers: ticker_poll has work (the loop checks it at each stop). */
extern volatile sig_atomic_t ticker_pending;

/*
 * The loop of a run begins (the program's wall0 is set): the timer of the
 * status line and of --interval, SIGUSR1 interrupting the wait. Nothing
 * when the run asks for no live report (trace_opts). `path` names the
 * program for processes that have not exec'ed.
 */
void ticker_start(struct tracer *tr, const char *path);

/* The loop has ended: the timer off, SIGALRM as it was, SIGUSR1 caught again. */
void ticker_stop(struct tracer *tr);

/*
 * Between stops: draw the status line, take a snapshot, as the flags say;
 * with in-process probes, once every thread has stopped for its ring to be
 * drained (PTRACE_INTERRUPT). Clears ticker_pending.
 */
void ticker_poll(struct tracer *tr);

/* A thread stopped for PTRACE_INTERRUPT (its ring drained): maybe the last awaited. */
void ticker_interrupted(struct tracer *tr);

/* ---- golang.c ---- */

/*
 * A Go program (trace_is_go: it has runtime.morestack) must never see a
 * foreign return address: its runtime walks and copies the goroutines'
 * stacks. Detect it at the exec stop (before patch_routines): then ps->go
 * is set, the runtime's own routines are not timed, each timed routine's
 * `ret`s are found for exit probes (a routine whose exits cannot all be
 * found is refused, -v says why; with probes, where a jmp over each one's
 * epilogue may go: a routine where one cannot traps), and the runtime is hooked where it
 * grows a stack (runtime.morestack: a function re-entered after it is
 * counted once), ends a goroutine (runtime.goexit1) and switches them
 * (runtime.schedule, runtime.execute). Returns 0 (not Go, or ready).
 */
int go_setup(struct tracer *tr);

/* Is routine i of the program's table one of the runtime's hooks (go_setup), never timed? */
bool go_is_hook(const struct pstate *ps, size_t i);

/* Patch the exit probes of routine i after its entry patch (patch_routines). */
void go_add_exits(struct tracer *tr, size_t i, uint64_t bias);

/* An entry (STOP_ENTRY, STOP_COUNT) of a Go program: regs complete. Resumes it. */
void go_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

/* An exit probe (STOP_EXIT_PROBE): the routine returns; the `ret` is emulated. */
void go_exit(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p);

/*
 * With probes: why Go routine r takes no in-process entry (its exits trap,
 * it has none, the traps throughout), or NULL (try_stub plans INSN_PROBE_GO).
 */
const char *go_stub_refused(const struct tracer *tr, const struct routine *r);

/*
 * Why Go routine r's entry stub (a jmp over len bytes at `at`, the routine
 * moved whole into it if `whole`, a short entry's jmp in the padding at
 * pad_addr if not 0) cannot be, or NULL: a routine moved whole would
 * return into the stub, a jmp may not cover an exit's, the padding before
 * a routine may hold the last exit's jmp of the one before.
 */
const char *go_stub_clash(const struct tracer *tr, const struct routine *r, uint64_t at,
			  unsigned len, unsigned whole, uint64_t pad_addr);

/* Scratch bytes the program's in-process exit stubs take (patch_routines). */
size_t go_exit_room(const struct tracer *tr);

/*
 * Routine i's entry took in-process stub j: a jmp over each of its exits'
 * epilogues to an exit stub, written at base (buf: fortstat's copy), one
 * after another, `room` bytes at most (-c: none; an exit without room or
 * out of reach: an int3 on its ret). Returns how many stubs it wrote.
 */
size_t go_add_probe_exits(struct tracer *tr, size_t i, size_t j, uint64_t bias, uint64_t base,
			  uint8_t *buf, size_t room);

/*
 * An event of a Go routine's in-process probe read from thread th's ring
 * (th->now: its stamp), `counted` calls of the count path before it: an
 * entry or an exit of a goroutine's frame (probe.c's take).
 */
struct probe_event;
void go_take(struct tracer *tr, struct tthread *th, const struct probe_event *e, uint64_t counted);
/*
 * Patch j was throttled: a goroutine that called runtime.morestack from its
 * routine and has not re-entered it yet will re-enter through the count
 * path, a count that is no call (probe_uncount), not the same call's event.
 */
void go_throttled(struct tracer *tr, size_t j);

/* A copy of a process's Go state for its forked child (NULL for NULL). */
struct golang *go_dup(const struct golang *go);

/* Free a process's Go state. */
void go_free(struct golang *go);

/* ---- session.c ---- */

/* Free what the tracer holds (threads, process states, the event page). */
void tracer_free(struct tracer *tr);

/*
 * The measuring kit of a run (the stops' cost, the event page). `attached`
 * (-p): no page of fortstat's; with probes, ev_size says the event memory
 * is to be made in the process (attach_event_memory). est_ns may be NULL.
 */
void session_kit(struct tracer *tr, const double est_ns[FS_N_CLOCKS], bool attached);

/* ---- result.c ---- */

/*
 * How the run went as of wall time now (ns), into *res (zeroed by the
 * caller): the program's section in res itself, every other process's
 * (-f) in res->sections, named `path` when it has not exec'ed. At the end
 * (!snapshot) the books are closed in place and the threads' times handed
 * over, the warnings said (-l, routines refused) and the program's exit
 * taken from tr->status; a snapshot gets copies closed at each live
 * thread's clocks of now, the program's books in *main_books (the
 * caller's to free), and says what still runs.
 */
void result_build(struct tracer *tr, const char *path, uint64_t now, bool snapshot,
		  struct trace_result *res, struct books **main_books);

/* ---- probe.c ---- */

/*
 * At the exec stop of the program's first image (thread tid, before any
 * patch): may its routines get in-process probes (--probes, the event
 * memory mapped, the GS base unused, a steady TSC)? Sets ps->probes; the
 * trampoline is written by patch_routines.
 */
void probe_prepare(struct tracer *tr, pid_t tid);

/*
 * A thread's first stop: give it an area of its own (its GS base), or the
 * trap-only area (`own` false: a vfork child, or no area left).
 */
void probe_thread_new(struct tracer *tr, struct tthread *th, bool own);

/*
 * Read what thread th's probes recorded since its last stop into the books
 * (stamped between that stop's clocks and this one's), at every stop of
 * it. Returns the events read. The count path's counters are read when
 * it took calls since; with -c (every probe counts there) at a breakpoint
 * only once enough calls make the walk worth it, at any other stop
 * (`all`: an event, an interrupt for a snapshot, the end) always.
 */
size_t probe_drain(struct tracer *tr, struct tthread *th, bool all);
/* Read every thread's context-switch records now (cswitch_due: a ring a quarter full). */
void probe_read_switches(struct tracer *tr);

/* Patch j of the current process had an entry: throttle() looks at it at the next drain. */
void probe_throttle_candidate(struct tracer *tr, size_t j);

/* One call of patch j's count path, counted or to be, is no call (Go's morestack). */
void probe_uncount(struct tracer *tr, struct tthread *th, size_t j);
/* Patch j of process ps changed (struct patch_hot): its drain entry made again. */
void probe_hot_set(struct pstate *ps, size_t j);
/* The drain entries of the patches of ps made since the last call (each patch's once). */
void probe_hot_sync(struct pstate *ps);

/* Patch j of the current process was throttled: its counter is read from now on. */
void probe_throttled(struct tracer *tr, size_t j);

/*
 * Patch j's entry int3 (a routine on the trap path) has just stopped a
 * thread, whose call is accounted: past --throttle's rule, the int3 is
 * removed and the routine's count becomes a lower bound.
 */
void trap_throttle(struct tracer *tr, size_t j);

/*
 * Thread th stopped on a full ring (drained already; its SIGURG is not
 * delivered): if nothing could be
 * read (an event taken but never written: its code was left by longjmp
 * from a signal handler), skip it so that the thread goes on.
 */
void probe_full(struct tracer *tr, struct tthread *th);

/* Under -vv: thread th's shadow stack (a return that found no frame). */
void probe_dump(struct tracer *tr, struct tthread *th);

/* The shadow-stack check was made (check_shstk): the areas' probes may run in process. */
void probe_unhooked(struct tracer *tr, struct tthread *th, bool on);
void probe_release(struct tracer *tr);

/* Thread th is gone: its area is free again. */
void probe_thread_gone(struct tracer *tr, struct tthread *th);

/* Is pc (RIP at a SIGURG's stop) a probe's full-ring stop? */
bool probe_is_full(const struct pstate *ps, uint64_t pc);

/*
 * Is thread th's SIGURG its probe's full ring? The probe sent it to its
 * own thread (tkill, not an int3: a fortstat that dies meanwhile leaves a
 * SIGURG that the program ignores, where a SIGTRAP would kill it); RIP is
 * just after that system call in a stub or the trampoline; si, its stop's
 * (stop_siginfo, NULL when unread), says who sent it.
 */
bool probe_full_signal(struct tracer *tr, struct tthread *th, const siginfo_t *si);

/* ---- sample.c ---- */

/* --sample: start sampling thread th (new, not run yet); a refusal is said once a run. */
void sample_thread_new(struct tracer *tr, struct tthread *th);

/* Thread th's samples since its last read into its process's (at each of its stops). */
void sample_read_thread(struct tracer *tr, struct tthread *th);

/* Every thread's (a ring half full: SIGIO, cswitch_due). */
void sample_read_all(struct tracer *tr);

/*
 * Thread th's samples in untimed code taken before wall time `t`
 * (CLOCK_MONOTONIC), read and not yet given, to its innermost timed frame
 * in the books now: at each event its probes recorded, before the event
 * is taken (its time), and at each of its stops once its ring is drained
 * (UINT64_MAX: all). With no frame, outside.
 */
void sample_fold(struct tracer *tr, struct tthread *th, uint64_t t);

/* Thread th is gone: its last samples read, its event closed. */
void sample_thread_gone(struct tracer *tr, struct tthread *th);

/* Process ps's samples (its threads still there read first) into *out (hits malloc'ed). */
void sample_result(struct tracer *tr, struct pstate *ps, struct trace_samples *out);

/* The run is over: no more reading (the timer off). */
void sample_stop(struct tracer *tr);

/* Free process ps's samples. */
void sample_ps_free(struct pstate *ps);

/* ---- dispatch.c ---- */

/*
 * Act on stop s (from next_stop) and resume its thread. s is consumed: its
 * kind may be refined (STOP_PROBE_FULL) and the event word taken into it.
 */
void dispatch(struct tracer *tr, struct stop *s);

/*
 * -vv: a fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) that stop s of thread tid
 * brings, delivered or held back for the detach: its siginfo, every
 * register, the GS base and where fortstat's code lies, in one line.
 */
void fault_say(struct tracer *tr, pid_t tid, struct stop *s);

/*
 * The run's wait (session.c, and -p's in attach.c): next_stop on every
 * thread, the ticker's work (a status line, a snapshot, the switch
 * records) done before it and whenever one of fortstat's signals
 * interrupts it; `how` as next_stop's (NEXT_INTR: back to the caller).
 */
int run_stop(struct tracer *tr, int how, struct stop *s);

/* ---- wait.c ---- */

/* How next_stop waits (or'ed). */
enum {
	NEXT_POLL = 1, /* no blocking: 0 when no stop is there yet */
	NEXT_INTR = 2, /* -EINTR when one of fortstat's signals interrupts the wait */
};

/*
 * The one wait of the tracer: the next stop of thread tid (-1: of any
 * traced thread), named (stop_from_status) into *s. Every phase waits
 * here: the run and -p's (through run_stop), holding and stepping threads
 * for a detach, a new child's first stop, the exec. A wait that one of
 * fortstat's own signals interrupts goes on (unless NEXT_INTR). Returns 1,
 * 0 (NEXT_POLL: nothing yet) or -errno (-ECHILD: nothing is left to wait
 * for).
 */
int next_stop(pid_t tid, int how, struct stop *s);

/*
 * The siginfo of stop s's signal (PTRACE_GETSIGINFO, read at the first
 * ask and kept in s), or NULL when it cannot be read (the thread is gone).
 */
const siginfo_t *stop_siginfo(struct stop *s);

/*
 * The one way a stopped thread is set going (PTRACE_CONT, PTRACE_LISTEN,
 * PTRACE_SINGLESTEP with signal sig), let go (PTRACE_DETACH) or a running
 * one stopped (PTRACE_INTERRUPT). A thread that has vanished (ESRCH) is no
 * error: its end is a stop that next_stop reports. Returns 0 or -errno
 * (said under -vv unless ESRCH).
 */
int tracee_resume(int op, pid_t tid, int sig);

/* ---- attach.c ---- */

/*
 * -p: may fortstat run system call nr(args), named `what` in messages
 * ("mmap of shared memory"), in held thread tid? By the threads' seccomp
 * filters read at the attach (a launched program, or one without a
 * filter: always). 0: it runs; 1: it would not (refused, or fatal to the
 * process: never to be tried), why in `why`; 2: unknown (a filter that
 * cannot be read or understood), why in `why`.
 */
int syscall_gate(struct tracer *tr, pid_t tid, const char *what, long nr, const long args[6],
		 char *why, size_t n);

#endif
