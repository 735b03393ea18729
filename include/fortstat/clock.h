/* SPDX-License-Identifier: GPL-2.0-or-later */
/* clock.h - the clocks fortstat reads at every stop: a thread's CPU time, or wall time. */
#ifndef FORTSTAT_CLOCK_H
#define FORTSTAT_CLOCK_H

#include <stdint.h>
#include <sys/types.h>

#include "fortstat/clockkind.h" /* enum clock_kind, FS_N_CLOCKS: core's */

enum fs_clock_src {
	FS_CLOCK_WALL,	    /* CLOCK_MONOTONIC */
	FS_CLOCK_PERF,	    /* perf_event task-clock of one thread (a file descriptor) */
	FS_CLOCK_SCHEDSTAT, /* /proc/PID/task/TID/schedstat (when perf_event_open is refused) */
};

struct fs_clock {
	enum fs_clock_src src;
	int fd;
};

/*
 * Open the clock of thread `tid` of process `pid`: wall (cpu == 0), or its
 * CPU time (schedstat's sum_exec_runtime, the kernel's own count; a perf
 * task-clock where it cannot be read). Returns 0 or a negative errno (the
 * thread is gone).
 */
int fs_clock_open(struct fs_clock *c, int cpu, pid_t pid, pid_t tid);

/* Read the clock in nanoseconds. On error (thread gone) returns 0. */
uint64_t fs_clock_read(const struct fs_clock *c);

void fs_clock_close(struct fs_clock *c);

struct usage_reading;

/*
 * Read thread tid's CPU time as the kernel keeps it (usage.h): its total
 * from /proc/TID/task/TID/schedstat (ns), its user and system ticks from
 * .../stat. Exact for a stopped thread; a running one's total may lag by
 * up to a tick. Returns 0, or a negative errno (the thread is gone).
 */
int fs_usage_read(pid_t tid, struct usage_reading *u);

/* Name of the source, for -v ("perf task-clock", "schedstat", "CLOCK_MONOTONIC"). */
const char *fs_clock_name(const struct fs_clock *c);

/*
 * Nanoseconds per tick of the TSC (what the stubs read, see insn.h),
 * measured against CLOCK_MONOTONIC over half a millisecond the first time
 * (about 1e-4 relative). 0 when the TSC does not advance steadily
 * (no constant_tsc: then nothing is measured with it).
 */
double fs_tsc_ns_per_tick(void);

#endif
