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
#include "plancache.h"
#include "tracer.h"
#include "dispatch.h"
#include "evpage.h"
#include "golang.h"
#include "modules.h"
#include "../probe/areas.h"
#include "proc.h"
#include "result.h"
#include "sample.h"
#include "session.h"
#include "ticker.h"
#include "wait.h"

static volatile sig_atomic_t forward_pid;

static void forward_signal(int sig)
{
	/* SIGTERM/SIGHUP to fortstat alone: the program gets it as without us. */
	if (forward_pid > 0)
		kill(forward_pid, sig);
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

/*
 * Wait until the child has exec'ed PROGRAM. Returns 0, 1 when it ended
 * first (*s says how), or -errno. The wait goes on after fortstat's own
 * signals (next_stop): SIGIO (the context-switch records, cswitch.c) has
 * no SA_RESTART and comes whenever a ring's wakeup is due, a closed one's
 * too; an interrupted wait here once lost a calibration batch under load
 * (its child left stopped) or gave the program up without a word.
 */
static int wait_exec(struct tracer *tr, struct stop *s)
{
	pid_t pid = tr->ps->leader;

	for (;;) {
		int err = next_stop(pid, 0, s);

		if (err < 0)
			return err;
		if (s->kind == STOP_GONE || s->kind == STOP_NONE)
			return 1; /* exited before exec */
		if (s->kind == STOP_EXEC)
			return 0;
		/* on; a signal for it (not a job-control one) delivered */
		tracee_resume(PTRACE_CONT, pid,
			      s->kind == STOP_GROUP || s->kind == STOP_INTERRUPT ||
				      s->sig == SIGSTOP || s->sig == SIGCONT
				  ? 0
				  : s->sig);
	}
}

void tracer_free(struct tracer *tr)
{
	thr_remove_all(tr);
	plancache_free(tr);
	sample_stop(tr);
	free(tr->pend);
	free(tr->seg.ovh[0]);
	free(tr->seg.ovh[1]);
	gate_free(&tr->gate);
	for (size_t k = 0; k < tr->n_procs; k++) {
		struct pstate *ps = tr->procs[k];

		ps_free_run(ps);
		free(ps->tu);
		go_free(ps->go);
		sample_ps_free(ps);
		for (size_t i = 0; i < ps->n_mods; i++) {
			free(ps->mods[i].path);
			free(ps->mods[i].real);
			free(ps->mods[i].name);
		}
		free(ps->mods);
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
		tr->seg.est[k] = est_ns[k];
	tr->tsc_ns = fs_tsc_ns_per_tick();
	if (!tr->o->count_only && tr->tsc_ns > 0) {
		tr->seg.ovh[0] = xcalloc(1, sizeof(*tr->seg.ovh[0]));
		tr->seg.ovh[1] = xcalloc(1, sizeof(*tr->seg.ovh[1]));
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
	struct stop s;
	int e, go = -1;
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
		close(
		    tr->page_fd); /* the program holds its copy (same number) until its exec stop */
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
	next_stop(pid, 0, &s);
	return -e;
}

/* The program has exec'ed: patch it, then act on every stop until all have ended. */
static int session_loop(struct tracer *tr, const char *path)
{
	struct tthread *th;
	struct stop s;
	int err;

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
	tracee_resume(PTRACE_CONT, tr->program, 0);
	ticker_start(tr, path);
	while (!tr->done && run_stop(tr, 0, &s) > 0)
		dispatch(tr, &s);
	ticker_stop(tr);
	return 0;
}

/* Kill the program (fortstat failed to set it up) and wait until nothing of it is left. */
static void session_kill(struct tracer *tr)
{
	struct stop s;

	kill(tr->program, SIGKILL);
	/* A killed tracee may still stop once more (PTRACE_EVENT_EXIT). */
	while (next_stop(-1, 0, &s) > 0)
		if (s.kind != STOP_GONE && s.kind != STOP_NONE)
			tracee_resume(PTRACE_CONT, s.tid, 0);
}

int trace_run(const char *path, char *const argv[], struct symtab *st, struct books *books,
	      struct names *names, struct names *exclude, const struct trace_opts *o,
	      const double est_ns[FS_N_CLOCKS], struct trace_result *res)
{
	struct tracer tr = {.o = o, .names = names, .exclude = exclude};
	const struct pstate init = {.st = st, .books = books, .memfd = -1};
	struct sigaction sa_ign = {.sa_handler = SIG_IGN}, sa_fwd = {.sa_handler = forward_signal};
	struct sigaction old_int, old_quit, old_term, old_hup;
	struct stop s = {0};
	int err;
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

	err = wait_exec(&tr, &s);
	if (err != 0) {
		/* exec failed; the child said why, unless the kernel killed it in execve */
		if (!stop_exit_code(s.status, &res->exit_status))
			res->exit_status = EXIT_FS_CANNOT;
		if (err > 0 && stop_term_signal(s.status))
			fs_error("%s: the kernel could not load it (killed by %s in execve): "
				 "a corrupt ELF file?",
				 path, strsignal(stop_term_signal(s.status)));
		err = -ENOEXEC;
	} else {
		res->started = true;
		err = session_loop(&tr, path);
		res->n_patched = tr.procs[0]->n_patches;
		if (err) {
			session_kill(&tr);
			res->exit_status = EXIT_FS_ERROR;
		} else {
			result_build(&tr, path, wall_now(), false, res, NULL);
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
	while (next_stop(-1, NEXT_POLL, &s) > 0)
		;
	tracer_free(&tr);
	return err;
}
