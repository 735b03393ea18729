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
#include "result.h"
#include "ticker.h"
#include "wait.h"

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

/* A snapshot as of now: the result builder's, handed to the CLI. */
static void snapshot(struct tracer *tr, uint64_t now)
{
	struct trace_result res = {0};
	struct books *main_books;

	result_build(tr, program_path, now, true, &res, &main_books);
	fs_info(1, "snapshot after %.3f s", res.snapshot_s);
	tr->o->on_snapshot(&res, main_books, tr->o->live_arg);
	books_free(main_books);
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

		if (th && th->probe.area > 0 && !th->exiting &&
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
