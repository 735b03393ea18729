// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * sample.c - --sample: each thread's instruction pointer sampled by the
 * kernel's software CPU clock (sample.h), and each sample given to the
 * timed routine whose code holds it (lines.h's rule) as that routine and
 * an offset in it. A sample in untimed code goes to the thread's innermost
 * timed frame when it was taken (FORTSTAT's folding rule: that routine's
 * self time holds the untimed code it calls): its time is kept until the
 * books' stack is the one of that moment. With the traps, at the thread's
 * next stop (every timed entry and return is one: its samples are read
 * before the stop is handled); with in-process probes, as its ring is
 * drained, before the first event recorded after it (the event's time on
 * the same clock, CLOCK_MONOTONIC). No timed frame then: outside. Read at
 * every stop of the thread, at sample_timer's ticks (a quarter of a ring's
 * samples apart: SIGIO) and at its end.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fortstat/lines.h"
#include "fortstat/sample.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"
#include "tracer.h"
#include "sample.h"

#define SAMPLE_PAGES 64	  /* data pages of a ring: 8,192 samples, 8 s at 997 Hz */
#define SAMPLE_REC_MAX 64 /* bytes: a sample record is 40 (header, ip, pid/tid, time) */

static volatile int *sigio_due;

static void on_sigio(int sig)
{
	(void)sig;
	if (sigio_due)
		*sigio_due = 1;
}

int sample_timer_start(struct sample_timer *t, unsigned hz, volatile int *due)
{
	struct sigaction sa = {.sa_handler = on_sigio};
	struct sigevent ev = {.sigev_notify = SIGEV_SIGNAL, .sigev_signo = SIGIO};
	/* a quarter of a ring's samples between two reads, 10 ms to 1 s */
	double s = (double)SAMPLE_PAGES * 4096 / 32 / 4 / (hz ? hz : 1);
	struct itimerspec it;

	memset(t, 0, sizeof(*t));
	if (s < 0.01)
		s = 0.01;
	if (s > 1)
		s = 1;
	it.it_interval.tv_sec = (time_t)s;
	it.it_interval.tv_nsec = (long)((s - (double)(time_t)s) * 1e9);
	it.it_value = it.it_interval;
	/*
	 * SIGIO only sets the flag and interrupts the tracer's wait (no
	 * SA_RESTART: the wait loops on EINTR); cswitch.c's handler, when the
	 * probes' records came first, does the same. Kept after the run:
	 * SIGIO's default would end fortstat.
	 */
	sigio_due = due;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGIO, &sa, NULL);
	if (timer_create(CLOCK_MONOTONIC, &ev, &t->id) < 0)
		return -errno;
	if (timer_settime(t->id, 0, &it, NULL) < 0) {
		int e = errno;

		timer_delete(t->id);
		return -e;
	}
	t->on = true;
	return 0;
}

void sample_timer_stop(struct sample_timer *t)
{
	if (t->on)
		timer_delete(t->id);
	t->on = false;
}

int sampler_open(struct sampler *s, pid_t tid, unsigned hz)
{
	const char *refuse = getenv("FORTSTAT_SAMPLE_REFUSE");
	struct perf_event_attr a;
	long page = sysconf(_SC_PAGESIZE);
	void *m;
	int fd;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (refuse && *refuse && *refuse != '0')
		return -EACCES;
	if (!hz || hz > SAMPLE_HZ_MAX)
		return -EINVAL;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.sample_period = 1000000000u / hz; /* ns of the thread's CPU time */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.use_clockid = 1; /* the tracer's wall clock: events and samples in one time */
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)((size_t)page * SAMPLE_PAGES / 2);
	fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	/*
	 * No O_ASYNC: with it the kernel queues an irq_work and signals
	 * fortstat at every sample, not at the watermark (23 us a sample
	 * to the program here, against 8 without and perf record's 7 to 9:
	 * bench/sample); sample_timer says when to read instead.
	 */
	s->size = (size_t)page * (SAMPLE_PAGES + 1);
	m = mmap(NULL, s->size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		int e = errno;

		close(fd);
		s->size = 0;
		return -e;
	}
	s->fd = fd;
	s->meta = m;
	s->data = (uint8_t *)m + page;
	s->data_size = (size_t)page * SAMPLE_PAGES;
	return 0;
}

