// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_pprof.c - the protobuf encoder's exact bytes, gzip that zlib reads
 * back, and a synthetic profile's pprof view decoded by a decoder of the
 * test's own: strings, sample types, stacks with exact values, functions,
 * mappings, labels.
 */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "fortstat/account.h"
#include "fortstat/pprof.h"
#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"

/* ---- the encoder ---- */

/* b holds exactly the n bytes of want; b is emptied. */
static void bytes_are(struct pb *b, const uint8_t *want, size_t n)
{
	ck_assert_uint_eq(b->len, n);
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(b->buf[i] == want[i], "byte %zu: 0x%02x, expected 0x%02x", i,
			      b->buf[i], want[i]);
	pb_free(b);
}

START_TEST(test_varints)
{
	struct pb b = {0};
	static const uint8_t v150[] = {0x08, 0x96, 0x01};
	static const uint8_t minus1[] = {0x08, 0xff, 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff, 0x01};
	static const uint8_t edges[] = {0x7f, 0x80, 0x01, 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0x00};
	static const uint8_t big_field[] = {0x80, 0x01, 0x05, 0x38, 0x01};

	/* protobuf's own example: field 1 = 150 */
	pb_uint(&b, 1, 150);
	bytes_are(&b, v150, sizeof(v150));
	pb_int(&b, 1, -1); /* int64: ten bytes */
	bytes_are(&b, minus1, sizeof(minus1));
	pb_varint(&b, 127);
	pb_varint(&b, 128);
	pb_varint(&b, UINT64_MAX);
	pb_varint(&b, 0);
	bytes_are(&b, edges, sizeof(edges));
	/* zero scalars are not written (proto3), a false bool neither */
	pb_uint(&b, 3, 0);
	pb_int(&b, 4, 0);
	pb_bool(&b, 7, false);
	ck_assert_uint_eq(b.len, 0);
	/* field 16 needs a two-byte key */
	pb_uint(&b, 16, 5);
	pb_bool(&b, 7, true);
	bytes_are(&b, big_field, sizeof(big_field));
}
END_TEST

START_TEST(test_lengths)
{
	struct pb b = {0};
	static const uint8_t str[] = {0x12, 0x07, 't', 'e', 's', 't', 'i', 'n', 'g'};
	static const uint8_t packed[] = {0x22, 0x06, 0x03, 0x8e, 0x02, 0x9e, 0xa7, 0x05};
	static const uint8_t nested[] = {0x1a, 0x03, 0x08, 0x96, 0x01};
	static const uint8_t empty[] = {0x32, 0x00, 0x1a, 0x00};
	uint64_t v[] = {3, 270, 86942};
	uint8_t *want;
	size_t at;

	pb_bytes(&b, 2, "testing", 7);
	bytes_are(&b, str, sizeof(str));
	pb_packed(&b, 4, v, 3);
	bytes_are(&b, packed, sizeof(packed));
	pb_packed(&b, 4, v, 0); /* an empty packed list: nothing */
	ck_assert_uint_eq(b.len, 0);
	at = pb_open(&b, 3);
	pb_uint(&b, 1, 150);
	pb_close(&b, at);
	bytes_are(&b, nested, sizeof(nested));
	/* an empty string is written (a string table's ""), an empty message too */
	pb_bytes(&b, 6, "", 0);
	pb_close(&b, pb_open(&b, 3));
	bytes_are(&b, empty, sizeof(empty));
	/* a body of 300 bytes: its length takes two bytes, the body moves up intact */
	want = malloc(3 + 300);
	want[0] = 0x0a, want[1] = 0xac, want[2] = 0x02;
	at = pb_open(&b, 1);
	for (int i = 0; i < 300; i++) {
		uint8_t c = (uint8_t)(i * 7);

		pb_raw(&b, &c, 1);
		want[3 + i] = c;
	}
	pb_close(&b, at);
	bytes_are(&b, want, 303);
	free(want);
}
END_TEST

