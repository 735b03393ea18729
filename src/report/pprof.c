// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * pprof.c - a gzipped profile.proto (pprof.h): the protobuf encoder, the
 * profile's tables, and the view of a run (report_write_pprof): one sample
 * per calling context with its calls and its self time on each clock.
 */
#include "config.h"

#include "fortstat/pprof.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <zlib.h>

#include "fortstat/account.h"
#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "fortstat/version.h"
#include "view.h"

/* ---- the encoder ---- */

void pb_free(struct pb *b)
{
	free(b->buf);
	memset(b, 0, sizeof(*b));
}

static void pb_reserve(struct pb *b, size_t n)
{
	if (b->cap - b->len >= n)
		return;
	while (b->cap - b->len < n)
		b->cap = b->cap ? 2 * b->cap : 256;
	b->buf = xrealloc(b->buf, b->cap);
}

void pb_raw(struct pb *b, const void *p, size_t n)
{
	if (!n)
		return;
	pb_reserve(b, n);
	memcpy(b->buf + b->len, p, n);
	b->len += n;
}

/* v as a varint into out (at least 10 bytes): its length. */
static size_t varint_to(uint8_t *out, uint64_t v)
{
	size_t n = 0;

	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

void pb_varint(struct pb *b, uint64_t v)
{
	pb_reserve(b, 10);
	b->len += varint_to(b->buf + b->len, v);
}

void pb_key(struct pb *b, uint32_t field, enum pb_wire wire)
{
	pb_varint(b, (uint64_t)field << 3 | (uint64_t)wire);
}

void pb_uint(struct pb *b, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_key(b, field, PB_VARINT);
	pb_varint(b, v);
}

void pb_int(struct pb *b, uint32_t field, int64_t v)
{
	pb_uint(b, field, (uint64_t)v);
}

void pb_bool(struct pb *b, uint32_t field, bool v)
{
	pb_uint(b, field, v ? 1 : 0);
}

void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n)
{
	pb_key(b, field, PB_LEN);
	pb_varint(b, n);
	pb_raw(b, p, n);
}

void pb_packed(struct pb *b, uint32_t field, const uint64_t *v, size_t n)
{
	size_t len = 0, i;
	uint8_t tmp[10];

	if (!n)
		return;
	for (i = 0; i < n; i++)
		len += varint_to(tmp, v[i]);
	pb_key(b, field, PB_LEN);
	pb_varint(b, len);
	pb_reserve(b, len);
	for (i = 0; i < n; i++)
		b->len += varint_to(b->buf + b->len, v[i]);
}

size_t pb_open(struct pb *b, uint32_t field)
{
	pb_key(b, field, PB_LEN);
	return b->len;
}

void pb_close(struct pb *b, size_t at)
{
	uint8_t tmp[10];
	size_t body = b->len - at, n = varint_to(tmp, body);

	/* the body moves up by the length's bytes (one for a body under 128) */
	pb_reserve(b, n);
	memmove(b->buf + at + n, b->buf + at, body);
	memcpy(b->buf + at, tmp, n);
	b->len += n;
}

/* Write what deflate made in buf since the last call: 0 or -errno. */
static int gz_flush(FILE *out, z_stream *zs, uint8_t *buf, size_t size)
{
	size_t have = size - zs->avail_out;

	if (have && fwrite(buf, 1, have, out) != have)
		return errno ? -errno : -EIO;
	zs->next_out = buf;
	zs->avail_out = (uInt)size;
	return 0;
}

