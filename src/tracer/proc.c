// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * proc.c - the traced processes: their states, children that fork or vfork (held
 * until settled, followed with -f or released unpatched), images exec'ed, and the
 * ptrace events (clone, fork, vfork, exec, exit).
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
#include "fortstat/procfs.h"
#include "plancache.h"
#include "tracer.h"
#include "../probe/drain.h"
#include "evpage.h"
#include "golang.h"
#include "modules.h"
#include "patches.h"
#include "../probe/areas.h"
#include "proc.h"
#include "retaddr.h"
#include "wait.h"

/* Process state i. */
struct pstate *ps_get(struct tracer *tr, size_t i)
{
	return tr->procs[i];
}

/* Make process state i the current one (tr->ps). */
void ps_switch(struct tracer *tr, size_t i)
{
	tr->ps = tr->procs[i];
	tr->cur = i;
}

size_t ps_add(struct tracer *tr, const struct pstate *init)
{
	tr->procs = xrealloc(tr->procs, (tr->n_procs + 1) * sizeof(*tr->procs));
	tr->procs[tr->n_procs] = xmalloc(sizeof(**tr->procs));
	*tr->procs[tr->n_procs] = *init;
	return tr->n_procs++;
}

/* Any live process state, or -1. */
long ps_find_any(struct tracer *tr)
{
	for (size_t i = 0; i < tr->n_procs; i++)
		if (!ps_get(tr, i)->ended)
			return (long)i;
	return -1;
}

/* The live (not ended) process state of process pid, or -1. */
long ps_find(struct tracer *tr, pid_t pid)
{
	for (size_t i = 0; i < tr->n_procs; i++)
		if (!ps_get(tr, i)->ended && ps_get(tr, i)->leader == pid)
			return (long)i;
	return -1;
}

void ps_free_run(struct pstate *ps)
{
	struct probe_proc *pp = &ps->probe;

	free(ps->patches);
	ps->patches = NULL;
	ps->n_patches = ps->cap_patches = 0;
	probe_proc_free(pp);
	pp->hot = NULL;
	pp->uncount = pp->thr_ix = pp->cand = NULL;
	pp->n_hot = pp->cap_hot = pp->n_uncount = 0;
	pp->n_thr_ix = pp->cap_thr_ix = pp->n_cand = pp->cap_cand = 0;
	u64map_free(&ps->traps);
	u64map_free(&ps->retsite);
	u64map_free(&ps->callret);
	u64map_free(&ps->orphans);
	u64map_free(&ps->rsite_map);
	u64map_free(&ps->pfull);
}

/* How many other process states hold ps's descriptor of its memory. */
static size_t ps_shares_memfd(const struct tracer *tr, const struct pstate *ps)
{
	size_t n = 0;

	for (size_t k = 0; k < tr->n_procs; k++)
		n += tr->procs[k] != ps && tr->procs[k]->memfd == ps->memfd;
	return n;
}

/*
 * An ended process of -f kept small (trace_opts.compact_ended): what only
 * its run read freed (its patches, their maps, the drain's bookkeeping);
 * its books finished now (result_build finishes them again at the same time: nothing
 * is open then) and compacted to the routines they used, its table of
 * routines the same (a forked child's, its parent's table, on a copy of
 * it: configure's forks of bash, 1,670 routines each; books that cannot
 * be compacted, a timeline's or --alloc's, leave the table as it is). Not
 * the program's (section 0), nor while a thread of it is still known.
 */
