// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * ticker.c - live reports while the program runs: the status line's figures
 * about twice a second, and snapshots of the books on SIGUSR1 to fortstat or
 * every --interval. Signal handlers only set flags; the loop looks at one
 * volatile flag a stop and does the work between stops (ticker_poll).
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "fortstat/books.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "tracer.h"

#define PROGRESS_NS 500000000ull /* the status line: at most twice a second */
#define KICK_US 10000		 /* a SIGUSR1 that missed the wait: look again this soon */
#define DRAIN_NS 250000000ull	 /* the longest a report waits for the probes' rings */

volatile sig_atomic_t ticker_pending;
static volatile sig_atomic_t want_snapshot; /* SIGUSR1 */
static volatile sig_atomic_t tick_due;	    /* SIGALRM of the periodic timer or the kick */
static volatile sig_atomic_t kick_ok;	    /* a loop runs with no periodic timer */

static bool running;		      /* ticker_start armed what the options ask */
static uint64_t period_ns;	      /* the periodic timer, 0: none */
static uint64_t next_snap, next_draw; /* wall times (ns) */
static struct sigaction old_alrm;
static bool draw_due;		 /* the status line is to be drawn */
static bool draining;		 /* threads were interrupted to drain their rings */
static size_t drain_waiting;	 /* ... and have still to stop */
static uint64_t drain_deadline;	 /* wall time (ns) */
static const char *program_path; /* the path of a process that has not exec'ed */

static void set_timer(uint64_t first_us, uint64_t every_us)
{
	struct itimerval it = {
	    .it_value = {.tv_sec = (time_t)(first_us / 1000000),
			 .tv_usec = (suseconds_t)(first_us % 1000000)},
	    .it_interval = {.tv_sec = (time_t)(every_us / 1000000),
			    .tv_usec = (suseconds_t)(every_us % 1000000)},
	};

	setitimer(ITIMER_REAL, &it, NULL);
}

static void on_usr1(int sig)
{
	int e = errno;

	(void)sig;
	want_snapshot = 1;
	ticker_pending = 1;
	/*
	 * Arrived while fortstat was between stops, not in waitpid: the loop
	 * sees the flag at the next stop, or at this kick's SIGALRM when the
	 * program makes none (waitpid is interrupted: no SA_RESTART).
	 */
	if (kick_ok)
		set_timer(KICK_US, 0);
	errno = e;
}

static void on_alrm(int sig)
{
	(void)sig;
	tick_due = 1;
	ticker_pending = 1;
}

/* SIGUSR1 to on_usr1; restart: system calls go on after it (outside the loop). */
static void catch_usr1(bool restart)
{
	struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = restart ? SA_RESTART : 0};

	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

void trace_catch_snapshot_signal(void)
{
	catch_usr1(true);
}

void ticker_start(struct tracer *tr, const char *path)
{
	const struct trace_opts *o = tr->o;
	struct sigaction sa = {.sa_handler = on_alrm};
	uint64_t now = tr->ps->wall0;

	if (!o->on_snapshot && !o->on_progress)
		return;
	running = true;
	draw_due = draining = false;
	drain_waiting = 0;
	program_path = path;
	period_ns = 0;
	if (o->on_progress)
		period_ns = PROGRESS_NS;
	if (o->on_snapshot && o->interval_s > 0) {
		uint64_t iv = (uint64_t)(o->interval_s * 1e9);

		if (iv < 1000000)
			iv = 1000000;
		if (!period_ns || iv < period_ns)
			period_ns = iv;
		next_snap = now + iv;
	}
	next_draw = now;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old_alrm);
	if (o->on_snapshot) {
		catch_usr1(false); /* a SIGUSR1 interrupts waitpid */
		kick_ok = !period_ns;
		if (want_snapshot)
			ticker_pending = 1; /* it came before the run: take it now */
	}
	if (period_ns)
		set_timer(period_ns / 1000, period_ns / 1000);
}

void ticker_stop(struct tracer *tr)
{
	if (!running)
		return;
	running = false;
	kick_ok = 0;
	set_timer(0, 0);
	sigaction(SIGALRM, &old_alrm, NULL);
	if (tr->o->on_snapshot)
		catch_usr1(true);
	tick_due = 0;
	ticker_pending = want_snapshot;
}

/* Routines of st chosen for timing (what was patched keeps RT_SELECTED). */
static size_t n_selected(const struct symtab *st)
{
	size_t n = 0;

	for (size_t i = 0; i < st->n; i++)
		n += (st->r[i].flags & RT_SELECTED) != 0;
	return n;
}

static void progress(struct tracer *tr, uint64_t now)
{
	struct trace_progress pg = {.threads = tr->thr.n};
	const struct pstate *p0 = tr->procs[0];
	const struct acct *a = books_acct(p0->books, CLOCK_KIND_CPU, false);
	const struct acct_routine *r = acct_routines(a);

	pg.elapsed_s = (double)(now - p0->wall0) / 1e9;
	for (size_t i = 0; i < tr->n_procs; i++) {
		pg.calls += books_total_calls(tr->procs[i]->books);
		pg.processes += !tr->procs[i]->ended;
	}
	for (size_t i = 0; i < acct_n_routines(a); i++)
		pg.routines_called += r[i].calls != 0;
	pg.routines_timed = n_selected(p0->st);
	tr->o->on_progress(&pg, tr->o->live_arg);
}