int pb_gzip(FILE *out, const void *const *pieces, const size_t *lens, size_t n_pieces)
{
	enum { CHUNK = 1 << 16 };
	uint8_t *buf = xmalloc(CHUNK);
	z_stream zs;
	int zr = Z_OK, err = 0;

	memset(&zs, 0, sizeof(zs));
	/* 15 + 16: a 32 KiB window and a gzip header and trailer (RFC 1952) */
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
	    Z_OK) {
		free(buf);
		return -ENOMEM;
	}
	zs.next_out = buf;
	zs.avail_out = CHUNK;
	errno = 0;
	for (size_t i = 0; i <= n_pieces && !err; i++) {
		const uint8_t *p = i < n_pieces ? pieces[i] : NULL;
		size_t left = i < n_pieces ? lens[i] : 0;
		bool last = i == n_pieces;

		do {
			/* avail_in is 32 bits: a piece goes in by slices of at most 1 GiB */
			uInt take = left > (1u << 30) ? 1u << 30 : (uInt)left;

			zs.next_in = (Bytef *)(uintptr_t)p;
			zs.avail_in = take;
			do {
				zr = deflate(&zs, last ? Z_FINISH : Z_NO_FLUSH);
				if (zr == Z_STREAM_ERROR) {
					err = -EIO;
					break;
				}
				if (zs.avail_out == 0 || zr == Z_STREAM_END)
					err = gz_flush(out, &zs, buf, CHUNK);
			} while (!err && (zs.avail_in || (last && zr != Z_STREAM_END)));
			p += take;
			left -= take;
		} while (!err && left);
	}
	deflateEnd(&zs);
	free(buf);
	if (!err && (fflush(out) != 0 || ferror(out)))
		err = errno ? -errno : -EIO;
	return err;
}

/* ---- the profile's tables ---- */

/* A key of up to four words, and the id (from 1) it was given. */
struct cell {
	uint64_t k[4];
	uint64_t id; /* 0: a free cell */
};

/* Open addressing, at most half full; zero-initialised is empty. */
struct itab {
	struct cell *c;
	size_t cap, n;
};

struct pmap {
	int64_t file;
	uint64_t start, limit; /* limit 0: no location yet */
	bool files, lines;
};

struct pfunc {
	int64_t name, system_name, file, line;
};

struct ploc {
	uint64_t mapping, addr, fn;
	int64_t line;
};

struct pprof {
	size_t n_types;
	int64_t *type, *unit; /* string indices */
	char **str;	      /* the string table */
	size_t n_str, cap_str;
	struct itab strs; /* k[0]: the string's hash, k[1]: its index (checked by strcmp) */
	struct pmap *map;
	size_t n_map;
	struct itab maps; /* by file */
	struct pfunc *fn;
	size_t n_fn;
	struct itab fns;
	struct ploc *loc;
	size_t n_loc;
	struct itab locs;
	struct pb samples; /* the encoded Sample fields */
	size_t n_samples;
	int64_t time_nanos, duration_nanos;
	int64_t period_type, period_unit, period;
	int64_t default_type;
	int64_t *comments;
	size_t n_comments;
};

static uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * 0xff51afd7ed558ccdULL;
	return h ^ (h >> 32);
}

static uint64_t hash_key(const uint64_t k[4])
{
	uint64_t h = 0x9e3779b97f4a7c15ULL;

	for (int i = 0; i < 4; i++)
		h = mix(h, k[i]);
	return h;
}

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL; /* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return mix(h, 0);
}

static void itab_grow(struct itab *t)
{
	size_t cap = t->cap ? 2 * t->cap : 64;
	struct cell *c = xcalloc(cap, sizeof(*c));

	for (size_t i = 0; i < t->cap; i++) {
		size_t j;

		if (!t->c[i].id)
			continue;
		for (j = hash_key(t->c[i].k) & (cap - 1); c[j].id; j = (j + 1) & (cap - 1))
			;
		c[j] = t->c[i];
	}
	free(t->c);
	t->c = c;
	t->cap = cap;
}

/* The cell of key k, or the free cell where it goes (id 0). */
static struct cell *itab_find(struct itab *t, const uint64_t k[4])
{
	size_t j;

	if (2 * (t->n + 1) > t->cap)
		itab_grow(t);
	for (j = hash_key(k) & (t->cap - 1); t->c[j].id; j = (j + 1) & (t->cap - 1))
		if (!memcmp(t->c[j].k, k, sizeof(t->c[j].k)))
			break;
	return &t->c[j];
}

static void itab_free(struct itab *t)
{
	free(t->c);
	memset(t, 0, sizeof(*t));
}

