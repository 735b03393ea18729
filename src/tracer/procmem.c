// SPDX-License-Identifier: GPL-2.0-or-later
/* procmem.c - a stopped tracee's memory through /proc/PID/mem, and its auxv. */
#include "fortstat/procmem.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <unistd.h>

int mem_open(pid_t pid)
{
	char path[48];
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

int mem_read(int fd, uint64_t addr, void *buf, size_t n)
{
	ssize_t r = pread(fd, buf, n, (off_t)addr);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

int mem_write(int fd, uint64_t addr, const void *buf, size_t n)
{
	ssize_t r = pwrite(fd, buf, n, (off_t)addr);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

int auxv_get(pid_t pid, unsigned long type, uint64_t *val)
{
	char path[48];
	uint64_t av[2];
	int fd, err = -ENOENT;

	snprintf(path, sizeof(path), "/proc/%d/auxv", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (read(fd, av, sizeof(av)) == (ssize_t)sizeof(av) && av[0] != 0) {
		if (av[0] == type) {
			*val = av[1];
			err = 0;
			break;
		}
	}
	close(fd);
	return err;
}

uint64_t maps_end(pid_t pid, uint64_t addr, int exec_only)
{
	char path[48], line[512], perm[5] = "";
	uint64_t lo, hi, end = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return 0;
	while (!end && fgets(line, sizeof(line), f))
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s", &lo, &hi, perm) == 3 &&
		    addr >= lo && addr < hi && (!exec_only || perm[2] == 'x'))
			end = hi;
	fclose(f);
	return end;
}
