// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * gate.c - -p: what the attached threads' seccomp filters let fortstat run
 * in them (the system calls it injects: its code's mmap, the event
 * memory, sigaction). Read once at the attach; a launched program has no
 * filter of fortstat's concern (its filters come after fortstat's calls).
 */
#include <errno.h>
#include <linux/audit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fortstat/arch.h"
#include "fortstat/inject.h"
#include "fortstat/seccomp.h"
#include "fortstat/util.h"
#include "fortstat/procfs.h"
#include "tracer.h"

/* Thread tid's seccomp mode: 0 none, 1 strict, 2 filters (-1: unknown). */
static int seccomp_mode(pid_t pid, pid_t tid)
{
	return (int)proc_status_num(pid, tid, "Seccomp", 10, -1);
}

void gate_read(struct tracer *tr)
{
	for (size_t i = 0; i < tr->thr.cap; i++) {
		const struct tthread *th = thr_at(tr, i);
		struct scf_filters fs;
		int mode, err;

		if (!th)
			continue;
		mode = seccomp_mode(tr->program, th->tid);
		if (mode == 1)
			tr->gate.strict = true;
		if (mode != 2)
			continue;
		err = scf_read(th->tid, &fs);
		if (err) {
			if (err != -ESRCH)
				tr->gate.err = err;
			continue;
		}
		fs_info(2, "thread %d: %zu seccomp filters read", (int)th->tid, fs.n);
		tr->gate.sc = xrealloc(tr->gate.sc, (tr->gate.n + 1) * sizeof(*tr->gate.sc));
		tr->gate.sc[tr->gate.n++] = fs;
	}
}

void gate_unread(const struct tracer *tr, char *buf, size_t n)
{
	const char *need = "";

	if (tr->gate.err == -EACCES) /* the kernel's two reasons */
		need = seccomp_mode(getpid(), getpid()) > 0
			   ? ": fortstat runs under a seccomp filter itself"
			   : ": fortstat needs CAP_SYS_ADMIN";
	snprintf(buf, n, "its seccomp filter cannot be read (%s%s)", strerror(-tr->gate.err), need);
}

int syscall_gate(struct tracer *tr, pid_t tid, const char *what, long nr, const long args[6],
		 char *why, size_t n)
{
	struct scf_call c = {.nr = (int32_t)nr, .arch = AUDIT_ARCH_X86_64};
	char says[64];
	uint64_t pc = 0;

	if (tr->gate.strict) {
		snprintf(why, n, "%s: it runs in seccomp's strict mode (read, write, exit only)",
			 what);
		return 1;
	}
	if (!tr->gate.n && !tr->gate.err)
		return 0;
	/* where fortstat's code runs it: its scratch page, else at the thread's PC */
	if (tr->ps->scratch)
		c.ip = tr->ps->scratch + SCRATCH_SYSCALL + INJECT_SYSCALL_END;
	else if (arch_get_pc(tid, &pc) == 0)
		c.ip = pc + INJECT_SYSCALL_END;
	for (int i = 0; i < 6; i++)
		c.args[i] = (uint64_t)args[i];
	for (size_t i = 0; i < tr->gate.n; i++) {
		uint32_t ret;

		if (scf_eval(&tr->gate.sc[i], &c, &ret) < 0) {
			snprintf(why, n, "%s: its seccomp filter is not one fortstat can read",
				 what);
			return 2;
		}
		if (scf_effect(ret) != SCF_RUNS) {
			snprintf(why, n, "%s: its seccomp filter %s", what,
				 scf_says(ret, says, sizeof(says)));
			return 1;
		}
	}
	if (tr->gate.err) {
		snprintf(why, n, "%s: ", what);
		gate_unread(tr, why + strlen(why), n - strlen(why));
		return 2;
	}
	return 0;
}

void gate_free(struct gate *g)
{
	for (size_t i = 0; i < g->n; i++)
		scf_free(&g->sc[i]);
	free(g->sc);
	memset(g, 0, sizeof(*g));
}