int64_t pprof_string(struct pprof *pp, const char *s)
{
	uint64_t k[4] = {0}, h;
	size_t j;
	struct cell *c;

	if (!s || !*s)
		return 0;
	h = hash_str(s);
	if (2 * (pp->strs.n + 1) > pp->strs.cap)
		itab_grow(&pp->strs);
	/* equal hashes of different strings take the next cells */
	k[0] = h;
	for (j = hash_key(k) & (pp->strs.cap - 1);; j = (j + 1) & (pp->strs.cap - 1)) {
		c = &pp->strs.c[j];
		if (!c->id || (c->k[0] == h && !strcmp(pp->str[c->id], s)))
			break;
	}
	if (c->id)
		return (int64_t)c->id;
	if (pp->n_str == pp->cap_str) {
		pp->cap_str = 2 * pp->cap_str;
		pp->str = xrealloc(pp->str, pp->cap_str * sizeof(*pp->str));
	}
	pp->str[pp->n_str] = xstrdup(s);
	c->k[0] = h;
	c->id = pp->n_str++;
	pp->strs.n++;
	return (int64_t)c->id;
}

struct pprof *pprof_new(const char *const *types, const char *const *units, size_t n)
{
	struct pprof *pp = xcalloc(1, sizeof(*pp));

	pp->cap_str = 64;
	pp->str = xcalloc(pp->cap_str, sizeof(*pp->str));
	pp->str[pp->n_str++] = xstrdup("");
	pp->n_types = n;
	pp->type = xcalloc(n ? n : 1, sizeof(*pp->type));
	pp->unit = xcalloc(n ? n : 1, sizeof(*pp->unit));
	for (size_t i = 0; i < n; i++) {
		pp->type[i] = pprof_string(pp, types[i]);
		pp->unit[i] = pprof_string(pp, units[i]);
	}
	return pp;
}

void pprof_free(struct pprof *pp)
{
	if (!pp)
		return;
	for (size_t i = 0; i < pp->n_str; i++)
		free(pp->str[i]);
	free(pp->str);
	free(pp->type);
	free(pp->unit);
	itab_free(&pp->strs);
	itab_free(&pp->maps);
	itab_free(&pp->fns);
	itab_free(&pp->locs);
	free(pp->map);
	free(pp->fn);
	free(pp->loc);
	pb_free(&pp->samples);
	free(pp->comments);
	free(pp);
}

/* The id of key k in t, new (n_items grows, *added set) if it was not there. */
static uint64_t intern(struct itab *t, const uint64_t k[4], size_t *n_items, bool *added)
{
	struct cell *c = itab_find(t, k);

	*added = !c->id;
	if (!c->id) {
		memcpy(c->k, k, sizeof(c->k));
		c->id = ++*n_items;
		t->n++;
	}
	return c->id;
}

uint64_t pprof_mapping(struct pprof *pp, const char *file)
{
	uint64_t k[4] = {(uint64_t)pprof_string(pp, file)}, id;
	size_t n = pp->n_map;
	bool added;

	id = intern(&pp->maps, k, &n, &added);
	if (added) {
		pp->map = xrealloc(pp->map, n * sizeof(*pp->map));
		memset(&pp->map[id - 1], 0, sizeof(*pp->map));
		pp->map[id - 1].file = (int64_t)k[0];
		pp->n_map = n;
	}
	return id;
}

uint64_t pprof_function(struct pprof *pp, const char *name, const char *system_name,
			const char *file, int64_t line)
{
	struct pfunc f = {.name = pprof_string(pp, name),
			  .system_name = pprof_string(pp, system_name ? system_name : name),
			  .file = pprof_string(pp, file),
			  .line = line > 0 ? line : 0};
	uint64_t k[4] = {(uint64_t)f.name, (uint64_t)f.system_name, (uint64_t)f.file,
			 (uint64_t)f.line},
		 id;
	size_t n = pp->n_fn;
	bool added;

	id = intern(&pp->fns, k, &n, &added);
	if (added) {
		pp->fn = xrealloc(pp->fn, n * sizeof(*pp->fn));
		pp->fn[id - 1] = f;
		pp->n_fn = n;
	}
	return id;
}

