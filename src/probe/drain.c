// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * drain.c - the probes' ring reader: what a thread's probes recorded since
 * its last stop (its ring, its count path's counters), stamped between
 * that stop's clocks and this one's (by the TSC and the context-switch
 * records) and handed to the mechanism each event is of: retaddr.c's
 * entries and returns, golang.c's goroutine frames, memcall.c's
 * allocator calls, sample.c's samples before it. Then TAU's throttle on
 * the probes the drain saw. areas.c keeps the areas (below it); the
 * areas are the program's to write: every index and word is checked.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <x86intrin.h>

#include "fortstat/books.h"
#include "fortstat/clock.h"
#include "fortstat/evabi.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/throttle.h"
#include "fortstat/util.h"
#include "cswitch.h"
#include "../tracer/tracer.h"
#include "drain.h"
#include "../tracer/golang.h"
#include "../tracer/memcall.h"
#include "../tracer/plancache.h"
#include "areas.h"
#include "../tracer/retaddr.h"
#include "../tracer/sample.h"

/*
 * The clocks of thread th at TSC t, between its last stop (p_tsc, p_at)
 * and this one (t1, th->now), where both clocks are known: the wall clock
 * by the TSC's steady rate; the CPU clock as the time the thread ran by
 * then (elapsed less its off-CPU intervals, from the kernel's context
 * switch records) scaled to what its CPU clock advanced. Without the
 * records, the CPU clock is spread over the elapsed time. The CPU clock
 * counts the scheduler's work around each switch, which the records put
 * off the CPU: what the clock ran beyond the records' time on the CPU is
 * taken back from the switches' intervals first (delta ns each, at most
 * STAMP_DELTA_MAX), then spread by the scaling.
 *
 * The usual way is integer arithmetic: ns a TSC tick in 32.32 fixed point
 * (kw), CPU ns a ns run (kc), and the off-CPU intervals of the window in
 * order, walked once as the events come (their TSCs do not go back, but
 * for a signal handler's: those take the slow way, in floating point).
 * A window of more intervals than the STAMP_IV kept in the stamper puts
 * them in one buffer of the tracer's (`iv_more`): the slow way, where each
 * event walks every interval of the window (cswitch_off), took 2,500
 * instructions an event where the integer way takes 60 (bc under
 * callgrind: a full ring's window of some 250 switches).
 */
#define STAMP_IV 32
#define STAMP_DELTA_MAX 5000.0 /* ns a switch: a microsecond or two measured */

struct stamper {
	const struct cswitch *cs; /* the thread's records, or NULL */
	uint64_t tsc0, tsc1;	  /* its last stop's TSC and this one's */
	double inv_dt;		  /* 1 / (tsc1 - tsc0), or 0: no time of its own */
	acct_time_t w0, w1, c0, c1;
	double on_all, inv_on_all; /* ns it ran between the stops (by the records) */
	double delta;		   /* ns a switch's interval is shortened (see above) */
	bool fast;
	uint64_t kw, kc;
	struct cs_off *iv;	       /* off-CPU in [w0, w1], in order: iv_in, or iv_more */
	struct cs_off iv_in[STAMP_IV]; /* (the usual window) */
	size_t n_iv, cur;
	uint64_t off_before, last_w; /* off before iv[cur]; the last event's wall */
	uint64_t nx_from;	     /* iv[cur].from, UINT64_MAX past the last */
};

/* Windows of more than STAMP_IV intervals: one buffer, kept (the tracer is one thread). */
static struct cs_off *iv_more;
static size_t iv_more_cap;

/* The off-CPU intervals of [w0, w1] into sp->iv, in order; false: too many. */
static bool stamper_intervals(struct stamper *sp)
{
	const struct cswitch *c = sp->cs;
	size_t n = 0, cap = STAMP_IV;

	sp->iv = sp->iv_in;

	for (size_t i = 0; c && i <= c->n_off; i++) {
		struct cs_off o;
		double sw = 0;
		size_t k;

		if (i < c->n_off)
			o = c->off[i];
		else if (c->out)
			o = (struct cs_off){c->out_at, UINT64_MAX, UINT64_MAX - c->out_at, 1};
		else
			break;
		/* its part in the window: time off and switches */
		o.off = cswitch_off_in(&o, sp->w0, sp->w1, 0, &sw);
		o.n = sw;
		o.from = o.from > sp->w0 ? o.from : sp->w0;
		o.to = o.to < sp->w1 ? o.to : sp->w1;
		if (o.to <= o.from)
			continue;
		if (n == cap) {
			if (cap > SIZE_MAX / 2 / sizeof(*iv_more))
				return false;
			if (iv_more_cap < 2 * cap) {
				iv_more_cap = 2 * cap;
				/* the stamper's intervals may be in it: realloc keeps them */
				iv_more = xrealloc(iv_more, iv_more_cap * sizeof(*iv_more));
			}
			if (sp->iv == sp->iv_in)
				memcpy(iv_more, sp->iv_in, n * sizeof(*iv_more));
			sp->iv = iv_more;
			cap = iv_more_cap;
		}
		for (k = n++; k > 0 && sp->iv[k - 1].from > o.from; k--)
			sp->iv[k] = sp->iv[k - 1];
		sp->iv[k] = o;
	}
	sp->n_iv = n;
	return true;
}

static void stamper_init(struct stamper *sp, const struct tracer *tr, const struct tthread *th,
			 uint64_t t1)
{
	double n_sw = 0, on_rec;

	sp->cs = th->probe.cs.fd >= 0 && !th->probe.cs.lost ? &th->probe.cs : NULL;
	sp->tsc0 = th->probe.p_tsc;
	sp->tsc1 = t1;
	/* rdtsc forbidden: no time of its own */
	sp->inv_dt =
	    !tr->probe.no_tsc && t1 > th->probe.p_tsc ? 1 / (double)(t1 - th->probe.p_tsc) : 0;
	sp->w0 = th->probe.p_at.t[CLOCK_KIND_WALL];
	sp->w1 = th->now.t[CLOCK_KIND_WALL];
	sp->c0 = th->probe.p_at.t[CLOCK_KIND_CPU];
	sp->c1 = th->now.t[CLOCK_KIND_CPU];
	if (!(sp->w1 > sp->w0))
		sp->cs = NULL;
	sp->delta = 0;
	sp->on_all = 1;
	if (sp->cs) {
		/* what the thread ran between the stops, by the records, then less each switch's
		 * delta */
		on_rec = (double)(sp->w1 - sp->w0) -
			 (double)cswitch_off(sp->cs, sp->w0, sp->w1, 0, &n_sw);
		if (n_sw >= 1 && (double)(sp->c1 - sp->c0) > on_rec) {
			sp->delta = ((double)(sp->c1 - sp->c0) - on_rec) / n_sw;
			if (sp->delta > STAMP_DELTA_MAX)
				sp->delta = STAMP_DELTA_MAX;
		}
		sp->on_all = (double)(sp->w1 - sp->w0) -
			     (double)cswitch_off(sp->cs, sp->w0, sp->w1, sp->delta, NULL);
	}
	sp->inv_on_all = sp->on_all > 0 ? 1 / sp->on_all : 0;
	sp->kw = sp->kc = 0;
	sp->n_iv = sp->cur = 0;
	sp->iv = sp->iv_in;
	sp->off_before = 0;
	sp->last_w = sp->w0;
	sp->fast = sp->inv_dt > 0 && sp->w1 > sp->w0 && sp->c1 >= sp->c0 && stamper_intervals(sp);
	sp->nx_from = sp->n_iv ? sp->iv[0].from : UINT64_MAX;
	if (sp->fast) {
		uint64_t off = 0, on;

		for (size_t i = 0; i < sp->n_iv; i++)
			off += cswitch_off_in(&sp->iv[i], sp->iv[i].from, sp->iv[i].to, sp->delta,
					      NULL);
		on = sp->cs ? (sp->w1 - sp->w0 > off ? sp->w1 - sp->w0 - off : 0) : sp->w1 - sp->w0;
		sp->kw = (uint64_t)(((unsigned __int128)(sp->w1 - sp->w0) << 32) / (t1 - sp->tsc0));
		sp->kc = on ? (uint64_t)(((unsigned __int128)(sp->c1 - sp->c0) << 32) / on) : 0;
		sp->fast = on > 0;
	}
}

/* The off-CPU time in [w0, w], w at or past the next interval's start: walked up to w. */
static __attribute__((noinline)) uint64_t stamp_off_walk(struct stamper *sp, uint64_t w)
{
	uint64_t off;

	while (sp->cur < sp->n_iv && sp->iv[sp->cur].to <= w) {
		const struct cs_off *i = &sp->iv[sp->cur++];

		sp->off_before += cswitch_off_in(i, i->from, i->to, sp->delta, NULL);
	}
	sp->nx_from = sp->cur < sp->n_iv ? sp->iv[sp->cur].from : UINT64_MAX;
	off = sp->off_before;
	if (sp->cur < sp->n_iv && sp->iv[sp->cur].from < w)
		off += cswitch_off_in(&sp->iv[sp->cur], sp->iv[sp->cur].from, w, sp->delta, NULL);
	return off;
}

/*
 * The fast way: the CPU clock at wall w (not before the last event's).
 * Usually no interval starts before w that was not passed already: one
 * comparison.
 */
static inline acct_time_t stamp_cpu_fast(struct stamper *sp, uint64_t w)
{
	uint64_t off, ran, c;

	off = __builtin_expect(w <= sp->nx_from, 1) ? sp->off_before : stamp_off_walk(sp, w);
	ran = w - sp->w0 > off ? w - sp->w0 - off : 0;
	c = sp->c0 + (acct_time_t)(((unsigned __int128)ran * sp->kc) >> 32);
	sp->last_w = w;
	return c < sp->c1 ? c : sp->c1;
}

static inline __attribute__((always_inline)) void stamp_at(struct stamper *sp, uint64_t t,
							   struct stamp *s)
{
	acct_time_t w0 = sp->w0, w1 = sp->w1, c0 = sp->c0, c1 = sp->c1;
	double f = 1, on;

	if (sp->fast) {
		uint64_t w =
		    t >= sp->tsc1 ? w1
		    : t <= sp->tsc0
			? w0
			: w0 + (acct_time_t)(((unsigned __int128)(t - sp->tsc0) * sp->kw) >> 32);

		s->t[CLOCK_KIND_WALL] = w;
		if (w >= sp->last_w) {
			s->t[CLOCK_KIND_CPU] = stamp_cpu_fast(sp, w);
			return;
		}
		f = t <= sp->tsc0 ? 0 : (double)(t - sp->tsc0) * sp->inv_dt; /* as below */
		goto cpu;
	}
	if (sp->inv_dt > 0)
		f = t <= sp->tsc0 ? 0 : t >= sp->tsc1 ? 1 : (double)(t - sp->tsc0) * sp->inv_dt;
	s->t[CLOCK_KIND_WALL] = w1 > w0 ? w0 + (acct_time_t)(f * (double)(w1 - w0)) : w1;
cpu:
	if (sp->cs)
		on = (double)(s->t[CLOCK_KIND_WALL] - w0) -
		     (double)cswitch_off(sp->cs, w0, s->t[CLOCK_KIND_WALL], sp->delta, NULL);
	else
		on = f;
	s->t[CLOCK_KIND_CPU] =
	    c1 > c0 && sp->on_all > 0 && on > 0
		? c0 + (acct_time_t)((on >= sp->on_all ? 1 : on * sp->inv_on_all) *
				     (double)(c1 - c0))
		: c0;
}

#define ROUND_WINDOW 8192 /* events a weight is taken from (round_weigh) */
#define ROUND_LO 8
#define ROUND_HI 60
#define ROUND_CALLEES 64

/*
 * The count path's cost, weighed as round_weigh does (below) by how many
 * routines the counted calls went to, w: the throttled routines whose
 * counters held calls, at a read that found at least ROUND_WINDOW counted
 * calls (exact: no bits); until then, as round_weigh's events.
 */
static void count_weigh(struct tracer *tr, double w)
{
	struct probe_run *pr = &tr->probe;
	const struct trace_opts *o = tr->o;

	w = w < 0 ? 0 : w > 1 ? 1 : w;
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		pr->count_ns[c] = o->probe_count_ns[c];
		if (o->probe_round_count_ns[c] > 0)
			pr->count_ns[c] += w * (o->probe_round_count_ns[c] - o->probe_count_ns[c]);
	}
	pr->count_w = w;
	pr->count_known = true;
}

