// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cswitch.c - when a thread of the program is off its CPU, from the kernel's
 * context-switch records (perf_event_open: a dummy software event with
 * context_switch set, on CLOCK_MONOTONIC, read from its ring buffer). In-process
 * probes stamp events with the TSC only; between two stops of the thread,
 * where its CPU clock is known at both ends, these records say which parts
 * of the elapsed time it did not run, so that an event's CPU time is its
 * elapsed time less those parts (probe.c). The records are the kernel's;
 * sizes read from the ring are still checked.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cswitch.h"

#define CS_PAGES 64 /* data pages of the ring: 16,384 records between two reads */

int cswitch_open(struct cswitch *c, pid_t tid)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	void *m;
	int fd;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.context_switch = 1;
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TIME;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.exclude_kernel = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	c->size = (size_t)page * (CS_PAGES + 1);
	m = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;

		close(fd);
		return -e;
	}
	c->fd = fd;
	c->meta = m;
	c->data = (uint8_t *)m + page;
	c->data_size = (size_t)page * CS_PAGES;
	return 0;
}

void cswitch_close(struct cswitch *c)
{
	if (c->meta)
		munmap(c->meta, c->size);
	if (c->fd >= 0)
		close(c->fd);
	free(c->off);
	memset(c, 0, sizeof(*c));
	c->fd = -1;
}

static void add_off(struct cswitch *c, uint64_t from, uint64_t to)
{
	if (to <= from)
		return;
	if (c->n_off == c->cap_off) {
		c->cap_off = c->cap_off ? 2 * c->cap_off : 64;
		c->off = realloc(c->off, c->cap_off * sizeof(*c->off));
		if (!c->off)
			abort();
	}
	c->off[c->n_off].from = from;
	c->off[c->n_off++].to = to;
}

void cswitch_read(struct cswitch *c)
{
	struct perf_event_mmap_page *mp = c->meta;
	uint64_t head, tail;

	if (!mp)
		return;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint8_t rec[64];
		size_t off = (size_t)(tail % c->data_size);

		for (size_t i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = c->data[(off + i) % c->data_size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_SWITCH && h.size >= sizeof(h) + 8 &&
		    h.size <= sizeof(rec)) {
			uint64_t t;

			for (size_t i = 0; i < h.size; i++)
				rec[i] = c->data[(off + i) % c->data_size];
			memcpy(&t, rec + h.size - 8, 8); /* sample_id: its time */
			if (h.misc & PERF_RECORD_MISC_SWITCH_OUT) {
				c->out = true;
				c->out_at = t;
			} else if (c->out) {
				add_off(c, c->out_at, t);
				c->out = false;
			}
		} else if (h.type == PERF_RECORD_LOST) {
			c->lost = true;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

uint64_t cswitch_off(const struct cswitch *c, uint64_t a, uint64_t b)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < c->n_off; i++) {
		uint64_t f = c->off[i].from > a ? c->off[i].from : a;
		uint64_t t = c->off[i].to < b ? c->off[i].to : b;

		if (t > f)
			sum += t - f;
	}
	if (c->out) { /* off since out_at, not back yet */
		uint64_t f = c->out_at > a ? c->out_at : a;

		if (b > f)
			sum += b - f;
	}
	return sum;
}

void cswitch_forget(struct cswitch *c, uint64_t t)
{
	size_t k = 0;

	for (size_t i = 0; i < c->n_off; i++)
		if (c->off[i].to > t)
			c->off[k++] = c->off[i];
	c->n_off = k;
	c->lost = false;
}
