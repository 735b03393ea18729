// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * thread.c - the threads of the traced processes: their table, clocks, CPU placement
 * (--pin), and the events they feed to their process's books.
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
#include "../probe/areas.h"
#include "sample.h"

/* The table's key of thread tid (never 0). */
static uint64_t thr_key(pid_t tid)
{
	return (uint64_t)(uint32_t)tid + 1;
}

struct tthread *thr_find(const struct tracer *tr, pid_t tid)
{
	uint64_t p;

	return u64map_get(&tr->thr, thr_key(tid), &p) ? (struct tthread *)(uintptr_t)p : NULL;
}

static void thr_insert(struct tracer *tr, struct tthread *th)
{
	u64map_put(&tr->thr, thr_key(th->tid), (uint64_t)(uintptr_t)th);
}

/* Free a thread's own resources (its slot, its clock, itself). */
static void thr_free(struct tracer *tr, struct tthread *th)
{
	if (th->seg.slot >= 0)
		tr->seg.slot_used[th->seg.slot] = 0;
	probe_thread_gone(tr, th);
	sample_thread_gone(tr, th);
	fs_clock_close(&th->clk);
	free(th);
}

void thr_remove(struct tracer *tr, pid_t tid)
{
	struct tthread *th = thr_find(tr, tid);

	if (!th)
		return;
	u64map_del(&tr->thr, thr_key(tid));
	thr_free(tr, th);
}

void thr_remove_all(struct tracer *tr)
{
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th)
			thr_free(tr, th);
	}
	u64map_free(&tr->thr);
}

uint64_t wall_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Read both clocks of a stopped thread: its CPU clock and the wall clock.
 * Sets th->now, never going backwards.
 */
void thr_stamp(struct tracer *tr, struct tthread *th)
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

void thr_give_slot(struct tracer *tr, struct tthread *th)
{
	for (int k = 0; tr->page && th->seg.slot < 0 && k < EV_SLOTS; k++) {
		if (!tr->seg.slot_used[k]) {
			tr->seg.slot_used[k] = 1;
			th->seg.slot = k;
			memset((char *)tr->page + EV_PAGE + (size_t)k * INSN_EV_SLOT_SIZE, 0,
			       INSN_EV_SLOT_SIZE);
		}
	}
}

struct tthread *thr_new(struct tracer *tr, pid_t tid)
{
	struct tthread *th = xcalloc(1, sizeof(*th));

	th->tid = tid;
	th->proc = tr->cur;
	th->seg.slot = -1;
	probe_thr_init(&th->probe);
	thr_give_slot(tr, th);
	if (tr->o->count_only || fs_clock_open(&th->clk, 1, tr->ps->leader, tid) < 0)
		fs_clock_open(&th->clk, 0, tr->ps->leader,
			      tid); /* no clocks, gone or refused: wall */
	th->c0 = th->clast = fs_clock_read(&th->clk);
	thr_stamp(tr, th);
	th->w0 = th->now.t[CLOCK_KIND_WALL]; /* u0 zero: a thread just made has not run */
	thr_insert(tr, th);
	sample_thread_new(tr, th);
	return th;
}

void thr_usage_start(struct tthread *th)
{
	if (fs_usage_read(th->tid, &th->u0) < 0)
		memset(&th->u0, 0, sizeof(th->u0));
	th->w0 = th->now.t[CLOCK_KIND_WALL];
}

struct trace_thread_usage thr_usage(const struct tthread *th, uint64_t now,
				    struct usage_reading *u1)
{
	struct trace_thread_usage tu = {.tid = th->tid};
	struct usage_split sp;

	if (fs_usage_read(th->tid, u1) < 0 || u1->run_ns < th->u0.run_ns) {
		/* gone: its CPU clock's time, as user time (no tick to split it) */
		*u1 = th->u0;
		if (th->clk.src != FS_CLOCK_WALL && th->clast > th->c0)
			u1->run_ns += th->clast - th->c0;
	}
	sp = usage_between(&th->u0, u1);
	tu.user_ns = sp.user_ns;
	tu.sys_ns = sp.sys_ns;
	tu.elapsed_ns = now > th->w0 ? now - th->w0 : 0;
	return tu;
}

void thr_end(struct tracer *tr, struct tthread *th)
{
	struct pstate *ps = tr->ps;
	struct usage_reading u1;

	if (th->clk.src != FS_CLOCK_WALL)
		ps->cpu_total_ns += (double)(th->clast - th->c0);
	if (ps->n_tu == ps->cap_tu) {
		ps->cap_tu = ps->cap_tu ? 2 * ps->cap_tu : 8;
		ps->tu = xrealloc(ps->tu, ps->cap_tu * sizeof(*ps->tu));
	}
	ps->tu[ps->n_tu++] = thr_usage(th, th->now.t[CLOCK_KIND_WALL], &u1);
	/* a thread that goes on (it exec'ed) starts again from here */
	th->u0 = u1;
	th->w0 = th->now.t[CLOCK_KIND_WALL];
}

int cpus_of(pid_t pid)
{
	cpu_set_t m;

	if (sched_getaffinity(pid, sizeof(m), &m) < 0)
		return 0;
	return CPU_COUNT(&m);
}

/*
 * A ptrace stop costs several times more when the tracer and the tracee wake
 * each other across CPUs. Pin both to one CPU when that cannot change what
 * the program does; the program inherits the mask from fortstat.
 */
void pin_start(struct tracer *tr)
{
	enum pin_mode mode = tr->o->pin;
	cpu_set_t one;
	int cpu;

	if (mode == PIN_NEVER || sched_getaffinity(0, sizeof(tr->orig_mask), &tr->orig_mask) < 0)
		return;
	if (CPU_COUNT(&tr->orig_mask) < 2)
		return;
	if (mode == PIN_AUTO && tr->ps->st->parallel_runtime) {
		fs_info(1, "not pinning: the program uses OpenMP, TBB or Go's runtime");
		return;
	}
	/*
	 * The probes stop a thread at a full ring, whose copy fortstat reads
	 * while the thread runs on: on one CPU they would take turns. sqlite3
	 * -l libsqlite3 (13.6 M events), wall: 0.75 of the pinned run's
	 * (5 pairs); read at the stop, unpinned took 1.30.
	 */
	if (mode == PIN_AUTO && tr->o->probes && tr->o->drain_behind && !tr->o->probe_stops) {
		fs_info(1,
			"not pinning: full rings are read on another CPU while the program runs");
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
void unpin_task(struct tracer *tr, pid_t tid)
{
	if (tr->pinned)
		sched_setaffinity(tid, sizeof(tr->orig_mask), &tr->orig_mask);
}

/* The program has a second thread: every task and fortstat get their mask back. */
void unpin_all(struct tracer *tr, pid_t also)
{
	if (!tr->pinned)
		return;
	for (size_t i = 0; i < tr->thr.cap; i++)
		if (thr_at(tr, i))
			unpin_task(tr, thr_at(tr, i)->tid);
	unpin_task(tr, also);
	sched_setaffinity(0, sizeof(tr->orig_mask), &tr->orig_mask);
	tr->pinned = false;
	fs_info(1, "the program started a second thread: CPU masks restored");
}

int thr_take_signal(const struct tracer *tr, struct tthread *th)
{
	int sig = tr->att.settling ? 0 : th->defer_sig;

	if (sig)
		th->defer_sig = 0;
	return sig;
}
