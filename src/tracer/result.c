// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * result.c - how a run went, as a trace_result: one builder for the end of
 * the run (session.c, attach.c) and for the snapshots taken while it runs
 * (ticker.c). A section a process (the program's in the result itself, the
 * others' with -f in res->sections); at the end each process's books are
 * closed in place, in a snapshot a copy of them at each live thread's
 * clocks of now.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/books.h"
#include "fortstat/names.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "stop.h"
#include "tracer.h"
#include "evpage.h"
#include "result.h"
#include "sample.h"

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

/*
 * Process state idx as of now into *sec. At the end (!snap) its books are
 * closed in place and its threads' times handed over; in a snapshot the
 * books are a finished copy and the times a copy (both owned by sec).
 */
static void section(struct tracer *tr, size_t idx, uint64_t now, bool snap,
		    struct trace_section *sec)
{
	struct pstate *ps = tr->procs[idx];
	uint64_t end = ps->ended ? ps->wall1 : now;
	double cpu_ns = ps->cpu_total_ns;
	int sig;

	sec->pid = ps->leader;
	sec->st = ps->st;
	if (snap) {
		sec->own_st = false; /* the live table: not the snapshot's to free */
		sec->books = books_dup(ps->books);
		cpu_ns = close_threads(tr, idx, sec->books, end);
	} else {
		sec->own_st = ps->own_st;
		sec->books = ps->books;
	}
	books_finish(sec->books, end);
	sec->total_s[CLOCK_KIND_CPU] = cpu_ns / 1e9;
	sec->total_s[CLOCK_KIND_WALL] = (double)(end - ps->wall0) / 1e9;
	sec->counted_only = ps->no_rewrite;
	sec->execed = ps->execed;
	sec->running = snap && !ps->ended;
	sec->probes = ps->probes;
	sec->probe_events = ps->probe.n_events;
	sec->trap_calls = ps->n_trap_calls;
	sec->not_followed = ps->n_not_followed;
	trap_cost(tr, ps, sec->trap_cost_ns);
	books_overhead(ps->books, sec->overhead_ns);
	sec->cs_lost.windows = ps->probe.n_cs_lost_windows;
	sec->cs_lost.records = ps->probe.n_cs_lost_records;
	memcpy(sec->cs_lost.tids, ps->probe.cs_lost_tids, sizeof(sec->cs_lost.tids));
	if (snap) {
		snap_usage(tr, idx, end, &sec->usage);
	} else { /* its threads' times: the section's now */
		sec->usage.threads = ps->tu;
		sec->usage.n = ps->n_tu;
		sec->usage.n_cpus = tr->n_cpus;
		ps->tu = NULL;
		ps->n_tu = ps->cap_tu = 0;
		sample_result(tr, ps, &sec->samples); /* --sample: at the end only */
	}
	if (sec->running)
		snprintf(sec->note, sizeof(sec->note),
			 "snapshot after %.3f s: still running (its running clocks INCOMPLETE)",
			 (double)(now - tr->procs[0]->wall0) / 1e9);
	else if (ps->execed)
		snprintf(sec->note, sizeof(sec->note), "exec'ed a new image");
	if (snap && !ps->ended)
		return;
	sig = stop_term_signal(ps->status);
	if (sig) {
		sec->term_signal = sig;
		sec->exit_status = 128 + sig;
		snprintf(sec->note, sizeof(sec->note), "killed by signal %d (SIG%s)", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else {
		stop_exit_code(ps->status, &sec->exit_status);
	}
}

/* The end's own: warnings, the note, the stops' measured cost said, the program's exit. */
static void result_end(struct tracer *tr, struct trace_result *res)
{
	int sig;

	for (size_t k = 0; tr->procs[0]->follow_dl && k < tr->o->n_libs; k++) {
		if (!tr->lib_hit[k]) {
			char *lib = names_escape(tr->o->libs[k]);

			fs_warn("-l %s: no library of the program matched", lib);
			free(lib);
		}
	}
	if (tr->note[0])
		snprintf(res->note, sizeof(res->note), "%s", tr->note);
	if (tr->n_refused)
		fs_warn("%zu routine%s could not be timed (fortstat -v says which and why)",
			tr->n_refused, tr->n_refused == 1 ? "" : "s");
	for (int k = 0; res->seg_n && k < 2; k++)
		fs_info(
		    2,
		    "stops measured on the %s clock: %" PRIu64
		    " segments, median %.3f us, mean %.3f us, estimate %.3f us",
		    k ? "wall" : "CPU", tr->seg.ovh[k]->n, acct_ovh_median(tr->seg.ovh[k]) / 1e3,
		    tr->seg.ovh[k]->n ? tr->seg.ovh[k]->sum / (double)tr->seg.ovh[k]->n / 1e3 : 0,
		    acct_ovh_estimate(tr->seg.ovh[k], !k) / 1e3);
	sig = stop_term_signal(tr->status);
	if (sig) {
		res->term_signal = sig;
		res->exit_status = 128 + sig;
		snprintf(res->note, sizeof(res->note), "program killed by signal %d (SIG%s)", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else {
		stop_exit_code(tr->status, &res->exit_status);
	}
}

void result_build(struct tracer *tr, const char *path, uint64_t now, bool snap,
		  struct trace_result *res, struct books **main_books)
{
	struct trace_section main_sec = {0};

	section(tr, 0, now, snap, &main_sec);
	res->total_s[CLOCK_KIND_CPU] = main_sec.total_s[CLOCK_KIND_CPU];
	res->total_s[CLOCK_KIND_WALL] = main_sec.total_s[CLOCK_KIND_WALL];
	res->counted_only = main_sec.counted_only;
	res->usage = main_sec.usage;
	res->samples = main_sec.samples;
	/* -f: every other process and image, in order of appearance. */
	if (tr->n_procs > 1)
		res->sections = xcalloc(tr->n_procs - 1, sizeof(*res->sections));
	for (size_t i = 1; i < tr->n_procs; i++) {
		struct trace_section *sec = &res->sections[res->n_sections++];

		section(tr, i, now, snap, sec);
		sec->path = xstrdup(tr->procs[i]->path ? tr->procs[i]->path : path);
	}
	res->n_refused = tr->n_refused;
	res->probes = tr->procs[0]->probes;
	res->probe_events = tr->procs[0]->probe.n_events;
	res->trap_calls = main_sec.trap_calls;
	res->not_followed = main_sec.not_followed;
	memcpy(res->trap_cost_ns, main_sec.trap_cost_ns, sizeof(res->trap_cost_ns));
	memcpy(res->overhead_ns, main_sec.overhead_ns, sizeof(res->overhead_ns));
	res->cs_lost = main_sec.cs_lost;
	if (tr->seg.ovh[1] && tr->seg.ovh[1]->n) {
		res->seg_n = tr->seg.ovh[1]->n;
		for (int k = 0; k < 2; k++)
			res->seg_u_ns[k] =
			    tr->seg.u_n[k] ? tr->seg.u_sum[k] / (double)tr->seg.u_n[k] : 0;
		res->seg_cpu_ns = acct_ovh_estimate(tr->seg.ovh[0], true);
		res->seg_wall_ns = acct_ovh_estimate(tr->seg.ovh[1], false);
	}
	if (!snap) {
		result_end(tr, res);
		return;
	}
	res->started = true;
	res->snapshot = true;
	res->pid = tr->program;
	res->snapshot_s = (double)(now - tr->procs[0]->wall0) / 1e9;
	res->running = main_sec.running;
	res->exit_status = main_sec.exit_status;
	res->term_signal = main_sec.term_signal;
	snprintf(res->note, sizeof(res->note), "%s", main_sec.note);
	res->n_patched = tr->procs[0]->n_patches;
	if (tr->o->pid) { /* -p: said so, and what ran at attach */
		res->attached = true;
		res->active = tr->att.active ? xstrdup(tr->att.active) : NULL;
	}
	*main_books = main_sec.books;
}

void trace_result_free(struct trace_result *res)
{
	for (size_t i = 0; i < res->n_sections; i++) {
		struct trace_section *sec = &res->sections[i];

		free(sec->path);
		free(sec->usage.threads);
		free(sec->samples.hits);
		books_free(sec->books);
		if (sec->own_st) {
			symtab_free(sec->st);
			free(sec->st);
		}
	}
	free(res->sections);
	res->sections = NULL;
	free(res->usage.threads);
	res->usage.threads = NULL;
	res->usage.n = 0;
	free(res->samples.hits);
	res->samples.hits = NULL;
	res->samples.n_hits = 0;
	free(res->active);
	res->active = NULL;
	res->n_sections = 0;
}
