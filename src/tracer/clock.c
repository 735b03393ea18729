// SPDX-License-Identifier: GPL-2.0-or-later
/* clock.c - per-thread CPU clocks (schedstat, else perf task-clock) and the wall clock. */
#include "fortstat/clock.h"
#include "fortstat/usage.h"
#include "fortstat/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static int perf_refused; /* perf_event_open failed once: do not try it again */

static int perf_open(pid_t tid)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_TASK_CLOCK;
	return (int)syscall(SYS_perf_event_open, &attr, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/*
 * A thread's CPU clock: its sum_exec_runtime from schedstat, the time the
 * kernel itself counts as the thread's CPU time (getrusage, /proc, the
 * thread clocks), exact at a stop. A perf task-clock only where schedstat
 * cannot be read: it also runs while the host takes the CPU (a VM's steal
 * time) or an interrupt does, which the kernel's count leaves out; on a
 * loaded VM a routine that burned 0.05 s of its thread clock read 0.066 s
 * on it (and 0.525 s for 0.5 s of system calls).
 */
int fs_clock_open(struct fs_clock *c, int cpu, pid_t pid, pid_t tid)
{
	char path[64];

	c->fd = -1;
	if (!cpu) {
		c->src = FS_CLOCK_WALL;
		return 0;
	}
	proc_path(path, sizeof(path), pid, tid, "schedstat");
	c->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c->fd >= 0) {
		c->src = FS_CLOCK_SCHEDSTAT;
		return 0;
	}
	if (errno == ENOENT && kill(tid, 0) < 0 && errno == ESRCH)
		return -ESRCH;
	if (!perf_refused && !getenv("FORTSTAT_NO_PERF")) {
		c->fd = perf_open(tid);
		if (c->fd >= 0) {
			c->src = FS_CLOCK_PERF;
			return 0;
		}
		if (errno == ESRCH)
			return -ESRCH;
		perf_refused = 1;
	}
	return -errno;
}

uint64_t fs_clock_read(const struct fs_clock *c)
{
	struct timespec ts;
	uint64_t v = 0;
	char buf[96];
	ssize_t n;

	switch (c->src) {
	case FS_CLOCK_WALL:
		clock_gettime(CLOCK_MONOTONIC, &ts);
		return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	case FS_CLOCK_PERF:
		if (read(c->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
			return 0;
		return v;
	case FS_CLOCK_SCHEDSTAT:
		n = pread(c->fd, buf, sizeof(buf) - 1, 0);
		if (n <= 0)
			return 0;
		buf[n] = '\0';
		return strtoull(buf, NULL, 10);
	}
	return 0;
}

void fs_clock_close(struct fs_clock *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

const char *fs_clock_name(const struct fs_clock *c)
{
	switch (c->src) {
	case FS_CLOCK_WALL:
		return "CLOCK_MONOTONIC";
	case FS_CLOCK_PERF:
		return "perf task-clock";
	case FS_CLOCK_SCHEDSTAT:
		return "schedstat";
	}
	return "?";
}

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Does /proc/cpuinfo list the flag (a whole word on the flags line)? */
static int cpu_has_flag(const char *flag)
{
	char line[4096];
	size_t n = strlen(flag);
	FILE *f = fopen("/proc/cpuinfo", "r");
	int found = 0;

	if (!f)
		return 0;
	while (!found && fgets(line, sizeof(line), f)) {
		const char *p = line;

		if (strncmp(line, "flags", 5))
			continue;
		while ((p = strstr(p, flag))) {
			if (p[-1] == ' ' && (p[n] == ' ' || p[n] == '\n')) {
				found = 1;
				break;
			}
			p += n;
		}
		break; /* the first CPU's flags */
	}
	fclose(f);
	return found;
}

double fs_tsc_ns_per_tick(void)
{
	static double scale = -1;
	uint64_t t0, t1, w0, w1;

	if (scale >= 0)
		return scale;
	scale = 0;
	if (!cpu_has_flag("constant_tsc") || !cpu_has_flag("nonstop_tsc"))
		return scale;
	w0 = mono_ns();
	t0 = __rdtsc();
	do
		w1 = mono_ns();
	while (w1 - w0 < 500000);
	t1 = __rdtsc();
	if (t1 > t0)
		scale = (double)(w1 - w0) / (double)(t1 - t0);
	return scale;
}

/* /proc/TID/task/TID/FILE of thread tid into buf (NUL-terminated): 0 or -errno. */
static int read_task_file(pid_t tid, const char *file, char *buf, size_t size)
{
	char path[64];
	ssize_t n;
	int fd;

	proc_path(path, sizeof(path), tid, tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -ESRCH;
	buf[n] = '\0';
	return 0;
}

int fs_usage_read(pid_t tid, struct usage_reading *u)
{
	char buf[1024];
	int err = read_task_file(tid, "schedstat", buf, sizeof(buf));

	if (err)
		return err;
	u->run_ns = strtoull(buf, NULL, 10);
	err = read_task_file(tid, "stat", buf, sizeof(buf));
	if (err)
		return err;
	return usage_parse_stat(buf, &u->utime, &u->stime) < 0 ? -EINVAL : 0;
}
