// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * evpage.c - the event page shared with the program: what a stop says without its
 * registers, and the stops' cost measured segment by segment with the TSC.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/futex.h>
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
#include "fortstat/procfs.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "tracer.h"
#include "evpage.h"

/*
 * Map the event page (the memfd the program inherited from fortstat) into
 * the program at its first exec stop, and close that descriptor there, before
 * any of the program's code runs.
 */
void map_event_page(struct tracer *tr)
{
	long args[6] = {0, (long)tr->ev_size, PROT_READ | PROT_WRITE, MAP_SHARED, tr->page_fd, 0},
	     ret;
	long cargs[6] = {tr->page_fd, 0, 0, 0, 0, 0};

	if (tr->page_fd < 0) {
		if (tr->mem_fd >= 0 && tr->page && !tr->ps->page_addr)
			exec_event_memory(tr);
		return;
	}
	if (inject_syscall(tr->ps->leader, tr->ps->memfd, SYS_mmap, args, &ret) == 0 && ret > 0)
		tr->ps->page_addr = (uint64_t)ret;
	inject_syscall(tr->ps->leader, tr->ps->memfd, SYS_close, cargs, &ret);
	tr->page_fd = -1; /* the program's first image only */
	fs_info(2, "event page at 0x%" PRIx64, tr->ps->page_addr);
}

int exec_event_memory(struct tracer *tr)
{
	pid_t pid = tr->ps->leader;
	char path[64];
	uint8_t old[sizeof(path)];
	long args[6] = {0}, fd = -1, addr = -1, ret;
	arch_regs regs;
	uint64_t at;
	int err;

	/*
	 * Its name below the red zone of the new stack, the bytes there put
	 * back after; not in a process whose /proc would give another file by
	 * that name (its own pid namespace's: a sandbox, a container).
	 */
	err = proc_fd_name_for(pid, tr->mem_fd, path, sizeof(path));
	if (!err)
		err = arch_get_regs(pid, &regs);
	if (err == -EXDEV)
		fs_info(1,
			"process %d: its /proc is not fortstat's (other pid or mount "
			"namespaces): no event memory in its new image, its calls trap",
			(int)pid);
	if (err)
		return err;
	at = (arch_sp(&regs) - 256) & ~(uint64_t)15;
	err = mem_read(tr->ps->memfd, at, old, sizeof(old));
	if (!err)
		err = mem_write(tr->ps->memfd, at, path, sizeof(path));
	if (err)
		return err;
	args[0] = AT_FDCWD;
	args[1] = (long)at;
	args[2] = O_RDWR | O_CLOEXEC;
	err = inject_syscall(pid, tr->ps->memfd, SYS_openat, args, &fd);
	mem_write(tr->ps->memfd, at, old, sizeof(old));
	if (!err && fd < 0)
		err = (int)fd;
	if (!err) {
		long margs[6] = {0, (long)tr->ev_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0};
		long cargs[6] = {fd, 0, 0, 0, 0, 0};

		err = inject_syscall(pid, tr->ps->memfd, SYS_mmap, margs, &addr);
		if (!err && (addr <= 0 || (unsigned long)addr >= -4096ul))
			err = addr < 0 && addr > -4096 ? (int)addr : -ENOMEM;
		/* the mapping holds the file */
		inject_syscall(pid, tr->ps->memfd, SYS_close, cargs, &ret);
	}
	if (err) {
		fs_info(1, "process %d: no event memory in its new image (%s): its calls trap",
			(int)pid, strerror(-err));
		return err;
	}
	tr->ps->page_addr = (uint64_t)addr;
	fs_info(2, "event memory mapped in process %d's new image at 0x%" PRIx64, (int)pid,
		tr->ps->page_addr);
	return 0;
}

/* A system call run in held thread th: in fortstat's scratch once there is one, else at RIP. */
static int attach_syscall(struct tracer *tr, struct tthread *th, long nr, const long args[6],
			  long *ret)
{
	return inject_syscall_at(th->tid, tr->ps->memfd,
				 tr->ps->scratch ? tr->ps->scratch + SCRATCH_SYSCALL : 0, nr, args,
				 ret, &th->defer_sig);
}

