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

/*
 * A copy of the tracee's [addr, addr + n) behind fd, read at once (as much
 * of it as reads: a shorter copy when the range runs into unmapped memory),
 * that mem_read serves from and mem_write keeps current until
 * mem_cache_end: patching a program's routines reads the first bytes of
 * each (cc1: 26,000 routines, 52,000 reads of /proc/PID/mem). One copy at a
 * time; the tracee's memory must not change meanwhile but through
 * mem_write (its threads stopped, or running only code that is not in it).
 * Returns the bytes copied (0: none, every read goes to the tracee).
 */
size_t mem_cache_begin(int fd, uint64_t addr, size_t n);
void mem_cache_end(void);

/* Value of auxv entry `type` of process pid. Returns 0 or a negative errno. */
int auxv_get(pid_t pid, unsigned long type, uint64_t *val);

/*
 * The end of the mapping of process pid (/proc/PID/maps) that holds addr,
 * of an executable one only when `exec_only`; 0 when there is none.
 */
uint64_t maps_end(pid_t pid, uint64_t addr, int exec_only);

#endif
