// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * wait.c - the tracer's one wait and one resume: every phase (the run, -p's
 * run, holding and stepping threads for a detach, a new child's first
 * stop, the exec of a launched program) waits in next_stop, which names
 * what it waited for (stop.h's struct stop: thread, wait status, kind,
 * signal; its siginfo read once when a decision asks, stop_siginfo), and
 * sets threads going or stops them with tracee_resume, which takes a
 * thread that vanished (ESRCH) as the news it is in one place.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "fortstat/util.h"
#include "stop.h"
#include "tracer.h"
#include "wait.h"

/* The next stop (waitpid, every kind of thread). */
int next_stop(pid_t tid, int how, struct stop *s)
{
	for (;;) {
		int status;
		pid_t w;

		w = waitpid(tid, &status, __WALL | ((how & NEXT_POLL) ? WNOHANG : 0));
		if (w > 0) {
			stop_from_status(w, status, s);
			return 1;
		}
		if (w == 0)
			return 0;
		if (errno != EINTR || (how & NEXT_INTR))
			return -errno;
	}
}

const siginfo_t *stop_siginfo(struct stop *s)
{
	if (!s->si_read) {
		s->si_read = true;
		s->si_ok = ptrace(PTRACE_GETSIGINFO, s->tid, 0, &s->si) == 0;
	}
	return s->si_ok ? &s->si : NULL;
}

/* The names of the requests tracee_resume makes, for its message. */
static const char *request_name(int op)
{
	switch (op) {
	case PTRACE_CONT:
		return "PTRACE_CONT";
	case PTRACE_LISTEN:
		return "PTRACE_LISTEN";
	case PTRACE_SINGLESTEP:
		return "PTRACE_SINGLESTEP";
	case PTRACE_DETACH:
		return "PTRACE_DETACH";
	case PTRACE_INTERRUPT:
		return "PTRACE_INTERRUPT";
	default:
		return "ptrace";
	}
}

int tracee_resume(int op, pid_t tid, int sig)
{
	int e;

	if (ptrace((enum __ptrace_request)op, tid, 0, (void *)(uintptr_t)sig) == 0)
		return 0;
	e = errno;
	if (e != ESRCH)
		fs_info(2, "thread %d: %s: %s", (int)tid, request_name(op), strerror(e));
	return -e;
}
