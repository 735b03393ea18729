/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * pprof.h - pprof's profile.proto (github.com/google/pprof, proto/
 * profile.proto), gzipped: what `go tool pprof`, its web UI, Pyroscope and
 * Grafana read. Two layers:
 *
 * - pb_*: a small protobuf encoder into a growing buffer: varints,
 *   length-delimited fields (strings, nested messages), packed repeated
 *   varints. Scalars follow proto3: a field whose value is 0 (false) is not
 *   written; strings and packed lists always are (an empty string is an
 *   entry of a repeated string). Negative int64 values are written as their
 *   two's complement (ten bytes), as int64 (not sint64) wants.
 * - pprof_*: a profile under construction: sample types, a string table
 *   ("" is string 0), mappings, functions and locations interned (the same
 *   arguments give the same id; ids start at 1), samples, then written
 *   whole as one gzip member (pprof_write).
 *
 * fortstat's views use it through report_write_pprof (report.h) and the
 * merge's (merge.h); its own Check suite tests the bytes.
 */
#ifndef FORTSTAT_PPROF_H
#define FORTSTAT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---- the encoder ---- */

enum pb_wire { PB_VARINT = 0, PB_LEN = 2 };

/* A growing buffer of encoded bytes; zero-initialised is empty. pb_free frees. */
struct pb {
	uint8_t *buf;
	size_t len, cap;
};

void pb_free(struct pb *b);
/* Append n raw bytes. */
void pb_raw(struct pb *b, const void *p, size_t n);
/* Append v as a base-128 varint (1 to 10 bytes). */
void pb_varint(struct pb *b, uint64_t v);
/* Append a field's key: field << 3 | wire. */
void pb_key(struct pb *b, uint32_t field, enum pb_wire wire);
/* A uint64 field, or an int64 one as its two's complement; nothing when v is 0. */
void pb_uint(struct pb *b, uint32_t field, uint64_t v);
void pb_int(struct pb *b, uint32_t field, int64_t v);
/* A bool field: 1 when v, nothing when not. */
void pb_bool(struct pb *b, uint32_t field, bool v);
/* A length-delimited field of n bytes (a string, bytes, an encoded message), always written. */
void pb_bytes(struct pb *b, uint32_t field, const void *p, size_t n);
/* A packed repeated varint field of n values (int64s as two's complements); none if n is 0. */
void pb_packed(struct pb *b, uint32_t field, const uint64_t *v, size_t n);
/*
 * A nested message: pb_open writes the key and returns where its body
 * starts; what is appended until pb_close(b, at) is the body, and pb_close
 * puts its length in front of it.
 */
size_t pb_open(struct pb *b, uint32_t field);
void pb_close(struct pb *b, size_t at);

/*
 * Compress len bytes (several pieces: n_pieces pointers and lengths, one
 * after the other) into one gzip member written to out. Returns 0, -ENOMEM
 * when zlib cannot start, or a write error's negative errno (out checked).
 */
int pb_gzip(FILE *out, const void *const *pieces, const size_t *lens, size_t n_pieces);

/* ---- the profile ---- */

struct pprof; /* opaque */

/* A sample's label (pprof's tags): key=str, or key=num [num_unit]. */
struct pprof_label {
	const char *key;
	const char *str; /* NULL: a number */
	int64_t num;
	const char *unit; /* the number's unit, or NULL */
};

/*
 * A new profile whose samples have n values, value i of type types[i] in
 * units[i] (e.g. "calls"/"count", "cpu"/"nanoseconds"). Never NULL.
 */
struct pprof *pprof_new(const char *const *types, const char *const *units, size_t n);
void pprof_free(struct pprof *pp);

/* The index of string s in the string table (added once; NULL and "" are 0). */
int64_t pprof_string(struct pprof *pp, const char *s);

/*
 * The mapping of object file `file` (the executable, a library), made on
 * first use: its address range grows to hold every location put in it;
 * has_functions is set, has_filenames and has_line_numbers as its locations
 * have them. Returns its id.
 */
uint64_t pprof_mapping(struct pprof *pp, const char *file);

/* The function with these names (system_name: the symbol; NULL: name), file (or NULL) and line. */
uint64_t pprof_function(struct pprof *pp, const char *name, const char *system_name,
			const char *file, int64_t line);

/* The location at addr in mapping (0: none) on line `line` of function fn. */
uint64_t pprof_location(struct pprof *pp, uint64_t mapping, uint64_t addr, uint64_t fn,
			int64_t line);

/*
 * A sample: its stack of location ids, the innermost first (n_locs), its
 * values (as many as the sample types), and n_labels labels.
 */
void pprof_sample(struct pprof *pp, const uint64_t *locs, size_t n_locs, const int64_t *values,
		  const struct pprof_label *labels, size_t n_labels);

/* The Profile's other fields: when it started and how long it lasted (ns; 0: unknown). */
void pprof_set_time(struct pprof *pp, int64_t time_nanos, int64_t duration_nanos);
/* What one sample stands for: period_type (type, unit) and period. */
void pprof_set_period(struct pprof *pp, const char *type, const char *unit, int64_t period);
/* The sample type that viewers show first (one of pprof_new's types). */
void pprof_set_default(struct pprof *pp, const char *type);
/* A comment line (pprof -comments). */
void pprof_comment(struct pprof *pp, const char *text);

/* How many samples were added. */
size_t pprof_n_samples(const struct pprof *pp);

/*
 * Encode the Profile message and write it gzipped to out. Returns 0 or a
 * negative errno (pb_gzip).
 */
int pprof_write(struct pprof *pp, FILE *out);

#endif
