// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * attach.c - -p PID: seize a running process and all its threads, patch it
 * while every thread is stopped, time it, and let it go as if it had never
 * been traced (patches removed, hooked return addresses put back).
 */
#include <dirent.h>
#include <elf.h>
#include <errno.h>
#include <linux/audit.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/inject.h"
#include "fortstat/insn.h"
#include "fortstat/precheck.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "fortstat/procfs.h"
#include "attach_int.h"
#include "../probe/cswitch.h"
#include "tracer.h"
#include "dispatch.h"
#include "evpage.h"
#include "modules.h"
#include "patches.h"
#include "../probe/areas.h"
#include "proc.h"
#include "result.h"
#include "retaddr.h"
#include "session.h"
#include "ticker.h"
#include "wait.h"

/*
 * The signal that asked to detach (SIGINT, SIGTERM, SIGHUP; SIGRTMIN: the
 * --duration timer, SIGALRM being the ticker's), 0: none.
 */
static volatile sig_atomic_t detach_sig;
static volatile pid_t detach_wake; /* the thread to interrupt so that waitpid returns */

static void on_detach_signal(int sig)
{
	int e = errno;

	if (!detach_sig)
		detach_sig = sig;
	if (detach_wake > 0) /* not tracee_resume: a handler says nothing */
		ptrace(PTRACE_INTERRUPT, detach_wake, 0, 0);
	errno = e;
}

/* ---- bad input ---- */

/* The kernel.yama.ptrace_scope setting, or -1 without Yama. */
static int yama_scope(void)
{
	FILE *f = fopen("/proc/sys/kernel/yama/ptrace_scope", "re");
	int v = -1;

	if (f) {
		if (fscanf(f, "%d", &v) != 1)
			v = -1;
		fclose(f);
	}
	return v;
}

/* Why PTRACE_SEIZE of pid said EPERM, in one line. */
static void say_eperm(pid_t pid, const char *comm)
{
	char uid[64], mine[64];
	int scope = yama_scope();

	proc_status(pid, 0, "Uid", uid, sizeof(uid));
	proc_status(getpid(), 0, "Uid", mine, sizeof(mine));
	if (uid[0] && mine[0] && strtol(uid, NULL, 10) != strtol(mine, NULL, 10))
		fs_error("-p %d (%s): a process of user %ld: only its user (or a user with "
			 "CAP_SYS_PTRACE, root) may trace it",
			 (int)pid, comm, strtol(uid, NULL, 10));
	else if (scope == 1)
		fs_error(
		    "-p %d (%s): Yama's ptrace_scope is 1: only a process's ancestors may "
		    "trace it; allow with 'sysctl kernel.yama.ptrace_scope=0' or give fortstat "
		    "CAP_SYS_PTRACE",
		    (int)pid, comm);
	else if (scope == 2)
		fs_error("-p %d (%s): Yama's ptrace_scope is 2: only CAP_SYS_PTRACE may attach; "
			 "run fortstat as root or with CAP_SYS_PTRACE",
			 (int)pid, comm);
	else if (scope == 3)
		fs_error("-p %d (%s): Yama's ptrace_scope is 3: no process may attach until the "
			 "next boot",
			 (int)pid, comm);
	else
		fs_error("-p %d (%s): not permitted to trace it (setuid? a container?)", (int)pid,
			 comm);
}

/*
 * The machine of process pid's executable (its ELF header, through
 * /proc/PID/exe): "" when x86-64 or unreadable (the reading that follows
 * says why), else what it is.
 */
