/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * clockkind.h - the two clocks of every stop, as the books, the profile and
 * the reports index them: a thread's CPU time, and wall time. How the
 * tracer reads them is its own (fortstat/clock.h).
 */
#ifndef FORTSTAT_CLOCKKIND_H
#define FORTSTAT_CLOCKKIND_H

/* The two clocks of every stop: a thread's CPU time, and wall time. */
enum clock_kind { CLOCK_KIND_CPU, CLOCK_KIND_WALL };
#define FS_N_CLOCKS 2

/* The clock's name in reports and options: "cpu" or "wall". */
const char *clock_name(enum clock_kind c);

#endif
