/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * account.h - the accounting core: shadow stacks and switched clocks, driven
 * by events. Pure: no ptrace, no clock of its own. Times are nanoseconds on
 * the clock of the thread the event belongs to (each thread may have its own
 * CPU clock; with a wall clock all threads share one).
 */
#ifndef FORTSTAT_ACCOUNT_H
#define FORTSTAT_ACCOUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef uint64_t acct_time_t; /* nanoseconds */

#define ACCT_NONE ((uint32_t)-1) /* "no routine": the root of a thread's stack */

/*
 * A stack's key (`tid` below) is a thread id, or from ACCT_GOROUTINE0 on a
 * goroutine of a Go program: goroutine k is ACCT_GOROUTINE0 + k (past any
 * thread id: pid_max is at most 2^22). Goroutines move between threads.
 */
#define ACCT_GOROUTINE0 0x40000000

struct acct_routine {
	uint64_t calls;	     /* entries (including entry-only and chained ones) */
	uint64_t calls_made; /* calls this routine made to timed routines that return to it
			      * (not tail chains: they cost no return-side stop) */
	acct_time_t self;    /* gross self time: its clock ran (FORTSTAT clock switching) */
	acct_time_t total;   /* inclusive time, recursion counted once per outermost activation */
	bool incomplete;     /* its clock was still running at thread exit or finish */
	uint64_t total_entries;	   /* entries (of any routine) inside its outermost activations */
	uint64_t total_calls_made; /* calls made (by any routine) inside them: to correct `total` */
	uint64_t spare;		   /* (none: a routine's results are one cache line, 64 bytes) */
};

struct acct_arc {
	uint32_t caller; /* routine index, or ACCT_NONE */
	uint32_t callee;
	uint64_t calls;
	acct_time_t time; /* callee's inclusive time along this arc (outermost activations) */
	acct_time_t self; /* callee's gross self time in the activations entered along this arc */
};

/*
 * A node of a calling-context tree: one exact stack of timed routines. Node
 * 0 is the root (routine ACCT_NONE, parent ACCT_NONE); every other node's
 * parent has a smaller index. Recursion is folded: a routine already on the
 * stack is re-entered at the node of its earlier activation, so that a path
 * holds each routine at most once.
 */
struct acct_node {
	uint32_t parent;     /* node index, ACCT_NONE for the root */
	uint32_t routine;    /* ACCT_NONE for the root */
	uint64_t calls;	     /* entries into this context (counted and chained ones too) */
	uint64_t calls_made; /* calls made from this context to timed routines */
	acct_time_t self;    /* gross self time in this context */
};

/* One thread's results (acct_thread). Pointers valid until the next event. */
struct acct_thread_info {
	int tid;
	const struct acct_routine *r; /* per routine, as acct_routines() */
	const struct acct_arc *arcs;  /* as acct_arcs() */
	size_t n_arcs;
	const struct acct_node *nodes; /* its calling-context tree */
	size_t n_nodes;
};

struct acct; /* opaque */

/*
 * Lanes: one state may keep the times of up to ACCT_LANES clocks fed
 * together (fortstat's books: CPU and wall, gross and net), so that each
 * event walks the stack, the arcs and the contexts once. Counts are the
 * same on every lane; the functions taking one time feed it to every lane,
 * the *_t ones take one time a lane. The results (acct_routines, ...) are
 * lane 0's; acct_lane(a, k) gives lane k as a state of its own.
 *
 * The program's results (acct_routines, acct_arcs, acct_nodes) are those
 * of the moment they are asked for: after more events, ask again (while a
 * single thread has had events they are copied from its own when read).
 */
#define ACCT_LANES 4

/* A new accounting state for routines 0..n_routines-1. Never NULL. */
struct acct *acct_new(size_t n_routines);
/* The same with `lanes` clocks (1..ACCT_LANES). */
struct acct *acct_new_lanes(size_t n_routines, int lanes);
int acct_lanes(const struct acct *a);
void acct_free(struct acct *a);

/*
 * Lane k (0 <= k < acct_lanes(a)) as a one-lane state of its own: a deep
 * copy, sharing nothing with a, whose times are lane k's. Never NULL.
 */