static const char *foreign_machine(int pid)
{
	unsigned char h[EI_NIDENT + 4];
	char link[48];
	int fd;
	ssize_t n;
	uint16_t m;

	proc_path(link, sizeof(link), pid, 0, "exe");
	fd = open(link, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "";
	n = read(fd, h, sizeof(h));
	close(fd);
	if (n < (ssize_t)sizeof(h) || memcmp(h, ELFMAG, SELFMAG))
		return "";
	m = (uint16_t)(h[EI_DATA] == ELFDATA2MSB ? h[EI_NIDENT + 2] << 8 | h[EI_NIDENT + 3]
						 : h[EI_NIDENT + 3] << 8 | h[EI_NIDENT + 2]);
	if (h[EI_CLASS] == ELFCLASS32)
		return m == EM_386 ? "a 32-bit process (i386)" : "a 32-bit process";
	if (m != EM_X86_64)
		return "a process of another machine";
	return "";
}

/* The device and inode of process pid's executable; false when it cannot be read. */
static bool exe_identity(int pid, uint64_t *dev, uint64_t *ino)
{
	char link[48];
	struct stat sb;

	proc_path(link, sizeof(link), pid, 0, "exe");
	if (stat(link, &sb) < 0)
		return false;
	*dev = (uint64_t)sb.st_dev;
	*ino = (uint64_t)sb.st_ino;
	return true;
}

int trace_attach_check(int pid, char **path, uint64_t *dev, uint64_t *ino)
{
	const char *foreign;
	char comm[64], state[64], exe[PATH_MAX];
	pid_t tracer;
	ssize_t len;

	*path = NULL;
	if (pid <= 0 || (kill(pid, 0) < 0 && errno == ESRCH)) {
		fs_error("-p %d: no such process", pid);
		return EXIT_FS_NOTFOUND;
	}
	proc_status(pid, 0, "Name", comm, sizeof(comm));
	proc_status(pid, 0, "State", state, sizeof(state));
	if (!comm[0]) {
		fs_error("-p %d: no such process", pid);
		return EXIT_FS_NOTFOUND;
	}
	if (pid == getpid()) {
		fs_error("-p %d: that is fortstat itself", pid);
		return EXIT_FS_CANNOT;
	}
	if (pid == getppid()) {
		fs_error("-p %d (%s): that is fortstat's parent, which waits for it", pid, comm);
		return EXIT_FS_CANNOT;
	}
	if (state[0] == 'Z' || state[0] == 'X') {
		fs_error("-p %d (%s): a zombie: it has exited and waits for its parent to reap it",
			 pid, comm);
		return EXIT_FS_CANNOT;
	}
	tracer = precheck_tracer_pid(pid);
	if (tracer > 0) {
		char what[96];

		snprintf(what, sizeof(what), "-p %d (%s)", pid, comm);
		precheck_say_traced(what, tracer);
		return EXIT_FS_CANNOT;
	}
	foreign = foreign_machine(pid);
	if (foreign[0]) {
		fs_error("-p %d (%s): %s: fortstat times x86-64 programs only", pid, comm, foreign);
		return EXIT_FS_CANNOT;
	}
	len = proc_exe(pid, exe, sizeof(exe));
	if (len <= 0) {
		if (len == -EACCES || len == -EPERM)
			say_eperm(pid, comm);
		else
			fs_error("-p %d (%s): cannot read its executable: %s", pid, comm,
				 strerror(len ? (int)-len : ENOENT));
		return EXIT_FS_CANNOT;
	}
	*dev = *ino = 0;
	exe_identity(pid, dev, ino);
	*path = xstrdup(exe);
	return 0;
}

/* ---- seizing and stopping ---- */

/*
 * Seize every thread of tr->program, again until no new one appears (a
 * seized thread's clones are seized by the kernel). Returns 0, or -errno
 * when the process itself cannot be seized (said).
 */
static int seize_all(struct tracer *tr)
{
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACEEXIT | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK;
	pid_t pid = tr->program;
	char dir[48];
	bool added = true;

	proc_path(dir, sizeof(dir), pid, 0, "task");
	for (int round = 0; added && round < 1000; round++) {
		DIR *d = opendir(dir);
		struct dirent *e;

		if (!d)
			return -ESRCH;
		added = false;
		while ((e = readdir(d))) {
			pid_t tid = (pid_t)strtol(e->d_name, NULL, 10);

			if (tid <= 0 || thr_find(tr, tid))
				continue;
			if (ptrace(PTRACE_SEIZE, tid, 0, opts) < 0) {
				int err = errno;

				if (tid != pid)
					continue; /* gone, or already ours through a clone */
				closedir(d);
				return -err;
			}
			thr_usage_start(thr_new(tr, tid)); /* from the attach on */
			added = true;
		}
		closedir(d);
	}
	return 0;
}

/* ---- patching ---- */

/* Add routine name r to the list of those active at attach (once). */
static void active_add(char **list, const char *name)
{
	char *s;

	if (*list) {
		size_t n = strlen(name);

		for (const char *p = strstr(*list, name); p; p = strstr(p + 1, name))
			if ((p == *list || p[-1] == ' ') && (p[n] == ',' || p[n] == '\0'))
				return;
		s = xasprintf("%s, %s", *list, name);
		free(*list);
	} else {
		s = xstrdup(name);
	}
	*list = s;
}

/*
 * The program's routines thread tid is in: the one holding its PC, and
 * those a return address on its stack (a word just after a call) points
 * into, innermost first, added to *list.
 */
static void active_routines(struct tracer *tr, pid_t tid, char **list)
{
	const struct symtab *st = tr->ps->st;
	const struct routine *r;
	arch_regs regs;
	uint64_t *words;
	size_t n;

	if (!stack_words(tr, tid, &regs, &words, &n))
		return;
	r = symtab_find(st, arch_pc(&regs) - tr->ps->bias);
	if (r)
		active_add(list, r->display ? r->display : r->names[0]);
	for (size_t i = 0; i < n; i++) {
		uint8_t before[16];

		r = symtab_find(st, words[i] - tr->ps->bias);
		if (!r || words[i] == r->addr + tr->ps->bias ||
		    (!patch_call_site(tr->ps, words[i]) &&
		     (mem_read(tr->ps->memfd, words[i] - sizeof(before), before, sizeof(before)) <
			  0 ||
		      !insn_is_return_site(before, sizeof(before)))))
			continue;
		active_add(list, r->display ? r->display : r->names[0]);
	}
	free(words);
}

struct ranges {
	uint64_t (*r)[2];
	size_t n, cap;
};

static int add_exec_range(const struct proc_map *m, void *arg)
{
	struct ranges *x = arg;

	if (m->perm[2] != 'x')
		return 0;
	if (x->n == x->cap) {
		x->cap = x->cap ? 2 * x->cap : 32;
		x->r = xrealloc(x->r, x->cap * sizeof(*x->r));
	}
	x->r[x->n][0] = m->lo;
	x->r[x->n][1] = m->hi;
	x->n++;
	return 0;
}

/* The executable mappings of process pid: n ranges [lo, hi) into *r (malloc'ed). */
static size_t exec_ranges(pid_t pid, uint64_t (**r)[2])
{
	struct ranges x = {0};

	proc_maps_each(pid, add_exec_range, &x);
	*r = x.r;
	return x.n;
}

struct avoid {
	uint64_t *v;
	size_t n, cap;
};

static void avoid_add(struct avoid *a, uint64_t pc)
{
	if (a->n == a->cap) {
		a->cap = a->cap ? 2 * a->cap : 64;
		a->v = xrealloc(a->v, a->cap * sizeof(*a->v));
	}
	a->v[a->n++] = pc;
}

/*
 * Where thread tid may resume in code: its PC (and 2 bytes before, a
 * system call that restarts), and every word of its stack that points into
 * code (return addresses, a signal frame's saved PC; a stray one only costs
 * a routine its stub).
 */
static void avoid_thread(struct tracer *tr, pid_t tid, uint64_t (*x)[2], size_t nx, struct avoid *a)
{
	arch_regs regs;
	uint64_t *words;
	size_t n;

	if (!stack_words(tr, tid, &regs, &words, &n))
		return;
	avoid_add(a, arch_pc(&regs));
	avoid_add(a, arch_pc(&regs) - 2);
	for (size_t i = 0; i < n; i++)
		for (size_t k = 0; k < nx; k++)
			if (words[i] >= x[k][0] && words[i] < x[k][1]) {
				avoid_add(a, words[i]);
				break;
			}
	free(words);
}

/*
 * The system call that maps fortstat's code pages into the process (the
 * probes' and the traps' alike): refused by its seccomp filter, nothing
 * can be timed. Returns 0 or -EPERM (said).
 */
static int scratch_allowed(struct tracer *tr, struct tthread *lead, struct trace_result *res)
{
	const long flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	long args[6] = {0, 4096, PROT_READ | PROT_EXEC, flags, -1, 0};
	char why[256];
	int g = syscall_gate(tr, lead->tid, "mmap of fortstat's code", SYS_mmap, args, why,
			     sizeof(why));

	if (g == 1) {
		fs_error("-p %d: cannot time it: %s", (int)tr->program, why);
		res->exit_status = EXIT_FS_CANNOT;
		return -EPERM;
	}
	if (g == 2)
		fs_info(1, "-p %d: %s: tried all the same", (int)tr->program, why);
	return 0;
}

#define STEP_FIRST 16 /* a routine's first bytes, which a stub's jmp may cover */
#define STEP_MAX 64   /* instructions stepped at most to leave them */

/* Is pc in the first bytes of a routine to be timed (bias: the image's)? */
static bool in_first_bytes(const struct symtab *st, uint64_t bias, uint64_t pc)
{
	for (size_t i = 0; i < st->n; i++) {
		uint64_t a = st->r[i].addr + bias;

		if ((st->r[i].flags & RT_SELECTED) && pc >= a && pc < a + STEP_FIRST)
			return true;
	}
	return false;
}

/*
 * Held thread th stands in the first bytes of a routine to be timed (a
 * tiny one that it runs all the time, as often as not): it takes a few
 * steps on, so that the routine can have its probe's jmp rather than an
 * int3 at each call (a stop each, and a SIGTRAP that kills the program
 * once fortstat is gone). Not in a system call (a step would wait for it
 * to end); at most STEP_MAX instructions; a signal that arrives is kept
 * for the thread (delivered when it is let go).
 */
static void step_out(struct tracer *tr, struct tthread *th, uint64_t bias)
{
	uint8_t before[2];
	uint64_t pc;
	struct stop s;

	if (th->att.held_group)
		return; /* stopped by job control: it stays where it is */
	for (int k = 0; k < STEP_MAX; k++) {
		if (arch_get_pc(th->tid, &pc) < 0 || !in_first_bytes(tr->ps->st, bias, pc))
			return;
		if (mem_read(tr->ps->memfd, pc - 2, before, 2) < 0 ||
		    (before[0] == 0x0f && before[1] == 0x05))
			return; /* after a syscall: it may be in it */
		if (tracee_resume(PTRACE_SINGLESTEP, th->tid, 0) < 0 ||
		    next_stop(th->tid, 0, &s) < 0)
			return;
		if (s.kind == STOP_GONE || s.kind == STOP_NONE)
			return; /* gone (the next wait sees nothing of it) */
		if (s.kind != STOP_BREAK) {
			if (s.kind == STOP_SIGNAL)
				th->defer_sig = s.sig;
			return;
		}
	}
}

/*
 * With probes (session_kit set ev_size), the event memory made in the
 * process, unless a thread's GS base is in use (the areas go there) or its
 * seccomp filter does not let the system calls that make it through (or
 * cannot be read): then the traps time it, without the memory, and one
 * line says why.
 */
static void attach_memory(struct tracer *tr, struct tthread *lead)
{
	char why[512];
	int err;

	if (!tr->ev_size || tr->page)
		return;
	for (size_t i = 0; i < tr->thr.cap; i++) {
		const struct tthread *th = thr_at(tr, i);
		uint64_t gs = 1;

		if (th && (arch_get_tls2(th->tid, &gs) < 0 || gs != 0)) {
			fs_warn("--probes: the program's GS base is in use (thread %d): traps "
				"instead",
				(int)th->tid);
			return;
		}
	}
	if (tr->gate.err && !tr->gate.strict) {
		gate_unread(tr, why, sizeof(why));
		fs_warn("--probes: -p %d: %s, and might kill it for the system calls that make the "
			"probes' memory: traps instead",
			(int)tr->program, why);
		return;
	}
	err = attach_event_memory(tr, lead, why, sizeof(why));
	if (err)
		fs_warn("--probes: -p %d: %s: traps instead", (int)tr->program, why);
}

/*
 * Every thread held, the image patched with probes: each thread gets its
 * area (a slot after the page too), stamped now: its events come after.
 * The areas start with PROBE_F_TRAP; the shadow-stack check a launched
 * program makes at its first stop is made now, every thread held and no
 * return address rewritten yet, and lets them record in process.
 */
static void attach_areas(struct tracer *tr, struct tthread *lead)
{
	for (size_t i = 0; i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (!th)
			continue;
		thr_give_slot(tr, th);
		if (!tr->ps->probes)
			continue;
		thr_stamp(tr, th);
		probe_thread_new(tr, th, true);
	}
	if (tr->ps->probes && !tr->ps->shstk_checked)
		check_shstk(tr, lead);
}

/*
 * Every thread held: stepped out of the first bytes of timed routines,
 * note where each may resume (no stub may cover those
 * bytes) and which routines it is in (their frames cannot be timed), then
 * patch the image and the libraries already loaded. Returns 0 or -errno
 * (said).
 */
static int attach_patch(struct tracer *tr, struct trace_result *res)
{
	struct tthread *lead = thr_find(tr, tr->program);
	struct avoid a = {0};
	uint64_t(*x)[2];
	size_t nx = exec_ranges(tr->program, &x);
	uint64_t bias = 0, entry;
	int err;

	if (tr->ps->st->pie && auxv_get(tr->program, AT_ENTRY, &entry) == 0)
		bias = entry - tr->ps->st->e_entry;
	for (size_t i = 0; i < tr->thr.cap; i++)
		if (thr_at(tr, i)) {
			step_out(tr, thr_at(tr, i), bias);
			avoid_thread(tr, thr_at(tr, i)->tid, x, nx, &a);
		}
	free(x);
	fs_info(2, "%zu places where threads may resume: no stub covers them", a.n);
	tr->avoid_pc = a.v;
	tr->n_avoid = a.n;
	if (!lead) {
		fs_error("-p %d: its main thread has ended: cannot patch it", (int)tr->program);
		err = -ESRCH;
	} else {
		gate_read(tr);
		err = scratch_allowed(tr, lead, res);
	}
	if (!err) {
		attach_memory(tr, lead);
		err = setup_image(tr);
		if (!err && tr->ps->rdebug)
			modules_attach(tr, lead);
		if (!err)
			attach_areas(tr, lead);
	}
	for (size_t i = 0; !err && i < tr->thr.cap; i++)
		if (thr_at(tr, i))
			active_routines(tr, thr_at(tr, i)->tid, &res->active);
	tr->att.active = res->active; /* for the snapshots' headers */
	tr->avoid_pc = NULL;
	tr->n_avoid = 0;
	free(a.v);
	return err;
}

/*
 * Where the run's loop stops: the program's end, or a detach signal (its
 * stop in *first, else first->tid 0). A detach signal interrupts the wait.
 */
static void attach_loop(struct tracer *tr, struct stop *first)
{
	struct stop s;

	first->tid = 0;
	while (!tr->done && !detach_sig) {
		int err = run_stop(tr, NEXT_INTR, &s);

		if (err == -EINTR)
			continue;
		if (err < 0)
			break;
		if (detach_sig) {
			*first = s; /* the first stop of hold_all */
			break;
		}
		dispatch(tr, &s);
	}
}

static const char *sig_name(int sig)
{
	return sigabbrev_np(sig) ? sigabbrev_np(sig) : "?";
}

/* Attached, patched, timed until the end or a detach: into tr and res. */
static void attach_run(struct tracer *tr, const char *path, struct trace_result *res)
{
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGRTMIN};
	struct itimerspec it = {0};
	timer_t timer;
	bool timed = false;
	struct stop first;

	tr->ps->wall0 = wall_now();
	if (tr->o->duration_s > 0 && timer_create(CLOCK_MONOTONIC, &ev, &timer) == 0) {
		it.it_value.tv_sec = (time_t)tr->o->duration_s;
		it.it_value.tv_nsec =
		    (long)((tr->o->duration_s - (double)it.it_value.tv_sec) * 1e9);
		if (!it.it_value.tv_sec && !it.it_value.tv_nsec)
			it.it_value.tv_nsec = 1;
		timed = timer_settime(timer, 0, &it, NULL) == 0;
	}
	release_all(tr);
	fs_info(1, "-p %d: %zu routines patched: its threads run on", (int)tr->program,
		tr->ps->n_patches);
	ticker_start(tr, path);
	attach_loop(tr, &first);
	ticker_stop(tr);
	if (timed)
		timer_delete(timer);
	if (!tr->done) {
		hold_all(tr, first.tid ? &first : NULL);
		if (!tr->done && tr->thr.n)
			settle(tr);
		if (!tr->done && tr->thr.n) {
			detach_all(tr);
			res->detached = true;
		}
	}
	result_build(tr, path, wall_now(), false, res, NULL);
	if (res->detached) {
		int sig = detach_sig;

		if (sig == SIGRTMIN)
			snprintf(res->note, sizeof(res->note),
				 "detached after --duration=%g: the program runs on untraced",
				 tr->o->duration_s);
		else
			snprintf(res->note, sizeof(res->note),
				 "detached on SIG%s: the program runs on untraced", sig_name(sig));
		res->exit_status = 0;
	}
}

