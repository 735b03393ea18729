// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_sample.c - Check suite for reading a sampling ring (sample.h): a
 * ring made in memory as the kernel lays it out (the control page, then
 * the data), records that wrap, and heads and sizes that must be bounded.
 */
#include "fortstat/sample.h"

#include <check.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#define DATA 256 /* bytes of the test's ring: eight samples */

static struct perf_event_mmap_page meta;
static uint8_t data[DATA];
static struct sample_rec got[64];
static size_t n_got;

static void on_rec(const struct sample_rec *r, void *arg)
{
	(void)arg;
	if (n_got < 64)
		got[n_got++] = *r;
}

/* A sampler over the static ring, empty, its tail at `at`. */
static void ring(struct sampler *s, uint64_t at)
{
	memset(&meta, 0, sizeof(meta));
	memset(data, 0, sizeof(data));
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->meta = &meta;
	s->data = data;
	s->data_size = DATA;
	meta.data_head = meta.data_tail = at;
	n_got = 0;
}

/* Write bytes at ring position pos (wrapping). */
static void put(uint64_t pos, const void *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		data[(pos + i) % DATA] = ((const uint8_t *)p)[i];
}

/* A sample record at the head (header, ip, pid/tid, time: 32 bytes); returns its size. */
static uint16_t add_sample(uint64_t ip, uint32_t tid, uint64_t time, uint16_t size)
{
	struct perf_event_header h = {PERF_RECORD_SAMPLE, 0, size};
	uint32_t ids[2] = {tid, tid};

	put(meta.data_head, &h, sizeof(h));
	put(meta.data_head + 8, &ip, 8);
	put(meta.data_head + 16, ids, 8);
	put(meta.data_head + 24, &time, 8);
	meta.data_head += size;
	return size;
}

START_TEST(test_read_wrapping)
{
	struct sampler s;

	ring(&s, DATA - 16); /* the first record wraps round the end */
	add_sample(0x401000, 7, 100, 32);
	add_sample(0x401010, 8, 200, 32);
	add_sample(0x401020, 7, 300, 32);
	ck_assert_uint_eq(sampler_read(&s, on_rec, NULL), 3);
	ck_assert_uint_eq(n_got, 3);
	ck_assert_uint_eq(got[0].ip, 0x401000);
	ck_assert_uint_eq(got[0].tid, 7);
	ck_assert_uint_eq(got[0].time, 100);
	ck_assert_uint_eq(got[1].ip, 0x401010);
	ck_assert_uint_eq(got[1].tid, 8);
	ck_assert_uint_eq(got[2].time, 300);
	ck_assert_uint_eq(meta.data_tail, meta.data_head);
	ck_assert(!s.full);
	/* nothing new: nothing read */
	ck_assert_uint_eq(sampler_read(&s, on_rec, NULL), 0);
}
END_TEST

/* A size below the header's, or past the head, ends the read; the tail goes to the head. */
START_TEST(test_read_bad_sizes)
{
	struct sampler s;
	struct perf_event_header bad = {PERF_RECORD_SAMPLE, 0, 4};

	ring(&s, 0);
	add_sample(0x1, 1, 1, 32);
	put(meta.data_head, &bad, sizeof(bad));
	meta.data_head += 32;
	add_sample(0x2, 1, 2, 32);
	ck_assert_uint_eq(sampler_read(&s, on_rec, NULL), 1);
	ck_assert_uint_eq(got[0].ip, 0x1);
	ck_assert_uint_eq(meta.data_tail, meta.data_head);

	ring(&s, 0);
	add_sample(0x3, 1, 3, 32);
	add_sample(0x4, 1, 4, 200); /* says 200 bytes: past the head */
	meta.data_head -= 200 - 32;
	ck_assert_uint_eq(sampler_read(&s, on_rec, NULL), 1);
	ck_assert_uint_eq(meta.data_tail, meta.data_head);

	/* a record larger than any sample is skipped whole, not copied */
	ring(&s, 0);
	add_sample(0x5, 1, 5, 96);
	add_sample(0x6, 1, 6, 32);
	ck_assert_uint_eq(sampler_read(&s, on_rec, NULL), 1);
	ck_assert_uint_eq(got[0].ip, 0x6);
}
END_TEST

/* A head more than a ring ahead of the tail: one ring's worth at most, said full. */
START_TEST(test_read_head_far)
{
	struct sampler s;

	ring(&s, 0);
	for (int i = 0; i < DATA / 32; i++)
		add_sample(0x100 + (uint64_t)i, 1, (uint64_t)i, 32);
	meta.data_head += 1u << 20; /* a program cannot write it, a bug could: bounded */
	meta.data_tail = 0;
	sampler_read(&s, on_rec, NULL);
	ck_assert(s.full);
	ck_assert_uint_le(n_got, DATA / 32);
	ck_assert_uint_eq(meta.data_tail, meta.data_head);
}
END_TEST

/* PERF_RECORD_LOST: its count is added; a nearly full ring says so. */
START_TEST(test_read_lost)
{
	struct sampler s;
	struct perf_event_header h = {PERF_RECORD_LOST, 0, 24};
	uint64_t id = 9, lost = 41;

	ring(&s, 0);
	put(0, &h, sizeof(h));
	put(8, &id, 8);
	put(16, &lost, 8);
	meta.data_head = 24;
	for (int i = 0; i < 7; i++)
		add_sample(0x200, 1, 1, 32);
	ck_assert_uint_eq(sampler_read(&s, on_rec, NULL), 7);
	ck_assert_uint_eq(s.lost, 41);
	ck_assert(s.full); /* 248 of 256 bytes: less room than a record's bound */
}
END_TEST

/* The test hook: refused without asking the kernel. */
START_TEST(test_open_refused_hook)
{
	struct sampler s;

	setenv("FORTSTAT_SAMPLE_REFUSE", "1", 1);
	ck_assert_int_eq(sampler_open(&s, 1, 997), -EACCES);
	ck_assert_int_eq(s.fd, -1);
	unsetenv("FORTSTAT_SAMPLE_REFUSE");
	ck_assert_int_lt(sampler_open(&s, 1, 0), 0); /* no rate */
	ck_assert_int_eq(s.fd, -1);
}
END_TEST

static Suite *sample_suite(void)
{
	Suite *s = suite_create("sample");
	TCase *tc = tcase_create("sample");

	tcase_add_test(tc, test_read_wrapping);
	tcase_add_test(tc, test_read_bad_sizes);
	tcase_add_test(tc, test_read_head_far);
	tcase_add_test(tc, test_read_lost);
	tcase_add_test(tc, test_open_refused_hook);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(sample_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
