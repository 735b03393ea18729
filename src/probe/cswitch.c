// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * cswitch.c - when a thread of the program is off its CPU, from the kernel's
 * context-switch records (perf_event_open: a dummy software event with
 * context_switch set, on CLOCK_MONOTONIC, read from its ring buffer). In-process
 * probes stamp events with the TSC only; between two stops of the thread,
 * where its CPU clock is known at both ends, these records say which parts
 * of the elapsed time it did not run, so that an event's CPU time is its
 * elapsed time less those parts (drain.c). The records are the kernel's;
 * sizes read from the ring are still checked.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "cswitch.h"

#define CS_PAGES 64	 /* data pages of the ring: 16,384 records between two reads */
#define CS_FULL_SLACK 64 /* bytes: a ring with less room than this was full */
#define CS_MAX_OFF 8192	 /* intervals kept: more, and neighbours are merged two by two */

volatile int cswitch_due;

static void on_sigio(int sig)
{
	(void)sig;
	cswitch_due = 1;
}

/*
 * The kernel signals (SIGIO) when a ring holds a quarter of its records;
 * the signal only sets a flag and interrupts the tracer's wait (no
 * SA_RESTART: the wait loops on EINTR and reads the records). Installed
 * once, before the first ring, and kept: fortstat's default would end it.
 */
static void catch_sigio(void)
{
	static bool done;
	struct sigaction sa = {.sa_handler = on_sigio};

	if (done)
		return;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGIO, &sa, NULL);
	done = true;
}

/*
 * Data pages of each ring: CS_PAGES, or for the tests (FORTSTAT_SWITCH_PAGES
 * = 1, 2, 4...) fewer and read at stops only, no SIGIO: a switch storm
 * between two stops then surely outruns the reader (tests/e2e/switches.sh).
 */
static size_t switch_pages(void)
{
	const char *e = getenv("FORTSTAT_SWITCH_PAGES");
	char *end;
	unsigned long n;

	if (!e || !*e)
		return CS_PAGES;
	n = strtoul(e, &end, 10);
	if (*end || !n || n > CS_PAGES || (n & (n - 1)))
		return CS_PAGES;
	return n;
}

int cswitch_open(struct cswitch *c, pid_t tid)
{
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	size_t pages = switch_pages();
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
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)((size_t)page * pages / 4);
	catch_sigio();
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/* a quarter full: SIGIO to fortstat (without it, the records are read at stops only) */
	if (pages == CS_PAGES && fcntl(fd, F_SETOWN, getpid()) == 0)
		fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC);
	c->size = (size_t)page * (pages + 1);
	m = mmap(NULL, c->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;

		close(fd);
		return -e;
	}
	c->fd = fd;
	c->meta = m;
	c->data = (uint8_t *)m + page;
	c->data_size = (size_t)page * pages;
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

/*
 * Bounded memory, whatever a thread's switches between two of its stops (a
 * sched_yield loop makes thousands a millisecond): neighbours closer than
 * a gap merge, their time off spread evenly over both and the gap, the gap
 * growing from 1 us until half the intervals are left. The closest merge
 * first: what the thread did in a short gap is lost, not its longer runs.
 */
static void coarsen(struct cswitch *c)
{
	for (uint64_t gap = 1000; c->n_off > CS_MAX_OFF / 2; gap *= 4) {
		size_t k = 0;

		for (size_t i = 0; i < c->n_off; i++) {
			struct cs_off *p = k ? &c->off[k - 1] : NULL;

			if (p && c->off[i].from <= p->to + gap) {
				p->to = c->off[i].to > p->to ? c->off[i].to : p->to;
				p->off += c->off[i].off;
				p->n += c->off[i].n;
			} else {
				c->off[k++] = c->off[i];
			}
		}
		c->n_off = k;
	}
}

static void add_off(struct cswitch *c, uint64_t from, uint64_t to)
{
	if (to <= from)
		return;
	if (c->n_off == CS_MAX_OFF)
		coarsen(c);
	if (c->n_off == c->cap_off) {
		c->cap_off = c->cap_off ? 2 * c->cap_off : 64;
		c->off = realloc(c->off, c->cap_off * sizeof(*c->off));
		if (!c->off)
			abort();
	}
	c->off[c->n_off++] = (struct cs_off){from, to, to - from, 1};
}

void cswitch_read(struct cswitch *c)
{
	struct perf_event_mmap_page *mp = c->meta;
	uint64_t head, tail;

	if (!mp)
		return;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	/*
	 * Found (nearly) full: the kernel has dropped what did not fit, and
	 * says how much only with its next record (PERF_RECORD_LOST, which
	 * may never come: the thread ends).
	 */
	if (head - tail + CS_FULL_SLACK > c->data_size)
		c->lost = true;
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
			uint64_t n = 1;

			c->lost = true;
			if (h.size >= sizeof(h) + 16 && h.size <= sizeof(rec)) {
				for (size_t i = 0; i < h.size; i++)
					rec[i] = c->data[(off + i) % c->data_size];
				memcpy(&n, rec + sizeof(h) + 8, 8); /* id, then lost */
			}
			c->n_lost += n;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
}

uint64_t cswitch_off_in(const struct cs_off *i, uint64_t a, uint64_t b, double delta, double *n)
{
	uint64_t f = i->from > a ? i->from : a, t = i->to < b ? i->to : b;
	double part, off, sw;

	if (t <= f)
		return 0;
	part = f == i->from && t == i->to ? 1 : (double)(t - f) / (double)(i->to - i->from);
	off = (double)i->off * part;
	sw = i->n * part;
	if (n)
		*n += sw;
	off -= delta * sw;
	if (off > (double)(t - f))
		off = (double)(t - f);
	return off > 0 ? (uint64_t)off : 0;
}

uint64_t cswitch_off(const struct cswitch *c, uint64_t a, uint64_t b, double delta, double *n)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < c->n_off; i++)
		sum += cswitch_off_in(&c->off[i], a, b, delta, n);
	if (c->out) { /* off since out_at, not back yet: a switch too */
		struct cs_off o = {c->out_at, UINT64_MAX, UINT64_MAX - c->out_at, 1};

		sum += cswitch_off_in(&o, a, b, delta, n);
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
