/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * progress.h - the status line on standard error while the program runs:
 * one line, redrawn in place ("\r", erase to the end of the line), erased
 * before fortstat's own messages and before the report, so that neither
 * is ever written after it on the same line.
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
 * Draw the status line for pg on standard error (one write), replacing the
 * one shown. From now on fortstat's messages erase it first (util.h).
 */
void progress_draw(const struct trace_progress *pg);

/* Erase the status line if one is shown; nothing otherwise. */
void progress_erase(void);

#endif