/* Patch j's counter in the thread's area, added to its books and cleared: true if it had calls. */
static bool drain_counter(struct tracer *tr, struct tthread *th, uint64_t *ctr, size_t j)
{
	uint64_t c = ctr[j];
	uint32_t routine;

	if (!c || (int64_t)c < 0) /* below 0: an area written wrong */
		return false;
	ctr[j] = 0;
	if (j < tr->ps->probe.n_uncount && tr->ps->probe.uncount[j]) { /* calls that were none */
		uint64_t none = c < tr->ps->probe.uncount[j] ? c : tr->ps->probe.uncount[j];

		c -= none;
		tr->ps->probe.uncount[j] -= (uint32_t)none;
		if (!c)
			return true;
	}
	/* its drain entry's (synced: probe_drain), not its 288-byte record's */
	routine =
	    j < tr->ps->probe.n_hot ? tr->ps->probe.hot[j].routine : tr->ps->patches[j].routine;
	if (routine == ACCT_NONE)
		return true;
	/* counted away from the stack: -c has none; a throttled routine's caller is unknown */
	books_count_n(tr->ps->books, th->tid, routine, c, true);
	tr->ps->probe.n_events += c;
	return true;
}

/*
 * -c, throttled probes: the thread's counters into its books. Nothing when
 * no call took the count path since they were last read (PROBE_NCOUNT
 * counts them); timed, the throttled probes' alone (pstate.thr_ix). With
 * -c every probe counts there: the walk over all of them is put off at a
 * breakpoint (a routine on the trap path stops at each call) until the
 * calls counted since the last one are a quarter of the probes, at most
 * four counters read a counted call; any other stop (`all`: an event, an
 * interrupt, the end) reads them all. A count taken away from the stack
 * (spontaneous) has no order to keep.
 */
