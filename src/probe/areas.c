// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * areas.c - in-process probes (--probes): each thread of the program gets an
 * area of the event memory as its GS base; the entry stubs and the return
 * trampoline (stubs.c) record entries and returns there
 * without stopping, and keep the original return addresses on the thread's
 * shadow stack. The tracer reads a thread's ring only while that thread is
 * stopped: at every one of its stops (a rare event, a full ring, its exit),
 * before the stop itself is handled, so events reach the books in the
 * order the thread made them (drain.c reads them). Everything in an area is the program's to
 * write: indices and words are checked, an event that names no probe is
 * dropped.
 */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/types.h>
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
#include "areas.h"

/* Area k on fortstat's side, and its address in the program. */
uint8_t *probe_area(const struct tracer *tr, int k)
{
	return (uint8_t *)tr->page + PROBE_OFF + (size_t)k * PROBE_AREA_SIZE;
}

static uint64_t area_addr(const struct tracer *tr, int k)
{
	return tr->ps->page_addr + PROBE_OFF + (uint64_t)k * PROBE_AREA_SIZE;
}

/* Clean area k for a new thread: nothing recorded, an empty shadow stack. */
static void area_reset(const struct tracer *tr, int k, uint64_t flags)
{
	uint8_t *a = probe_area(tr, k);

	*probe_hdr(a, PROBE_SELF) = area_addr(tr, k);
	*probe_hdr(a, PROBE_HEAD) = 0;
	*probe_hdr(a, PROBE_TAIL) = 0;
	*probe_hdr(a, PROBE_DEPTH) = 0;
	*probe_hdr(a, PROBE_FLAGS) = flags;
	*probe_hdr(a, PROBE_CAP) = tr->probe.cap;
	*probe_hdr(a, PROBE_NCOUNT) = 0;
	/* the liveness word from the area: the same offset in every process (-f) */
	*probe_hdr(a, PROBE_ALIVE) =
	    (uint64_t)EV_ALIVE - (PROBE_OFF + (uint64_t)k * PROBE_AREA_SIZE);
	/* Words of an earlier thread's unread events must not commit anything. */
	for (size_t i = 0; i < PROBE_RING_N; i++)
		((struct probe_event *)(void *)(a + PROBE_RING))[i].word = 0;
	memset(a + PROBE_CTR, 0, (size_t)PROBE_CTR_N * 8);
}

void probe_prepare(struct tracer *tr, pid_t tid)
{
	const char *cap;
	uint64_t gs = 1;

	tr->ps->probes = false;
	if (!tr->o->probes || !tr->page || !tr->ps->page_addr || tr->ev_size < PROBE_MEM_SIZE)
		return;
	if (tr->tsc_ns <= 0) {
		fs_warn("--probes: the TSC is not steady here (no constant_tsc): traps instead");
		return;
	}
	if (arch_get_tls2(tid, &gs) < 0 || gs != 0) {
		fs_warn("--probes: the program's GS base is in use: traps instead");
		return;
	}
	tr->ps->probes = true;
	/* FORTSTAT_PROBE_RING=N: a smaller ring, for the tests of a full one */
	tr->probe.cap = PROBE_RING_N;
	if ((cap = getenv("FORTSTAT_PROBE_RING")) && atoi(cap) >= 1 && atoi(cap) < PROBE_RING_N)
		tr->probe.cap = (uint64_t)atoi(cap);
	area_reset(tr, 0, PROBE_F_TRAP);
	tr->probe.area_used[0] = 1;
	fs_info(1, "in-process probes: areas at 0x%" PRIx64 " (%u threads)", area_addr(tr, 1),
		PROBE_AREAS - 1);
}

void probe_thr_init(struct probe_thr *pt)
{
	pt->area = -1;
	pt->cs.fd = -1;
}

void probe_proc_fork(struct probe_proc *child, const struct probe_proc *parent)
{
	child->thr_ix = xmalloc((child->n_thr_ix ? child->n_thr_ix : 1) * sizeof(*child->thr_ix));
	if (child->n_thr_ix)
		memcpy(child->thr_ix, parent->thr_ix, child->n_thr_ix * sizeof(*child->thr_ix));
	child->cap_thr_ix = child->n_thr_ix;
	child->cand = NULL;
	child->n_cand = child->cap_cand = 0;
	child->hot = NULL; /* made again from its records at its first drain */
	child->n_hot = child->cap_hot = 0;
	child->uncount = NULL; /* the parent's calls to take back are the parent's */
	child->n_uncount = 0;
	child->n_events = 0;
}

void probe_proc_exec(struct probe_proc *pp)
{
	pp->n_uncount = 0;
}