uint64_t pprof_location(struct pprof *pp, uint64_t mapping, uint64_t addr, uint64_t fn,
			int64_t line)
{
	uint64_t k[4] = {mapping, addr, fn, (uint64_t)(line > 0 ? line : 0)}, id;
	size_t n = pp->n_loc;
	bool added;

	id = intern(&pp->locs, k, &n, &added);
	if (!added)
		return id;
	pp->loc = xrealloc(pp->loc, n * sizeof(*pp->loc));
	pp->loc[id - 1] = (struct ploc){mapping, addr, fn, line > 0 ? line : 0};
	pp->n_loc = n;
	if (mapping && mapping <= pp->n_map) {
		struct pmap *m = &pp->map[mapping - 1];

		if (!m->limit || addr < m->start)
			m->start = addr;
		if (addr >= m->limit)
			m->limit = addr + 1;
		if (fn && fn <= pp->n_fn) {
			m->files |= pp->fn[fn - 1].file != 0;
			m->lines |= line > 0;
		}
	}
	return id;
}

void pprof_sample(struct pprof *pp, const uint64_t *locs, size_t n_locs, const int64_t *values,
		  const struct pprof_label *labels, size_t n_labels)
{
	struct pb *b = &pp->samples;
	size_t at = pb_open(b, 2), i;

	pb_packed(b, 1, locs, n_locs);
	/* int64s as their two's complements (an int64 may be read as its uint64) */
	pb_packed(b, 2, (const uint64_t *)values, pp->n_types);
	for (i = 0; i < n_labels; i++) {
		size_t l = pb_open(b, 3);

		pb_int(b, 1, pprof_string(pp, labels[i].key));
		if (labels[i].str) {
			pb_int(b, 2, pprof_string(pp, labels[i].str));
		} else {
			pb_int(b, 3, labels[i].num);
			pb_int(b, 4, pprof_string(pp, labels[i].unit));
		}
		pb_close(b, l);
	}
	pb_close(b, at);
	pp->n_samples++;
}

void pprof_set_time(struct pprof *pp, int64_t time_nanos, int64_t duration_nanos)
{
	pp->time_nanos = time_nanos;
	pp->duration_nanos = duration_nanos;
}

void pprof_set_period(struct pprof *pp, const char *type, const char *unit, int64_t period)
{
	pp->period_type = pprof_string(pp, type);
	pp->period_unit = pprof_string(pp, unit);
	pp->period = period;
}

void pprof_set_default(struct pprof *pp, const char *type)
{
	pp->default_type = pprof_string(pp, type);
}

void pprof_comment(struct pprof *pp, const char *text)
{
	pp->comments = xrealloc(pp->comments, (pp->n_comments + 1) * sizeof(*pp->comments));
	pp->comments[pp->n_comments++] = pprof_string(pp, text);
}

size_t pprof_n_samples(const struct pprof *pp)
{
	return pp->n_samples;
}

/* A ValueType message (type, unit) as field `field`. */
static void value_type(struct pb *b, uint32_t field, int64_t type, int64_t unit)
{
	size_t at = pb_open(b, field);

	pb_int(b, 1, type);
	pb_int(b, 2, unit);
	pb_close(b, at);
}

/* Profile's fields after the samples: mappings, locations, functions, strings, the rest. */
static void encode_tail(const struct pprof *pp, struct pb *b)
{
	size_t i, at;

	for (i = 0; i < pp->n_map; i++) {
		const struct pmap *m = &pp->map[i];

		at = pb_open(b, 3);
		pb_uint(b, 1, i + 1);
		pb_uint(b, 2, m->start);
		pb_uint(b, 3, m->limit);
		pb_int(b, 5, m->file);
		pb_bool(b, 7, true);
		pb_bool(b, 8, m->files);
		pb_bool(b, 9, m->lines);
		pb_close(b, at);
	}
	for (i = 0; i < pp->n_loc; i++) {
		const struct ploc *l = &pp->loc[i];
		size_t ln;

		at = pb_open(b, 4);
		pb_uint(b, 1, i + 1);
		pb_uint(b, 2, l->mapping);
		pb_uint(b, 3, l->addr);
		ln = pb_open(b, 4);
		pb_uint(b, 1, l->fn);
		pb_int(b, 2, l->line);
		pb_close(b, ln);
		pb_close(b, at);
	}
	for (i = 0; i < pp->n_fn; i++) {
		const struct pfunc *f = &pp->fn[i];

		at = pb_open(b, 5);
		pb_uint(b, 1, i + 1);
		pb_int(b, 2, f->name);
		pb_int(b, 3, f->system_name);
		pb_int(b, 4, f->file);
		pb_int(b, 5, f->line);
		pb_close(b, at);
	}
	for (i = 0; i < pp->n_str; i++)
		pb_bytes(b, 6, pp->str[i], strlen(pp->str[i]));
	pb_int(b, 9, pp->time_nanos);
	pb_int(b, 10, pp->duration_nanos);
	if (pp->period_type || pp->period_unit)
		value_type(b, 11, pp->period_type, pp->period_unit);
	pb_int(b, 12, pp->period);
	if (pp->n_comments) {
		uint64_t *v = xcalloc(pp->n_comments, sizeof(*v));

		for (i = 0; i < pp->n_comments; i++)
			v[i] = (uint64_t)pp->comments[i];
		pb_packed(b, 13, v, pp->n_comments);
		free(v);
	}
	pb_int(b, 14, pp->default_type);
}

