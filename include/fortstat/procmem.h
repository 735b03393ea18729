/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procmem.h - reading and writing a stopped tracee's memory, and its auxiliary vector. */
#ifndef FORTSTAT_PROCMEM_H
#define FORTSTAT_PROCMEM_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Open /proc/PID/mem for reading and writing. Returns an fd or a negative errno. */
int mem_open(pid_t pid);

/*
 * Read or write n bytes at addr of the tracee whose mem fd is `fd`. Writes
 * go through read-only and execute-only mappings (the kernel forces them for
 * a tracer). Return 0, or a negative errno (short transfer: -EIO).
 */
int mem_read(int fd, uint64_t addr, void *buf, size_t n);
int mem_write(int fd, uint64_t addr, const void *buf, size_t n);

/* Value of auxv entry `type` of process pid. Returns 0 or a negative errno. */
int auxv_get(pid_t pid, unsigned long type, uint64_t *val);

/*
 * The end of the mapping of process pid (/proc/PID/maps) that holds addr,
 * of an executable one only when `exec_only`; 0 when there is none.
 */
uint64_t maps_end(pid_t pid, uint64_t addr, int exec_only);

#endif