/* An address an injected mmap returned, or -errno. */
static int mapped(long addr)
{
	if (addr > 0 && (unsigned long)addr < -4096ul)
		return 0;
	return addr < 0 && addr > -4096 ? (int)addr : -ENOMEM;
}

/*
 * The event memory as shared anonymous memory the process maps (the
 * seccomp profiles in common use let mmap through), reached by fortstat
 * through /proc/PID/map_files/START-END: the kernel lets only
 * CAP_SYS_ADMIN or CAP_CHECKPOINT_RESTORE open it. Returns 0 and *addr,
 * *m, or -errno (nothing left in the process).
 */
static int anon_memory(struct tracer *tr, struct tthread *th, long *addr, void **m)
{
	long args[6] = {
	    0, (long)tr->ev_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0};
	char path[96];
	int err, fd;

	err = attach_syscall(tr, th, SYS_mmap, args, addr);
	if (!err)
		err = mapped(*addr);
	if (err)
		return err;
	snprintf(path, sizeof(path), "/proc/%d/map_files/%lx-%lx", (int)tr->ps->leader,
		 (unsigned long)*addr, (unsigned long)*addr + tr->ev_size);
	fd = open(path, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
	} else {
		*m = mmap(NULL, tr->ev_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (*m == MAP_FAILED)
			err = -errno;
		close(fd);
	}
	if (err) {
		long uargs[6] = {*addr, (long)tr->ev_size, 0, 0, 0, 0}, ret;

		attach_syscall(tr, th, SYS_munmap, uargs, &ret);
	}
	return err;
}

#define MEMFD_NAME "fortstat-events"

/*
 * The event memory as a memfd the process creates and maps, which fortstat
 * opens through /proc/PID/fd (no capability needed), the process's
 * descriptor closed again. Returns 0 and *addr, *m, or -errno.
 */
static int memfd_memory(struct tracer *tr, struct tthread *th, long *addr, void **m)
{
	static const char name[] = MEMFD_NAME;
	uint8_t old[sizeof(name)];
	long args[6] = {0}, fd = -1, ret;
	char path[64];
	arch_regs regs;
	uint64_t at;
	int err, mine = -1;

	/* Its name below the red zone of the thread's stack, the bytes there put back after. */
	err = arch_get_regs(th->tid, &regs);
	if (err)
		return err;
	at = (arch_sp(&regs) - 256) & ~(uint64_t)15;
	err = mem_read(tr->ps->memfd, at, old, sizeof(old));
	if (!err)
		err = mem_write(tr->ps->memfd, at, name, sizeof(name));
	if (err)
		return err;
	args[0] = (long)at;
	args[1] = MFD_CLOEXEC;
	err = attach_syscall(tr, th, SYS_memfd_create, args, &fd);
	mem_write(tr->ps->memfd, at, old, sizeof(old));
	if (!err && fd < 0)
		err = (int)fd;
	if (err)
		return err;
	/* The process's descriptor, opened here through /proc: the same file. */
	snprintf(path, sizeof(path), "/proc/%d/fd/%ld", (int)tr->ps->leader, fd);
	mine = open(path, O_RDWR | O_CLOEXEC);
	if (mine < 0 || ftruncate(mine, (off_t)tr->ev_size) < 0)
		err = -errno;
	else if ((*m = mmap(NULL, tr->ev_size, PROT_READ | PROT_WRITE, MAP_SHARED, mine, 0)) ==
		 MAP_FAILED)
		err = -errno;
	if (!err) {
		args[0] = 0;
		args[1] = (long)tr->ev_size;
		args[2] = PROT_READ | PROT_WRITE;
		args[3] = MAP_SHARED;
		args[4] = fd;
		args[5] = 0;
		err = attach_syscall(tr, th, SYS_mmap, args, addr);
		if (!err)
			err = mapped(*addr);
	}
	memset(args, 0, sizeof(args));
	args[0] = fd;
	attach_syscall(tr, th, SYS_close, args, &ret); /* the mapping holds the file */
	if (mine >= 0)
		close(mine);
	if (err && *m != MAP_FAILED) {
		munmap(*m, tr->ev_size);
		*m = MAP_FAILED;
	}
	return err;
}

/* Would the process's filters let every one of n calls through? 0, else why in buf. */
static int gates(struct tracer *tr, struct tthread *th, const char *const what[], const long nr[],
		 const long (*args)[6], size_t n, char *why, size_t size)
{
	for (size_t i = 0; i < n; i++)
		if (syscall_gate(tr, th->tid, what[i], nr[i], args[i], why, size))
			return -EPERM;
	return 0;
}

int attach_event_memory(struct tracer *tr, struct tthread *th, char *why, size_t n)
{
	const long size = (long)tr->ev_size, fd = 3; /* a descriptor: the filter is asked before */
	static const char *const anon_what[] = {"mmap of shared memory", "munmap"};
	static const char *const memfd_what[] = {"memfd_create", "mmap of a memfd", "close",
						 "munmap"};
	const long anon_nr[] = {SYS_mmap, SYS_munmap};
	const long memfd_nr[] = {SYS_memfd_create, SYS_mmap, SYS_close, SYS_munmap};
	const long anon_args[][6] = {
	    {0, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0},
	    {0, size, 0, 0, 0, 0},
	};
	const long memfd_args[][6] = {
	    {0, MFD_CLOEXEC, 0, 0, 0, 0},
	    {0, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0},
	    {fd, 0, 0, 0, 0, 0},
	    {0, size, 0, 0, 0, 0},
	};
	const char *how = "shared anonymous memory, through /proc/PID/map_files";
	char first[256] = "";
	void *m = MAP_FAILED;
	long addr = -1;
	int err;

	err = gates(tr, th, anon_what, anon_nr, anon_args, 2, first, sizeof(first));
	if (!err) {
		err = anon_memory(tr, th, &addr, &m);
		if (err)
			snprintf(
			    first, sizeof(first), "%s (%s)",
			    err == -EPERM || err == -EACCES
				? "fortstat may not open its memory through /proc/PID/map_files"
				: "no shared memory in it",
			    strerror(-err));
	}
	if (err) { /* a memfd instead */
		how = "a memfd";
		if (gates(tr, th, memfd_what, memfd_nr, memfd_args, 4, why, n)) {
			char second[256];

			snprintf(second, sizeof(second), "%s", why);
			snprintf(why, n, "%s; %s", first, second);
			return -EPERM;
		}
		fs_info(1, "-p %d: %s: a memfd instead", (int)tr->ps->leader, first);
		err = memfd_memory(tr, th, &addr, &m);
		if (err) {
			snprintf(why, n, "%s; no memfd either (%s)", first, strerror(-err));
			return err;
		}
	}
	tr->page = m;
	tr->ps->page_addr = (uint64_t)addr;
	evpage_alive_start(tr);
	fs_info(2, "event memory made in process %d at 0x%" PRIx64 " (%s)", (int)tr->ps->leader,
		tr->ps->page_addr, how);
	return 0;
}

static struct robust_list_head alive_head; /* fortstat's private memory, never the program's */
static struct robust_list alive_node;
static struct robust_list_head *alive_saved; /* the C library's list */
static size_t alive_saved_len;
static bool alive_on;

void evpage_alive_start(struct tracer *tr)
{
	volatile uint32_t *w = (volatile uint32_t *)(void *)((char *)tr->page + EV_ALIVE);

	*w = (uint32_t)gettid() & EV_ALIVE_TID;
	/* the word of this memory (a run that was not ended named another) */
	alive_head.futex_offset = (long)((uintptr_t)w - (uintptr_t)&alive_node);
	if (alive_on)
		return;
	if (syscall(SYS_get_robust_list, 0, &alive_saved, &alive_saved_len) < 0)
		alive_saved = NULL;
	alive_node.next = &alive_head.list;
	alive_head.list.next = &alive_node;
	alive_head.list_op_pending = NULL;
	if (syscall(SYS_set_robust_list, &alive_head, sizeof(alive_head)) == 0)
		alive_on = true;
	else
		fs_info(1,
			"no robust futex list (%s): a program outlives a killed fortstat only "
			"until its next full ring",
			strerror(errno));
}

void evpage_alive_end(struct tracer *tr)
{
	if (!tr->page)
		return;
	*(volatile uint32_t *)(void *)((char *)tr->page + EV_ALIVE) = 0;
	if (!alive_on)
		return;
	if (alive_saved)
		syscall(SYS_set_robust_list, alive_saved, alive_saved_len);
	alive_on = false;
}

void detach_event_memory(struct tracer *tr, struct tthread *th)
{
	long args[6] = {(long)tr->ps->page_addr, (long)tr->ev_size, 0, 0, 0, 0}, ret = -1;
	int err;

	if (!tr->ps->page_addr)
		return;
	err = attach_syscall(tr, th, SYS_munmap, args, &ret);
	if (err || ret)
		fs_warn("-p %d: fortstat's shared memory is left mapped in it (at 0x%" PRIx64
			"): %s",
			(int)tr->ps->leader, tr->ps->page_addr, strerror(err ? -err : (int)-ret));
	else
		fs_info(2, "event memory unmapped from process %d", (int)tr->ps->leader);
	tr->ps->page_addr = 0;
}

void fork_child_memory(struct tracer *tr, pid_t pid, int fd, int *deferred)
{
	long args[6] = {(long)tr->ps->page_addr, (long)tr->ev_size, 0, 0, 0, 0}, ret = -1;
	int err;

	if (!tr->o->pid || !tr->ps->page_addr)
		return;
	arch_set_tls2(pid, 0); /* every thread's was 0 at the attach */
	err = inject_syscall_at(pid, fd, tr->ps->scratch ? tr->ps->scratch + SCRATCH_SYSCALL : 0,
				SYS_munmap, args, &ret, deferred);
	if (err || ret)
		fs_info(1, "forked child %d: fortstat's shared memory is left mapped in it: %s",
			(int)pid, strerror(err ? -err : (int)-ret));
}

/*
 * May the stop's facts be taken from the event page? Only while the
 * program has had a single thread and a single process: with two, their
 * writes could cross (the page is shared by all of them).
 */
bool fast_ok(struct tracer *tr)
{
	if (!tr->page || !tr->ps->page_addr || tr->fast_off)
		return false;
	if (tr->thr.n > 1 || tr->n_procs > 1) {
		tr->fast_off = true;
		return false;
	}
	return true;
}

/* Thread th's slot, on fortstat's side. */
struct insn_event_page *thr_slot_page(struct tracer *tr, const struct tthread *th)
{
	return (struct insn_event_page *)((char *)tr->page + EV_PAGE +
					  (size_t)th->seg.slot * INSN_EV_SLOT_SIZE);
}

/*
 * A stop's overhead joins thread th's, for its net times (thr_vtime): what
 * was measured (o_c on the CPU clock, o_w on the wall; NAN: nothing), or
 * the mean of what was measured so far, or before 100 measures the
 * calibration's. A CPU-clock measure under half that is a segment whose
 * thread was preempted (the CPU clock stopped, the TSC did not): the mean
 * stands for it. `r`: what the stubs' own code took of the segment the
 * stop ends (calibrated, trace_opts.seg_resid_ns), charged with it.
 */
static void ovh_add(struct tracer *tr, struct tthread *th, double o_c, double o_w, double r)
{
	bool warm = tr->seg.acc_n >= 100;
	double mc = warm ? tr->seg.acc_c / tr->seg.acc_n : tr->seg.est[CLOCK_KIND_CPU];
	double mw = warm ? tr->seg.acc_w / tr->seg.acc_n : tr->seg.est[CLOCK_KIND_WALL];

	if (!isnan(o_c) && !isnan(o_w) && o_c >= mc / 2) {
		tr->seg.acc_n++;
		tr->seg.acc_c += o_c;
		tr->seg.acc_w += o_w;
	} else {
		o_c = mc;
		if (isnan(o_w))
			o_w = mw;
	}
	o_c += r;
	o_w += r;
	th->seg.last_ovh[CLOCK_KIND_CPU] = o_c; /* a goroutine's too (golang.c) */
	th->seg.last_ovh[CLOCK_KIND_WALL] = o_w;
	books_stop_cost(tr->ps->books, th->tid, (double[FS_N_CLOCKS]){o_c, o_w});
}

void stop_cost_mean(const struct tracer *tr, double out[FS_N_CLOCKS])
{
	bool warm = tr->seg.acc_n >= 100;

	out[CLOCK_KIND_CPU] = warm ? tr->seg.acc_c / tr->seg.acc_n : tr->seg.est[CLOCK_KIND_CPU];
	out[CLOCK_KIND_WALL] = warm ? tr->seg.acc_w / tr->seg.acc_n : tr->seg.est[CLOCK_KIND_WALL];
}

void trap_cost(const struct tracer *tr, const struct pstate *ps, double out[FS_N_CLOCKS])
{
	stop_cost_mean(tr, out);
	for (int k = 0; k < FS_N_CLOCKS; k++)
		out[k] = tr->o->count_only ? 0 : (double)ps->n_trap_stops * out[k];
}

/*
 * One segment of thread th measured: it ends at TSC t_trap, `ev` holds its
 * t_go; `kind` the stop that ends it (SEG_ENTRY, SEG_RETURN).
 */
static void seg_add(struct tracer *tr, struct tthread *th, uint64_t t_trap,
		    struct insn_event_page *ev, uint64_t c, uint64_t w, int kind)
{
	double r = tr->o->seg_resid_ns[kind];

	if (th->seg.ok && ev->t_go && t_trap > ev->t_go) {
		double u = (double)(t_trap - ev->t_go) * tr->tsc_ns;
		double o_c = NAN, o_w = (double)(w - th->seg.w) - u;

		if (u < SEG_U_MAX) {
			tr->seg.u_sum[kind] += u;
			tr->seg.u_n[kind]++;
		}
		if (th->clk.src != FS_CLOCK_WALL) {
			o_c = (double)(c - th->seg.c) - u;
			acct_ovh_add(tr->seg.ovh[0], o_c);
		}
		acct_ovh_add(tr->seg.ovh[1], o_w);
		ovh_add(tr, th, o_c, o_w, r);
	} else {
		ovh_add(tr, th, NAN, NAN, r);
	}
	th->seg.ok = true;
	th->seg.c = c;
	th->seg.w = w;
	ev->t_go = 0;
}

/*
 * Measure the segment a breakpoint stop ends. An entry stub's or a return
 * site's stop leaves the TSC of just before its int3 on the event page,
 * and the code resumed after the previous such stop left the TSC of just
 * after it (t_go, cleared here at every one): in between the program ran
 * its own code. What the clocks advanced beyond that is the stops' cost.
 * Any other stop (an int3 patch, the common return trap) breaks the chain.
 * Returns true when the stop's cost was taken here (once: seg_slow must not
 * take it again), false when seg_slow is to measure it.
 */
bool seg_measure(struct tracer *tr, struct tthread *th, uint32_t ev)
{
	struct insn_event_page *pg = tr->page;
	uint64_t c = th->now.t[CLOCK_KIND_CPU], w = th->now.t[CLOCK_KIND_WALL];

	if (!fast_ok(tr))
		return false; /* seg_slow, once the registers are read */
	if (!tr->seg.ovh[0] || !ev || ev == INSN_EV_RETURN) {
		th->seg.ok = false;
		ovh_add(tr, th, NAN, NAN, 0);
		return true;
	}
	seg_add(tr, th, pg->t_trap, pg, c, w, ev == INSN_EV_RETURN_SITE ? SEG_RETURN : SEG_ENTRY);
	return true;
}

/*
 * The same measure when the shared page cannot be trusted (more than one
 * thread or process): the stub or the return site's trap left t_trap where
 * the registers hold it (arch_trap_tsc); the register through which it
 * addresses the page (`how`: a stub's, a return site's, or SEG_NO_TSC for
 * a stop with no timestamps) is pointed at the thread's own slot, where the
 * code after the int3 writes t_go and reads the hook pair. Costs one
 * register write on a path that already reads all the registers.
 */
void seg_slow(struct tracer *tr, struct tthread *th, arch_regs *regs, enum seg_how how)
{
	uint64_t c = th->now.t[CLOCK_KIND_CPU], w = th->now.t[CLOCK_KIND_WALL];
	uint64_t addr;

	if (how == SEG_NO_TSC || !tr->seg.ovh[0] || th->seg.slot < 0 || !tr->ps->page_addr) {
		th->seg.ok = false;
		ovh_add(tr, th, NAN, NAN, 0);
		return;
	}
	addr = tr->ps->page_addr + EV_PAGE + (uint64_t)th->seg.slot * INSN_EV_SLOT_SIZE;
	if (arch_point_page_reg(th->tid, regs,
				how == SEG_STUB ? ARCH_PAGE_REG_STUB : ARCH_PAGE_REG_RSITE,
				addr) < 0) {
		th->seg.ok = false;
		ovh_add(tr, th, NAN, NAN, 0);
		return;
	}
	seg_add(tr, th, arch_trap_tsc(regs), thr_slot_page(tr, th), c, w,
		how == SEG_RSITE ? SEG_RETURN : SEG_ENTRY);
}

/* Is pc inside code fortstat wrote for the process (a stub, a return site's trap)? */
static bool in_our_code(const struct pstate *ps, uint64_t pc)
{
	if (ps->rsites && pc >= ps->rsites && pc < ps->rsites + RSITE_MAX * INSN_RSITE_SIZE)
		return true;
	if (ps->probe_tramp && pc >= ps->probe_tramp &&
	    pc < ps->probe_tramp + INSN_PROBE_TRAMP_SIZE)
		return true;
	for (size_t i = 0; i < ps->n_patches; i++) {
		const struct patch *p = &ps->patches[i];

		if (p->stub && !p->dead && pc >= p->slot && pc < p->slot + INSN_STUB_SIZE)
			return true;
	}
	return false;
}

/*
 * A program may forbid rdtsc (prctl PR_SET_TSC, PR_TSC_SIGSEGV: sandboxes,
 * record-and-replay): then the stubs' and return sites' TSC reads fault.
 * Such a SIGSEGV is fortstat's, not the program's: the rdtsc becomes a
 * 2-byte nop (the stores that follow write what RAX and RDX held, restored
 * right after), the thread goes on, and the run's stops are not measured
 * any more (the calibration's f1 and f2 stand). Returns 1 when it was that.
 */
int rdtsc_refused(struct tracer *tr, struct tthread *th)
{
	static const uint8_t rdtsc[2] = {0x0f, 0x31}, nop2[2] = {0x66, 0x90};
	uint8_t code[2];
	uint64_t pc;

	if (arch_get_pc(th->tid, &pc) < 0 || !in_our_code(tr->ps, pc) ||
	    mem_read(tr->ps->memfd, pc, code, 2) < 0 || memcmp(code, rdtsc, 2) ||
	    mem_write(tr->ps->memfd, pc, nop2, 2) < 0)
		return 0;
	if (tr->ps->probes && probe_tsc_refused(tr)) {
		fs_warn("the program forbids rdtsc (PR_SET_TSC): calls are counted, but timed only "
			"between stops from now on (use --traps)");
	}
	if (tr->seg.ovh[0]) {
		fs_info(1, "the program forbids rdtsc (PR_SET_TSC): stops not measured in the run");
		free(tr->seg.ovh[0]);
		free(tr->seg.ovh[1]);
		tr->seg.ovh[0] = tr->seg.ovh[1] = NULL;
	}
	return 1;
}