int pprof_write(struct pprof *pp, FILE *out)
{
	struct pb head = {0}, tail = {0};
	const void *piece[3];
	size_t len[3];
	int err;

	for (size_t i = 0; i < pp->n_types; i++)
		value_type(&head, 1, pp->type[i], pp->unit[i]);
	encode_tail(pp, &tail);
	/* the samples, the bulk, go out as they are: never copied into one message */
	piece[0] = head.buf, len[0] = head.len;
	piece[1] = pp->samples.buf, len[1] = pp->samples.len;
	piece[2] = tail.buf, len[2] = tail.len;
	err = pb_gzip(out, piece, len, 3);
	pb_free(&head);
	pb_free(&tail);
	return err;
}

/* ---- a run's profile ---- */

/* What one profile of fortstat becomes: the tables of pprof and which value is which. */
struct ppview {
	const struct profile *p;
	const struct report_opts *opts;
	struct pprof *pp;
	int vi[FS_N_CLOCKS]; /* the value index of each clock's time, -1: none */
	int ai;		     /* --alloc: alloc_objects' index (alloc_space's next), -1: none */
	size_t n_values;
};
#define PP_VALUES (1 + FS_N_CLOCKS + 2)

/* The executable of a section: its label, less " [pid N]" (-f). */
static char *section_path(const struct profile_section *sec)
{
	char suffix[32];
	size_t n = strlen(sec->label ? sec->label : ""), k;
	char *s = xstrdup(sec->label ? sec->label : "");

	k = (size_t)snprintf(suffix, sizeof(suffix), " [pid %d]", sec->pid);
	if (n > k && !strcmp(s + n - k, suffix))
		s[n - k] = '\0';
	return s;
}

/* Routine r's location in section sec (made once: loc[r]). */
static uint64_t routine_loc(struct ppview *v, const struct profile_section *sec, uint64_t *loc,
			    uint64_t exe, uint32_t r)
{
	const struct profile_routine *rt;
	uint64_t map, fn;

	if (r >= sec->n_routines)
		return pprof_location(v->pp, 0, 0, pprof_function(v->pp, "?", NULL, NULL, 0), 0);
	if (loc[r])
		return loc[r];
	rt = &sec->routines[r];
	map = rt->module ? pprof_mapping(v->pp, rt->module) : exe;
	fn = pprof_function(v->pp, rt->name, rt->n_aliases ? rt->aliases[0] : NULL, rt->file,
			    rt->line);
	loc[r] = pprof_location(v->pp, map, rt->addr, fn, rt->line);
	return loc[r];
}