struct acct *acct_lane(const struct acct *a, int k);
/* Routine's self time so far on lane k (0 when out of range), without a copy. */
acct_time_t acct_lane_self(const struct acct *a, int k, uint32_t routine);
/* Routine's calls so far (0 when out of range), without a copy: O(1). */
uint64_t acct_routine_calls(const struct acct *a, uint32_t routine);

/*
 * A deep copy of a (every thread's stack and results, arcs, contexts) that
 * shares nothing with it: events fed to one never change the other (a
 * snapshot closed with acct_finish while the run goes on). Never NULL.
 */
struct acct *acct_dup(const struct acct *a);

/*
 * A finished state kept small (a process of -f that ended: cc1 uses some
 * thousands of its 26,000 routines). acct_used fills map (one entry a
 * routine) with the new index of each routine that has anything in a (a
 * call, a time on any lane, an arc, a context), in order, and ACCT_NONE for
 * the others; returns how many it keeps. acct_compact then keeps those
 * alone, renumbered by map in the results, arcs and trees of the program
 * and of every thread: false, and a unchanged, while a frame is open or a
 * recorder is set (acct_set_recorder: the calls recorded name the old
 * numbers).
 */
size_t acct_used(const struct acct *a, uint32_t *map);
bool acct_compact(struct acct *a, const uint32_t *map, size_t n_new);

/*
 * Make room for routines up to n_routines-1 (routines of a library loaded
 * while the program runs); the new ones start at zero. Never shrinks.
 */
void acct_grow(struct acct *a, size_t n_routines);

/*
 * A call of `routine` by thread `tid` at time t; `slot` is the address of
 * its return-address slot (RSP at entry) and `ret` the original return
 * address, kept for the tracer (acct_leave gives it back). The caller is the
 * routine on top of the thread's stack; its clock stops, the callee's starts.
 */
void acct_enter(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		acct_time_t t);
void acct_enter_t(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		  const acct_time_t *t);

/*
 * A call that will not be seen to return (count-only mode, no return
 * address to rewrite, or a routine that never returns): counts the call and
 * the arc; no frame, no clock switch.
 */
void acct_count(struct acct *a, int tid, uint32_t routine);
/*
 * n calls at once (counted in-process): as n acct_count; `spontaneous`: made
 * from no known caller (counted away from the stack: the root's arc).
 */
void acct_count_n(struct acct *a, int tid, uint32_t routine, uint64_t n, bool spontaneous);

/*
 * The routine on top of thread tid returns at t. Returns 0 and sets *ret to
 * the return address given at acct_enter, or -1 when the thread has no frame.
 */
int acct_leave(struct acct *a, int tid, acct_time_t t, uint64_t *ret);
int acct_leave_t(struct acct *a, int tid, const acct_time_t *t, uint64_t *ret);

/*
 * A tail call: `routine` was jumped to with the return slot of the running
 * frame; it replaces that frame (same slot, same return address).
 * Returns 0, or -1 when the thread has no frame (then nothing is recorded).
 */
int acct_chain(struct acct *a, int tid, uint32_t routine, acct_time_t t);
int acct_chain_t(struct acct *a, int tid, uint32_t routine, const acct_time_t *t);

/*
 * An in-process probe's events, as the tracer takes them (an entry's slot
 * closes the frames at and below it first, a return's or a tail call's the
 * frames below it) in the usual case, where no frame is to be closed
 * first; each in one call, with no lookup of the top frame of its own.
 * Each returns -1 and does nothing when frames below `slot` would have to
 * close first (the caller then takes the event the long way), 0 when the
 * event was taken at times t (or, for a routine out of range, when
 * acct_enter_t or acct_chain_t would have done nothing with them), 1 when
 * it was taken without them.
 *   acct_probe_enter_t: a call at slot: acct_enter_t, unless the top
 *     frame's slot is at or below slot.
 *   acct_probe_chain_t: a tail call through slot: acct_chain_t when the
 *     top frame's slot is slot; a count (acct_count, 1) when it is above,
 *     or there is no frame.
 *   acct_probe_leave_t: a return through slot: acct_leave_t when the top
 *     frame's slot is slot; nothing (1) when it is above, or no frame.
 */