void probe_proc_free(struct probe_proc *pp)
{
	free(pp->hot);
	free(pp->uncount);
	free(pp->thr_ix);
	free(pp->cand);
}

bool probe_tsc_refused(struct tracer *tr)
{
	if (tr->probe.no_tsc)
		return false;
	tr->probe.no_tsc = true;
	return true;
}

/* no context-switch records: said once a fortstat */
static bool cs_said;

void probe_thread_new(struct tracer *tr, struct tthread *th, bool own)
{
	int k = 0, err;

	th->probe.area = -1;
	if (!tr->ps->probes)
		return;
	for (int i = 1; own && i < PROBE_AREAS; i++)
		if (!tr->probe.area_used[i]) {
			k = i;
			break;
		}
	/* Go's probes rewrite no return address: free from the start */
	if (k)
		area_reset(tr, k,
			   tr->o->count_only || tr->ps->go ||
				   (tr->ps->shstk_checked && !tr->ps->no_rewrite)
			       ? 0
			       : PROBE_F_TRAP);
	if (arch_set_tls2(th->tid, area_addr(tr, k)) < 0)
		return; /* gone */
	if (k)
		tr->probe.area_used[k] = 1;
	th->probe.area = k;
	/*
	 * Refused where perf is refused to users (kernel.perf_event_paranoid=3,
	 * Debian's default): said with -v, once a fortstat (the calibration's
	 * runs are silent), as the CPU clock's own fallback to schedstat is. A
	 * warning, from each of the calibration's runs too, was seven lines
	 * before every report there.
	 */
	if (k && !tr->o->count_only && (err = cswitch_open(&th->probe.cs, th->tid)) < 0 &&
	    fs_verbose >= 1 && !cs_said) {
		cs_said = true;
		fs_info(1,
			"--probes: no context-switch records (%s): CPU times are spread over "
			"the elapsed time between stops",
			strerror(-err));
	}
	th->probe.p_tsc = __rdtsc();
	th->probe.p_at = th->now;
	th->probe.p_ncount = 0;
	th->probe.c_ncount = 0;
	if (!k && own)
		fs_info(1, "thread %d: no probe area left, its calls trap", (int)th->tid);
	else if (!k)
		fs_info(
		    1,
		    "thread %d runs in its parent's memory (vfork): its calls trap until it execs",
		    (int)th->tid);
}

/*
 * The areas start with PROBE_F_TRAP: the first timed call of the program
 * takes the classic stub's int3, where check_shstk looks for a CET shadow
 * stack (the C library turns it on before any routine of the program runs)
 * before any return address is rewritten. Without one, the probes go on in
 * process from then on. Counting (-c) rewrites none: its areas start free.
 * The calibration of a stop under probes (probe_stops) keeps them all trapping.
 */
void probe_release(struct tracer *tr)
{
	if (!tr->ps->probes || tr->ps->no_rewrite || tr->o->probe_stops)
		return;
	/* the current process's threads (with -f, another's make their own check) */
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *o = thr_at(tr, i);

		if (o && o->proc == tr->cur && o->probe.area > 0 && o->probe.area < PROBE_AREAS)
			*probe_hdr(probe_area(tr, o->probe.area), PROBE_FLAGS) =
			    o->unhooked ? PROBE_F_TRAP : 0; /* probe_unhooked */
	}
}

/*
 * While thread th's return addresses are back for an unwinder (unhooked),
 * its probes take the classic stub's int3 as traps do: the next entry into
 * the program's own code stops, and hooks the frames that survived again
 * (retaddr.c); in process, no stop would come and they would return unseen.
 */
void probe_unhooked(struct tracer *tr, struct tthread *th, bool on)
{
	uint8_t *a;

	if (!tr->ps->probes || th->probe.area <= 0 || th->probe.area >= PROBE_AREAS ||
	    tr->o->count_only)
		return;
	a = probe_area(tr, th->probe.area);
	if (on)
		*probe_hdr(a, PROBE_FLAGS) |= PROBE_F_TRAP;
	else if (tr->ps->shstk_checked && !tr->ps->no_rewrite)
		*probe_hdr(a, PROBE_FLAGS) &= ~(uint64_t)PROBE_F_TRAP;
}

void probe_thread_gone(struct tracer *tr, struct tthread *th)
{
	if (th->probe.area > 0 && th->probe.area < PROBE_AREAS)
		tr->probe.area_used[th->probe.area] = 0;
	th->probe.area = -1;
	cswitch_close(&th->probe.cs);
}