static void drain_counts(struct tracer *tr, struct tthread *th, uint8_t *a, bool all)
{
	uint64_t *ctr = (uint64_t *)(void *)(a + PROBE_CTR);
	uint64_t nc = *probe_hdr(a, PROBE_NCOUNT);
	size_t n = tr->ps->n_patches < PROBE_CTR_N ? tr->ps->n_patches : PROBE_CTR_N;

	if (nc == th->probe.c_ncount)
		return;
	if (tr->o->count_only) {
		if (!all && (nc - th->probe.c_ncount) * 4 < n)
			return;
		for (size_t j = 0; j < n; j++)
			drain_counter(tr, th, ctr, j);
	} else {
		int d = 0; /* the throttled routines that were called: count_weigh */

		for (size_t i = 0; i < tr->ps->probe.n_thr_ix; i++)
			if (tr->ps->probe.thr_ix[i] < n)
				d += drain_counter(tr, th, ctr, tr->ps->probe.thr_ix[i]);
		if (nc - th->probe.c_ncount >= ROUND_WINDOW)
			count_weigh(tr, (double)(d - ROUND_LO) / (ROUND_CALLEES - ROUND_LO));
	}
	th->probe.c_ncount = nc;
}

/*
 * TAU's throttle: a probed routine called at least throttle_calls times
 * whose mean net self time (CPU) is under throttle_ns stops being timed: its
 * stub's flag sends its calls to the count-only path (one increment in the
 * thread's area), and from then on its time is its caller's, as for an
 * untimed routine. Calls under way still return through the trampoline.
 * Only the probes whose entries the drain read are looked at (it
 * lists them, pstate.cand), each in O(1): a stop costs what it read, not
 * what the program holds. The drain entry (patch_hot) is enough to pass
 * over one called fewer than throttle_calls times; the record (288 bytes,
 * a cache miss) is read for the others only.
 */