/* Inflate a gzip member of n bytes: the bytes, malloc'ed, in *out_len. */
static uint8_t *gunzip(const uint8_t *in, size_t n, size_t *out_len)
{
	z_stream zs;
	size_t cap = 1 << 16, len = 0;
	uint8_t *out = malloc(cap);
	int zr;

	memset(&zs, 0, sizeof(zs));
	ck_assert_int_eq(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)(uintptr_t)in;
	zs.avail_in = (uInt)n;
	do {
		if (cap - len < 4096)
			out = realloc(out, cap *= 2);
		zs.next_out = out + len;
		zs.avail_out = (uInt)(cap - len);
		zr = inflate(&zs, Z_NO_FLUSH);
		len = cap - zs.avail_out;
		ck_assert_msg(zr == Z_OK || zr == Z_STREAM_END, "inflate: %d", zr);
	} while (zr != Z_STREAM_END);
	ck_assert_uint_eq(zs.avail_in, 0); /* one member, nothing after it */
	inflateEnd(&zs);
	*out_len = len;
	return out;
}

START_TEST(test_gzip)
{
	size_t big = 200000, len = 0, got_len;
	uint8_t *a = malloc(big), *got;
	const void *pieces[3] = {"head", a, "tail"};
	size_t lens[3] = {4, big, 4};
	char *buf = NULL;
	FILE *f = open_memstream(&buf, &len);

	for (size_t i = 0; i < big; i++)
		a[i] = (uint8_t)((i * 2654435761u) >> 13); /* compresses poorly: several chunks */
	ck_assert_int_eq(pb_gzip(f, pieces, lens, 3), 0);
	fclose(f);
	ck_assert_uint_ge(len, 18);
	ck_assert_uint_eq((uint8_t)buf[0], 0x1f);
	ck_assert_uint_eq((uint8_t)buf[1], 0x8b);
	got = gunzip((uint8_t *)buf, len, &got_len);
	ck_assert_uint_eq(got_len, big + 8);
	ck_assert(!memcmp(got, "head", 4));
	ck_assert(!memcmp(got + 4, a, big));
	ck_assert(!memcmp(got + 4 + big, "tail", 4));
	free(got);
	free(buf);
	free(a);
}
END_TEST

/* ---- a decoder of the test's own ---- */

struct rd {
	const uint8_t *p, *end;
};