void sampler_close(struct sampler *s)
{
	if (s->meta)
		munmap(s->meta, s->size);
	if (s->fd >= 0)
		close(s->fd);
	free(s->pend);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

/* n bytes of the ring from offset off (wrapping) into buf. */
static void ring_copy(const struct sampler *s, size_t off, void *buf, size_t n)
{
	for (size_t i = 0; i < n; i++)
		((uint8_t *)buf)[i] = s->data[(off + i) % s->data_size];
}

size_t sampler_read(struct sampler *s, void (*fn)(const struct sample_rec *r, void *arg), void *arg)
{
	struct perf_event_mmap_page *mp = s->meta;
	uint64_t head, tail;
	size_t n = 0;

	if (!mp)
		return 0;
	head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	tail = mp->data_tail;
	/* a head more than a ring ahead: the records between are not there any more */
	if (head - tail > s->data_size) {
		s->full = true;
		tail = head - s->data_size;
	}
	if (head - tail + SAMPLE_REC_MAX > s->data_size)
		s->full = true;
	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint8_t rec[SAMPLE_REC_MAX];
		size_t off = (size_t)(tail % s->data_size);

		ring_copy(s, off, &h, sizeof(h));
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		if (h.type == PERF_RECORD_SAMPLE && h.size >= sizeof(h) + 24 &&
		    h.size <= sizeof(rec)) {
			struct sample_rec r;
			uint32_t ids[2];

			ring_copy(s, off, rec, h.size);
			memcpy(&r.ip, rec + sizeof(h), 8); /* sample_type's order: ip, tid, time */
			memcpy(ids, rec + sizeof(h) + 8, 8);
			memcpy(&r.time, rec + sizeof(h) + 16, 8);
			r.pid = ids[0];
			r.tid = ids[1];
			fn(&r, arg);
			n++;
		} else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16 &&
			   h.size <= sizeof(rec)) {
			uint64_t lost;

			ring_copy(s, off, rec, h.size);
			memcpy(&lost, rec + sizeof(h) + 8, 8); /* id, then lost */
			s->lost += lost;
		}
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
	return n;
}

/* ---- the tracer's side ---- */

/* A process's samples (pstate.smp). */
struct psamples {
	struct u64map hist; /* (routine + 1) << 32 | offset in it -> samples */
	uint64_t n, outside, lost;
	bool full;
	struct lines_extent *x; /* the timed routines' code at run time, sorted */
	size_t nx;
	uint64_t sig; /* what x was built from (ext_sig); 0: not built */
};

/* What the extents depend on: the patches made and the libraries where they are. */
static uint64_t ext_sig(const struct pstate *ps)
{
	uint64_t sig = ps->n_patches * 2 + 1;

	for (size_t i = 0; i < ps->n_mods; i++)
		if (ps->mods[i].loaded)
			sig = sig * 1000003u + ps->mods[i].bias + ps->mods[i].first;
	return sig;
}

static void ext_add(struct psamples *p, size_t *cap, const struct routine *r, uint64_t bias,
		    size_t i)
{
	if (!(r->flags & RT_SELECTED) || !r->size || r->size > UINT32_MAX)
		return;
	if (p->nx == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		p->x = xrealloc(p->x, *cap * sizeof(*p->x));
	}
	p->x[p->nx++] =
	    (struct lines_extent){r->addr + bias, r->addr + bias + r->size, (uint32_t)i};
}

/* The timed routines' code in process ps now: its own at its bias, each library's at its. */
static void ext_build(const struct pstate *ps, struct psamples *p)
{
	const struct symtab *st = ps->st;
	size_t cap = p->nx = 0, own = st->n_own ? st->n_own : st->n;

	free(p->x);
	p->x = NULL;
	for (size_t i = 0; i < own && i < st->n; i++)
		ext_add(p, &cap, &st->r[i], ps->bias, i);
	for (size_t k = 0; k < ps->n_mods; k++) {
		const struct tmodule *m = &ps->mods[k];

		for (size_t i = m->first;
		     m->loaded && m->have_routines && i < m->first + m->n && i < st->n; i++)
			ext_add(p, &cap, &st->r[i], m->bias, i);
	}
	lines_extents_sort(p->x, p->nx);
	p->sig = ext_sig(ps);
}

/* What take() is given: the thread and its process. */
struct take_ctx {
	struct pstate *ps;
	struct tthread *th;
};

static void count(struct psamples *p, uint32_t routine, uint64_t off)
{
	uint64_t v = 0, key = ((uint64_t)routine + 1) << 32 | off;

	u64map_get(&p->hist, key, &v);
	u64map_put(&p->hist, key, v + 1);
}

/* A sample: its timed routine's, or in untimed code kept for sample_fold (its time). */
static void take(const struct sample_rec *r, void *arg)
{
	struct take_ctx *c = arg;
	struct psamples *p = c->ps->smp;
	struct sampler *s = &c->th->smp;
	long e;

	p->n++;
	if (p->sig != ext_sig(c->ps))
		ext_build(c->ps, p);
	e = lines_extent_find(p->x, p->nx, r->ip);
	if (e >= 0) {
		count(p, p->x[e].routine, r->ip - p->x[e].lo);
		return;
	}
	if (s->n_pend == SAMPLE_PEND_MAX) {
		p->outside++;
		return;
	}
	if (s->n_pend == s->cap_pend) {
		s->cap_pend = s->cap_pend ? 2 * s->cap_pend : 256;
		s->pend = xrealloc(s->pend, s->cap_pend * sizeof(*s->pend));
	}
	s->pend[s->n_pend++] = r->time;
}

