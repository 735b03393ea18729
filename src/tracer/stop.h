/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * stop.h - a stop, named. What the kernel (the wait status) and the event
 * page (the event word) say about one stop of a traced thread, decoded into
 * a kind with its facts, without a ptrace call: the dispatcher reads
 * registers only when the event word does not decide, and then acts on the
 * kind alone (strace's trace_event.h, ltrace's handle_event.c).
 */
#ifndef FORTSTAT_STOP_H
#define FORTSTAT_STOP_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pstate;

enum stop_kind {
	STOP_NONE,	  /* a status that is no stop: nothing to do */
	STOP_GONE,	  /* the thread ended (exited, or killed by a signal): `status` */
	STOP_BREAK,	  /* a SIGTRAP that may be a breakpoint of ours: decode it further */
	STOP_ENTRY,	  /* a timed routine entered (stub or int3 patch): `patch` */
	STOP_UNWINDER,	  /* an unwinder entry, or a catch handler's start: `patch` */
	STOP_COUNT,	  /* an entry that is counted only (-c), registers unread: `patch` */
	STOP_RETURN,	  /* the common return trap: the tracer sets RIP */
	STOP_RETURN_SITE, /* a return site's own trap: it jumps back by itself */
	STOP_EXIT_PROBE,  /* a Go routine's own `ret`, an int3 on it: `patch` (golang.c) */
	STOP_RENDEZVOUS,  /* the dynamic linker's _dl_debug_state: libraries changed */
	STOP_PROBE_FULL,  /* an in-process probe found its thread's ring full */
	STOP_CLONE,	  /* PTRACE_EVENT_CLONE: a new thread, or a process sharing memory */
	STOP_FORK,	  /* PTRACE_EVENT_FORK */
	STOP_VFORK,	  /* PTRACE_EVENT_VFORK */
	STOP_EXEC,	  /* PTRACE_EVENT_EXEC: the thread's process has a new image */
	STOP_EXIT,	  /* PTRACE_EVENT_EXIT: the thread is about to exit */
	STOP_EVENT,	  /* another ptrace event: resume */
	STOP_GROUP,	  /* a group-stop (SIGSTOP, SIGTSTP, SIGTTIN, SIGTTOU): stay stopped */
	STOP_INTERRUPT,	  /* a PTRACE_EVENT_STOP that is no group-stop: resume */
	STOP_SIGNAL,	  /* a signal for the program, `sig`: deliver it unchanged */
	STOP_N_KINDS
};

struct stop {
	enum stop_kind kind;
	pid_t tid;
	int status;   /* the wait status */
	int sig;      /* STOP_SIGNAL, STOP_GROUP, STOP_INTERRUPT: the signal */
	uint32_t ev;  /* what the event page said at this stop (0: nothing) */
	size_t patch; /* STOP_ENTRY, STOP_UNWINDER, STOP_COUNT, STOP_EXIT_PROBE, STOP_RENDEZVOUS */
	bool from_page; /* decided by the event word: no register was read */
	bool si_read;	/* si was asked for (stop_siginfo, wait.c) ... */
	bool si_ok;	/* ... and read */
	siginfo_t si;	/* the signal's siginfo, read once when a decision needs it */
};

/* First step: what the wait status of thread tid says. Fills every field but ev. */
void stop_from_status(pid_t tid, int status, struct stop *s);

/*
 * A STOP_BREAK whose event word s->ev came from a page that can be trusted
 * (one thread, one process): decide it from the word and the process's
 * patches alone. Returns true (kind set, from_page) or false when the
 * word does not decide (then read the registers: stop_from_pc).
 */
bool stop_from_page(const struct pstate *ps, struct stop *s);

/*
 * A STOP_BREAK decided by the address of the int3 that stopped it (RIP - 1):
 * one of ours (entry, unwinder hook, rendezvous, a Go routine's exit probe;
 * with count_only a STOP_COUNT, and no return traps) or, when nothing of ours is there, a
 * SIGTRAP of the program's own (STOP_SIGNAL).
 */
void stop_from_pc(const struct pstate *ps, bool count_only, uint64_t pc, struct stop *s);

/*
 * How a thread or process ended, from its wait status (a STOP_GONE's): the
 * signal that killed it, 0 when none did.
 */
int stop_term_signal(int status);

/* True, with its exit status in *code, when it exited (else *code untouched). */
bool stop_exit_code(int status, int *code);

/* The kind's name, for messages and tests ("entry", "return-site", ...). */
const char *stop_kind_name(enum stop_kind k);

#endif
