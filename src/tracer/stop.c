// SPDX-License-Identifier: GPL-2.0-or-later
/* stop.c - a stop decoded into its kind: pure, no ptrace (see stop.h). */
#include "stop.h"

#include <signal.h>
#include <sys/ptrace.h>
#include <sys/wait.h>

#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "tracer.h"
#include "patches.h"

void stop_from_status(pid_t tid, int status, struct stop *s)
{
	int sig, event;

	*s = (struct stop){.kind = STOP_NONE, .tid = tid, .status = status};
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		s->kind = STOP_GONE;
		return;
	}
	if (!WIFSTOPPED(status))
		return;
	sig = WSTOPSIG(status);
	event = (unsigned)status >> 16;
	s->sig = sig;
	if (event == PTRACE_EVENT_STOP) {
		s->kind = sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU
			      ? STOP_GROUP
			      : STOP_INTERRUPT;
		return;
	}
	if (sig == SIGTRAP && event) {
		switch (event) {
		case PTRACE_EVENT_CLONE:
			s->kind = STOP_CLONE;
			break;
		case PTRACE_EVENT_FORK:
			s->kind = STOP_FORK;
			break;
		case PTRACE_EVENT_VFORK:
			s->kind = STOP_VFORK;
			break;
		case PTRACE_EVENT_EXEC:
			s->kind = STOP_EXEC;
			break;
		case PTRACE_EVENT_EXIT:
			s->kind = STOP_EXIT;
			break;
		default:
			s->kind = STOP_EVENT;
			break;
		}
		return;
	}
	s->kind = sig == SIGTRAP ? STOP_BREAK : STOP_SIGNAL;
}

/* A live patch of ps at index i, or NULL (the index comes from the program's page). */
static const struct patch *live_patch(const struct pstate *ps, uint64_t i)
{
	if (i >= ps->n_patches || ps->patches[i].dead)
		return NULL;
	return &ps->patches[i];
}

bool stop_from_page(const struct pstate *ps, struct stop *s)
{
	const struct patch *p;

	if (s->ev == INSN_EV_RETURN || s->ev == INSN_EV_RETURN_SITE) {
		s->kind = s->ev == INSN_EV_RETURN ? STOP_RETURN : STOP_RETURN_SITE;
		s->from_page = true;
		return true;
	}
	/* An entry stub writes its patch's index + 1; only a stub's word is trusted. */
	p = s->ev ? live_patch(ps, (uint64_t)s->ev - 1) : NULL;
	if (!p || !p->stub)
		return false;
	s->kind = STOP_ENTRY;
	s->patch = s->ev - 1;
	s->from_page = true;
	return true;
}

void stop_from_pc(const struct pstate *ps, bool count_only, uint64_t pc, struct stop *s)
{
	const struct patch *p;
	uint64_t idx;

	s->from_page = false;
	/*
	 * RIP-1 on one of our int3s is decisive: no instruction of the program
	 * starts at RIP there (we overwrote the first byte of one), so only our
	 * breakpoint can have left RIP at that address.
	 */
	if (!count_only && pc == ps->retrap_trap) {
		s->kind = STOP_RETURN;
		return;
	}
	if (!count_only && is_rsite_trap(ps, pc)) {
		s->kind = STOP_RETURN_SITE;
		return;
	}
	p = u64map_get(&ps->traps, pc, &idx) ? live_patch(ps, idx) : NULL;
	if (!p) {
		s->kind = STOP_SIGNAL; /* the program's own SIGTRAP */
		s->sig = SIGTRAP;
		return;
	}
	s->patch = (size_t)idx;
	if (p->rdebug)
		s->kind = STOP_RENDEZVOUS;
	else if (p->exit_probe)
		s->kind = STOP_EXIT_PROBE;
	else if (count_only)
		s->kind = STOP_COUNT;
	else if (p->unhook || p->rehook)
		s->kind = STOP_UNWINDER;
	else
		s->kind = STOP_ENTRY;
}

int stop_term_signal(int status)
{
	return WIFSIGNALED(status) ? WTERMSIG(status) : 0;
}

bool stop_exit_code(int status, int *code)
{
	if (!WIFEXITED(status))
		return false;
	*code = WEXITSTATUS(status);
	return true;
}

const char *stop_kind_name(enum stop_kind k)
{
	static const char *const names[STOP_N_KINDS] = {
	    [STOP_NONE] = "none",
	    [STOP_GONE] = "gone",
	    [STOP_BREAK] = "break",
	    [STOP_ENTRY] = "entry",
	    [STOP_UNWINDER] = "unwinder",
	    [STOP_COUNT] = "count",
	    [STOP_RETURN] = "return",
	    [STOP_RETURN_SITE] = "return-site",
	    [STOP_EXIT_PROBE] = "exit-probe",
	    [STOP_RENDEZVOUS] = "rendezvous",
	    [STOP_CLONE] = "clone",
	    [STOP_PROBE_FULL] = "probe-full",
	    [STOP_FORK] = "fork",
	    [STOP_VFORK] = "vfork",
	    [STOP_EXEC] = "exec",
	    [STOP_EXIT] = "exit",
	    [STOP_EVENT] = "event",
	    [STOP_GROUP] = "group-stop",
	    [STOP_INTERRUPT] = "interrupt",
	    [STOP_SIGNAL] = "signal",
	};

	return (unsigned)k < STOP_N_KINDS ? names[k] : "?";
}