int trace_attach(struct symtab *st, struct books *books, struct names *names, struct names *exclude,
		 const struct trace_opts *o, const double est_ns[FS_N_CLOCKS],
		 struct trace_result *res)
{
	struct tracer tr = {.o = o, .names = names, .exclude = exclude};
	const struct pstate init = {.st = st, .books = books, .memfd = -1};
	struct sigaction sa = {.sa_handler = on_detach_signal}, old[4];
	const int sigs[4] = {SIGINT, SIGTERM, SIGHUP, SIGRTMIN};
	char path[PATH_MAX];
	int err;

	memset(res, 0, sizeof(*res));
	res->pid = o->pid;
	res->attached = true;
	proc_exe(o->pid, path, sizeof(path));
	ps_switch(&tr, ps_add(&tr, &init));
	session_kit(&tr, est_ns, true);
	tr.program = o->pid;
	tr.n_cpus = cpus_of(o->pid);
	tr.ps->leader = o->pid;
	detach_sig = 0;
	detach_wake = o->pid;
	sigemptyset(&sa.sa_mask);
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &sa, &old[i]);

	err = seize_all(&tr);
	if (err) {
		char comm[64];

		proc_status(o->pid, 0, "Name", comm, sizeof(comm));
		if (err == -EPERM)
			say_eperm(o->pid, comm);
		else
			fs_error("-p %d (%s): cannot attach: %s", o->pid, comm, strerror(-err));
		res->exit_status = err == -EPERM ? EXIT_FS_CANNOT : EXIT_FS_ERROR;
	}
	if (!err) {
		hold_all(&tr, NULL);
		tr.ps->memfd = tr.done ? -ESRCH : mem_open(tr.program);
		err = tr.ps->memfd < 0 ? tr.ps->memfd : 0;
		if (err)
			fs_error("-p %d: cannot open its memory: %s", o->pid, strerror(-err));
	}
	if (!err && o->exe_ino) {
		/* The symbols read are of the file it ran then: it may have exec'ed since. */
		uint64_t dev = 0, ino = 0;

		if (!exe_identity(o->pid, &dev, &ino) || dev != o->exe_dev || ino != o->exe_ino) {
			fs_error(
			    "-p %d: it exec'ed another program while fortstat attached: nothing "
			    "patched; try again",
			    o->pid);
			err = -ESTALE;
			res->exit_status = EXIT_FS_CANNOT;
		}
	}
	if (!err) {
		fs_info(1, "attached to %d (%s): %zu threads", o->pid, path, tr.thr.n);
		err = attach_patch(&tr, res);
	}
	if (err) {
		/* What was patched is removed again: the process goes on as it was. */
		if (!tr.done && tr.thr.n)
			hold_all(&tr, NULL);
		if (!tr.done && tr.thr.n)
			detach_all(&tr);
		if (!res->exit_status)
			res->exit_status = EXIT_FS_ERROR;
	} else {
		res->started = true;
		res->n_patched = tr.procs[0]->n_patches;
		attach_run(&tr, path, res);
	}
	detach_wake = 0;
	for (int i = 0; i < 4; i++)
		sigaction(sigs[i], &old[i], NULL);
	tracer_free(&tr);
	return err;
}