static void ps_compact(struct tracer *tr, struct pstate *ps)
{
	size_t idx = 0, n_old = ps->st ? ps->st->n : 0, n_new;
	uint32_t *map;

	while (idx < tr->n_procs && tr->procs[idx] != ps)
		idx++;
	if (!tr->o->compact_ended || !ps->ended || ps->compacted || idx == 0 || idx == tr->n_procs)
		return;
	for (size_t i = 0; i < tr->thr.cap; i++)
		if (thr_at(tr, i) && thr_at(tr, i)->proc == idx)
			return;
	ps->compacted = true;
	ps_free_run(ps); /* what only its run read: its patches and their maps (cc1: 12 MB) */
	if (!n_old)
		return;
	for (size_t k = 0; k < tr->n_procs && ps->own_st; k++)
		if (k != idx && tr->procs[k]->st == ps->st)
			return;	      /* (an image's table is its own: none shares it) */
	books_grow(ps->books, n_old); /* one routine a row of the table, as the report reads them */
	books_finish(ps->books, ps->wall1);
	map = xmalloc(n_old * sizeof(*map));
	n_new = books_compact(ps->books, map);
	if (n_new != SIZE_MAX && !ps->own_st) { /* a forked child's table is its parent's */
		struct symtab *st = xcalloc(1, sizeof(*st));

		symtab_dup(ps->st, st);
		ps->st = st;
		ps->own_st = true;
	}
	if (n_new != SIZE_MAX) {
		symtab_compact(ps->st, map, n_new);
		fs_info(2, "process %d ended: %zu of its %zu routines kept", (int)ps->leader, n_new,
			n_old);
	}
	free(map);
}

/* A process state ended now (exit, exec, let go). */
void ps_end(struct tracer *tr, struct pstate *ps, int status)
{
	if (ps->ended)
		return;
	plancache_pool(ps->pc_own, ps->books, ps->st, tr->o->throttle_calls, tr->o->throttle_ns);
	ps->ended = true;
	ps->status = status;
	ps->wall1 = wall_now();
	/* its memory is gone: a build of thousands of processes keeps no descriptor each */
	if (ps->memfd >= 0 && ps_shares_memfd(tr, ps) == 0) {
		close(ps->memfd);
		ps->memfd = -1;
	}
	ps_compact(tr, ps);
}

static void release_fork_child(struct tracer *tr, pid_t pid, pid_t parent)
{
	int fd = mem_open(pid), sig = 0;

	if (fd >= 0) {
		patch_undo_all(tr, fd);
		if (parent)
			frames_undo(tr, fd, parent);
		fork_child_memory(tr, pid, fd, &sig);
		close(fd);
	}
	fs_info(1, "forked child %d: patches undone, not followed", (int)pid);
	unpin_task(tr, pid);
	tracee_resume(PTRACE_DETACH, pid, sig);
}

/*
 * -f: a forked child carries the patches of its parent's image: time it as
 * a process of its own. The return addresses rewritten in the parent's
 * frames are put back in the child (those calls are not timed there).
 */
static void follow_fork_child(struct tracer *tr, pid_t pid, pid_t parent)
{
	struct tthread *pth = thr_find(tr, parent);
	struct pstate ns;
	int fd;

	if (pth)
		ps_switch(tr, pth->proc);
	fd = mem_open(pid);
	if (fd < 0) {
		release_fork_child(tr, pid, parent);
		return;
	}
	if (parent)
		frames_undo(tr, fd, parent);
	ns = *tr->ps;
	ns.leader = pid;
	ns.memfd = fd;
	ns.books = books_new_like(tr->ps->books, ns.st->n);
	ns.patches = xmalloc((ns.cap_patches ? ns.cap_patches : 1) * sizeof(*ns.patches));
	memcpy(ns.patches, tr->ps->patches, ns.n_patches * sizeof(*ns.patches));
	u64map_dup(&ns.traps, &tr->ps->traps);
	probe_proc_fork(&ns.probe, &tr->ps->probe);
	ns.go = go_dup(tr->ps->go);
	ns.smp = NULL; /* the parent's samples stay the parent's */
	u64map_dup(&ns.rsite_map, &tr->ps->rsite_map);
	u64map_dup(&ns.callret, &tr->ps->callret);
	u64map_dup(&ns.pfull, &tr->ps->pfull);
	memset(&ns.retsite, 0, sizeof(ns.retsite));
	memset(&ns.orphans, 0, sizeof(ns.orphans));
	ns.mods = xmalloc((ns.n_mods ? ns.n_mods : 1) * sizeof(*ns.mods));
	for (size_t i = 0; i < ns.n_mods; i++) {
		ns.mods[i] = tr->ps->mods[i];
		ns.mods[i].path = xstrdup(tr->ps->mods[i].path);
		ns.mods[i].real = xstrdup(tr->ps->mods[i].real);
		ns.mods[i].name = xstrdup(tr->ps->mods[i].name);
	}
	ns.cpu_total_ns = 0;
	ns.n_trap_calls = ns.n_trap_stops = 0;
	ns.wall0 = wall_now();
	ns.path = NULL;
	ns.own_st = false;
	ns.ended = false;
	ps_switch(tr, ps_add(tr, &ns));
	/* its own area: the parent's, shared memory, stays the parent's */
	probe_thread_new(tr, thr_new(tr, pid), true);
	if (tr->o->pin == PIN_AUTO)
		unpin_all(tr, pid);
	fs_info(1, "forked child %d: followed", (int)pid);
	tracee_resume(PTRACE_CONT, pid, 0);
}