bool probe_is_full(const struct pstate *ps, uint64_t pc)
{
	uint64_t v;

	return ps->probes &&
	       (pc == ps->probe_full || (ps->pfull.n && u64map_get(&ps->pfull, pc, &v)));
}

bool probe_full_signal(struct tracer *tr, struct tthread *th, const siginfo_t *si)
{
	uint64_t pc;

	if (!tr->ps->probes || arch_get_pc(th->tid, &pc) < 0 || !probe_is_full(tr->ps, pc))
		return false;
	return si && si->si_code == SI_TKILL && si->si_pid == tr->ps->leader;
}

void probe_throttled(struct tracer *tr, size_t j)
{
	struct pstate *ps = tr->ps;

	if (ps->probe.n_thr_ix == ps->probe.cap_thr_ix) {
		ps->probe.cap_thr_ix = ps->probe.cap_thr_ix ? 2 * ps->probe.cap_thr_ix : 64;
		ps->probe.thr_ix =
		    xrealloc(ps->probe.thr_ix, ps->probe.cap_thr_ix * sizeof(*ps->probe.thr_ix));
	}
	ps->probe.thr_ix[ps->probe.n_thr_ix++] = (uint32_t)j;
	tr->probe.n_throttled++;
}

/*
 * A routine on the trap path (its entry an int3: no stub fits it) is
 * throttled at its own entry stops by the same rule, with its call just
 * accounted: past it, the int3 is removed (the original byte back) and
 * from then on the routine's calls and time are its caller's, uncounted:
 * its count is a lower bound (routine.calls_lower; with -c the rule has
 * no time to look at, CALLS calls are enough). The patch stays, marked
 * removed: a thread of the program that hit the int3 before it went stops
 * on it still, and that stop is ours (on_break) and its call counted.
 * Only a timed routine's entry: never an unwinder's hook, a PLT stub's,
 * the rendezvous, Go's (its traps never throttle), nor without probes
 * (--traps: every call stops, exact).
 */
void trap_throttle(struct tracer *tr, size_t j, double stop_ns)
{
	struct pstate *ps = tr->ps;
	struct patch *p = j < ps->n_patches ? &ps->patches[j] : NULL;
	acct_time_t self = 0;
	struct routine *rt;
	uint64_t calls;

	if (!p || !tr->o->throttle_calls || !ps->probes || ps->go || p->stub || p->removed ||
	    p->dead || p->unhook || p->rehook || p->got || p->rdebug || p->exit_probe ||
	    p->go_hook || p->routine == ACCT_NONE)
		return;
	calls = books_calls(ps->books, p->routine);
	if (calls < tr->o->throttle_calls)
		return;
	if (books_timed(ps->books))
		self = books_self(ps->books, CLOCK_KIND_CPU, true, p->routine);
	/* its net time as uncertain as the stop's cost: throttle_due_trap */
	if (!throttle_due_trap(calls, self, tr->o->throttle_calls, tr->o->throttle_ns, stop_ns) ||
	    mem_write(ps->memfd, p->trap, &p->orig, 1) < 0)
		return;
	p->removed = true;
	rt = &ps->st->r[p->routine];
	rt->throttled_at = calls;
	rt->calls_lower = true;
	fs_info(1,
		"%s: on the trap path, throttled after %" PRIu64
		" calls (%.3f us a call): its int3 removed, its count a lower bound",
		rt->display ? rt->display : rt->names[0], calls,
		(double)self / (double)calls / 1e3);
}

/* Patch j's drain entry, from its record; `cand`: it is a throttle candidate. */
static struct patch_hot hot_of(const struct patch *p, bool cand)
{
	struct patch_hot h = {.routine = p->routine};

	if (p->stub && !p->dead && p->routine != ACCT_NONE)
		h.flags |= HOT_LIVE;
	if (p->noreturn)
		h.flags |= HOT_NORETURN;
	if (p->throttle && !p->throttled)
		h.flags |= cand ? HOT_CAND : HOT_WATCH;
	else if (cand) /* still in the list: throttle() passes over it */
		h.flags |= HOT_CAND;
	if (p->alloc && p->stub && !p->dead)
		h.flags |= HOT_ALLOC;
	return h;
}

void probe_hot_set(struct pstate *ps, size_t j)
{
	if (j < ps->probe.n_hot && j < ps->n_patches)
		ps->probe.hot[j] = hot_of(&ps->patches[j], ps->probe.hot[j].flags & HOT_CAND);
}

/*
 * The drain entries of the patches made since the last drain (an exec's
 * image starts again from none). Each patch's once: not a walk of every
 * patch at each drain.
 */
