/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * areas.h - in-process probes (areas.c): the threads' areas of the event
 * memory, the patches' drain entries, the throttles. The state they act on
 * is tracer.h's.
 */
#ifndef FORTSTAT_PROBE_AREAS_H
#define FORTSTAT_PROBE_AREAS_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/books.h"
#include "fortstat/evabi.h"
#include "fortstat/trace.h"
#include "cswitch.h"

struct patch;
struct pstate;
struct tracer;
struct tthread;

/*
 * What a drain needs of patch j at each event, beside the records
 * (pstate.probe.hot): 8 bytes a patch, where a record is 288 (a process of
 * 1,400 patches: 11 KiB, in the L1 cache, against a cache miss an event).
 * Made from the records at the next drain (probe_hot_sync: the patches
 * made since); a record's stub, dead, routine, noreturn, throttle or
 * throttled changed after that goes through probe_hot_set. Whether it is a
 * throttle candidate (HOT_CAND) is kept here only: taking an entry, making
 * it a candidate and passing over one called fewer than --throttle's times
 * never read the record.
 */
struct patch_hot {
	uint32_t routine; /* p->routine */
	uint8_t flags;	  /* HOT_* */
};
#define HOT_LIVE 1u	/* a live probe stub of a timed routine: its entries are taken */
#define HOT_NORETURN 2u /* p->noreturn: its stub hooks nothing */
#define HOT_WATCH 4u	/* throttle() is to look at it: a flag, not throttled, no candidate */
#define HOT_ALLOC 8u	/* --alloc: a live allocator's stub, its entries memcall.c's */
#define HOT_CAND 16u	/* in pstate.probe.cand: throttle() looks at it at the drain's end */

/* A process's part of the probes (struct pstate.probe): changed by areas.c and drain.c. */
struct probe_proc {
	struct patch_hot *hot; /* patches[0 .. n_hot)'s, for the drain (struct patch_hot) */
	size_t n_hot, cap_hot;
	/*
	 * Go: calls of patch j counted that were no call (a morestack's
	 * re-entry through the count path), to be taken off its next counts,
	 * whichever thread's (the goroutine may resume on another): uncount[j]
	 * for j < n_uncount (probe_uncount).
	 */
	uint32_t *uncount;
	size_t n_uncount;
	uint32_t *thr_ix; /* the throttled probes (patch indices): their counters are read */
	size_t n_thr_ix, cap_thr_ix;
	uint32_t *cand; /* probes with an entry in the drain under way (throttle()) */
	size_t n_cand, cap_cand;
	uint64_t n_events; /* events (calls, -c) read from its threads' areas */
	/*
	 * Stops after which a thread's CPU times were spread over the elapsed
	 * time because the kernel dropped some of its context-switch records
	 * (a switch storm outran the reader), how many records, and the first
	 * threads it happened to (0: none).
	 */
	uint64_t n_cs_lost_windows, n_cs_lost_records;
	int cs_lost_tids[TRACE_LOST_TIDS];
};

/* The run's part of the probes (struct tracer.probe): changed by areas.c and drain.c. */
struct probe_run {
	uint8_t area_used[PROBE_AREAS]; /* threads' areas */
	bool no_tsc;			/* the program forbids rdtsc: events stamped at stops */
	uint64_t cap;			/* events a thread's ring holds (PROBE_CAP) */
	size_t n_throttled;		/* probes throttled (their counters are read too) */
	/*
	 * What an event costs the program now (drain.c, round_weigh): the
	 * flat and round calibrations weighed by how many routines the latest
	 * window of events entered (their patch indices, mod 512, as bits).
	 */
	double ev_ns[FS_N_CLOCKS], ret_ns[FS_N_CLOCKS], count_ns[FS_N_CLOCKS];
	double round_w; /* the round calibration's weight in them, 0..1 */
	double count_w; /* ... in count_ns, when count_known (drain_counts) */
	bool count_known;
	bool cost_set; /* the above are set */
	uint64_t seen[8];
	uint64_t seen_n;   /* events in the window */
	uint64_t n_behind; /* full rings read while their thread ran on (probe_drain_defer) */
};

/* A thread's part of the probes (struct tthread.probe): changed by areas.c and drain.c. */
struct probe_thr {
	int area;	       /* its area (0: the trap-only one), -1: none */
	uint64_t p_tsc;	       /* the TSC at its last stop ... */
	struct stamp p_at;     /* ... and its clocks then: events between are interpolated */
	uint64_t p_ncount;     /* the count path's calls (PROBE_NCOUNT) as its last event said */
	uint64_t c_ncount;     /* ... when its counters were last read (drain_counts) */
	struct cswitch cs;     /* its context switches, fd -1: none */
	uint64_t cs_lost_seen; /* cs.n_lost when its last loss was counted */
};

/* A thread's part, made (no area, no context-switch records). */
void probe_thr_init(struct probe_thr *pt);

/*
 * A forked child's part (child: a copy of the parent's): the throttled
 * probes' list its own, nothing else of the parent's drains (its drain
 * entries, where the candidates' marks are, made again at its first).
 */
void probe_proc_fork(struct probe_proc *child, const struct probe_proc *parent);

/* The process exec'ed a new image: nothing to take off the old patches' counts. */
void probe_proc_exec(struct probe_proc *pp);

/* Free a process's part. */
void probe_proc_free(struct probe_proc *pp);

/* The program forbids rdtsc (rdtsc_refused): true the first time, when it is to be said. */
bool probe_tsc_refused(struct tracer *tr);

/* Area k of the event memory on fortstat's side (0: the trap-only one). */
uint8_t *probe_area(const struct tracer *tr, int k);

/* The header word at offset off (PROBE_HEAD, PROBE_TAIL...) of area a. */
static inline volatile uint64_t *probe_hdr(uint8_t *a, unsigned off)
{
	return (volatile uint64_t *)(void *)(a + off);
}

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
 * removed and the routine's count becomes a lower bound. stop_ns: what a
 * stop is taken to cost on the CPU clock (the tracer's stop_cost_mean),
 * removed from each of its calls.
 */
void trap_throttle(struct tracer *tr, size_t j, double stop_ns);

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

#endif