/*
 * Process tr->cur exec'ed (th reports it, with the process id): the threads
 * of its old image are done. Their rings are read first (fortstat's mapping
 * of the event memory outlives the image), then their clocks closed. The
 * kernel ended the other threads; those that stopped at their exit were
 * read and closed then. A thread other than the leader that exec'ed took
 * the process id: its own state (the former id's) is read and closed here,
 * and th's clock, the dead leader's, is opened again on the thread that
 * goes on. Returns true when th's clock was replaced.
 */
static bool exec_close_threads(struct tracer *tr, struct tthread *th)
{
	unsigned long former = 0;
	struct tthread *f = NULL;

	if (ptrace(PTRACE_GETEVENTMSG, th->tid, 0, &former) == 0 && (pid_t)former != th->tid)
		f = thr_find(tr, (pid_t)former);
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *o = thr_at(tr, i);

		if (!o || o->proc != tr->cur || o->exiting)
			continue;
		if (o != th) {
			/* not running again: its ring can be read (th's was, by dispatch) */
			thr_stamp(tr, o);
			probe_drain(tr, o, true);
		}
		ev_thread_exit(tr, o);
		thr_end(tr, o);
		o->exiting = o != th; /* closed: its end, when it comes, adds nothing */
	}
	if (!f)
		return false;
	thr_remove(tr, f->tid);
	fs_clock_close(&th->clk);
	if (tr->o->count_only || fs_clock_open(&th->clk, 1, th->tid, th->tid) < 0)
		fs_clock_open(&th->clk, 0, th->tid, th->tid);
	th->exiting = false;
	return true;
}

/*
 * -f: thread th (now its process's only thread, with the process id)
 * exec'ed a new image. Close the old image's clocks and time the new one,
 * patched at this exec stop like the program at its start.
 */
