/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * jsonin.h - a small strict JSON reader (RFC 8259) for fortstat's own reports:
 * one text in, a tree of values out, every size and index checked. It never
 * crashes on bad input: what is not JSON is an error with its line and what
 * was wrong. Strings are unescaped (UTF-8, \u escapes and surrogate pairs);
 * numbers are kept as text and converted when asked.
 *
 * Why not a library: parsing bench/merge's 1,024 inputs (2.5 GB) alone took
 * jansson 2.14 (json_loadb) 119 s of CPU, json-c 0.16 about as long (6.6 s
 * for 64 of them), against 6.6 s for fortstat's whole merge with this
 * reader, whose target is 5 s (measured 2026-11-26, a 2-CPU VM). Measured
 * again that day on 64 of the inputs (158 MiB; median CPU of three runs):
 * jansson's json_loadb 9.1 s, json_load_file (its stream) 8.8 s, and 6.1 s
 * with every allocation from an arena freed at once (json_set_alloc_funcs),
 * against 0.61 s for the whole merge with this reader. A third of
 * jansson's time is malloc and free (a node and a hash table per value
 * and object); the rest is its own lexer (a character at a time through
 * its stream, each string copied, each number through strtod), which no
 * flag changes: 10 to 15 times this reader, 100 s or more for the 1,024.
 * A streaming parser builds no tree and is still too slow: yajl 2.1
 * (libyajl-dev) with callbacks that only count, numbers left as text,
 * took 9.3-10.3 s for the 1,024 (2.5 GB; 9.4 s without its UTF-8 check,
 * 17.5 s with its number conversion) against 2.8-3.7 s for this reader's
 * json_parse_keep, and the whole merge 4.9-5.8 s of CPU: with yajl it
 * would take 12 s or more (measured 2026-11-26, load 4-6). bench/jsonlibs
 * measures them all again.
 */
#ifndef FORTSTAT_JSONIN_H
#define FORTSTAT_JSONIN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum json_type {
	JSON_NULL,
	JSON_FALSE,
	JSON_TRUE,
	JSON_NUMBER,
	JSON_STRING,
	JSON_ARRAY,
	JSON_OBJECT
};

#define JSON_NONE ((uint32_t)-1) /* no node: no child, no next sibling */
#define JSON_MAX_DEPTH 64	 /* deeper nesting is an error (no recursion bomb) */
#define JSON_MAX_KEEP 64	 /* most member names json_parse_keep can keep */

/* A value. Members of an object carry their key; a container's children are a list. */
struct json_node {
	enum json_type type;
	uint32_t n;	 /* array or object: its number of children */
	uint32_t child;	 /* array or object: first child's index, or JSON_NONE */
	uint32_t next;	 /* next sibling's index, or JSON_NONE */
	const char *key; /* member of an object: its key (NUL-terminated), else NULL */
	const char *str; /* string: its text (NUL-terminated, may hold NULs: see len);
			  * number: its text (not NUL-terminated: len) */
	uint32_t len;	 /* string or number: its length in bytes */
	uint32_t key_id; /* member of an object read by json_parse_keep: its key's index
			  * in the keep list; else JSON_NONE */
};

/* A parsed text: nodes[0] is the top value. Owns its memory. */
struct json_doc {
	struct json_node *nodes;
	size_t n_nodes, cap;
	char *text;  /* a copy of the input, where strings are unescaped in place */
	size_t used; /* bytes of the input the top value and the blanks after it took */
};

/*
 * Parse the first JSON value of buf[0..len) into *doc (blanks before and
 * after it are skipped; doc->used says where the next value may start).
 * Returns 0; -EINVAL for text that is not JSON (err, errlen > 0: "line N:
 * what", NUL-terminated; *doc is empty); -ENODATA when buf holds nothing
 * but blanks. Free *doc with json_free() in every case.
 */
int json_parse(const char *buf, size_t len, struct json_doc *doc, char *err, size_t errlen);

/*
 * As json_parse, in place: buf[0..len) is changed (strings unescaped) and
 * must outlive *doc, which is not copied. *doc must be zero-initialised or
 * a document of an earlier parse: its node array is reused (the fast way
 * through many texts).
 */
int json_parse_mut(char *buf, size_t len, struct json_doc *doc, char *err, size_t errlen);

/*
 * As json_parse_mut, building only the members of objects (at any depth)
 * whose key is one of keep[0..n_keep) (n_keep <= JSON_MAX_KEEP; keep NULL:
 * all of them): the others are checked as strictly as the rest (grammar,
 * escapes, UTF-8, depth) and left out of the tree and of their object's n.
 * A kept member's key_id is its key's index in keep, for lookups without
 * comparing names. Returns as json_parse; -EINVAL too when n_keep is over
 * JSON_MAX_KEEP.
 */
int json_parse_keep(char *buf, size_t len, struct json_doc *doc, const char *const *keep,
		    size_t n_keep, char *err, size_t errlen);

void json_free(struct json_doc *doc);

/* The top value, or NULL when the document is empty. */
const struct json_node *json_root(const struct json_doc *doc);

/* Member `key` of object o, or NULL (o NULL or not an object, or no such member). */
const struct json_node *json_get(const struct json_doc *doc, const struct json_node *o,
				 const char *key);

/* The first child of an array or object, the next sibling of a node: NULL at the end. */
const struct json_node *json_first(const struct json_doc *doc, const struct json_node *v);
const struct json_node *json_next(const struct json_doc *doc, const struct json_node *v);

/*
 * A number's value: 0 and *out when v is a number that fits (json_u64: a
 * whole number in [0, 2^64), json_int: in [INT_MIN, INT_MAX], json_double:
 * finite), -EINVAL otherwise (not a number, or out of range); *out untouched.
 */
int json_double(const struct json_node *v, double *out);
int json_u64(const struct json_node *v, uint64_t *out);
int json_int(const struct json_node *v, int *out);

/* A string's text, or NULL when v is not a string. */
const char *json_string(const struct json_node *v);

#endif