/* One sample per calling context of set s of section sec, with its labels. */
static void add_set(struct ppview *v, const struct profile_section *sec,
		    const struct profile_set *s, uint64_t *loc, uint64_t exe,
		    const struct pprof_label *labels, size_t n_labels)
{
	size_t max_depth = sec->n_routines + 1;
	uint64_t *stack = xcalloc(max_depth, sizeof(*stack));
	int64_t values[PP_VALUES] = {0};

	for (size_t i = 1; i < s->n_nodes; i++) {
		const struct profile_node *x = &s->nodes[i];
		bool any = x->calls != 0;
		size_t depth = 0;

		values[0] = (int64_t)x->calls;
		for (int c = 0; c < FS_N_CLOCKS; c++) {
			if (v->vi[c] < 0)
				continue;
			values[v->vi[c]] = sec->count_only ? 0 : (int64_t)x->self[c];
			any |= values[v->vi[c]] != 0;
		}
		if (!any)
			continue;
		/* a parent's index is below its child's: the walk ends at the root */
		for (uint32_t k = (uint32_t)i; k && k < s->n_nodes && depth < max_depth;
		     k = s->nodes[k].parent)
			stack[depth++] = routine_loc(v, sec, loc, exe, s->nodes[k].routine);
		pprof_sample(v->pp, stack, depth, values, labels, n_labels);
	}
	free(stack);
}

/*
 * --alloc: one sample per calling context of the section's allocations,
 * alloc_objects and alloc_space its only values (Go's heap profile's names).
 */
static void add_alloc(struct ppview *v, const struct profile_section *sec, uint64_t *loc,
		      uint64_t exe, const struct pprof_label *labels, size_t n_labels)
{
	uint64_t *stack = xcalloc(sec->n_alloc_ctx + 1, sizeof(*stack));
	int64_t values[PP_VALUES] = {0};

	for (size_t i = 1; v->ai >= 0 && i < sec->n_alloc_ctx; i++) {
		const struct alloc_ctx *x = &sec->alloc_ctx[i];
		size_t depth = 0;

		if (!x->allocs)
			continue;
		values[v->ai] = (int64_t)x->allocs;
		values[v->ai + 1] = (int64_t)x->bytes;
		/* parents come first: the walk ends at the root */
		for (size_t k = i; k && k < sec->n_alloc_ctx && depth < sec->n_alloc_ctx;
		     k = sec->alloc_ctx[k].parent)
			if (sec->alloc_ctx[k].routine != PROFILE_NONE)
				stack[depth++] =
				    routine_loc(v, sec, loc, exe, sec->alloc_ctx[k].routine);
		pprof_sample(v->pp, stack, depth, values, labels, n_labels);
	}
	free(stack);
}

/* Every context of section sec: the whole process, or with --threads each thread's. */
static void add_section(struct ppview *v, const struct profile_section *sec, bool label_pid)
{
	uint64_t *loc = xcalloc(sec->n_routines + 1, sizeof(*loc));
	char *path = section_path(sec);
	uint64_t exe = pprof_mapping(v->pp, path);
	struct pprof_label lab[2];
	size_t n = 0;

	if (label_pid)
		lab[n++] = (struct pprof_label){.key = "pid", .num = sec->pid};
	if (!v->opts->threads) {
		add_set(v, sec, &sec->all, loc, exe, lab, n);
		add_alloc(v, sec, loc, exe, lab, n);
	} else {
		for (size_t t = 0; t < sec->n_threads; t++) {
			const struct profile_set *th = &sec->threads[t];
			bool go = th->tid >= ACCT_GOROUTINE0;

			lab[n] = (struct pprof_label){.key = go ? "goroutine" : "thread",
						      .num = go ? th->tid - ACCT_GOROUTINE0 + 1
								: th->tid};
			add_set(v, sec, th, loc, exe, lab, n + 1);
		}
	}
	free(path);
	free(loc);
}

/* A merge's comments: who wrote it, and each report merged. */
static void add_merge_comments(struct ppview *v)
{
	const struct profile *p = v->p;
	char *s = xasprintf("fortstat %s --merge: %zu inputs of %s", PACKAGE_VERSION, p->n_inputs,
			    p->sections[0].label);

	pprof_comment(v->pp, s);
	free(s);
	for (size_t i = 0; i < p->n_inputs; i++) {
		if (p->inputs[i].rank >= 0)
			s = xasprintf("input %zu: %s (rank %d)", i, p->inputs[i].file,
				      p->inputs[i].rank);
		else
			s = xasprintf("input %zu: %s", i, p->inputs[i].file);
		pprof_comment(v->pp, s);
		free(s);
	}
}