static void throttle(struct tracer *tr)
{
	struct pstate *ps = tr->ps;
	const struct books *b = ps->books;
	static const uint8_t one = 1;

	for (size_t i = 0; i < ps->probe.n_cand; i++) {
		size_t j = ps->probe.cand[i];
		struct patch_hot *h;
		struct patch *p;
		uint64_t calls;
		acct_time_t self;
		struct routine *rt;

		if (j >= ps->probe.n_hot || j >= ps->n_patches) /* an image gone since */
			continue;
		h = &ps->probe.hot[j];
		if (!(h->flags & HOT_CAND))
			continue; /* listed twice */
		calls = books_calls(b, h->routine);
		if (calls < tr->o->throttle_calls) { /* the cheap test first */
			/* a candidate was watched (probe_hot_set keeps the mark) */
			h->flags = (uint8_t)((h->flags & ~HOT_CAND) | HOT_WATCH);
			continue;
		}
		h->flags &= (uint8_t)~HOT_CAND;
		p = &ps->patches[j];
		probe_hot_set(ps, j);
		if (!p->throttle || p->throttled || p->dead || p->routine == ACCT_NONE)
			continue;
		self = books_self(b, CLOCK_KIND_CPU, true, p->routine);
		if (!throttle_due(calls, self, tr->o->throttle_calls, tr->o->throttle_ns) ||
		    mem_write(ps->memfd, p->throttle, &one, 1) < 0)
			continue;
		p->throttled = true;
		probe_hot_set(ps, j);
		probe_throttled(tr, j);
		if (ps->go) /* a goroutine between morestack and its re-entry */
			go_throttled(tr, j);
		rt = &ps->st->r[p->routine];
		rt->throttled_at = calls;
		plancache_throttled(ps->pc_own,
				    p->routine); /* the file's next execs: from the start */
		fs_info(1, "%s: throttled after %" PRIu64 " calls (%.3f us a call)",
			rt->display ? rt->display : rt->names[0], rt->throttled_at,
			(double)self / (double)calls / 1e3);
	}
	ps->probe.n_cand = 0;
}

/*
 * What an event costs the program, set after each window of ROUND_WINDOW
 * events: the flat calibration's (one routine called in a loop: every
 * branch of the probe predicted, one stub's code) where the window's
 * entries went to at most ROUND_LO routines, the round one's (64 routines
 * in a random order: calib.c) from ROUND_HI (64 routines set about 60 of
 * the 512 bits), in proportion between. On sqlite3 a timed call cost 13
 * ns more than the flat loop's, as did 64 leaves called in a random order
 * (8: none).
 */