void sample_fold(struct tracer *tr, struct tthread *th, uint64_t t)
{
	struct sampler *s = &th->smp;
	struct pstate *ps;
	uint64_t slot, ret;
	uint32_t top;
	size_t k = 0;
	bool frame;

	if (!s->n_pend || s->pend[0] >= t || th->proc >= tr->n_procs)
		return;
	ps = tr->procs[th->proc];
	frame = books_top(ps->books, th->tid, &top, &slot, &ret) == 0 && top < UINT32_MAX - 1;
	for (; k < s->n_pend && s->pend[k] < t; k++) {
		if (frame)
			count(ps->smp, top, LINES_CALLEES); /* its untimed callees' */
		else
			ps->smp->outside++;
	}
	memmove(s->pend, s->pend + k, (s->n_pend - k) * sizeof(*s->pend));
	s->n_pend -= k;
}

void sample_read_thread(struct tracer *tr, struct tthread *th)
{
	struct take_ctx c = {NULL, th};

	if (th->smp.fd < 0 || th->proc >= tr->n_procs)
		return;
	c.ps = tr->procs[th->proc];
	if (!c.ps->smp)
		c.ps->smp = xcalloc(1, sizeof(*c.ps->smp));
	sampler_read(&th->smp, take, &c);
	c.ps->smp->full |= th->smp.full;
	th->smp.full = false;
	c.ps->smp->lost += th->smp.lost;
	th->smp.lost = 0;
}

void sample_thread_new(struct tracer *tr, struct tthread *th)
{
	int err;

	th->smp.fd = -1;
	if (!tr->o->sample_hz || tr->smp.err)
		return;
	err = sampler_open(&th->smp, th->tid, tr->o->sample_hz);
	if (!err && !tr->smp.timer.on &&
	    (err = sample_timer_start(&tr->smp.timer, tr->o->sample_hz, &cswitch_due)) < 0)
		sampler_close(&th->smp);
	if (err < 0 && err != -ESRCH) {
		/* once a run: the run goes on unsampled */
		tr->smp.err = err;
		fs_warn(
		    "--sample: the kernel refused to sample the program (perf_event_open: %s%s): "
		    "no line is known, the times are measured as without --sample",
		    strerror(-err),
		    err == -EACCES || err == -EPERM ? "; /proc/sys/kernel/perf_event_paranoid"
						      " above 2, or a seccomp filter"
						    : "");
	}
}

void sample_read_all(struct tracer *tr)
{
	for (size_t i = 0; tr->o->sample_hz && i < tr->thr.cap; i++) {
		struct tthread *th = thr_at(tr, i);

		if (th)
			sample_read_thread(tr, th);
	}
}

void sample_thread_gone(struct tracer *tr, struct tthread *th)
{
	sample_read_thread(tr, th);
	sample_fold(tr, th, UINT64_MAX); /* no frame left, as a rule: outside */
	sampler_close(&th->smp);
}

void sample_result(struct tracer *tr, struct pstate *ps, struct trace_samples *out)
{
	struct psamples *p;
	size_t k = 0;

	memset(out, 0, sizeof(*out));
	out->hz = tr->o->sample_hz;
	out->refused = tr->smp.err != 0;
	for (size_t i = 0; i < tr->thr.cap; i++) { /* threads still there (a detach) */
		struct tthread *th = thr_at(tr, i);

		if (th && th->proc < tr->n_procs && tr->procs[th->proc] == ps)
			sample_read_thread(tr, th);
	}
	p = ps->smp;
	if (!p)
		return;
	out->n = p->n;
	out->outside = p->outside;
	out->lost = p->lost;
	out->full = p->full;
	out->hits = xcalloc(p->hist.n ? p->hist.n : 1, sizeof(*out->hits));
	for (size_t c = 0; c < p->hist.cap; c++) {
		uint64_t key = p->hist.keys[c];

		if (key && k < p->hist.n)
			out->hits[k++] = (struct lines_hit){(uint32_t)((key >> 32) - 1),
							    key & UINT32_MAX, p->hist.vals[c]};
	}
	out->n_hits = k;
}

void sample_stop(struct tracer *tr)
{
	sample_timer_stop(&tr->smp.timer);
}

void sample_ps_free(struct pstate *ps)
{
	if (!ps->smp)
		return;
	u64map_free(&ps->smp->hist);
	free(ps->smp->x);
	free(ps->smp);
	ps->smp = NULL;
}