static uint64_t rd_varint(struct rd *r)
{
	uint64_t v = 0;

	for (int shift = 0; shift < 64; shift += 7) {
		uint8_t c;

		ck_assert_msg(r->p < r->end, "varint runs past the end");
		c = *r->p++;
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
	ck_abort_msg("varint longer than ten bytes");
	return 0;
}

/* The next field: its number, and its varint or its bytes (sub). 0 at the end. */
static uint32_t rd_field(struct rd *r, uint64_t *v, struct rd *sub)
{
	uint64_t key, n;

	if (r->p >= r->end)
		return 0;
	key = rd_varint(r);
	switch (key & 7) {
	case 0:
		*v = rd_varint(r);
		break;
	case 2:
		n = rd_varint(r);
		ck_assert_uint_le(n, (uint64_t)(r->end - r->p));
		sub->p = r->p;
		sub->end = r->p + n;
		r->p += n;
		break;
	default:
		ck_abort_msg("wire type %u", (unsigned)(key & 7));
	}
	ck_assert_uint_ne(key >> 3, 0);
	return (uint32_t)(key >> 3);
}

/* A repeated varint field, packed (sub) or not (v): appended to *out. */
static void rd_repeated(uint64_t **out, size_t *n, const struct rd *sub, uint64_t v, bool packed)
{
	struct rd r = *sub;

	if (!packed) {
		*out = realloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = v;
		return;
	}
	while (r.p < r.end) {
		*out = realloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = rd_varint(&r);
	}
}

#define MAXN 64

struct dsample {
	uint64_t *loc, *val;
	size_t n_loc, n_val;
	int64_t label_key[2], label_num[2], label_str[2];
	size_t n_labels;
};

struct dprof {
	char *str[MAXN];
	size_t n_str;
	int64_t type[4], unit[4];
	size_t n_types;
	struct dsample s[MAXN];
	size_t n_s;
	struct {
		uint64_t id, mapping, addr, fn;
		int64_t line;
	} loc[MAXN];
	size_t n_loc;
	struct {
		uint64_t id;
		int64_t name, system_name, file, line;
	} fn[MAXN];
	size_t n_fn;
	struct {
		uint64_t id, start, limit;
		int64_t file;
		bool functions, files, lines;
	} map[MAXN];
	size_t n_map;
	int64_t time_nanos, duration, period_type, period_unit, period, default_type;
	uint64_t *comment;
	size_t n_comment;
};

static void decode_sample(struct dprof *d, struct rd *r)
{
	struct dsample *s = &d->s[d->n_s++];
	struct rd sub, lr;
	uint64_t v = 0;
	uint32_t f;

	ck_assert_uint_le(d->n_s, MAXN);
	while ((f = rd_field(r, &v, &sub))) {
		if (f == 1)
			rd_repeated(&s->loc, &s->n_loc, &sub, v, true);
		else if (f == 2)
			rd_repeated(&s->val, &s->n_val, &sub, v, true);
		else if (f == 3) {
			size_t k = s->n_labels++;

			ck_assert_uint_le(s->n_labels, 2);
			while ((f = rd_field(&sub, &v, &lr))) {
				if (f == 1)
					s->label_key[k] = (int64_t)v;
				else if (f == 2)
					s->label_str[k] = (int64_t)v;
				else if (f == 3)
					s->label_num[k] = (int64_t)v;
			}
		}
	}
}

static void decode_location(struct dprof *d, struct rd *r)
{
	size_t i = d->n_loc++;
	struct rd sub, lr;
	uint64_t v = 0;
	uint32_t f;

	ck_assert_uint_le(d->n_loc, MAXN);
	while ((f = rd_field(r, &v, &sub))) {
		if (f == 1)
			d->loc[i].id = v;
		else if (f == 2)
			d->loc[i].mapping = v;
		else if (f == 3)
			d->loc[i].addr = v;
		else if (f == 4)
			while ((f = rd_field(&sub, &v, &lr))) {
				if (f == 1)
					d->loc[i].fn = v;
				else if (f == 2)
					d->loc[i].line = (int64_t)v;
			}
	}
}

static void decode(struct dprof *d, const uint8_t *buf, size_t len)
{
	struct rd r = {buf, buf + len}, sub, in;
	uint64_t v = 0, x = 0;
	uint32_t f, g;

	memset(d, 0, sizeof(*d));
	while ((f = rd_field(&r, &v, &sub))) {
		size_t i;

		switch (f) {
		case 1: /* ValueType */
			i = d->n_types++;
			while ((g = rd_field(&sub, &x, &in)))
				*(g == 1 ? &d->type[i] : &d->unit[i]) = (int64_t)x;
			break;
		case 2:
			decode_sample(d, &sub);
			break;
		case 3:
			i = d->n_map++;
			while ((g = rd_field(&sub, &x, &in))) {
				if (g == 1)
					d->map[i].id = x;
				else if (g == 2)
					d->map[i].start = x;
				else if (g == 3)
					d->map[i].limit = x;
				else if (g == 5)
					d->map[i].file = (int64_t)x;
				else if (g == 7)
					d->map[i].functions = x;
				else if (g == 8)
					d->map[i].files = x;
				else if (g == 9)
					d->map[i].lines = x;
			}
			break;
		case 4:
			decode_location(d, &sub);
			break;
		case 5:
			i = d->n_fn++;
			while ((g = rd_field(&sub, &x, &in))) {
				if (g == 1)
					d->fn[i].id = x;
				else if (g == 2)
					d->fn[i].name = (int64_t)x;
				else if (g == 3)
					d->fn[i].system_name = (int64_t)x;
				else if (g == 4)
					d->fn[i].file = (int64_t)x;
				else if (g == 5)
					d->fn[i].line = (int64_t)x;
			}
			break;
		case 6:
			ck_assert_uint_lt(d->n_str, MAXN);
			d->str[d->n_str++] =
			    strndup((const char *)sub.p, (size_t)(sub.end - sub.p));
			break;
		case 9:
			d->time_nanos = (int64_t)v;
			break;
		case 10:
			d->duration = (int64_t)v;
			break;
		case 11:
			while ((g = rd_field(&sub, &x, &in)))
				*(g == 1 ? &d->period_type : &d->period_unit) = (int64_t)x;
			break;
		case 12:
			d->period = (int64_t)v;
			break;
		case 13:
			rd_repeated(&d->comment, &d->n_comment, &sub, v, true);
			break;
		case 14:
			d->default_type = (int64_t)v;
			break;
		default:
			ck_abort_msg("unexpected field %u", f);
		}
	}
}

static void dprof_free(struct dprof *d)
{
	for (size_t i = 0; i < d->n_str; i++)
		free(d->str[i]);
	for (size_t i = 0; i < d->n_s; i++) {
		free(d->s[i].loc);
		free(d->s[i].val);
	}
	free(d->comment);
}

static const char *dstr(const struct dprof *d, int64_t i)
{
	ck_assert_int_ge(i, 0);
	ck_assert_int_lt(i, (int64_t)d->n_str);
	return d->str[i];
}

/* The function of location id `id` (each id once in the table). */
static size_t fn_of_loc(const struct dprof *d, uint64_t id)
{
	for (size_t i = 0; i < d->n_loc; i++) {
		if (d->loc[i].id != id)
			continue;
		for (size_t k = 0; k < d->n_fn; k++)
			if (d->fn[k].id == d->loc[i].fn)
				return k;
	}
	ck_abort_msg("location %llu has no function", (unsigned long long)id);
	return 0;
}

/* Sample i's stack, outermost first: "main;solve;f". */
static void stack_of(const struct dprof *d, size_t i, char *buf, size_t len)
{
	const struct dsample *s = &d->s[i];

	buf[0] = '\0';
	for (size_t k = s->n_loc; k-- > 0;) {
		strncat(buf, dstr(d, d->fn[fn_of_loc(d, s->loc[k])].name), len - strlen(buf) - 1);
		if (k)
			strncat(buf, ";", len - strlen(buf) - 1);
	}
}

/* The sample of stack `want` with label value num (-1: any); its index, or -1. */
static long find_sample(const struct dprof *d, const char *want, int64_t num)
{
	char buf[256];

	for (size_t i = 0; i < d->n_s; i++) {
		stack_of(d, i, buf, sizeof(buf));
		if (!strcmp(buf, want) &&
		    (num < 0 ||
		     (d->s[i].n_labels && d->s[i].label_num[d->s[i].n_labels - 1] == num)))
			return (long)i;
	}
	return -1;
}

/* ---- a synthetic profile ---- */

enum { R_MAIN, R_SOLVE, R_F, R_SIN, R_IDLE, N_R };

static char *n_main[] = {"main"};
static char *n_solve[] = {"solve_", "solve_alias_"};
static char *n_f[] = {"_ZN2ns1fEiPKc"};
static char *n_sin[] = {"sin"};
static char *n_idle[] = {"idle"};

static struct routine routines[N_R] = {
    [R_MAIN] = {0x1100, 0x80, n_main, 1, "main", "prog.c", 12, RT_MAINLINE | RT_SELECTED, NULL},
    [R_SOLVE] = {0x1200, 0x100, n_solve, 2, "solve", "solve.f90", 3, RT_SELECTED, NULL},
    [R_F] = {0x1300, 0x40, n_f, 1, "ns::f(int, char const*)", "f.cc", 7, RT_SELECTED, NULL},
    [R_SIN] = {0x7f0000702c0, 0x40, n_sin, 1, "libm.so.6:sin", NULL, 0, RT_SELECTED, "libm.so.6"},
    [R_IDLE] = {0x1500, 0x10, n_idle, 1, NULL, NULL, 0, RT_SELECTED, NULL},
};

static struct symtab st = {.path = "./prog", .r = routines, .n = N_R, .has_symtab = true};
static char *prog_argv[] = {"./prog", "in.dat", NULL};

/*
 * Thread 1: main calls solve 3 times, each solve calls ns::f twice, main
 * calls sin once. Thread 2 runs ns::f at its root. Times in ns times `mul`:
 * main;solve;f 6 calls 2250, main;solve 3 calls 18750, main;libm 1 call 100,
 * main 1 call 28900, f (thread 2) 1 call 4000.
 */
static struct acct *events(acct_time_t mul)
{
	struct acct *a = acct_new(N_R);

	acct_enter(a, 1, R_MAIN, 0x7ff000, 0x1010, 0);
	for (acct_time_t k = 0; k < 3; k++) {
		acct_time_t base = 1000 + k * 10000;

		acct_enter(a, 1, R_SOLVE, 0x7fef00, 0x1150, base * mul);
		acct_enter(a, 1, R_F, 0x7fee00, 0x1250, (base + 2000) * mul);
		acct_leave(a, 1, (base + 2500) * mul, NULL);
		acct_enter(a, 1, R_F, 0x7fee00, 0x1260, (base + 3000) * mul);
		acct_leave(a, 1, (base + 3250) * mul, NULL);
		acct_leave(a, 1, (base + 7000) * mul, NULL);
	}
	acct_enter(a, 1, R_SIN, 0x7fef00, 0x1160, 40000 * mul);
	acct_leave(a, 1, 40100 * mul, NULL);
	acct_leave(a, 1, 50000 * mul, NULL);
	acct_enter(a, 2, R_F, 0x7f0000, 0x2000, 100 * mul);
	acct_leave(a, 2, 4100 * mul, NULL);
	acct_finish(a, 60000 * mul, true);
	return a;
}

/*
 * The pprof view of the synthetic profile (n_sections copies of its one
 * section, pids 100, 101...) with opts, gunzipped and decoded into *d.
 */
static void view(struct dprof *d, const struct report_opts *opts, bool count_only,
		 size_t n_sections)
{
	struct acct *cpu = events(1), *wall = events(2);
	const struct acct *gross[FS_N_CLOCKS] = {cpu, wall}, *net[FS_N_CLOCKS] = {NULL, NULL};
	double f1[FS_N_CLOCKS] = {0}, f2[FS_N_CLOCKS] = {0};
	struct profile *p = profile_new(prog_argv, f1, f2, 0, false);
	size_t secs[4], len = 0, plain_len;
	char *buf = NULL;
	uint8_t *plain;
	FILE *f;

	ck_assert_uint_le(n_sections, 4);
	for (size_t i = 0; i < n_sections; i++) {
		struct profile_facts facts = {.label = "./prog",
					      .pid = 100 + (int)i,
					      .total_s = {60e-6, 120e-6},
					      .count_only = count_only};

		ck_assert_int_eq(profile_add_accts(p, &facts, &st, gross, net), 0);
		secs[i] = i;
	}
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(report_write_pprof(f, p, secs, n_sections, opts), 0);
	fclose(f);
	plain = gunzip((uint8_t *)buf, len, &plain_len);
	decode(d, plain, plain_len);
	free(plain);
	free(buf);
	profile_free(p);
	acct_free(cpu);
	acct_free(wall);
}

/* Sample `stack` (label value num, -1: any) has these calls, CPU and wall ns. */
static void sample_is(const struct dprof *d, const char *stack, int64_t num, uint64_t calls,
		      uint64_t cpu, uint64_t wall)
{
	long i = find_sample(d, stack, num);

	ck_assert_msg(i >= 0, "no sample %s", stack);
	ck_assert_uint_eq(d->s[i].n_val, 3);
	ck_assert_uint_eq(d->s[i].val[0], calls);
	ck_assert_uint_eq(d->s[i].val[1], cpu);
	ck_assert_uint_eq(d->s[i].val[2], wall);
}

START_TEST(test_profile)
{
	struct report_opts opts = {.format = FMT_PPROF, .clock = CLOCK_KIND_WALL};
	struct dprof d;
	size_t k;
	bool seen_sin = false;
	struct timespec now;

	view(&d, &opts, false, 1);
	ck_assert_str_eq(dstr(&d, 0), "");
	ck_assert_uint_eq(d.n_types, 3);
	ck_assert_str_eq(dstr(&d, d.type[0]), "calls");
	ck_assert_str_eq(dstr(&d, d.unit[0]), "count");
	ck_assert_str_eq(dstr(&d, d.type[1]), "cpu");
	ck_assert_str_eq(dstr(&d, d.unit[1]), "nanoseconds");
	ck_assert_str_eq(dstr(&d, d.type[2]), "wall");
	ck_assert_str_eq(dstr(&d, d.unit[2]), "nanoseconds");
	ck_assert_str_eq(dstr(&d, d.default_type), "wall"); /* --clock's */
	ck_assert_str_eq(dstr(&d, d.period_type), "calls");
	ck_assert_str_eq(dstr(&d, d.period_unit), "count");
	ck_assert_int_eq(d.period, 1);
	ck_assert_int_eq(d.duration, 120000); /* the wall clock's total */
	clock_gettime(CLOCK_REALTIME, &now);
	ck_assert_int_le(d.time_nanos, (int64_t)now.tv_sec * 1000000000 + now.tv_nsec);
	ck_assert_int_ge(d.time_nanos, ((int64_t)now.tv_sec - 60) * 1000000000);
	ck_assert_uint_ge(d.n_comment, 2);
	ck_assert_str_eq(dstr(&d, (int64_t)d.comment[1]), "command: ./prog in.dat");
	/* one sample per context, exact values; idle was never called: no sample */
	ck_assert_uint_eq(d.n_s, 5);
	sample_is(&d, "main", -1, 1, 28900, 57800);
	sample_is(&d, "main;solve", -1, 3, 18750, 37500);
	sample_is(&d, "main;solve;ns::f(int, char const*)", -1, 6, 2250, 4500);
	sample_is(&d, "main;libm.so.6:sin", -1, 1, 100, 200);
	sample_is(&d, "ns::f(int, char const*)", -1, 1, 4000, 8000);
	for (k = 0; k < d.n_s; k++)
		ck_assert_uint_eq(d.s[k].n_labels, 0);
	/* four functions, four locations, each once */
	ck_assert_uint_eq(d.n_fn, 4);
	ck_assert_uint_eq(d.n_loc, 4);
	for (k = 0; k < d.n_fn; k++) {
		const char *name = dstr(&d, d.fn[k].name);

		ck_assert_uint_eq(d.fn[k].id, k + 1);
		if (!strcmp(name, "ns::f(int, char const*)")) {
			ck_assert_str_eq(dstr(&d, d.fn[k].system_name), "_ZN2ns1fEiPKc");
			ck_assert_str_eq(dstr(&d, d.fn[k].file), "f.cc");
			ck_assert_int_eq(d.fn[k].line, 7);
		} else if (!strcmp(name, "solve")) {
			ck_assert_str_eq(dstr(&d, d.fn[k].system_name), "solve_");
			ck_assert_str_eq(dstr(&d, d.fn[k].file), "solve.f90");
			ck_assert_int_eq(d.fn[k].line, 3);
		} else if (!strcmp(name, "libm.so.6:sin")) {
			ck_assert_str_eq(dstr(&d, d.fn[k].system_name), "sin");
			ck_assert_int_eq(d.fn[k].file, 0);
			ck_assert_int_eq(d.fn[k].line, 0);
		} else {
			ck_assert_str_eq(name, "main");
		}
	}
	/* two mappings: the program's (lines and files known) and the library's */
	ck_assert_uint_eq(d.n_map, 2);
	for (k = 0; k < d.n_map; k++) {
		const char *file = dstr(&d, d.map[k].file);

		ck_assert(d.map[k].functions);
		if (!strcmp(file, "./prog")) {
			ck_assert(d.map[k].files && d.map[k].lines);
			ck_assert_uint_eq(d.map[k].start, 0x1100);
			ck_assert_uint_eq(d.map[k].limit, 0x1301);
		} else {
			ck_assert_str_eq(file, "libm.so.6");
			ck_assert(!d.map[k].files && !d.map[k].lines);
		}
	}
	for (k = 0; k < d.n_loc; k++) {
		const char *m = dstr(&d, d.map[d.loc[k].mapping - 1].file);
		size_t fi = fn_of_loc(&d, d.loc[k].id);

		ck_assert_uint_eq(d.loc[k].id, k + 1);
		ck_assert_int_eq(d.loc[k].line, d.fn[fi].line);
		if (d.loc[k].addr == 0x7f0000702c0) {
			ck_assert_str_eq(m, "libm.so.6");
			seen_sin = true;
		} else {
			ck_assert_str_eq(m, "./prog");
		}
	}
	ck_assert(seen_sin);
	dprof_free(&d);
}
END_TEST

START_TEST(test_threads_and_sections)
{
	struct report_opts opts = {.format = FMT_PPROF, .threads = true};
	struct dprof d;
	size_t k;

	/* --threads: each thread's contexts, labelled */
	view(&d, &opts, false, 1);
	ck_assert_str_eq(dstr(&d, d.default_type), "cpu");
	ck_assert_uint_eq(d.n_s, 5);
	for (k = 0; k < d.n_s; k++) {
		ck_assert_uint_eq(d.s[k].n_labels, 1);
		ck_assert_str_eq(dstr(&d, d.s[k].label_key[0]), "thread");
	}
	sample_is(&d, "main;solve;ns::f(int, char const*)", 1, 6, 2250, 4500);
	sample_is(&d, "ns::f(int, char const*)", 2, 1, 4000, 8000);
	dprof_free(&d);

	/* two sections (-f): every sample labelled with its pid, the tables shared */
	opts.threads = false;
	view(&d, &opts, false, 2);
	ck_assert_uint_eq(d.n_s, 10);
	ck_assert_uint_eq(d.n_map, 2);
	ck_assert_uint_eq(d.n_fn, 4);
	for (k = 0; k < d.n_s; k++) {
		ck_assert_uint_eq(d.s[k].n_labels, 1);
		ck_assert_str_eq(dstr(&d, d.s[k].label_key[0]), "pid");
	}
	sample_is(&d, "main;solve", 100, 3, 18750, 37500);
	sample_is(&d, "main;solve", 101, 3, 18750, 37500);
	dprof_free(&d);
}
END_TEST

START_TEST(test_count_only)
{
	struct report_opts opts = {.format = FMT_PPROF};
	struct dprof d;
	long i;

	view(&d, &opts, true, 1);
	ck_assert_uint_eq(d.n_types, 1);
	ck_assert_str_eq(dstr(&d, d.type[0]), "calls");
	ck_assert_str_eq(dstr(&d, d.default_type), "calls");
	i = find_sample(&d, "main;solve;ns::f(int, char const*)", -1);
	ck_assert_int_ge(i, 0);
	ck_assert_uint_eq(d.s[i].n_val, 1);
	ck_assert_uint_eq(d.s[i].val[0], 6);
	dprof_free(&d);
}
END_TEST

START_TEST(test_tables)
{
	const char *types[] = {"calls"}, *units[] = {"count"};
	struct pprof *pp = pprof_new(types, units, 1);
	uint64_t m = pprof_mapping(pp, "/bin/x"), f, g;

	ck_assert_int_eq(pprof_string(pp, NULL), 0);
	ck_assert_int_eq(pprof_string(pp, ""), 0);
	ck_assert_int_eq(pprof_string(pp, "calls"), 1);
	ck_assert_int_eq(pprof_string(pp, "count"), 2);
	ck_assert_uint_eq(pprof_mapping(pp, "/bin/x"), m);
	ck_assert_uint_ne(pprof_mapping(pp, "/lib/y.so"), m);
	f = pprof_function(pp, "a", NULL, "a.c", 3);
	ck_assert_uint_eq(pprof_function(pp, "a", "a", "a.c", 3), f); /* NULL: the name */
	g = pprof_function(pp, "a", NULL, "a.c", 4);
	ck_assert_uint_ne(g, f);
	ck_assert_uint_eq(pprof_location(pp, m, 0x10, f, 3), 1);
	ck_assert_uint_eq(pprof_location(pp, m, 0x10, f, 3), 1);
	ck_assert_uint_eq(pprof_location(pp, m, 0x20, g, 4), 2);
	/* many strings: each keeps its index */
	for (int i = 0; i < 5000; i++) {
		char s[16];

		snprintf(s, sizeof(s), "s%d", i);
		ck_assert_int_eq(pprof_string(pp, s), pprof_string(pp, s));
	}
	ck_assert_int_eq(pprof_string(pp, "s0") + 4999, pprof_string(pp, "s4999"));
	pprof_free(pp);
}
END_TEST

START_TEST(test_samples)
{
	const char *types[] = {"calls", "delta"}, *units[] = {"count", "nanoseconds"};
	struct pprof *pp = pprof_new(types, units, 2);
	uint64_t m = pprof_mapping(pp, "/bin/x"), locs[2];
	int64_t v[2] = {7, -5};
	struct pprof_label lab[2] = {{.key = "thread", .num = 42}, {.key = "kind", .str = "io"}};
	size_t len = 0, plain_len;
	char *buf = NULL;
	uint8_t *plain;
	struct dprof d;
	FILE *f;

	locs[0] = pprof_location(pp, m, 0x20, pprof_function(pp, "inner", NULL, NULL, 0), 0);
	locs[1] = pprof_location(pp, m, 0x10, pprof_function(pp, "outer", NULL, "o.c", 9), 9);
	pprof_sample(pp, locs, 2, v, lab, 2);
	ck_assert_uint_eq(pprof_n_samples(pp), 1);
	f = open_memstream(&buf, &len);
	ck_assert_int_eq(pprof_write(pp, f), 0);
	fclose(f);
	pprof_free(pp);
	plain = gunzip((uint8_t *)buf, len, &plain_len);
	decode(&d, plain, plain_len);
	ck_assert_uint_eq(d.n_s, 1);
	ck_assert_uint_eq(d.s[0].n_val, 2);
	ck_assert_int_eq((int64_t)d.s[0].val[0], 7);
	ck_assert_int_eq((int64_t)d.s[0].val[1], -5); /* ten bytes, read back */
	ck_assert_uint_eq(d.s[0].n_loc, 2);
	ck_assert_uint_eq(d.s[0].loc[0], locs[0]);
	ck_assert_uint_eq(d.s[0].loc[1], locs[1]);
	ck_assert_uint_eq(d.s[0].n_labels, 2);
	ck_assert_str_eq(dstr(&d, d.s[0].label_key[0]), "thread");
	ck_assert_int_eq(d.s[0].label_num[0], 42);
	ck_assert_int_eq(d.s[0].label_str[0], 0);
	ck_assert_str_eq(dstr(&d, d.s[0].label_key[1]), "kind");
	ck_assert_str_eq(dstr(&d, d.s[0].label_str[1]), "io");
	/* the mapping spans its locations; one with a file and a line */
	ck_assert_uint_eq(d.n_map, 1);
	ck_assert_uint_eq(d.map[0].start, 0x10);
	ck_assert_uint_eq(d.map[0].limit, 0x21);
	ck_assert(d.map[0].functions && d.map[0].files && d.map[0].lines);
	ck_assert_int_eq(d.default_type, 0); /* not set */
	ck_assert_int_eq(d.time_nanos, 0);
	dprof_free(&d);
	free(plain);
	free(buf);
}
END_TEST

static Suite *pprof_suite(void)
{
	Suite *s = suite_create("pprof");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, test_varints);
	tcase_add_test(tc, test_lengths);
	tcase_add_test(tc, test_gzip);
	tcase_add_test(tc, test_tables);
	tcase_add_test(tc, test_samples);
	tcase_add_test(tc, test_profile);
	tcase_add_test(tc, test_threads_and_sections);
	tcase_add_test(tc, test_count_only);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(pprof_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
