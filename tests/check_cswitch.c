// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_cswitch.c - a thread's off-CPU intervals from context-switch records
 * (src/probe/cswitch.c), fed through a ring laid out as the kernel's
 * (perf_event_mmap_page, then the data pages): intervals, the time off in a
 * range, each switch's scheduler time taken back, bounded memory when the
 * switches are many, and dropped records.
 */
#include <check.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "probe/cswitch.h"

#define DATA (64 * 4096)

struct ring {
	struct cswitch c;
	uint8_t *mem; /* the control page, then DATA bytes */
	uint64_t head;
};

static void ring_up(struct ring *r)
{
	memset(r, 0, sizeof(*r));
	r->mem = calloc(1, 4096 + DATA);
	ck_assert_ptr_nonnull(r->mem);
	r->c.fd = -1;
	r->c.meta = r->mem;
	r->c.data = r->mem + 4096;
	r->c.data_size = DATA;
}

static void ring_down(struct ring *r)
{
	free(r->c.off);
	free(r->mem);
}

/* One record: the header, then (sample_id_all, PERF_SAMPLE_TIME) its time. */
static void put(struct ring *r, uint32_t type, uint16_t misc, uint64_t t)
{
	struct perf_event_header h = {.type = type, .misc = misc, .size = sizeof(h) + 8};
	uint8_t rec[sizeof(h) + 8];

	memcpy(rec, &h, sizeof(h));
	memcpy(rec + sizeof(h), &t, 8);
	for (size_t i = 0; i < sizeof(rec); i++)
		r->c.data[(r->head + i) % DATA] = rec[i];
	r->head += sizeof(rec);
	((struct perf_event_mmap_page *)(void *)r->mem)->data_head = r->head;
}

static void off_on(struct ring *r, uint64_t out, uint64_t in)
{
	put(r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, out);
	put(r, PERF_RECORD_SWITCH, 0, in);
}

START_TEST(intervals)
{
	struct ring r;
	double n = 0;

	ring_up(&r);
	off_on(&r, 100, 150);
	off_on(&r, 300, 400);
	put(&r, PERF_RECORD_SWITCH, PERF_RECORD_MISC_SWITCH_OUT, 900); /* still off */
	cswitch_read(&r.c);
	ck_assert_uint_eq(r.c.n_off, 2);
	ck_assert(r.c.out);
	ck_assert_uint_eq(cswitch_off(&r.c, 0, 1000, 0, &n), 50 + 100 + 100);
	ck_assert(n > 1.99 && n < 2.01); /* the one under way has not ended */
	ck_assert_uint_eq(cswitch_off(&r.c, 120, 350, 0, NULL), 30 + 50);
	/* 10 ns of each switch were the thread's own (the scheduler's work) */
	ck_assert_uint_eq(cswitch_off(&r.c, 0, 500, 10, NULL), 40 + 90);
	/* the intervals that ended are forgotten, the one under way is kept */
	cswitch_forget(&r.c, 200);
	ck_assert_uint_eq(r.c.n_off, 1);
	ck_assert(!r.c.lost);
	ring_down(&r);
}
END_TEST

/* A ring read as it fills (as the kernel's SIGIO asks) keeps every switch. */
START_TEST(many_switches_bounded)
{
	struct ring r;
	const uint64_t n_sw = 100000;
	double n = 0;

	ring_up(&r);
	for (uint64_t i = 0; i < n_sw; i++) {
		/* 3 ns off every 10 ns, then 1 ms on, then again */
		uint64_t t = i * 10 + (i >= n_sw / 2 ? 1000000 : 0);

		off_on(&r, t, t + 3);
		if (i % 1000 == 999)
			cswitch_read(&r.c);
	}
	cswitch_read(&r.c);
	ck_assert(!r.c.lost);
	ck_assert_uint_le(r.c.n_off, 8192);
	ck_assert_uint_eq(cswitch_off(&r.c, 0, UINT64_MAX / 2, 0, &n), 3 * n_sw);
	ck_assert(n > n_sw - 0.5 && n < n_sw + 0.5);
	/* the millisecond on the CPU in the middle is not smeared with the rest */
	ck_assert_uint_le(cswitch_off(&r.c, n_sw / 2 * 10 + 100, n_sw / 2 * 10 + 999000, 0, NULL),
			  1000);
	ring_down(&r);
}
END_TEST

/* Records the kernel dropped are said. */
START_TEST(lost)
{
	struct ring r;
	struct {
		struct perf_event_header h;
		uint64_t id, lost, t;
	} rec = {{PERF_RECORD_LOST, 0, sizeof(rec)}, 1, 7, 50};

	ring_up(&r);
	off_on(&r, 10, 20);
	memcpy(r.c.data + r.head, &rec, sizeof(rec));
	r.head += sizeof(rec);
	((struct perf_event_mmap_page *)(void *)r.mem)->data_head = r.head;
	cswitch_read(&r.c);
	ck_assert(r.c.lost);
	ck_assert_uint_eq(r.c.n_off, 1);
	ring_down(&r);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cswitch");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, intervals);
	tcase_add_test(tc, many_switches_bounded);
	tcase_add_test(tc, lost);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