/*
 * Close the live threads of process state idx in b (a copy of its books)
 * at their clocks of now: their running routines INCOMPLETE as of the
 * snapshot on every clock. Returns the process's CPU time so far (ns).
 */
static double close_threads(const struct tracer *tr, size_t idx, struct books *b, uint64_t now)
{
	double ns = tr->procs[idx]->cpu_total_ns;

	for (size_t i = 0; i < tr->thr.cap; i++) {
		const struct tthread *th = thr_at(tr, i);
		struct stamp s;
		uint64_t c;

		if (!th || th->proc != idx || th->exiting) /* an exiting one is closed */
			continue;
		c = fs_clock_read(&th->clk); /* a running thread's too; 0 when it is gone */
		if (c < th->clast)
			c = th->clast;
		s = th->now;
		if (c > s.t[CLOCK_KIND_CPU])
			s.t[CLOCK_KIND_CPU] = c;
		if (now > s.t[CLOCK_KIND_WALL])
			s.t[CLOCK_KIND_WALL] = now;
		books_thread_exit(b, th->tid, &s);
		if (th->clk.src != FS_CLOCK_WALL)
			ns += (double)(c - th->c0);
	}
	return ns;
}

/*
 * The user and system time of process state idx's threads as of now: those
 * that ended, and the live ones read now (a running thread's total may lag
 * by a tick). Malloc'ed into *u.
 */
static void snap_usage(const struct tracer *tr, size_t idx, uint64_t now, struct trace_usage *u)
{
	const struct pstate *ps = tr->procs[idx];
	size_t cap = ps->n_tu + 1;

	for (size_t i = 0; i < tr->thr.cap; i++)
		cap += thr_at(tr, i) != NULL;
	u->threads = xcalloc(cap, sizeof(*u->threads));
	if (ps->n_tu)
		memcpy(u->threads, ps->tu, ps->n_tu * sizeof(*ps->tu));
	u->n = ps->n_tu;
	u->n_cpus = tr->n_cpus;
	for (size_t i = 0; i < tr->thr.cap; i++) {
		const struct tthread *th = thr_at(tr, i);
		struct usage_reading u1;

		if (th && th->proc == idx && !th->exiting)
			u->threads[u->n++] = thr_usage(th, now, &u1);
	}
}

/* Process state idx as of now into *sec; its books are a finished copy (owned by sec). */
static void snap_section(struct tracer *tr, size_t idx, uint64_t now, struct trace_section *sec)
{
	const struct pstate *ps = tr->procs[idx];
	uint64_t end = ps->ended ? ps->wall1 : now;

	sec->pid = ps->leader;
	sec->st = ps->st;
	sec->own_st = false; /* the live table: not the snapshot's to free */
	sec->books = books_dup(ps->books);
	sec->total_s[CLOCK_KIND_CPU] = close_threads(tr, idx, sec->books, end) / 1e9;
	books_finish(sec->books, end);
	sec->total_s[CLOCK_KIND_WALL] = (double)(end - ps->wall0) / 1e9;
	sec->counted_only = ps->no_rewrite;
	sec->execed = ps->execed;
	sec->running = !ps->ended;
	sec->probes = ps->probes;
	sec->probe_events = ps->n_probe_events;
	sec->trap_calls = ps->n_trap_calls;
	trap_cost(tr, ps, sec->trap_cost_ns);
	books_overhead(ps->books, sec->overhead_ns);
	sec->cs_lost.windows = ps->n_cs_lost_windows;
	sec->cs_lost.records = ps->n_cs_lost_records;
	memcpy(sec->cs_lost.tids, ps->cs_lost_tids, sizeof(sec->cs_lost.tids));
	snap_usage(tr, idx, end, &sec->usage);
	if (!ps->ended)
		snprintf(sec->note, sizeof(sec->note),
			 "snapshot after %.3f s: still running (its running clocks INCOMPLETE)",
			 (double)(now - tr->procs[0]->wall0) / 1e9);
	else if (ps->execed)
		snprintf(sec->note, sizeof(sec->note), "exec'ed a new image");
	if (ps->ended && WIFSIGNALED(ps->status)) {
		sec->term_signal = WTERMSIG(ps->status);
		sec->exit_status = 128 + sec->term_signal;
		snprintf(sec->note, sizeof(sec->note), "killed by signal %d (SIG%s)",
			 sec->term_signal,
			 sigabbrev_np(sec->term_signal) ? sigabbrev_np(sec->term_signal) : "?");
	} else if (ps->ended && WIFEXITED(ps->status)) {
		sec->exit_status = WEXITSTATUS(ps->status);
	}
}