static void round_weigh(struct tracer *tr)
{
	struct probe_run *pr = &tr->probe;
	const struct trace_opts *o = tr->o;
	int d = 0;
	double w;

	for (size_t k = 0; k < sizeof(pr->seen) / sizeof(pr->seen[0]); k++) {
		d += __builtin_popcountll(pr->seen[k]);
		pr->seen[k] = 0;
	}
	w = pr->cost_set ? (double)(d - ROUND_LO) / (ROUND_HI - ROUND_LO) : 0;
	w = w < 0 ? 0 : w > 1 ? 1 : w;
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		pr->ev_ns[c] = o->probe_ns[c];
		pr->ret_ns[c] = o->probe_ret_ns[c];
		if (o->probe_round_ns[c] > 0 && o->probe_round_ret_ns[c] > 0) {
			pr->ev_ns[c] += w * (o->probe_round_ns[c] - o->probe_ns[c]);
			pr->ret_ns[c] += w * (o->probe_round_ret_ns[c] - o->probe_ret_ns[c]);
		}
		if (pr->count_known)
			continue;
		pr->count_ns[c] = o->probe_count_ns[c];
		if (o->probe_round_count_ns[c] > 0)
			pr->count_ns[c] += w * (o->probe_round_count_ns[c] - o->probe_count_ns[c]);
	}
	pr->round_w = w;
	pr->seen_n = 0;
	pr->cost_set = true;
}

/*
 * A live probe's entry (of a routine that returns) with its cost: in one
 * call to the books when no frame below its slot is to be closed first
 * (the usual case), else as entry_recorded takes it (retaddr.c). A call's
 * slot that held a return address left by a longjmp is overwritten: that
 * one is no orphan any longer (as entry_recorded does).
 */
static inline void take_entry(struct tracer *tr, struct tthread *th, const struct patch_hot *h,
			      const struct probe_event *e)
{
	bool chained = e->ret == tr->ps->probe_tramp || e->ret == tr->ps->retrap;
	uint64_t old;

	if (!books_probe_enter(tr->ps->books, th->tid, h->routine, e->slot, e->ret, chained,
			       &th->now, tr->probe.ev_ns)) {
		entry_recorded(tr, th, h->routine, e->slot, e->ret, chained, false);
		return;
	}
	if (!chained && tr->ps->orphans.n && u64map_get(&tr->ps->orphans, e->slot, &old) && old)
		u64map_put(&tr->ps->orphans, e->slot, 0);
}

/* One event, checked: an entry of a live probe stub, or a return (Go's: go_take). */
static void take(struct tracer *tr, struct tthread *th, const struct probe_event *e,
		 struct stamper *sp, const struct stamp *now)
{
	struct pstate *ps = tr->ps;
	uint64_t kind = e->word & PROBE_W_KIND, j = e->word & 0xffffffffull;
	uint64_t nc = e->word >> PROBE_W_NCOUNT_SHIFT;
	uint64_t counted =
	    (nc - th->probe.p_ncount) & (PROBE_W_NCOUNT_MASK >> PROBE_W_NCOUNT_SHIFT);
	/* an entry's patch's drain entry (its record is 288 bytes: a cache miss) */
	const struct patch_hot *h =
	    kind == PROBE_W_ENTRY && j < ps->probe.n_hot ? &ps->probe.hot[j] : NULL;

	if (kind == PROBE_W_ENTRY) /* the routines entered (round_weigh) */
		tr->probe.seen[(j >> 6) & 7] |= 1ull << (j & 63);

	if (h && (h->flags & HOT_ALLOC)) {
		/* --alloc: an allocator's entry holds its arguments, not a TSC (memcall.c) */
		memcall_entry_recorded(tr, th, &ps->patches[j], e->slot, e->ret, e->tsc);
		kind = 0; /* its cost is charged below, nothing else done */
		h = NULL;
	} else {
		stamp_at(sp, e->tsc, &th->now);
		if (th->smp.n_pend) /* --sample: the samples before this event */
			sample_fold(tr, th, th->now.t[CLOCK_KIND_WALL]);
	}
	/*
	 * What the probe cost the thread: the calibration's, made with probes
	 * too; the caller's share at an entry, the routine's at its return.
	 * Before it, the calls that took the count path (throttled routines)
	 * since the thread's last event: they were made by the routine that ran
	 * in between, which is charged what they cost.
	 */
	th->probe.p_ncount = nc;
	if (ps->go) {
		go_take(tr, th, e, counted);
		th->now = *now;
		return;
	}
	if (counted)
		books_stop_cost(
		    ps->books, th->tid,
		    (double[FS_N_CLOCKS]){(double)counted * tr->probe.count_ns[CLOCK_KIND_CPU],
					  (double)counted * tr->probe.count_ns[CLOCK_KIND_WALL]});
	if (h && (h->flags & (HOT_LIVE | HOT_NORETURN)) == HOT_LIVE) {
		/* a live probe's entry, of a routine that returns: with its cost in one call */
		take_entry(tr, th, h, e);
		if (h->flags & HOT_WATCH)
			probe_throttle_candidate(tr, j);
	} else if (kind == PROBE_W_RETURN && !th->mem.fn) {
		/* usually the top frame's return: taken with its cost in one call */
		if (!books_probe_leave(ps->books, th->tid, e->slot, &th->now, tr->probe.ret_ns))
			return_recorded(tr, th, e->slot);
	} else {
		books_stop_cost(ps->books, th->tid,
				kind == PROBE_W_RETURN ? tr->probe.ret_ns : tr->probe.ev_ns);
		if (h && (h->flags & HOT_LIVE)) { /* a routine that never returns */
			entry_recorded(tr, th, h->routine, e->slot, e->ret,
				       e->ret == ps->probe_tramp || e->ret == ps->retrap, true);
			if (h->flags & HOT_WATCH)
				probe_throttle_candidate(tr, j);
		} else if (kind == PROBE_W_RETURN) {
			uint64_t ret;

			/* an allocator's: RAX is in the event */
			memcall_return(tr, th, e->slot, e->ret, &ret);
			return_recorded(tr, th, e->slot);
		}
	}
	th->now = *now;
}