/* The comments: who wrote it, the command, each section's end and warning. */
static void add_comments(struct ppview *v, const size_t *secs, size_t n)
{
	char *s, *w;
	size_t len = 0;
	FILE *f;

	if (v->p->n_inputs) {
		add_merge_comments(v);
		return;
	}
	s = xasprintf("fortstat %s", fs_version());
	pprof_comment(v->pp, s);
	free(s);
	s = NULL;
	f = open_memstream(&s, &len);
	if (f) {
		fputs("command:", f);
		for (size_t i = 0; v->p->argv && v->p->argv[i]; i++)
			fprintf(f, " %s", v->p->argv[i]);
		if (fclose(f) == 0)
			pprof_comment(v->pp, s);
		free(s);
	}
	for (size_t i = 0; i < n; i++) {
		const struct profile_section *sec = &v->p->sections[secs[i]];

		if (sec->note) {
			s = xasprintf("%s: %s", sec->label, sec->note);
			pprof_comment(v->pp, s);
			free(s);
		}
		w = report_warning(v->p, secs[i], v->opts);
		if (w) {
			s = xasprintf("warning: %s", w);
			pprof_comment(v->pp, s);
			free(s);
			free(w);
		}
	}
}

/* Clock c's sample type: its name, or in a merge the clock its inputs named ("time": none). */
static const char *clock_type(const struct profile *p, enum clock_kind c)
{
	if (p->n_inputs)
		return p->merged_clock && *p->merged_clock ? p->merged_clock : "time";
	return clock_name(c);
}

int report_write_pprof(FILE *out, const struct profile *p, const size_t *secs, size_t n,
		       const struct report_opts *opts)
{
	const char *types[PP_VALUES] = {"calls"}, *units[PP_VALUES] = {"count"};
	struct ppview v = {.p = p, .opts = opts, .ai = -1};
	bool alloc = false;
	double duration_s = 0;
	struct timespec now;
	int err;

	if (!out || !p || !opts || (n && !secs))
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (secs[i] >= p->n_sections)
			return -EINVAL;
	/* a clock's value when some section has its times */
	v.n_values = 1;
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		bool known = false;

		for (size_t i = 0; i < n; i++) {
			const struct profile_section *sec = &p->sections[secs[i]];

			known |= !sec->count_only && sec->clock_known[c];
		}
		v.vi[c] = known ? (int)v.n_values : -1;
		if (known) {
			types[v.n_values] = clock_type(p, (enum clock_kind)c);
			units[v.n_values++] = "nanoseconds";
		}
	}
	/* --alloc: the storage too (the process's: not per thread) */
	for (size_t i = 0; opts->alloc && !opts->threads && i < n; i++)
		alloc |= p->sections[secs[i]].alloc_ctx != NULL;
	if (alloc) {
		v.ai = (int)v.n_values;
		types[v.n_values] = "alloc_objects";
		units[v.n_values++] = "count";
		types[v.n_values] = "alloc_space";
		units[v.n_values++] = "bytes";
	}
	v.pp = pprof_new(types, units, v.n_values);
	for (size_t i = 0; i < n; i++) {
		const struct profile_section *sec = &p->sections[secs[i]];

		add_section(&v, sec, n > 1);
		if (sec->clock_known[CLOCK_KIND_WALL] && sec->total_s[CLOCK_KIND_WALL] > duration_s)
			duration_s = sec->total_s[CLOCK_KIND_WALL];
	}
	/* every call is a sample's worth: one call */
	pprof_set_period(v.pp, "calls", "count", 1);
	pprof_set_default(v.pp, v.vi[opts->clock] >= 0 ? clock_type(p, opts->clock) : "calls");
	/* when it was made: a run's (a merge's reports were made at their own times) */
	if (!p->n_inputs) {
		clock_gettime(CLOCK_REALTIME, &now);
		pprof_set_time(v.pp,
			       (int64_t)now.tv_sec * 1000000000 + now.tv_nsec -
				   (int64_t)(duration_s * 1e9),
			       (int64_t)(duration_s * 1e9));
	}
	add_comments(&v, secs, n);
	err = pprof_write(v.pp, out);
	pprof_free(v.pp);
	return err;
}
