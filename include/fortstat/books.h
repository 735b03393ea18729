/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * books.h - the books of one traced process: its accounting on both clocks
 * (a thread's CPU time and the wall clock), gross and net of what the stops
 * cost the program, fed each event once. Pure: no ptrace, no clock of its
 * own; the tracer stamps each event with both clocks of the thread, and the
 * report picks the clock (--clock) when it is written.
 */
#ifndef FORTSTAT_BOOKS_H
#define FORTSTAT_BOOKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fortstat/account.h"
#include "fortstat/alloc.h"
#include "fortstat/clockkind.h"

/* A thread's two clocks at one stop, indexed by enum clock_kind (ns). */
struct stamp {
	acct_time_t t[FS_N_CLOCKS];
};

struct books; /* opaque */

/*
 * New books for routines 0..n_routines-1. `timed` false (count-only): one
 * accounting state of counts, returned for either clock by books_acct.
 * `net`: also keep net times (each thread's clocks less its stops' cost so
 * far, see books_stop_cost). Never NULL.
 */
struct books *books_new(size_t n_routines, bool timed, bool net);
void books_free(struct books *b);

/*
 * New empty books of the same kind as b (timed, net; a timeline of their
 * own in b's, books_record) for n_routines routines.
 */
struct books *books_new_like(const struct books *b, size_t n_routines);

struct timeline;

/*
 * Keep every call of these books in tl (--timeline) as it closes, on the
 * gross wall clock (CLOCK_MONOTONIC: one epoch for every thread and
 * process), as a group of its own (timeline_group): its number. Books made
 * by books_new_like from these keep theirs in tl too, each a new group;
 * books_dup and books_snapshot do not. Count-only books keep nothing
 * (their calls have no times). tl must outlive the books.
 */
uint32_t books_record(struct books *b, struct timeline *tl);
/* The group of b's calls in its timeline, or UINT32_MAX when it keeps none. */
uint32_t books_timeline_group(const struct books *b);

/* Room for routines up to n_routines-1 in every state; never shrinks. */
void books_grow(struct books *b, size_t n_routines);

/* As acct_enter, acct_count, acct_chain, acct_leave, acct_thread_exit, on every state. */
void books_enter(struct books *b, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		 const struct stamp *s);
void books_count(struct books *b, int tid, uint32_t routine);
/* n at once; spontaneous: from no known caller (as acct_count_n) */
void books_count_n(struct books *b, int tid, uint32_t routine, uint64_t n, bool spontaneous);
int books_chain(struct books *b, int tid, uint32_t routine, const struct stamp *s);
int books_leave(struct books *b, int tid, const struct stamp *s, uint64_t *ret);
void books_thread_exit(struct books *b, int tid, const struct stamp *s);

/*
 * An in-process probe's entry (a tail call when `chained`: its slot held
 * the trampoline already) or return through `slot`, after its cost ovh is
 * charged (as books_stop_cost), as the tracer's drain takes it in the
 * usual case: acct_probe_enter_t, acct_probe_chain_t, acct_probe_leave_t
 * on every state. False when frames below slot are to be closed first:
 * nothing done but the cost, and the caller takes the event the long way.
 */
bool books_probe_enter(struct books *b, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		       bool chained, const struct stamp *s, const double ovh[FS_N_CLOCKS]);
bool books_probe_leave(struct books *b, int tid, uint64_t slot, const struct stamp *s,
		       const double ovh[FS_N_CLOCKS]);

/*
 * A run of thread tid's probe events, in order (acct_probe_run: t[0] the
 * CPU clock's times, t[1] the wall clock's), each as books_probe_enter
 * (ACCT_PEV_ENTER, ACCT_PEV_CHAIN: chained) or books_probe_leave would
 * take it, the cost of its `counted` count-path calls (cost[0] each)
 * charged before it as books_stop_cost, and then its own: cost[1] an
 * entry's, cost[2] a return's (indexed by enum clock_kind). Returns the
 * index of the first event those would refuse (its costs charged, nothing
 * else done: the caller takes it the long way), or n.
 */
size_t books_probe_run(struct books *b, int tid, const struct acct_pev *ev, size_t n,
		       const double cost[3][FS_N_CLOCKS]);

/*
 * One stop cost thread tid ovh[CLOCK_KIND_CPU] ns of its CPU clock and
 * ovh[CLOCK_KIND_WALL] of the wall clock: from now on its net times are that
 * much less (never going backwards). No effect without net books.
 */
void books_stop_cost(struct books *b, int tid, const double ovh[FS_N_CLOCKS]);

/*
 * The stops' cost taken off the threads' clocks so far, ns, into out: on
 * the CPU clock summed over the threads, on the wall clock the most any
 * one thread was delayed (the threads' delays overlap in elapsed time).
 * Inside the timed routines and outside them (the program's own code
 * that calls them). Zeros without net books.
 */
void books_overhead(const struct books *b, double out[FS_N_CLOCKS]);

/*
 * The process ended at wall time `wall_end`: close every open frame as
 * incomplete (CPU and net books at each thread's last stamp, the wall books
 * at wall_end when later).
 */
void books_finish(struct books *b, acct_time_t wall_end);

/*
 * The books as books_finish would close them if the process ended at wall
 * time `wall_end`, without touching b: a new, finished copy (every frame
 * still open in b is INCOMPLETE in it, the CPU and net books at each
 * thread's last stamp, the wall books at wall_end when later), for a
 * snapshot while the run goes on. Free with books_free. Never NULL.
 */
struct books *books_snapshot(const struct books *b, acct_time_t wall_end);

/*
 * Finished books (books_finish) kept small: only the routines they have
 * anything of stay, renumbered; map (one entry a routine) says each one's
 * new index, UINT32_MAX for those dropped. Returns how many stay, or
 * SIZE_MAX when the books are left as they were: a timeline or --alloc's
 * storage kept (they name routines by their numbers), or a frame open.
 */
size_t books_compact(struct books *b, uint32_t *map);

/*
 * A deep copy of b that shares nothing with it (events fed to one never
 * change the other): for a snapshot that closes each thread at its own
 * stamp of now (books_thread_exit on the copy) before books_finish.
 * Free with books_free. Never NULL.
 */
struct books *books_dup(const struct books *b);

/* The frames of thread tid (the same on every state): as acct_top, acct_frames. */
int books_top(const struct books *b, int tid, uint32_t *routine, uint64_t *slot, uint64_t *ret);
void books_frames(const struct books *b, int tid,
		  void (*fn)(uint32_t routine, uint64_t slot, uint64_t ret, void *arg), void *arg);

/*
 * The accounting on clock c, gross (net false) or net of the stops' cost;
 * NULL for net books not kept. Count-only books give their one state for
 * either clock and NULL for net. Valid until the next event, or until
 * books_drop_views.
 */
const struct acct *books_acct(const struct books *b, enum clock_kind c, bool net);
/*
 * Free the states books_acct made of lanes other than the first (each a
 * whole copy: 3 of them for a process of cc1's 26,000 routines are 20 MB):
 * once a process's profile is built from them, `fortstat -f make` need not
 * keep every process's copies until the last is built.
 */
void books_drop_views(struct books *b);
/*
 * A routine's self time so far on clock c, net or gross (the gross one when
 * there are no net books), without making a state: for decisions taken
 * while the program runs (throttling). Counts: books_acct(b, c, false).
 */
acct_time_t books_self(const struct books *b, enum clock_kind c, bool net, uint32_t routine);
/*
 * A routine's calls so far (0 when out of range), in O(1), copying
 * nothing: with books_self, what a decision at a stop may read without its
 * cost growing with the program.
 */
uint64_t books_calls(const struct books *b, uint32_t routine);

/*
 * --alloc: keep storage per routine (alloc.h) in these books and in those
 * made like them; books_alloc charges one allocator call of thread tid to
 * its stack of timed routines (nothing when not kept); books_alloc_books
 * gives them (NULL: not kept).
 */
void books_alloc_keep(struct books *b);
void books_alloc(struct books *b, int tid, enum alloc_fn fn, const uint64_t args[3],
		 uint64_t block);
const struct alloc_books *books_alloc_books(const struct books *b);

bool books_timed(const struct books *b);
size_t books_n_routines(const struct books *b);
uint64_t books_total_calls(const struct books *b);

#endif