int acct_probe_enter_t(struct acct *a, int tid, uint32_t routine, uint64_t slot, uint64_t ret,
		       const acct_time_t *t);
int acct_probe_chain_t(struct acct *a, int tid, uint32_t routine, uint64_t slot,
		       const acct_time_t *t);
int acct_probe_leave_t(struct acct *a, int tid, uint64_t slot, const acct_time_t *t);

/*
 * A run of one thread's probe events (a drained ring's, in order), each
 * taken as the acct_probe_*_t of its kind would, in one call: the thread
 * looked up once and each event's path made for the state's lanes.
 */
enum { ACCT_PEV_ENTER, ACCT_PEV_CHAIN, ACCT_PEV_LEAVE };
struct acct_pev {
	uint64_t slot, ret;
	acct_time_t t[2]; /* lane 0's and lane 1's times (the ones of lanes 2, 3: acct_pnet) */
	uint32_t routine; /* ENTER, CHAIN: the routine called */
	uint32_t kind;	  /* ACCT_PEV_* */
	uint64_t counted; /* count-path calls just before it: their cost (acct_pnet) */
};
/*
 * A state of 4 lanes: lanes 2 and 3 are lanes 0 and 1 less the thread's
 * cost so far (ovh[k], ns), never going back (vlast[k]: the last times
 * taken); before each event, counted * count[k] and the event's own cost
 * (enter[k] for an entry or a tail call, leave[k] for a return) are added
 * to ovh[k] (each only when above 0).
 */
struct acct_pnet {
	double *ovh;
	acct_time_t *vlast;
	double count[2], enter[2], leave[2];
};
/*
 * Takes ev[0 .. n) in order (net: the state's lanes 2 and 3; NULL for a
 * state of 1 or 2 lanes) up to the first one that the acct_probe_*_t of its
 * kind would refuse (-1: frames below its slot to close first): its index,
 * its cost charged (net) and nothing else done; n when every one was taken.
 */
size_t acct_probe_run(struct acct *a, int tid, const struct acct_pev *ev, size_t n,
		      struct acct_pnet *net);

/* The thread exits at t: close its open frames as incomplete. */
void acct_thread_exit(struct acct *a, int tid, acct_time_t t);
void acct_thread_exit_t(struct acct *a, int tid, const acct_time_t *t);

/*
 * The program ends: close every open frame of every thread as incomplete,
 * each thread at the last time it was seen (or at t when t is later and
 * `t_is_shared` is set, as with a wall clock).
 */
void acct_finish(struct acct *a, acct_time_t t, bool t_is_shared);
/* The same a lane: lane k closes at t[k] when shared[k] and later. */
void acct_finish_t(struct acct *a, const acct_time_t *t, const bool *shared);

/*
 * The top frame of thread tid: sets *routine, *slot and *ret; returns 0, or
 * -1 when the stack is empty.
 */
int acct_top(const struct acct *a, int tid, uint32_t *routine, uint64_t *slot, uint64_t *ret);

/* Visit every open frame of thread tid, bottom first (for undoing rewritten returns). */
void acct_frames(const struct acct *a, int tid,
		 void (*fn)(uint32_t routine, uint64_t slot, uint64_t ret, void *arg), void *arg);

/* Per-routine results (array of n_routines). */
const struct acct_routine *acct_routines(const struct acct *a);
size_t acct_n_routines(const struct acct *a);

/* Arcs, in no particular order; *n set to their number. */
const struct acct_arc *acct_arcs(const struct acct *a, size_t *n);

/*
 * The calling-context tree of every thread merged (node 0 the root); *n set
 * to the number of nodes (at least 1). Valid until the next event.
 */
const struct acct_node *acct_nodes(const struct acct *a, size_t *n);

/*
 * A recorder of calls (a timeline): told of every activation as it closes
 * (a return; the frame a tail call replaces; a frame closed at thread exit
 * or at the finish, `incomplete`), in the order they close, with the
 * thread's stack key and its entry and exit times on lane `lane`. None by
 * default: then an event costs one test more. acct_dup and acct_lane do
 * not copy it (a snapshot's closing frames are no calls of the run).
 */