void probe_hot_sync(struct pstate *ps)
{
	if (ps->probe.n_hot > ps->n_patches)
		ps->probe.n_hot = ps->n_patches;
	if (ps->probe.n_hot == ps->n_patches)
		return;
	if (ps->probe.cap_hot < ps->n_patches) {
		ps->probe.cap_hot =
		    ps->cap_patches > ps->n_patches ? ps->cap_patches : ps->n_patches;
		ps->probe.hot = xrealloc(ps->probe.hot, ps->probe.cap_hot * sizeof(*ps->probe.hot));
	}
	for (size_t j = ps->probe.n_hot; j < ps->n_patches; j++)
		ps->probe.hot[j] = hot_of(&ps->patches[j], false);
	ps->probe.n_hot = ps->n_patches;
}

/*
 * Patch j (a live probe) had an entry in this drain, or at a stop (a thread
 * without an area, the first call): the next drain's throttle() looks at it.
 */
void probe_throttle_candidate(struct tracer *tr, size_t j)
{
	struct pstate *ps = tr->ps;

	if (!ps->probes || !tr->o->throttle_calls)
		return;
	probe_hot_sync(ps); /* at a stop, j may be new since the last drain */
	/* HOT_WATCH: its record has a throttle flag, not set, and it is no candidate yet */
	if (j >= ps->probe.n_hot || !(ps->probe.hot[j].flags & HOT_WATCH))
		return;
	if (ps->probe.n_cand == ps->probe.cap_cand) {
		ps->probe.cap_cand = ps->probe.cap_cand ? 2 * ps->probe.cap_cand : 64;
		ps->probe.cand =
		    xrealloc(ps->probe.cand, ps->probe.cap_cand * sizeof(*ps->probe.cand));
	}
	ps->probe.hot[j].flags = (uint8_t)((ps->probe.hot[j].flags & ~HOT_WATCH) | HOT_CAND);
	ps->probe.cand[ps->probe.n_cand++] = (uint32_t)j;
}

void probe_uncount(struct tracer *tr, struct tthread *th, size_t j)
{
	struct pstate *ps = tr->ps;

	/*
	 * Taken off patch j's next counts, in whichever thread's area they come:
	 * a goroutine resumed on another thread re-enters there, and a counter
	 * taken below 0 in this one waited for a call that never came here.
	 */
	(void)th;
	if (j >= PROBE_CTR_N || !ps->probes)
		return;
	if (j >= ps->probe.n_uncount) {
		size_t n = ps->n_patches > j + 1 ? ps->n_patches : j + 1;

		ps->probe.uncount = xrealloc(ps->probe.uncount, n * sizeof(*ps->probe.uncount));
		memset(ps->probe.uncount + ps->probe.n_uncount, 0,
		       (n - ps->probe.n_uncount) * sizeof(*ps->probe.uncount));
		ps->probe.n_uncount = n;
	}
	ps->probe.uncount[j]++;
}

void probe_full(struct tracer *tr, struct tthread *th)
{
	uint8_t *a;
	uint64_t tail;

	if (th->probe.area <= 0 || th->probe.area >= PROBE_AREAS)
		return;
	a = probe_area(tr, th->probe.area);
	tail = *probe_hdr(a, PROBE_TAIL);
	if (*probe_hdr(a, PROBE_HEAD) - tail >= tr->probe.cap &&
	    !((struct probe_event *)(void *)(a + PROBE_RING))[tail & (PROBE_RING_N - 1)].word) {
		fs_info(1, "thread %d: an event taken but never written, skipped", (int)th->tid);
		*probe_hdr(a, PROBE_TAIL) = tail + 1;
	}
}

/* Under -vv: thread th's shadow stack, for a return that found no frame. */
void probe_dump(struct tracer *tr, struct tthread *th)
{
	uint8_t *a;
	uint64_t d;

	if (th->probe.area <= 0 || th->probe.area >= PROBE_AREAS || fs_verbose < 2)
		return;
	a = probe_area(tr, th->probe.area);
	d = *probe_hdr(a, PROBE_DEPTH);
	fs_info(2, "thread %d: shadow depth %" PRIu64 ", ring %" PRIu64 "..%" PRIu64, (int)th->tid,
		d, *probe_hdr(a, PROBE_TAIL), *probe_hdr(a, PROBE_HEAD));
	for (uint64_t i = d > 8 ? d - 8 : 0; i < d && i < PROBE_SHADOW_N; i++) {
		const uint64_t *e = (const uint64_t *)(void *)(a + PROBE_SHADOW + i * 16);

		fs_info(2, "  [%" PRIu64 "] slot 0x%" PRIx64 " ret 0x%" PRIx64, i, e[0], e[1]);
	}
}
