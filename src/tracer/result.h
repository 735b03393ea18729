/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * result.h - the result of a run, at its end or as a snapshot (result.c).
 * The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_RESULT_H
#define FORTSTAT_TRACER_RESULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct books;
struct trace_result;
struct tracer;

/*
 * How the run went as of wall time now (ns), into *res (zeroed by the
 * caller): the program's section in res itself, every other process's
 * (-f) in res->sections, named `path` when it has not exec'ed. At the end
 * (!snapshot) the books are closed in place and the threads' times handed
 * over, the warnings said (-l, routines refused) and the program's exit
 * taken from tr->status; a snapshot gets copies closed at each live
 * thread's clocks of now, the program's books in *main_books (the
 * caller's to free), and says what still runs.
 */
void result_build(struct tracer *tr, const char *path, uint64_t now, bool snapshot,
		  struct trace_result *res, struct books **main_books);

#endif
