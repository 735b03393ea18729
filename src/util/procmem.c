// SPDX-License-Identifier: GPL-2.0-or-later
/* procmem.c - a stopped tracee's memory through /proc/PID/mem, and its auxv. */
#include "fortstat/procmem.h"
#include "fortstat/util.h"
#include "fortstat/procfs.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <stdio.h>
#include <unistd.h>

int mem_open(pid_t pid)
{
	char path[48];
	int fd;

	proc_path(path, sizeof(path), pid, 0, "mem");
	fd = open(path, O_RDWR | O_CLOEXEC);
	return fd < 0 ? -errno : fd;
}

/* The copy of mem_cache_begin: fd -1 when none. */
static struct {
	int fd;
	uint64_t addr;
	size_t n;
	uint8_t *buf;
} cache = {.fd = -1};

#define CACHE_MAX ((size_t)1 << 29) /* a text segment larger than 512 MiB is read piecemeal */

size_t mem_cache_begin(int fd, uint64_t addr, size_t n)
{
	ssize_t r;

	mem_cache_end();
	if (fd < 0 || !n || n > CACHE_MAX || addr + n < addr)
		return 0;
	cache.buf = malloc(n);
	if (!cache.buf)
		return 0;
	r = pread(fd, cache.buf, n, (off_t)addr);
	if (r <= 0) {
		mem_cache_end();
		return 0;
	}
	cache.fd = fd;
	cache.addr = addr;
	cache.n = (size_t)r;
	return cache.n;
}

void mem_cache_end(void)
{
	free(cache.buf);
	cache.buf = NULL;
	cache.fd = -1;
	cache.n = 0;
}

/* Is [addr, addr + n) of fd's tracee inside the copy? */
static bool cached(int fd, uint64_t addr, size_t n)
{
	return cache.fd >= 0 && fd == cache.fd && addr >= cache.addr && addr + n >= addr &&
	       addr + n <= cache.addr + cache.n;
}

int mem_read(int fd, uint64_t addr, void *buf, size_t n)
{
	ssize_t r;

	if (cached(fd, addr, n)) {
		memcpy(buf, cache.buf + (addr - cache.addr), n);
		return 0;
	}
	r = pread(fd, buf, n, (off_t)addr);
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

int mem_write(int fd, uint64_t addr, const void *buf, size_t n)
{
	ssize_t r = pwrite(fd, buf, n, (off_t)addr);

	if (r > 0 && cache.fd >= 0 && fd == cache.fd) {
		/* what was written of the copy's range, into the copy */
		uint64_t lo = addr > cache.addr ? addr : cache.addr;
		uint64_t hi = addr + (uint64_t)r < cache.addr + cache.n ? addr + (uint64_t)r
									: cache.addr + cache.n;

		if (lo < hi)
			memcpy(cache.buf + (lo - cache.addr), (const uint8_t *)buf + (lo - addr),
			       (size_t)(hi - lo));
	}
	if (r < 0)
		return -errno;
	return (size_t)r == n ? 0 : -EIO;
}

void mem_batch_add(struct mem_batch *b, uint64_t addr, const void *bytes, size_t len)
{
	struct mem_piece *p;

	if (!len || len > MEM_PIECE_MAX)
		abort(); /* the callers' pieces are jmps and int3s */
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 64;
		b->p = xrealloc(b->p, b->cap * sizeof(*b->p));
	}
	p = &b->p[b->n];
	p->addr = addr;
	p->seq = (uint32_t)b->n;
	p->len = (uint8_t)len;
	memcpy(p->bytes, bytes, len);
	b->n++;
}

static int piece_seq(const void *a, const void *b)
{
	const struct mem_piece *x = a, *y = b;

	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int piece_order(const void *a, const void *b)
{
	const struct mem_piece *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int mem_batch_write(int fd, struct mem_batch *b, size_t join, uint64_t *failed_at)
{
	uint8_t *span = NULL;
	size_t i = 0;
	int err = 0;

	qsort(b->p, b->n, sizeof(*b->p), piece_order);
	while (i < b->n && !err) {
		uint64_t lo = b->p[i].addr, hi = lo + b->p[i].len;
		size_t j = i + 1;

		/* the pieces that start within `join` of the span so far, and keep it small */
		while (j < b->n && b->p[j].addr <= hi + join &&
		       b->p[j].addr + b->p[j].len - lo <= MEM_SPAN_MAX) {
			if (b->p[j].addr + b->p[j].len > hi)
				hi = b->p[j].addr + b->p[j].len;
			j++;
		}
		if (j == i + 1) {
			err = mem_write(fd, lo, b->p[i].bytes, b->p[i].len);
		} else {
			if (!span)
				span = xmalloc(MEM_SPAN_MAX + MEM_PIECE_MAX);
			err = mem_read(fd, lo, span, (size_t)(hi - lo));
			/* in the order added: where two overlap, the later wins */
			qsort(b->p + i, j - i, sizeof(*b->p), piece_seq);
			for (size_t k = i; !err && k < j; k++)
				memcpy(span + (b->p[k].addr - lo), b->p[k].bytes, b->p[k].len);
			if (!err)
				err = mem_write(fd, lo, span, (size_t)(hi - lo));
		}
		if (err && failed_at)
			*failed_at = lo;
		i = j;
	}
	free(span);
	b->n = 0;
	return err;
}

void mem_batch_free(struct mem_batch *b)
{
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

int auxv_get(pid_t pid, unsigned long type, uint64_t *val)
{
	char path[48];
	uint64_t av[2];
	int fd, err = -ENOENT;

	proc_path(path, sizeof(path), pid, 0, "auxv");
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

struct end_of {
	uint64_t addr, end;
	int exec_only;
};

static int mapping_holds(const struct proc_map *m, void *arg)
{
	struct end_of *w = arg;

	if (w->addr < m->lo || w->addr >= m->hi || (w->exec_only && m->perm[2] != 'x'))
		return 0;
	w->end = m->hi;
	return 1;
}

uint64_t maps_end(pid_t pid, uint64_t addr, int exec_only)
{
	struct end_of w = {addr, 0, exec_only};

	proc_maps_each(pid, mapping_holds, &w);
	return w.end;
}