static void follow_exec(struct tracer *tr, struct tthread *th)
{
	char path[PATH_MAX];
	struct symtab *st = xcalloc(1, sizeof(*st));
	struct pstate ns, *old = NULL;
	ssize_t len;
	pid_t pid = th->tid;
	int err;

	if (th->vfork_child) {
		/* It ran in its parent's memory until now: not a process of its own yet. */
		ev_thread_exit(tr, th);
		th->vfork_child = false;
		th->c0 = th->clast = fs_clock_read(&th->clk);
		thr_usage_start(th); /* its time from here on, in the new image */
	} else {
		bool new_clock = exec_close_threads(tr, th);

		old = tr->ps;
		ps_end(tr, tr->ps, 0);
		tr->ps->execed = true;
		th->c0 = th->clast = fs_clock_read(&th->clk);
		if (new_clock)
			th->now.t[CLOCK_KIND_CPU] = th->c0;
	}
	th->seg.ok = false;
	len = proc_exe(pid, path, sizeof(path));
	err = len > 0 ? plancache_symtab(tr, pid, path, st) : len < 0 ? (int)len : -ENOENT;
	if (err == SYMTAB_ENOSYMS || err == SYMTAB_EBADSHDR) {
		/*
		 * Stripped (a shell, a system tool): followed for its children
		 * and, with -l, for its libraries' routines.
		 */
		err = 0;
	}
	if (err) {
		fs_warn("process %d exec'ed %s: %s: not followed", (int)pid, path[0] ? path : "?",
			symtab_strerror(err));
		symtab_free(st); /* what the image said of itself, if anything */
		free(st);
		unpin_task(tr, pid);
		thr_remove(tr, pid);
		tracee_resume(PTRACE_DETACH, pid, 0);
		return;
	}
	symtab_select(st, tr->names, tr->exclude, tr->o->all);
	if (tr->o->alloc)
		symtab_select_alloc(st);
	memset(&ns, 0, sizeof(ns));
	ns.st = st;
	ns.own_st = true;
	ns.path = xstrdup(path);
	ns.books = books_new_like(tr->ps->books, st->n);
	ns.leader = pid;
	ns.memfd = mem_open(pid);
	ns.wall0 = wall_now();
	ps_switch(tr, ps_add(tr, &ns));
	th->proc = tr->cur;
	if (old) /* its thread is the new image's now */
		ps_compact(tr, old);
	probe_thread_gone(tr, th); /* the old image's area: the new one gets its own */
	if (!st->n && (!tr->o->n_libs || st->is_static)) {
		fs_info(1, "process %d exec'ed %s: no symbols, followed untimed", (int)pid, path);
		return;
	}
	if (setup_image(tr) < 0) {
		fs_warn("process %d exec'ed %s: cannot patch it: not followed", (int)pid, path);
		ps_end(tr, tr->ps, 0);
		thr_remove(tr, pid);
		tracee_resume(PTRACE_DETACH, pid, 0);
		return;
	}
	probe_thread_new(tr, th, true);
	fs_info(1, "process %d exec'ed %s: followed", (int)pid, path);
}

static struct pending *pend_find(struct tracer *tr, pid_t pid)
{
	for (size_t i = 0; i < tr->n_pend; i++)
		if (tr->pend[i].pid == pid)
			return &tr->pend[i];
	return NULL;
}

static struct pending *pend_add(struct tracer *tr, pid_t pid)
{
	struct pending *p = pend_find(tr, pid);