/*
 * The usual events, taken in runs (struct run): a live probe's entry of a
 * routine that returns, and a return, stamped and put in order in a run,
 * which the books take in one call (books_probe_run: the thread looked up
 * once, not two calls an event); any other event (an allocator's, a
 * routine that never returns, one with samples before it, Go's) ends the
 * run first and is taken as before (take). An event the books refuse (a
 * frame below its slot to close first) is taken the long way there, in
 * its place.
 */
#define RUN_N 256 /* 12 KiB of events: in the L1 cache with the ring's */

struct run {
	struct acct_pev ev[RUN_N];
	size_t n;
	double cost[3][FS_N_CLOCKS]; /* a counted call's, an entry's, a return's */
};

/* The run's events into the books, the refused ones the long way, in order. */
static void run_flush(struct tracer *tr, struct tthread *th, struct run *r, const struct stamp *now)
{
	struct pstate *ps = tr->ps;
	size_t s = 0, i;

	while (s < r->n) {
		i = s + books_probe_run(ps->books, th->tid, r->ev + s, r->n - s, r->cost);
		/* a call's slot that held a return address left by a longjmp: no orphan now */
		for (size_t k = s; ps->orphans.n && k < i; k++) {
			uint64_t old;

			if (r->ev[k].kind == ACCT_PEV_ENTER &&
			    u64map_get(&ps->orphans, r->ev[k].slot, &old) && old)
				u64map_put(&ps->orphans, r->ev[k].slot, 0);
		}
		if (i >= r->n)
			break;
		/* refused: frames below its slot to close first (retaddr.c), at its times */
		th->now.t[CLOCK_KIND_CPU] = r->ev[i].t[0];
		th->now.t[CLOCK_KIND_WALL] = r->ev[i].t[1];
		if (r->ev[i].kind == ACCT_PEV_LEAVE)
			return_recorded(tr, th, r->ev[i].slot);
		else
			entry_recorded(tr, th, r->ev[i].routine, r->ev[i].slot, r->ev[i].ret,
				       r->ev[i].kind == ACCT_PEV_CHAIN, false);
		th->now = *now;
		s = i + 1;
	}
	r->n = 0;
}

/*
 * Event e into run r when it is a usual one (true; the run flushed when
 * full), stamped and its throttle candidate made as take() does; false:
 * for take(), nothing done.
 */
static inline bool run_add(struct tracer *tr, struct tthread *th, struct run *r,
			   const struct probe_event *e, struct stamper *sp, const struct stamp *now)
{
	struct pstate *ps = tr->ps;
	uint64_t kind = e->word & PROBE_W_KIND, j = e->word & 0xffffffffull;
	uint64_t nc = e->word >> PROBE_W_NCOUNT_SHIFT;
	const struct patch_hot *h =
	    kind == PROBE_W_ENTRY && j < ps->probe.n_hot ? &ps->probe.hot[j] : NULL;
	struct acct_pev *v = &r->ev[r->n];
	struct stamp st;

	if (h ? (h->flags & (HOT_LIVE | HOT_NORETURN | HOT_ALLOC)) != HOT_LIVE
	      : kind != PROBE_W_RETURN || th->mem.fn)
		return false;
	stamp_at(sp, e->tsc, &st);
	v->slot = e->slot;
	v->ret = e->ret;
	v->t[0] = st.t[CLOCK_KIND_CPU];
	v->t[1] = st.t[CLOCK_KIND_WALL];
	v->counted = (nc - th->probe.p_ncount) & (PROBE_W_NCOUNT_MASK >> PROBE_W_NCOUNT_SHIFT);
	th->probe.p_ncount = nc;
	if (h) {
		tr->probe.seen[(j >> 6) & 7] |= 1ull << (j & 63); /* entered (round_weigh) */
		v->routine = h->routine;
		v->kind = e->ret == ps->probe_tramp || e->ret == ps->retrap ? ACCT_PEV_CHAIN
									    : ACCT_PEV_ENTER;
		if (h->flags & HOT_WATCH)
			probe_throttle_candidate(tr, j);
	} else {
		v->routine = ACCT_NONE;
		v->kind = ACCT_PEV_LEAVE;
	}
	if (++r->n == RUN_N)
		run_flush(tr, th, r, now);
	return true;
}