static void snapshot(struct tracer *tr, uint64_t now)
{
	struct trace_result res = {.started = true, .snapshot = true, .pid = tr->program};
	struct trace_section main_sec = {0};

	res.snapshot_s = (double)(now - tr->procs[0]->wall0) / 1e9;
	snap_section(tr, 0, now, &main_sec);
	res.total_s[CLOCK_KIND_CPU] = main_sec.total_s[CLOCK_KIND_CPU];
	res.total_s[CLOCK_KIND_WALL] = main_sec.total_s[CLOCK_KIND_WALL];
	res.counted_only = main_sec.counted_only;
	res.usage = main_sec.usage;
	res.running = main_sec.running;
	res.exit_status = main_sec.exit_status;
	res.term_signal = main_sec.term_signal;
	snprintf(res.note, sizeof(res.note), "%s", main_sec.note);
	res.n_patched = tr->procs[0]->n_patches;
	res.probes = tr->procs[0]->probes;
	res.probe_events = tr->procs[0]->n_probe_events;
	res.trap_calls = main_sec.trap_calls;
	memcpy(res.trap_cost_ns, main_sec.trap_cost_ns, sizeof(res.trap_cost_ns));
	memcpy(res.overhead_ns, main_sec.overhead_ns, sizeof(res.overhead_ns));
	res.cs_lost = main_sec.cs_lost;
	res.n_refused = tr->n_refused;
	if (tr->o->pid) { /* -p: said so, and what ran at attach */
		res.attached = true;
		res.active = tr->attach_active ? xstrdup(tr->attach_active) : NULL;
	}
	if (tr->seg[1] && tr->seg[1]->n) {
		res.seg_n = tr->seg[1]->n;
		res.seg_cpu_ns = acct_ovh_estimate(tr->seg[0], true);
		res.seg_wall_ns = acct_ovh_estimate(tr->seg[1], false);
	}
	if (tr->n_procs > 1)
		res.sections = xcalloc(tr->n_procs - 1, sizeof(*res.sections));
	for (size_t i = 1; i < tr->n_procs; i++) {
		struct trace_section *sec = &res.sections[res.n_sections++];

		snap_section(tr, i, now, sec);
		sec->path = xstrdup(tr->procs[i]->path ? tr->procs[i]->path : program_path);
	}
	fs_info(1, "snapshot after %.3f s", res.snapshot_s);
	tr->o->on_snapshot(&res, main_sec.books, tr->o->live_arg);
	books_free(main_sec.books);
	trace_result_free(&res);
}

/*
 * With in-process probes, what a thread recorded since its last stop is in
 * its ring, not yet in the books: stop each such thread once
 * (PTRACE_INTERRUPT; dispatch drains a thread's ring at each of its stops
 * and resumes it). True while some have still to stop, for at most
 * DRAIN_NS (a thread that exits or stays in a group-stop never does).
 */
static bool drain_pending(struct tracer *tr, uint64_t now)
{
	size_t n = 0;

	if (draining) {
		if (drain_waiting > 0 && now < drain_deadline)
			return true;
		draining = false;
		return false;
	}
	for (size_t i = 0; i < tr->thr.cap; i++) {
		const struct tthread *th = thr_at(tr, i);

		if (th && th->area > 0 && !th->exiting &&
		    tracee_resume(PTRACE_INTERRUPT, th->tid, 0) == 0)
			n++;
	}
	if (!n)
		return false;
	draining = true;
	drain_waiting = n;
	drain_deadline = now + DRAIN_NS;
	if (!period_ns)
		set_timer(DRAIN_NS / 1000 + 1000, 0); /* wake for the deadline */
	return true;
}

void ticker_interrupted(struct tracer *tr)
{
	(void)tr;
	if (draining && drain_waiting > 0 && --drain_waiting == 0)
		ticker_pending = 1; /* every ring drained: go on */
}

void ticker_poll(struct tracer *tr)
{
	const struct trace_opts *o = tr->o;
	uint64_t now;

	ticker_pending = 0;
	if (!running)
		return;
	now = wall_now();
	if (tick_due) {
		tick_due = 0;
		if (o->on_progress && now + PROGRESS_NS / 10 >= next_draw) {
			draw_due = true;
			next_draw = now + PROGRESS_NS - PROGRESS_NS / 10;
		}
		if (o->on_snapshot && o->interval_s > 0 && now + period_ns / 2 >= next_snap) {
			want_snapshot = 1;
			next_snap += (uint64_t)(o->interval_s * 1e9);
			if (next_snap <= now)
				next_snap = now + (uint64_t)(o->interval_s * 1e9);
		}
	}
	if (!draw_due && !(want_snapshot && o->on_snapshot))
		return;
	if (drain_pending(tr, now))
		return; /* back when the threads have stopped (ticker_interrupted) */
	if (draw_due) {
		draw_due = false;
		progress(tr, now);
	}
	if (want_snapshot && o->on_snapshot) {
		want_snapshot = 0;
		snapshot(tr, now);
	}
}
