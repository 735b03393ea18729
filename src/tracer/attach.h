/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * attach.h - -p's state (attach.c, detach.c): what a held thread and the
 * attach keep. Changed by attach.c and detach.c only; the others read it.
 * What attach.c calls of detach.c is in attach_int.h.
 */
#ifndef FORTSTAT_ATTACH_H
#define FORTSTAT_ATTACH_H

#include <stdbool.h>

/* A thread's part (struct tthread.att). */
struct attach_thr {
	bool held;	 /* stopped by fortstat to patch or to detach */
	bool held_group; /* ... in a group-stop (SIGSTOP): it stays stopped when let go */
};

/* The run's part (struct tracer.att). */
struct attach_state {
	const char *active; /* the routines active at attach (the result's) */
	/*
	 * Detaching, the threads are let go a moment (settle): their signals
	 * wait for the detach, and a hold acts on the stops they make meanwhile.
	 */
	bool settling;
};

#endif