typedef void (*acct_record_fn)(void *arg, int tid, uint32_t routine, acct_time_t t_enter,
			       acct_time_t t_exit, bool incomplete);
/* Set (fn NULL: remove) the recorder of a; lane out of range: lane 0. */
void acct_set_recorder(struct acct *a, int lane, acct_record_fn fn, void *arg);

/* Number of threads that had an event, and thread i of them (in order of first event). */
size_t acct_n_threads(const struct acct *a);
/* Fill *out with thread i's results; returns 0, or -1 when i >= acct_n_threads(a). */
int acct_thread(const struct acct *a, size_t i, struct acct_thread_info *out);

/* Sum of every routine's self time and of every call (acct_enter + acct_count). */
acct_time_t acct_total_self(const struct acct *a);
uint64_t acct_total_calls(const struct acct *a);

/*
 * FTN4TRA's overhead correction: net = gross - entries*f1 - calls_made*f2,
 * clamped at zero. f1, f2 in ns (may be fractional).
 */
acct_time_t acct_net(acct_time_t gross, uint64_t entries, uint64_t calls_made, double f1,
		     double f2);

/*
 * The spread of a factor measured several times (the calibration's batches):
 * 1.4826 times the median absolute deviation of v[0..n) from its median,
 * which is a batch's standard deviation when the batches scatter normally,
 * and is not moved by one odd batch (a child's first stops cost more). v is
 * reordered. 0 when n < 2 or v holds a non-finite value.
 */
double acct_spread(double *v, size_t n);

/*
 * The uncertainty of acct_net's correction, ns: entries*df1 + calls_made*df2
 * for factors known to within df1, df2 (acct_spread). Summed, not in
 * quadrature: an error of f1 or f2 is the same in every call it is charged
 * for (the run is corrected with one figure), so it adds up linearly over
 * the calls, and f1 and f2 come from the same batches. Negative spreads
 * count as their size.
 */
double acct_net_uncertainty(uint64_t entries, uint64_t calls_made, double df1, double df2);

/*
 * A time whose correction is large against it: its uncertainty `unc_ns`
 * above ACCT_UNCERTAIN_PCT per cent of the net time `net_ns` (any
 * uncertainty when the net time is 0). 10 %: the loosest accuracy target
 * (0.2 us a call); a time uncertain by more cannot meet any of them.
 */
#define ACCT_UNCERTAIN_PCT 10
bool acct_uncertain(acct_time_t net_ns, double unc_ns);

/*
 * What the stops cost each segment, measured in the run: for every segment
 * between two stops whose in-program timestamps are known (see insn.h, the
 * event page), the clock's advance minus the time the program ran its own
 * code. A histogram of 8 ns bins up to 65 us, exact sums beside it.
 */
#define ACCT_OVH_BIN_NS 8
#define ACCT_OVH_BINS 8192

struct acct_ovh {
	uint64_t n;	/* segments measured */
	double sum;	/* of their overheads, ns (exact) */
	uint64_t below; /* below zero (a clock that stopped while the program ran) */
	uint64_t above; /* past the last bin */
	double above_sum;
	uint64_t bins[ACCT_OVH_BINS];
};

void acct_ovh_add(struct acct_ovh *h, double ns);

/* The median (bin resolution), 0 with no samples. */
double acct_ovh_median(const struct acct_ovh *h);

/*
 * The mean of the samples at or above `lo` ns (exact sums past the last
 * bin, bin centres within). *n set to how many (may be NULL).
 */
double acct_ovh_mean_from(const struct acct_ovh *h, double lo, uint64_t *n);

/*
 * The estimate fortstat uses: on a CPU clock, the mean of the samples of at
 * least half the median (a segment whose thread was preempted while running
 * the program's code charges the CPU clock less than the TSC, and looks
 * cheap: that is not the stops' cost); on the wall clock the plain mean
 * (time the stops made the program wait is all overhead).
 */
double acct_ovh_estimate(const struct acct_ovh *h, bool cpu_clock);

#endif