/*
 * Thread th's records were lost in the window just read (its CPU times
 * there spread over elapsed time): counted for the report, the records
 * since the last count, the thread named among the first few.
 */
static void switch_loss(struct pstate *ps, struct tthread *th)
{
	ps->probe.n_cs_lost_windows++;
	ps->probe.n_cs_lost_records += th->probe.cs.n_lost - th->probe.cs_lost_seen;
	th->probe.cs_lost_seen = th->probe.cs.n_lost;
	for (size_t k = 0; k < TRACE_LOST_TIDS; k++) {
		if (ps->probe.cs_lost_tids[k] == th->tid)
			break;
		if (!ps->probe.cs_lost_tids[k]) {
			ps->probe.cs_lost_tids[k] = th->tid;
			break;
		}
	}
}

/* The ring's unread indices [*tail, *head): the program may have written anything, at most one
 * ring's worth. */
static void ring_span(uint8_t *a, uint64_t *tail, uint64_t *head)
{
	*tail = *probe_hdr(a, PROBE_TAIL);
	*head = *probe_hdr(a, PROBE_HEAD);
	if (*head - *tail > PROBE_RING_N)
		*head = *tail + PROBE_RING_N;
}

/*
 * A drain opened at thread th's stop: its counters read, its switch
 * records read, the window's stamper made (between its last stop and
 * this one, at TSC t1), the events' costs weighed. Returns its area,
 * NULL: no ring to read.
 */
static uint8_t *drain_open(struct tracer *tr, struct tthread *th, bool all, uint64_t t1,
			   struct stamper *sp)
{
	uint8_t *a;

	if (th->probe.area <= 0 || th->probe.area >= PROBE_AREAS || !tr->ps->probes)
		return NULL;
	a = probe_area(tr, th->probe.area);
	probe_hot_sync(tr->ps);
	if (tr->o->count_only || tr->probe.n_throttled)
		drain_counts(tr, th, a, all);
	if (!tr->o->count_only && th->probe.cs.fd >= 0)
		cswitch_read(&th->probe.cs);
	stamper_init(sp, tr, th, t1);
	if (!tr->probe.cost_set)
		round_weigh(tr);
	return a;
}

/*
 * Events ev[from & mask] .. ev[to - 1 & mask] into the books, stamped by
 * sp, in order, up to the first one not written yet (its word 0); each
 * word cleared when `clear` (the ring's: the next lap's commits). Returns
 * how many were taken.
 */
static size_t drain_take(struct tracer *tr, struct tthread *th, struct probe_event *ev,
			 uint64_t mask, uint64_t from, uint64_t to, bool clear, struct stamper *sp,
			 const struct stamp *now)
{
	struct run run;
	size_t n = 0;

	run.n = 0; /* the costs of this drain's events, as weighed (round_weigh) */
	memcpy(run.cost[0], tr->probe.count_ns, sizeof(run.cost[0]));
	memcpy(run.cost[1], tr->probe.ev_ns, sizeof(run.cost[1]));
	memcpy(run.cost[2], tr->probe.ret_ns, sizeof(run.cost[2]));
	for (; from != to; from++, n++) {
		struct probe_event *e = &ev[from & mask];
		struct probe_event copy = *e;

		if (!copy.word)
			break; /* taken by code interrupted before it wrote it */
		if (clear)
			e->word = 0;
		if (!tr->ps->go && !th->smp.n_pend && run_add(tr, th, &run, &copy, sp, now))
			continue;
		run_flush(tr, th, &run, now);
		take(tr, th, &copy, sp, now);
	}
	run_flush(tr, th, &run, now);
	return n;
}

/*
 * A drain closed: n events taken, `wait` TSC ticks that the thread waited
 * for them (the stop's cost on the wall clock, beyond the calibrated
 * stop's; off the CPU clock: the thread did not run), the window's end
 * (t1, the stop's clocks) the next one's start, the switch records before
 * it forgotten, TAU's throttle on the probes it read.
 */
static void drain_close(struct tracer *tr, struct tthread *th, size_t n, uint64_t t1, uint64_t wait)
{
	tr->ps->probe.n_events += n;
	tr->probe.seen_n += n;
	if (tr->probe.seen_n >= ROUND_WINDOW)
		round_weigh(tr);
	if (n && !tr->probe.no_tsc)
		books_stop_cost(tr->ps->books, th->tid,
				(double[FS_N_CLOCKS]){0, (double)wait * tr->tsc_ns});
	th->probe.p_tsc = t1;
	th->probe.p_at = th->now;
	if (th->probe.cs.fd >= 0) {
		if (th->probe.cs.lost)
			switch_loss(tr->ps, th);
		cswitch_forget(&th->probe.cs, th->now.t[CLOCK_KIND_WALL]);
	}
	if (tr->ps->probe.n_cand)
		throttle(tr);
}

