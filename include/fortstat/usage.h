/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * usage.h - user and system time as the kernel counts them, and what the
 * CONVEX report and csh's time derive from them: utilisation (%P) and the
 * concurrency factor (%C). Pure: the readings come from the tracer
 * (fs_usage_read, clock.h), the arithmetic is here.
 *
 * A thread's CPU time is read twice from /proc: its total in nanoseconds
 * (schedstat's first field, the scheduler's sum_exec_runtime) and its user
 * and system ticks (stat's utime and stime, clock ticks of 10 ms). The
 * total is exact; the ticks only say how it divides, as the kernel itself
 * divides it for getrusage (cputime_adjust): the split is as good as the
 * number of ticks (a thread that ran 50 ms has about five).
 */
#ifndef FORTSTAT_USAGE_H
#define FORTSTAT_USAGE_H

#include <stdbool.h>
#include <stdint.h>

/* One reading of a thread's CPU time. */
struct usage_reading {
	uint64_t run_ns; /* CPU time so far, ns (schedstat) */
	uint64_t utime;	 /* user ticks (stat field 14) */
	uint64_t stime;	 /* system ticks (stat field 15) */
};

/* User and system time over an interval, ns. */
struct usage_split {
	uint64_t user_ns;
	uint64_t sys_ns;
};

/*
 * Fields 14 and 15 (utime, stime) of a /proc/PID/task/TID/stat line `buf`
 * (NUL-terminated), counted after the last ')' (the command name may hold
 * spaces and parentheses). Returns 0, or -1 when the line has not enough
 * fields or one is not a number.
 */
int usage_parse_stat(const char *buf, uint64_t *utime, uint64_t *stime);

/*
 * The CPU time between readings a (earlier) and b, split into user and
 * system time in the ratio of the ticks between them, as the kernel splits
 * a total (cputime_adjust): no system tick, all user; no user tick, all
 * system. A reading that went backwards counts nothing.
 */
struct usage_split usage_between(const struct usage_reading *a, const struct usage_reading *b);

/*
 * The concurrency factor (CONVEX's and csh's %C): CPU time over elapsed
 * time, the number of CPUs kept busy on average. NAN when elapsed_s <= 0.
 */
double usage_concurrency(double cpu_s, double elapsed_s);

/*
 * Utilisation, percent (csh's %P scaled by the processors, as the CONVEX
 * report has it): CPU time over elapsed time times the CPUs available.
 * NAN when elapsed_s <= 0 or n_cpus < 1.
 */
double usage_utilisation(double cpu_s, double elapsed_s, int n_cpus);

/*
 * The time a routine waited (I/O, locks, sleep, preemption): its wall time
 * less its CPU time, ns; 0 when the CPU time is the larger (the two clocks
 * are read at the same stops, so only their resolution can make it so).
 */
uint64_t usage_wait_ns(uint64_t wall_ns, uint64_t cpu_ns);

#endif
