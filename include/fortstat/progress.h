/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress.h - the status line on standard error while the program runs.
 * On a terminal it is the last row, kept out of the scrolling region where
 * the program's output (and fortstat's messages) scroll, so that nothing is
 * ever written after it; the row is given back before the report. Into a
 * file or a pipe it is one line redrawn in place ("\r", erase to the end
 * of the line), erased before fortstat's own messages and the report.
 */
#ifndef FORTSTAT_PROGRESS_H
#define FORTSTAT_PROGRESS_H

#include <stddef.h>

#include "fortstat/trace.h"

/*
 * The status line's text for pg, e.g. "fortstat: 1:02:03, 1234567 calls,
 * 12/40 routines, 2 threads, 1 process", into buf (NUL-terminated,
 * truncated to size). Returns its length.
 */
size_t progress_format(char *buf, size_t size, const struct trace_progress *pg);

/*
 * Draw the status line for pg on standard error (one write, so that none
 * of the program's writes lands inside it), replacing the one shown. On a
 * terminal not when fortstat is in the background, TERM is unset or dumb,
 * or the program has the terminal out of its line mode (progress.c). In a
 * file or pipe fortstat's messages erase it first from now on (util.h).
 */
void progress_draw(const struct trace_progress *pg);

/* Erase the status line if one is shown (on a terminal: give its row back); nothing otherwise. */
void progress_erase(void);

#endif
