// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * session.c - one traced run: launch the program, patch it at its exec stop, wait for
 * stops until every traced process has ended, and say how it went.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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

static volatile sig_atomic_t forward_pid;

static void forward_signal(int sig)
{
	/* SIGTERM/SIGHUP to fortstat alone: the program gets it as without us. */
	if (forward_pid > 0)
		kill(forward_pid, sig);
}

/*
 * waitpid, on after fortstat's own signals: SIGIO (the context-switch
 * records, cswitch.c) has no SA_RESTART and comes whenever a ring's
 * wakeup is due, a closed one's too. An interrupted wait for the program's
 * exec returned an error: under load, a calibration batch was lost and
 * its child left stopped (seen in state t beside a hung-looking fortstat),
 * or the program was given up without a word.
 */
static pid_t wait_on(pid_t pid, int *status, int flags)
{
	pid_t w;

	do
		w = waitpid(pid, status, flags);
	while (w < 0 && errno == EINTR);
	return w;
}

/*
 * Fork the child that will exec PROGRAM: it waits on a pipe for the go
 * (*go, the write end) that fortstat gives once it has seized it. A
 * fortstat killed before then closes the pipe: the child leaves without
 * running the program (a child stopped by its own SIGSTOP, as it once
 * was, stayed stopped for ever).
 */