/*
 * A full ring read while its thread runs on: at the stop its events are
 * copied out (a few ns an event, where reading one into the books takes
 * some 200: a full ring's 16,384 in 3 ms, which the thread waited for),
 * the ring given back and the thread resumed; the copy is read by
 * probe_drain_pending, before fortstat waits again, with the window's
 * stamper made at the stop (its clocks are the stop's, known before the
 * thread runs). One at a time: fortstat reads it before anything else.
 */
static struct {
	struct tthread *th; /* NULL: none */
	pid_t tid;
	struct pstate *ps; /* its process */
	size_t cur;	   /* (its index: tracer.cur) */
	struct stamper sp; /* (its intervals may point into itself: never copied) */
	struct stamp now;
	uint64_t t1, wait;
	struct probe_event *ev; /* PROBE_RING_N */
	size_t n;
} pend;

void probe_drain_pending(struct tracer *tr)
{
	struct pstate *ps = tr->ps;
	size_t cur = tr->cur, n;
	struct tthread *th;

	if (!pend.th)
		return;
	/* (read at once after the resume: a later caller is another stop's) */
	th = thr_find(tr, pend.tid);
	if (th != pend.th || th->proc != pend.cur) {
		pend.th = NULL;
		return;
	}
	pend.th = NULL;
	tr->ps = pend.ps, tr->cur = pend.cur;
	n = drain_take(tr, th, pend.ev, SIZE_MAX, 0, pend.n, false, &pend.sp, &pend.now);
	th->now = pend.now;
	drain_close(tr, th, n, pend.t1, pend.wait);
	tr->ps = ps, tr->cur = cur;
}

bool probe_drain_defer(struct tracer *tr, struct tthread *th)
{
	uint64_t t1 = __rdtsc(), tail, head;
	struct probe_event *ring;
	uint8_t *a;

	probe_drain_pending(tr);
	/*
	 * What reads the program or waits for its samples as it goes: at the
	 * stop; so with one CPU for both (taskset -c 0 fortstat ...), where
	 * the reading would only take turns with the program and its wall
	 * clock would not know it.
	 */
	if (!tr->o->drain_behind || tr->ps->go || th->smp.n_pend || tr->n_cpus == 1) {
		probe_drain(tr, th, false);
		return false;
	}
	if (!(a = drain_open(tr, th, false, t1, &pend.sp)))
		return false;
	if (!pend.ev)
		pend.ev = xmalloc(PROBE_RING_N * sizeof(*pend.ev));
	ring = (struct probe_event *)(void *)(a + PROBE_RING);
	ring_span(a, &tail, &head);
	for (pend.n = 0; tail != head; tail++) {
		struct probe_event *e = &ring[tail & (PROBE_RING_N - 1)];

		pend.ev[pend.n] = *e;
		if (!pend.ev[pend.n].word)
			break; /* taken by code interrupted before it wrote it */
		e->word = 0;
		pend.n++;
	}
	*probe_hdr(a, PROBE_TAIL) = tail;
	pend.th = th;
	pend.tid = th->tid;
	pend.ps = tr->ps;
	pend.cur = tr->cur;
	pend.now = th->now;
	pend.t1 = t1;
	pend.wait = __rdtsc() - t1;
	if (!tr->probe.n_behind++)
		fs_info(1,
			"thread %d: its full ring copied out at the stop and read while it runs on "
			"(FORTSTAT_DEFER_DRAIN=0: read at the stop)",
			(int)th->tid);
	return true;
}

size_t probe_drain(struct tracer *tr, struct tthread *th, bool all)
{
	uint64_t t1 = __rdtsc(), tail, head;
	struct stamp now = th->now;
	struct stamper sp;
	size_t n;
	uint8_t *a;

	probe_drain_pending(tr);
	if (!(a = drain_open(tr, th, all, t1, &sp)))
		return 0;
	ring_span(a, &tail, &head);
	n = drain_take(tr, th, (struct probe_event *)(void *)(a + PROBE_RING), PROBE_RING_N - 1,
		       tail, head, true, &sp, &now);
	*probe_hdr(a, PROBE_TAIL) = tail + n;
	/*
	 * The thread waited while its ring was read (a microsecond every ten
	 * events, a full ring's in a millisecond): the stop's cost on the wall
	 * clock too.
	 */
	drain_close(tr, th, n, t1, __rdtsc() - t1);
	return n;
}

void probe_read_switches(struct tracer *tr)
{
	cswitch_due = 0;
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th && th->probe.cs.fd >= 0)
			cswitch_read(&th->probe.cs);
	}
	sample_read_all(tr); /* their SIGIO sets the same flag */
}