	if (p)
		return p;
	tr->pend = xrealloc(tr->pend, (tr->n_pend + 1) * sizeof(*tr->pend));
	p = &tr->pend[tr->n_pend++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static void pend_drop(struct tracer *tr, struct pending *p)
{
	*p = tr->pend[--tr->n_pend];
}

/* A new child process is known and stopped: decide what to do with it. */
static void pend_settle(struct tracer *tr, struct pending *p)
{
	if (!p->stopped || p->kind == CHILD_UNKNOWN)
		return;
	if (p->kind == CHILD_FORK && tr->o->follow) {
		follow_fork_child(tr, p->pid, p->parent);
	} else if (p->kind == CHILD_FORK) {
		struct tthread *pth = thr_find(tr, p->parent);

		if (pth)
			ps_get(tr, pth->proc)->n_not_followed++;
		release_fork_child(tr, p->pid, p->parent);
	} else {
		/* vfork: it runs in our memory until it execs or exits. */
		struct tthread *pth = thr_find(tr, p->parent), *th;

		if (pth)
			ps_switch(tr, pth->proc);
		th = thr_new(tr, p->pid);
		th->vfork_child = true;
		probe_thread_new(tr, th, false); /* it runs on our stack: its calls trap */
		tracee_resume(PTRACE_CONT, p->pid, 0);
	}
	pend_drop(tr, p);
}

static pid_t tgid_of(pid_t tid)
{
	return (pid_t)proc_status_num(tid, 0, "Tgid", 10, -1);
}

/* Wait for the first stop of a new child; false if it ended instead. */
static void program_exec(struct tracer *tr, struct tthread *th);

static bool wait_first_stop(pid_t pid)
{
	struct stop s;

	return next_stop(pid, 0, &s) > 0 && s.kind != STOP_GONE && s.kind != STOP_NONE;
}

void handle_event(struct tracer *tr, struct tthread *th, enum stop_kind kind)
{
	unsigned long msg = 0;
	pid_t tid = th->tid;

	switch (kind) {
	case STOP_CLONE:
	case STOP_FORK:
	case STOP_VFORK:
		/* no child's id (the parent vanished meanwhile): nothing to wait for */
		if (ptrace(PTRACE_GETEVENTMSG, tid, 0, &msg) != 0 || (pid_t)msg <= 0)
			break;
		if (kind == STOP_CLONE && tr->o->pin == PIN_AUTO)
			unpin_all(tr, (pid_t)msg);
		if (kind != STOP_CLONE || tgid_of((pid_t)msg) != tr->ps->leader) {
			struct pending *p = pend_add(tr, (pid_t)msg);
			p->parent = tid;
			p->kind = kind == STOP_VFORK ? CHILD_VFORK : CHILD_FORK;
			/* Hold the parent until the child is let go: it may trace it. */
			if (!p->stopped)
				p->stopped = wait_first_stop(p->pid);
			if (!p->stopped) {
				pend_drop(tr, p);
				break;
			}
			pend_settle(tr, p);
		}
		break;
	case STOP_EXEC:
		if (tr->o->follow) {
			follow_exec(tr, th);
			break;
		}
		if (th->vfork_child || tid != tr->ps->leader) {
			/* A vfork child (or a thread) replaced its image: it no
			 * longer shares our patches. Let it go. */
			ev_thread_exit(tr, th);
			if (th->vfork_child) /* posix_spawn's, system()'s: a program of its own */
				tr->ps->n_not_followed++;
			fs_info(1, "process %d exec'ed a new program: not followed", (int)tid);
			thr_end(tr, th);
			unpin_task(tr, tid);
			tracee_resume(PTRACE_DETACH, tid, 0);
			thr_remove(tr, tid);
			return;
		}
		program_exec(tr, th);
		return;
	case STOP_EXIT:
		th->exiting = true;
		ev_thread_exit(tr, th);
		thr_end(tr, th);
		break;
	default:
		break;
	}
	tracee_resume(PTRACE_CONT, tid, 0);
}

/*
 * The program replaced its image (execve): the new one carries no patches
 * and is not followed. Close every open clock, forget the traps, give the
 * program its CPU mask back and let it run on untraced; its exit status is
 * still ours to wait for.
 */
static void program_exec(struct tracer *tr, struct tthread *th)
{
	exec_close_threads(tr, th);
	u64map_free(&tr->ps->traps);
	tr->ps->n_patches = 0;
	probe_proc_exec(&tr->ps->probe); /* its patches' numbers are the old image's */
	snprintf(tr->note, sizeof(tr->note),
		 "the program exec'ed a new image: timed up to the exec, not followed");
	fs_info(1, "%s", tr->note);
	unpin_task(tr, tr->ps->leader);
	tracee_resume(PTRACE_DETACH, tr->ps->leader, 0);
	thr_remove_all(tr);
}

/* The first stop of a thread or process we have not seen yet. */
struct tthread *first_stop(struct tracer *tr, pid_t tid, int status)
{
	pid_t tgid = tgid_of(tid);
	struct pending *p;

	long idx = ps_find(tr, tgid);

	if (idx >= 0) {
		struct tthread *th;

		ps_switch(tr, (size_t)idx);
		th = thr_new(tr, tid);
		probe_thread_new(tr, th, true);
		return th;
	}
	p = pend_find(tr, tid);
	if (p && p->kind == CHILD_VFORK) {
		struct tthread *pth = thr_find(tr, p->parent);

		struct tthread *th;

		if (pth)
			ps_switch(tr, pth->proc);
		th = thr_new(tr, tid);
		probe_thread_new(tr, th, false); /* it runs on our stack: its calls trap */
		return th;
	}
	/* A new process whose parent's event may not have arrived yet. */
	p = pend_add(tr, tid);
	p->stopped = true;
	(void)status;
	pend_settle(tr, p);
	return NULL;
}