static pid_t launch(const char *path, char *const argv[], int *go)
{
	int p[2];
	pid_t pid;
	ssize_t n;
	char c;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (pid == 0) {
		close(p[1]);
		do
			n = read(p[0], &c, 1);
		while (n < 0 && errno == EINTR);
		if (n != 1)
			_exit(EXIT_FS_CANNOT);
		execv(path, argv);
		fprintf(stderr, "fortstat: error: %s: %s\n", path, strerror(errno));
		_exit(errno == ENOENT ? EXIT_FS_NOTFOUND : EXIT_FS_CANNOT);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

/* Wait until the child has exec'ed PROGRAM. Returns 0, or the child's end. */
static int wait_exec(struct tracer *tr, int *status)
{
	pid_t pid = tr->ps->leader;

	for (;;) {
		if (wait_on(pid, status, __WALL) < 0)
			return -errno;
		if (!WIFSTOPPED(*status))
			return 1; /* exited before exec */
		if (*status >> 8 == (SIGTRAP | (PTRACE_EVENT_EXEC << 8)))
			return 0;
		if (*status >> 16 == PTRACE_EVENT_STOP || WSTOPSIG(*status) == SIGSTOP ||
		    WSTOPSIG(*status) == SIGCONT)
			ptrace(PTRACE_CONT, pid, 0, 0);
		else
			ptrace(PTRACE_CONT, pid, 0, WSTOPSIG(*status));
	}
}

void tracer_free(struct tracer *tr)
{
	thr_remove_all(tr);
	free(tr->pend);
	free(tr->seg[0]);
	free(tr->seg[1]);
	for (size_t i = 0; i < tr->n_sc; i++)
		scf_free(&tr->sc[i]);
	free(tr->sc);
	for (size_t k = 0; k < tr->n_procs; k++) {
		struct pstate *ps = tr->procs[k];

		free(ps->patches);
		free(ps->hot);
		free(ps->tu);
		free(ps->thr_ix);
		free(ps->cand);
		go_free(ps->go);
		for (size_t i = 0; i < ps->n_mods; i++) {
			free(ps->mods[i].path);
			free(ps->mods[i].real);
			free(ps->mods[i].name);
		}
		free(ps->mods);
		u64map_free(&ps->traps);
		u64map_free(&ps->retsite);
		u64map_free(&ps->callret);
		u64map_free(&ps->orphans);
		u64map_free(&ps->rsite_map);
		u64map_free(&ps->pfull);
		if (ps->memfd >= 0)
			close(ps->memfd);
		free(ps);
	}
	free(tr->procs);
	evpage_alive_end(tr);
	if (tr->page)
		munmap(tr->page, tr->ev_size);
	if (tr->mem_fd >= 0)
		close(tr->mem_fd);
}

/* Close the accounting of process state ps and say how it went in *sec. */
static void ps_result(struct tracer *tr, struct pstate *ps, uint64_t wall1,
		      struct trace_section *sec)
{
	double cpu_s, wall_s;

	if (ps->ended)
		wall1 = ps->wall1;
	cpu_s = ps->cpu_total_ns / 1e9;
	wall_s = (double)(wall1 - ps->wall0) / 1e9;
	books_finish(ps->books, wall1);
	sec->pid = ps->leader;
	sec->total_s[CLOCK_KIND_CPU] = cpu_s;
	sec->total_s[CLOCK_KIND_WALL] = wall_s;
	sec->counted_only = ps->no_rewrite;
	sec->execed = ps->execed;
	sec->probes = ps->probes;
	sec->probe_events = ps->n_probe_events;
	sec->trap_calls = ps->n_trap_calls;
	trap_cost(tr, ps, sec->trap_cost_ns);
	books_overhead(ps->books, sec->overhead_ns);
	sec->cs_lost.windows = ps->n_cs_lost_windows;
	sec->cs_lost.records = ps->n_cs_lost_records;
	memcpy(sec->cs_lost.tids, ps->cs_lost_tids, sizeof(sec->cs_lost.tids));
	/* its threads' times: the section's now */
	sec->usage.threads = ps->tu;
	sec->usage.n = ps->n_tu;
	sec->usage.n_cpus = tr->n_cpus;
	ps->tu = NULL;
	ps->n_tu = ps->cap_tu = 0;
	if (ps->execed)
		snprintf(sec->note, sizeof(sec->note), "exec'ed a new image");
	if (WIFSIGNALED(ps->status)) {
		int sig = WTERMSIG(ps->status);

		sec->term_signal = sig;
		sec->exit_status = 128 + sig;
		snprintf(sec->note, sizeof(sec->note), "killed by signal %d (SIG%s)", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else if (WIFEXITED(ps->status)) {
		sec->exit_status = WEXITSTATUS(ps->status);
	}
}

/*
 * The measuring kit of a run: the stops' cost on each clock (with a steady
 * TSC), and the event page, a memfd the program inherits (no CLOEXEC) and
 * maps at its exec stop. FORTSTAT_NO_SHARED=1 does without (bench/overhead).
 * An attached process inherits nothing of ours: with probes, the memory is
 * made in it (attach_event_memory: ev_size says so), else it has none; the
 * calibration of a -p run (pid set, launched) gets what the program will.
 */
void session_kit(struct tracer *tr, const double est_ns[FS_N_CLOCKS], bool attached)
{
	const char *no_shared = getenv("FORTSTAT_NO_SHARED");
	int fd;
	void *m = MAP_FAILED;

	tr->page_fd = -1;
	tr->mem_fd = -1;
	for (int k = 0; est_ns && k < FS_N_CLOCKS; k++)
		tr->est[k] = est_ns[k];
	tr->tsc_ns = fs_tsc_ns_per_tick();
	if (!tr->o->count_only && tr->tsc_ns > 0) {
		tr->seg[0] = xcalloc(1, sizeof(*tr->seg[0]));
		tr->seg[1] = xcalloc(1, sizeof(*tr->seg[1]));
	}
	if ((no_shared && *no_shared != '0') || (tr->o->pid && !tr->o->probes))
		return;
	tr->ev_size = tr->o->probes ? PROBE_MEM_SIZE : EV_SIZE;
	if (attached)
		return;
	fd = memfd_create("fortstat-events", 0);
	if (fd >= 0 && ftruncate(fd, (off_t)tr->ev_size) == 0)
		m = mmap(NULL, tr->ev_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		tr->page = m;
		tr->page_fd = fd;
		evpage_alive_start(tr);
		/* -f: kept to map it into the images followed processes exec */
		if (tr->o->follow)
			tr->mem_fd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	} else if (fd >= 0) {
		close(fd);
	}
}

/*
 * Start PROGRAM stopped and seize it. Returns its pid, or a negative errno
 * after saying why (res->exit_status set when it is the program's fault).
 */
static pid_t session_start(struct tracer *tr, const char *path, char *const argv[],
			   struct trace_result *res)
{
	long opts = TRACE_PTRACE_OPTS;
	int status, e, go = -1;
	pid_t pid, tracer;

	/*
	 * With probes the program outlives a fortstat that dies (even by
	 * SIGKILL): its stubs fall through to plain calls (evpage.c). With
	 * the traps, and fortstat's own calibration runs, it dies with
	 * fortstat at once: an int3 would kill it at its next timed call.
	 */
	if (tr->o->exitkill || !tr->o->probes)
		opts |= PTRACE_O_EXITKILL;
	fflush(NULL);
	pid = launch(path, argv, &go);
	if (tr->page_fd >= 0)
		close(tr->page_fd); /* the program holds its copy (same number) until its exec stop */
	if (pid < 0) {
		fs_error("cannot fork: %s", strerror((int)-pid));
		return pid;
	}
	tr->ps->leader = pid;
	tr->program = pid;
	res->pid = pid;
	errno = 0;
	if (ptrace(PTRACE_SEIZE, pid, 0, opts) == 0 && write(go, "g", 1) == 1) {
		close(go);
		return pid;
	}
	e = errno ? errno : ESRCH;
	close(go);
	tracer = e == EPERM ? precheck_tracer_pid(pid) : 0;
	if (tracer > 0)
		precheck_say_traced(path, tracer); /* a debugger took it first */
	else
		fs_error("cannot trace %s: %s", path, strerror(e));
	if (e == EPERM)
		res->exit_status = EXIT_FS_CANNOT;
	kill(pid, SIGKILL);
	wait_on(pid, &status, 0);
	return -e;
}

/* The program has exec'ed: patch it, then act on every stop until all have ended. */
static int session_loop(struct tracer *tr, const char *path)
{
	struct tthread *th;
	int status, err;

	tr->ps->memfd = mem_open(tr->program);
	if (tr->ps->memfd < 0) {
		fs_error("cannot open the memory of %s: %s", path, strerror(-tr->ps->memfd));
		return tr->ps->memfd;
	}
	err = setup_image(tr);
	if (err)
		return err;
	th = thr_new(tr, tr->program);
	thr_usage_start(th); /* its time from the exec on, as its CPU clock's */
	probe_thread_new(tr, th, true);
	fs_info(1, "clock: %s", fs_clock_name(&th->clk));
	tr->ps->wall0 = wall_now();
	ptrace(PTRACE_CONT, tr->program, 0, 0);
	ticker_start(tr, path);
	while (!tr->done) {
		pid_t tid = next_stop(tr, &status);

		if (tid < 0)
			break;
		dispatch(tr, tid, status);
	}
	ticker_stop(tr);
	return 0;
}

/* Every process's accounting closed, and how the run went, into *res. */
void session_result(struct tracer *tr, const char *path, struct trace_result *res)
{
	uint64_t wall1 = wall_now();
	struct trace_section main_sec;

	memset(&main_sec, 0, sizeof(main_sec));
	ps_result(tr, tr->procs[0], wall1, &main_sec);
	res->total_s[CLOCK_KIND_CPU] = main_sec.total_s[CLOCK_KIND_CPU];
	res->total_s[CLOCK_KIND_WALL] = main_sec.total_s[CLOCK_KIND_WALL];
	res->counted_only = main_sec.counted_only;
	res->usage = main_sec.usage;
	/* -f: every other process and image, in order of appearance. */
	if (tr->n_procs > 1)
		res->sections = xcalloc(tr->n_procs - 1, sizeof(*res->sections));
	for (size_t i = 1; i < tr->n_procs; i++) {
		struct pstate *ps = tr->procs[i];
		struct trace_section *sec = &res->sections[res->n_sections++];

		ps_result(tr, ps, wall1, sec);
		sec->st = ps->st;
		sec->own_st = ps->own_st;
		sec->path = xstrdup(ps->path ? ps->path : path);
		sec->books = ps->books;
	}
	for (size_t k = 0; tr->procs[0]->follow_dl && k < tr->o->n_libs; k++) {
		if (!tr->lib_hit[k]) {
			char *lib = names_escape(tr->o->libs[k]);

			fs_warn("-l %s: no library of the program matched", lib);
			free(lib);
		}
	}
	if (tr->note[0])
		snprintf(res->note, sizeof(res->note), "%s", tr->note);
	res->n_refused = tr->n_refused;
	if (tr->n_refused)
		fs_warn("%zu routine%s could not be timed (fortstat -v says which and why)",
			tr->n_refused, tr->n_refused == 1 ? "" : "s");
	res->probes = tr->procs[0]->probes;
	res->probe_events = tr->procs[0]->n_probe_events;
	res->trap_calls = main_sec.trap_calls;
	memcpy(res->trap_cost_ns, main_sec.trap_cost_ns, sizeof(res->trap_cost_ns));
	memcpy(res->overhead_ns, main_sec.overhead_ns, sizeof(res->overhead_ns));
	res->cs_lost = main_sec.cs_lost;
	if (tr->seg[1] && tr->seg[1]->n) {
		res->seg_n = tr->seg[1]->n;
		res->seg_cpu_ns = acct_ovh_estimate(tr->seg[0], true);
		res->seg_wall_ns = acct_ovh_estimate(tr->seg[1], false);
		for (int k = 0; k < 2; k++)
			fs_info(2,
				"stops measured on the %s clock: %" PRIu64
				" segments, median %.3f us, mean %.3f us, estimate %.3f us",
				k ? "wall" : "CPU", tr->seg[k]->n, acct_ovh_median(tr->seg[k]) / 1e3,
				tr->seg[k]->n ? tr->seg[k]->sum / (double)tr->seg[k]->n / 1e3 : 0,
				acct_ovh_estimate(tr->seg[k], !k) / 1e3);
	}
	if (WIFSIGNALED(tr->status)) {
		int sig = WTERMSIG(tr->status);

		res->term_signal = sig;
		res->exit_status = 128 + sig;
		snprintf(res->note, sizeof(res->note), "program killed by signal %d (SIG%s)", sig,
			 sigabbrev_np(sig) ? sigabbrev_np(sig) : "?");
	} else {
		res->exit_status = WEXITSTATUS(tr->status);
	}
}

/* Kill the program (fortstat failed to set it up) and wait until nothing of it is left. */
static void session_kill(struct tracer *tr)
{
	int status;

	kill(tr->program, SIGKILL);
	/* A killed tracee may still stop once more (PTRACE_EVENT_EXIT). */
	for (;;) {
		pid_t w = waitpid(-1, &status, __WALL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			break;
		if (WIFSTOPPED(status))
			ptrace(PTRACE_CONT, w, 0, 0);
	}
}

int trace_run(const char *path, char *const argv[], struct symtab *st, struct books *books,
	      struct names *names, struct names *exclude, const struct trace_opts *o,
	      const double est_ns[FS_N_CLOCKS], struct trace_result *res)
{
	struct tracer tr = { .o = o, .names = names, .exclude = exclude };
	const struct pstate init = { .st = st, .books = books, .memfd = -1 };
	struct sigaction sa_ign = { .sa_handler = SIG_IGN }, sa_fwd = { .sa_handler = forward_signal };
	struct sigaction old_int, old_quit, old_term, old_hup;
	int status, err;
	pid_t pid;

	memset(res, 0, sizeof(*res));
	ps_switch(&tr, ps_add(&tr, &init));
	tr.n_cpus = cpus_of(0); /* the program's mask: fortstat's before pinning */
	pin_start(&tr);
	session_kit(&tr, est_ns, false);
	pid = session_start(&tr, path, argv, res);
	if (pid < 0) {
		if (tr.pinned)
			sched_setaffinity(0, sizeof(tr.orig_mask), &tr.orig_mask);
		tracer_free(&tr);
		return (int)pid;
	}
	sigaction(SIGINT, &sa_ign, &old_int);
	sigaction(SIGQUIT, &sa_ign, &old_quit);
	forward_pid = pid;
	sigaction(SIGTERM, &sa_fwd, &old_term);
	sigaction(SIGHUP, &sa_fwd, &old_hup);

	err = wait_exec(&tr, &status);
	if (err != 0) {
		/* exec failed; the child said why, unless the kernel killed it in execve */
		res->exit_status = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FS_CANNOT;
		if (err > 0 && WIFSIGNALED(status))
			fs_error("%s: the kernel could not load it (killed by %s in execve): "
				 "a corrupt ELF file?",
				 path, strsignal(WTERMSIG(status)));
		err = -ENOEXEC;
	} else {
		res->started = true;
		err = session_loop(&tr, path);
		res->n_patched = tr.procs[0]->n_patches;
		if (err) {
			session_kill(&tr);
			res->exit_status = EXIT_FS_ERROR;
		} else {
			session_result(&tr, path, res);
		}
	}
	if (tr.pinned)
		sched_setaffinity(0, sizeof(tr.orig_mask), &tr.orig_mask);
	forward_pid = 0;
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	sigaction(SIGHUP, &old_hup, NULL);
	/* Nothing is left behind: reap whatever is still ours. */
	while (waitpid(-1, &status, __WALL | WNOHANG) > 0)
		;
	tracer_free(&tr);
	return err;
}

void trace_result_free(struct trace_result *res)
{
	for (size_t i = 0; i < res->n_sections; i++) {
		struct trace_section *sec = &res->sections[i];

		free(sec->path);
		free(sec->usage.threads);
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
	free(res->active);
	res->active = NULL;
	res->n_sections = 0;
}
