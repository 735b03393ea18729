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

/*
 * Small writes gathered and written together: patching writes a jmp or an
 * int3 at each routine's entry, one pwrite each (cc1: 26,000 at each of its
 * execs). mem_batch_add copies a piece (at most MEM_PIECE_MAX bytes);
 * mem_batch_write writes the pieces in address order, those within `join`
 * bytes of each other as one read-modify-write of their span (at most
 * MEM_SPAN_MAX bytes: the bytes between them written back as they were
 * read, which code running meanwhile cannot tell), a later piece over an
 * earlier one as if written after it; it empties the batch. Pieces that
 * must land before others (a short entry's padding before its jmp rel8) go
 * in a batch written first. Returns 0, or a negative errno and in
 * *failed_at the span's first address.
 */
#define MEM_PIECE_MAX 16
#define MEM_SPAN_MAX ((size_t)1 << 20)
struct mem_piece {
	uint64_t addr;
	uint32_t seq; /* order added: the later of two overlapping pieces wins */
	uint8_t len;
	uint8_t bytes[MEM_PIECE_MAX];
};
struct mem_batch {
	struct mem_piece *p;
	size_t n, cap;
};
void mem_batch_add(struct mem_batch *b, uint64_t addr, const void *bytes, size_t len);
int mem_batch_write(int fd, struct mem_batch *b, size_t join, uint64_t *failed_at);
void mem_batch_free(struct mem_batch *b);

/* Value of auxv entry `type` of process pid. Returns 0 or a negative errno. */
int auxv_get(pid_t pid, unsigned long type, uint64_t *val);

/*
 * The end of the mapping of process pid (/proc/PID/maps) that holds addr,
 * of an executable one only when `exec_only`; 0 when there is none.
 */
uint64_t maps_end(pid_t pid, uint64_t addr, int exec_only);

#endif
