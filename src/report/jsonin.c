// SPDX-License-Identifier: GPL-2.0-or-later
/* jsonin.c - a small strict JSON reader: every size and index checked, errors with their line. */
#include "fortstat/jsonin.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <emmintrin.h>

#include "fortstat/util.h"

#define KEEP_CELLS 256 /* cells of the keep table: a power of two, over JSON_MAX_KEEP */

struct parser {
	struct json_doc *doc;
	char *s; /* doc->text */
	size_t len, pos;
	char *err;
	size_t errlen;
	bool failed;
	const char *const *keep; /* the members to build, or NULL: all */
	size_t n_keep;
	size_t keep_len[JSON_MAX_KEEP];
	uint8_t cell[KEEP_CELLS]; /* keep's index + 1 by key_hash, linear probing; 0: free */
};

/* A key's cell in the keep table: its length and its first and last bytes mixed. */
static size_t key_hash(const char *k, size_t len)
{
	size_t h = len * 31;

	if (len)
		h += (unsigned char)k[0] * 7u + (unsigned char)k[len - 1] * 13u;
	return h & (KEEP_CELLS - 1);
}

/* The keep table of p->keep[0..n_keep). */
static void keep_init(struct parser *p)
{
	memset(p->cell, 0, sizeof(p->cell));
	for (size_t i = 0; i < p->n_keep; i++) {
		size_t c;

		p->keep_len[i] = strlen(p->keep[i]);
		c = key_hash(p->keep[i], p->keep_len[i]);
		while (p->cell[c])
			c = (c + 1) & (KEEP_CELLS - 1);
		p->cell[c] = (uint8_t)(i + 1);
	}
}

/* a[0..n) == b[0..n), for short keys: a few loads, no call */
static bool same_bytes(const char *a, const char *b, size_t n)
{
	uint64_t x, y, u, v;
	uint32_t h, i, j, k;

	if (n > 16)
		return !memcmp(a, b, n);
	if (n >= 8) {
		/* two loads that overlap cover 8 to 16 bytes */
		memcpy(&x, a, 8);
		memcpy(&y, b, 8);
		memcpy(&u, a + n - 8, 8);
		memcpy(&v, b + n - 8, 8);
		return x == y && u == v;
	}
	if (n >= 4) {
		memcpy(&h, a, 4);
		memcpy(&i, b, 4);
		memcpy(&j, a + n - 4, 4);
		memcpy(&k, b + n - 4, 4);
		return h == i && j == k;
	}
	for (size_t m = 0; m < n; m++)
		if (a[m] != b[m])
			return false;
	return true;
}

/* Key k (len bytes)'s index in p->keep, or JSON_NONE when it is not kept. */
static uint32_t keep_index(const struct parser *p, const char *k, size_t len)
{
	for (size_t c = key_hash(k, len); p->cell[c]; c = (c + 1) & (KEEP_CELLS - 1)) {
		size_t i = p->cell[c] - 1u;

		if (p->keep_len[i] == len && same_bytes(p->keep[i], k, len))
			return (uint32_t)i;
	}
	return JSON_NONE;
}

/* Record the first error with the line it is on; returns -EINVAL. */
__attribute__((format(printf, 2, 3))) static int fail(struct parser *p, const char *fmt, ...)
{
	va_list ap;
	size_t line = 1, i, n;

	if (p->failed)
		return -EINVAL;
	p->failed = true;
	if (!p->err || !p->errlen)
		return -EINVAL;
	for (i = 0; i < p->pos && i < p->len; i++)
		line += p->s[i] == '\n';
	n = (size_t)snprintf(p->err, p->errlen, "line %zu: ", line);
	if (n < p->errlen) {
		va_start(ap, fmt);
		vsnprintf(p->err + n, p->errlen - n, fmt, ap);
		va_end(ap);
	}
	return -EINVAL;
}

static inline void skip_blanks(struct parser *p)
{
	const char *s = p->s;
	size_t i = p->pos, n = p->len;

	/* most often there is nothing to skip, or the one space of ": " and ", " */
	if (i < n && (unsigned char)s[i] > ' ')
		return;
	if (i + 1 < n && s[i] == ' ' && (unsigned char)s[i + 1] > ' ') {
		p->pos = i + 1;
		return;
	}
	while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
		i++;
	p->pos = i;
}

/* A new node of type t: its index, or JSON_NONE when the document is too large. */
static inline uint32_t new_node(struct parser *p, enum json_type t)
{
	struct json_doc *d = p->doc;

	if (d->n_nodes >= UINT32_MAX - 1)
		return JSON_NONE;
	if (d->n_nodes == d->cap) {
		d->cap = d->cap ? 2 * d->cap : 256;
		d->nodes = xrealloc(d->nodes, d->cap * sizeof(*d->nodes));
	}
	d->nodes[d->n_nodes] = (struct json_node){
	    .type = t, .child = JSON_NONE, .next = JSON_NONE, .key_id = JSON_NONE};
	return (uint32_t)d->n_nodes++;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	size_t k, i;
	uint32_t cp;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		k = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		k = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		k = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (k > n)
		return 0;
	for (i = 1; i < k; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if ((k == 3 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
	    (k == 4 && (cp < 0x10000 || cp > 0x10ffff)))
		return 0;
	return k;
}

/*
 * The n bytes at s (fewer than a sequence needs: utf8_seq said 0) begin a
 * valid UTF-8 sequence: the text was cut inside a character.
 */
static bool utf8_cut(const unsigned char *s, size_t n)
{
	unsigned char full[4] = {0x80, 0x80, 0x80, 0x80};
	size_t k = s[0] >= 0xf0 ? 4 : s[0] >= 0xe0 ? 3 : 2;

	if (n == 1)
		return s[0] >= 0xc2 && s[0] <= 0xf4;
	if (n >= k || s[0] < 0xc2 || s[0] > 0xf4)
		return false;
	/* the bytes still to come may be any continuation byte: 0x80 always fits */
	memcpy(full, s, n);
	return utf8_seq(full, k) == k;
}

/*
 * The n bytes at s (fewer than six) begin a \u escape: the text was cut
 * inside one. low: a low surrogate's (\udc00 to \udfff) is expected.
 */
static bool escape_cut(const char *s, size_t n, bool low)
{
	if (n >= 6 || (n > 0 && s[0] != '\\') || (n > 1 && s[1] != 'u'))
		return false;
	for (size_t i = 2; i < n; i++) {
		char c = s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')))
			return false;
		if (low && ((i == 2 && c != 'd' && c != 'D') ||
			    (i == 3 && !((c >= 'c' && c <= 'f') || (c >= 'C' && c <= 'F')))))
			return false;
	}
	return true;
}

static int hex4(const char *s, uint32_t *v)
{
	*v = 0;
	for (int i = 0; i < 4; i++) {
		char c = s[i];

		*v <<= 4;
		if (c >= '0' && c <= '9')
			*v |= (uint32_t)(c - '0');
		else if (c >= 'a' && c <= 'f')
			*v |= (uint32_t)(c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*v |= (uint32_t)(c - 'A' + 10);
		else
			return -1;
	}
	return 0;
}

/* Code point cp as UTF-8 at out; returns the bytes written (cp < 0x110000). */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp < 0x80) {
		out[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = (char)(0xc0 | cp >> 6);
		out[1] = (char)(0x80 | (cp & 0x3f));
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = (char)(0xe0 | cp >> 12);
		out[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
		out[2] = (char)(0x80 | (cp & 0x3f));
		return 3;
	}
	out[0] = (char)(0xf0 | cp >> 18);
	out[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
	out[3] = (char)(0x80 | (cp & 0x3f));
	return 4;
}

/*
 * How many bytes from s (at most n) need nothing done: ASCII other than '"',
 * '\\' and control characters. Sixteen at a time (SSE2 is x86-64's baseline).
 */
static size_t plain_run(const char *s, size_t n)
{
	const __m128i quote = _mm_set1_epi8('"'), bslash = _mm_set1_epi8('\\');
	const __m128i space = _mm_set1_epi8(0x20);
	size_t i = 0;

	for (; i + 16 <= n; i += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		/* signed: below 0x20 are the control characters and every byte >= 0x80 */
		__m128i stop =
		    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, bslash)),
				 _mm_cmplt_epi8(v, space));
		int mask = _mm_movemask_epi8(stop);

		if (mask)
			return i + (size_t)__builtin_ctz((unsigned)mask);
	}
	for (; i < n; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
			break;
	}
	return i;
}

static int parse_string_slow(struct parser *p, size_t start, const char **out, uint32_t *olen);

/* A string cut by the end of the text (inside an escape or a character too): a truncated report. */
#define STRING_CUT "unexpected end in a string (truncated?)"

/* A string at p->pos (on its '"'), unescaped in place: *out and *olen. */
static inline int parse_string(struct parser *p, const char **out, uint32_t *olen)
{
	char *s = p->s;
	size_t start = ++p->pos;

	/* most are plain (nothing to unescape or check) and short: 16 bytes at a time */
	for (size_t i = start; i + 16 <= p->len && i - start < 64; i += 16) {
		const __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + i));
		int stop = _mm_movemask_epi8(
		    _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('"')),
					      _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'))),
				 _mm_cmplt_epi8(v, _mm_set1_epi8(0x20))));

		if (stop) {
			i += (size_t)__builtin_ctz((unsigned)stop);
			if (s[i] != '"')
				break;
			*out = s + start;
			*olen = (uint32_t)(i - start);
			s[i] = '\0';
			p->pos = i + 1;
			return 0;
		}
	}
	return parse_string_slow(p, start, out, olen);
}

/* parse_string's general case: escapes, UTF-8, control characters, the end of the text. */
static __attribute__((noinline)) int parse_string_slow(struct parser *p, size_t start,
						       const char **out, uint32_t *olen)
{
	char *s = p->s;
	size_t r = start, w = start;

	for (;;) {
		unsigned char c;
		size_t k = plain_run(s + r, p->len - r);

		if (w != r)
			memmove(s + w, s + r, k);
		w += k;
		r += k;
		if (r >= p->len) {
			p->pos = r;
			return fail(p, STRING_CUT);
		}
		c = (unsigned char)s[r];
		if (c == '"')
			break;
		if (c < 0x20) {
			p->pos = r;
			return fail(p, "control character in a string");
		}
		if (c == '\\') {
			uint32_t cp, lo;

			if (r + 1 >= p->len) {
				p->pos = r;
				return fail(p, STRING_CUT);
			}
			switch (s[r + 1]) {
			case '"':
				s[w++] = '"';
				r += 2;
				continue;
			case '\\':
				s[w++] = '\\';
				r += 2;
				continue;
			case '/':
				s[w++] = '/';
				r += 2;
				continue;
			case 'b':
				s[w++] = '\b';
				r += 2;
				continue;
			case 'f':
				s[w++] = '\f';
				r += 2;
				continue;
			case 'n':
				s[w++] = '\n';
				r += 2;
				continue;
			case 'r':
				s[w++] = '\r';
				r += 2;
				continue;
			case 't':
				s[w++] = '\t';
				r += 2;
				continue;
			case 'u':
				break;
			default:
				p->pos = r;
				return fail(p, "bad escape in a string");
			}
			p->pos = r;
			if (r + 6 > p->len && escape_cut(s + r, p->len - r, false))
				return fail(p, STRING_CUT);
			if (r + 6 > p->len || hex4(s + r + 2, &cp))
				return fail(p, "bad \\u escape in a string");
			r += 6;
			if (cp >= 0xdc00 && cp <= 0xdfff)
				return fail(p, "lone low surrogate in a string");
			if (cp >= 0xd800 && cp <= 0xdbff) {
				if (r + 6 > p->len && escape_cut(s + r, p->len - r, true)) {
					p->pos = r;
					return fail(p, STRING_CUT);
				}
				if (r + 6 > p->len || s[r] != '\\' || s[r + 1] != 'u' ||
				    hex4(s + r + 2, &lo) || lo < 0xdc00 || lo > 0xdfff)
					return fail(p, "lone high surrogate in a string");
				r += 6;
				cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			}
			/* an escape is 6 or 12 bytes, its UTF-8 at most 4: w stays behind r */
			w += put_utf8(s + w, cp);
			continue;
		}
		if (c < 0x80) {
			s[w++] = s[r++];
		} else {
			size_t u = utf8_seq((const unsigned char *)s + r, p->len - r);

			if (!u) {
				p->pos = r;
				if (utf8_cut((const unsigned char *)s + r, p->len - r))
					return fail(p, STRING_CUT);
				return fail(p, "invalid UTF-8 in a string");
			}
			memmove(s + w, s + r, u);
			w += u;
			r += u;
		}
	}
	if (w - start > UINT32_MAX - 1)
		return fail(p, "string too long");
	*out = s + start;
	*olen = (uint32_t)(w - start);
	s[w] = '\0'; /* w <= r: at most the closing quote, already read */
	p->pos = r + 1;
	return 0;
}

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/*
 * Of the eight bytes x (the first the lowest), those that are not digits:
 * 0 when all are. A byte is a digit when its high nibble is 3, and still is
 * with 6 added. The lowest byte flagged is the first that is not a digit
 * (only a byte flagged already can carry into the next).
 */
static inline uint64_t not_digits(uint64_t x)
{
	const uint64_t hi = 0xf0f0f0f0f0f0f0f0ULL, three = 0x3030303030303030ULL;

	return ((x & hi) ^ three) | (((x + 0x0606060606060606ULL) & hi) ^ three);
}

/* Past the digits from s[i] (s[0..len)): eight at a time while eight are left. */
static inline size_t digits_end(const char *s, size_t i, size_t len)
{
	for (; i + 8 <= len; i += 8) {
		uint64_t x, t;

		memcpy(&x, s + i, 8);
		t = not_digits(x);
		if (t)
			return i + (size_t)(__builtin_ctzll(t) >> 3);
	}
	while (i < len && is_digit(s[i]))
		i++;
	return i;
}

/* A number cut by the end of the text: a truncated report (a cut after a digit is seen later). */
#define NUMBER_CUT "unexpected end in a number (truncated?)"

/* A number's text at p->pos, checked against RFC 8259's grammar; node idx, or JSON_NONE: none. */
static inline __attribute__((always_inline)) int parse_number(struct parser *p, uint32_t idx)
{
	size_t start = p->pos, i = p->pos;
	const char *s = p->s;
	struct json_node *v;

	if (i < p->len && s[i] == '-')
		i++;
	if (i >= p->len || !is_digit(s[i]))
		return fail(p, i >= p->len ? NUMBER_CUT : "bad number");
	i = s[i] == '0' ? i + 1 : digits_end(s, i, p->len);
	if (i < p->len && s[i] == '.') {
		i++;
		if (i >= p->len || !is_digit(s[i]))
			return fail(p, i >= p->len ? NUMBER_CUT : "bad number");
		i = digits_end(s, i, p->len);
	}
	if (i < p->len && (s[i] == 'e' || s[i] == 'E')) {
		i++;
		if (i < p->len && (s[i] == '+' || s[i] == '-'))
			i++;
		if (i >= p->len || !is_digit(s[i]))
			return fail(p, i >= p->len ? NUMBER_CUT : "bad number");
		i = digits_end(s, i, p->len);
	}
	if (i - start > 4096)
		return fail(p, "number too long");
	p->pos = i;
	if (idx == JSON_NONE)
		return 0;
	v = &p->doc->nodes[idx];
	v->str = s + start;
	v->len = (uint32_t)(i - start);
	return 0;
}

static inline int parse_value(struct parser *p, uint32_t *idx, int depth, bool build);

/*
 * An array or object at p->pos (on its '[' or '{'), its children linked into
 * node idx; idx JSON_NONE: checked only, nothing built. An object's members
 * whose key is not kept (p->keep) are checked and left out. The one function
 * of the recursion: the scalars of parse_value are read inline.
 */
static __attribute__((noinline)) int parse_container(struct parser *p, uint32_t idx, int depth)
{
	bool obj = p->s[p->pos] == '{';
	char close = obj ? '}' : ']';
	uint32_t last = JSON_NONE, n = 0;

	if (depth >= JSON_MAX_DEPTH)
		return fail(p, "nested more than %d deep", JSON_MAX_DEPTH);
	p->pos++;
	skip_blanks(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		const char *key = NULL;
		uint32_t klen, child, key_id = JSON_NONE;
		bool build = idx != JSON_NONE;
		int err;

		skip_blanks(p);
		if (obj) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return fail(p, p->pos >= p->len ? "unexpected end (truncated?)"
								: "expected a member name");
			err = parse_string(p, &key, &klen);
			if (err)
				return err;
			if (build && p->keep) {
				key_id = keep_index(p, key, klen);
				build = key_id != JSON_NONE;
			}
			skip_blanks(p);
			if (p->pos >= p->len || p->s[p->pos] != ':')
				return fail(p, p->pos >= p->len ? "unexpected end (truncated?)"
								: "expected ':'");
			p->pos++;
		}
		err = parse_value(p, &child, depth + 1, build);
		if (err)
			return err;
		if (build) {
			struct json_node *c = &p->doc->nodes[child];

			c->key = key;
			c->key_id = key_id;
			if (last == JSON_NONE)
				p->doc->nodes[idx].child = child;
			else
				p->doc->nodes[last].next = child;
			last = child;
			if (n == UINT32_MAX - 1)
				return fail(p, "too many members");
			p->doc->nodes[idx].n = ++n;
		}
		skip_blanks(p);
		if (p->pos >= p->len)
			return fail(p, "unexpected end (truncated?)");
		if (p->s[p->pos] == close) {
			p->pos++;
			return 0;
		}
		if (p->s[p->pos] != ',')
			return fail(p, obj ? "expected ',' or '}'" : "expected ',' or ']'");
		p->pos++;
	}
}

static int parse_word(struct parser *p, const char *word)
{
	size_t n = strlen(word), left = p->len - p->pos;

	/* cut inside the word: a truncated report, as inside a number or a string */
	if (left < n && !memcmp(p->s + p->pos, word, left))
		return fail(p, "unexpected end in %s (truncated?)", word);
	if (left < n || memcmp(p->s + p->pos, word, n))
		return fail(p, "unexpected character");
	p->pos += n;
	return 0;
}

/* The value at p->pos into a new node *idx, or (build false) checked only: *idx JSON_NONE. */
static inline __attribute__((always_inline)) int parse_value(struct parser *p, uint32_t *idx,
							     int depth, bool build)
{
	enum json_type t;
	char c;

	*idx = JSON_NONE;
	skip_blanks(p);
	if (p->pos >= p->len)
		return fail(p, "unexpected end (truncated?)");
	c = p->s[p->pos];
	switch (c) {
	case '{':
		t = JSON_OBJECT;
		break;
	case '[':
		t = JSON_ARRAY;
		break;
	case '"':
		t = JSON_STRING;
		break;
	case 't':
		t = JSON_TRUE;
		break;
	case 'f':
		t = JSON_FALSE;
		break;
	case 'n':
		t = JSON_NULL;
		break;
	default:
		if (c != '-' && !is_digit(c))
			return fail(p, "unexpected character");
		t = JSON_NUMBER;
		break;
	}
	if (build) {
		*idx = new_node(p, t);
		if (*idx == JSON_NONE)
			return fail(p, "too many values");
	}
	switch (t) {
	case JSON_OBJECT:
	case JSON_ARRAY:
		return parse_container(p, *idx, depth);
	case JSON_STRING: {
		const char *s;
		uint32_t len;
		int err = parse_string(p, &s, &len);

		if (!err && build) {
			p->doc->nodes[*idx].str = s;
			p->doc->nodes[*idx].len = len;
		}
		return err;
	}
	case JSON_TRUE:
		return parse_word(p, "true");
	case JSON_FALSE:
		return parse_word(p, "false");
	case JSON_NULL:
		return parse_word(p, "null");
	default:
		return parse_number(p, *idx);
	}
}

/* Parse p->s[0..p->len) into p->doc, whose node array is reused. */
static int parse_text(struct parser *p)
{
	struct json_doc *doc = p->doc;
	uint32_t top;
	int rc;

	doc->n_nodes = 0;
	doc->used = 0;
	if (p->err && p->errlen)
		p->err[0] = '\0';
	skip_blanks(p);
	if (p->pos >= p->len) {
		doc->used = p->len;
		return -ENODATA;
	}
	rc = parse_value(p, &top, 0, true);
	if (rc) {
		doc->n_nodes = 0;
		return rc;
	}
	skip_blanks(p);
	doc->used = p->pos;
	return 0;
}

int json_parse(const char *buf, size_t len, struct json_doc *doc, char *err, size_t errlen)
{
	struct parser p = {.doc = doc, .len = len, .err = err, .errlen = errlen};

	memset(doc, 0, sizeof(*doc));
	if (!buf && len)
		return -EINVAL;
	doc->text = xmalloc(len + 1);
	if (len)
		memcpy(doc->text, buf, len);
	doc->text[len] = '\0';
	p.s = doc->text;
	return parse_text(&p);
}

int json_parse_keep(char *buf, size_t len, struct json_doc *doc, const char *const *keep,
		    size_t n_keep, char *err, size_t errlen)
{
	struct parser p = {.doc = doc, .s = buf, .len = len, .err = err, .errlen = errlen};

	free(doc->text);
	doc->text = NULL;
	if ((!buf && len) || n_keep > JSON_MAX_KEEP) {
		doc->n_nodes = doc->used = 0; /* no top value left from an earlier parse */
		return -EINVAL;
	}
	if (keep) {
		p.keep = keep;
		p.n_keep = n_keep;
		keep_init(&p);
	}
	return parse_text(&p);
}

int json_parse_mut(char *buf, size_t len, struct json_doc *doc, char *err, size_t errlen)
{
	return json_parse_keep(buf, len, doc, NULL, 0, err, errlen);
}

void json_free(struct json_doc *doc)
{
	free(doc->nodes);
	free(doc->text);
	memset(doc, 0, sizeof(*doc));
}

const struct json_node *json_root(const struct json_doc *doc)
{
	return doc->n_nodes ? &doc->nodes[0] : NULL;
}

static const struct json_node *node_at(const struct json_doc *doc, uint32_t i)
{
	return i < doc->n_nodes ? &doc->nodes[i] : NULL;
}

const struct json_node *json_first(const struct json_doc *doc, const struct json_node *v)
{
	if (!v || (v->type != JSON_ARRAY && v->type != JSON_OBJECT))
		return NULL;
	return node_at(doc, v->child);
}

const struct json_node *json_next(const struct json_doc *doc, const struct json_node *v)
{
	return v ? node_at(doc, v->next) : NULL;
}

const struct json_node *json_get(const struct json_doc *doc, const struct json_node *o,
				 const char *key)
{
	const struct json_node *m;

	if (!o || o->type != JSON_OBJECT)
		return NULL;
	for (m = json_first(doc, o); m; m = json_next(doc, m))
		if (m->key && !strcmp(m->key, key))
			return m;
	return NULL;
}

const char *json_string(const struct json_node *v)
{
	return v && v->type == JSON_STRING ? v->str : NULL;
}

/* Any number's text through strtod: finite values only. */
static __attribute__((noinline)) int slow_double(const struct json_node *v, double *out)
{
	char *tmp = xmalloc(v->len + 1), *end;
	double d;

	memcpy(tmp, v->str, v->len);
	tmp[v->len] = '\0';
	d = strtod(tmp, &end);
	if (*end || !isfinite(d)) {
		free(tmp);
		return -EINVAL;
	}
	free(tmp);
	*out = d;
	return 0;
}

/* Eight digits x (the first the lowest byte) as a number, in three multiplies. */
static inline uint64_t eight_digits(uint64_t x)
{
	x -= 0x3030303030303030ULL;
	x = x * 10 + (x >> 8);
	return (((x & 0x000000ff000000ffULL) * (100 + (1000000ULL << 32))) +
		(((x >> 16) & 0x000000ff000000ffULL) * (1 + (10000ULL << 32)))) >>
	       32;
}

int json_double(const struct json_node *v, double *out)
{
	static const double pow10[] = {1e0,  1e1,  1e2,	 1e3,  1e4,  1e5,  1e6,	 1e7,
				       1e8,  1e9,  1e10, 1e11, 1e12, 1e13, 1e14, 1e15,
				       1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
	const char *s, *e;
	uint64_t m = 0;
	size_t digits = 0, frac = 0;
	bool neg, dot = false;
	double d;

	if (!v || v->type != JSON_NUMBER || !v->len)
		return -EINVAL;
	/* The fast path (what fortstat writes): [-]digits[.digits], at most 15 digits. */
	s = v->str;
	e = s + v->len;
	neg = *s == '-';
	s += neg;
	for (; s < e; s++) {
		unsigned c = (unsigned char)*s - '0';
		uint64_t x;

		if (e - s >= 8 && (memcpy(&x, s, 8), !not_digits(x))) {
			m = m * 100000000 + eight_digits(x);
			frac += dot ? 8 : 0;
			digits += 8;
			if (digits > 15)
				return slow_double(v, out);
			s += 7;
		} else if (c < 10) {
			m = m * 10 + c;
			frac += dot;
			if (++digits > 15)
				return slow_double(v, out);
		} else if (*s == '.' && !dot) {
			dot = true;
		} else {
			return slow_double(v, out);
		}
	}
	if (frac >= sizeof(pow10) / sizeof(pow10[0]))
		return slow_double(v, out);
	/* both exact doubles (m < 2^53): the quotient is correctly rounded */
	d = (double)m / pow10[frac];
	*out = neg ? -d : d;
	return 0;
}

int json_u64(const struct json_node *v, uint64_t *out)
{
	uint64_t m = 0;

	if (!v || v->type != JSON_NUMBER || !v->len || v->len > 20)
		return -EINVAL;
	for (uint32_t i = 0; i < v->len; i++) {
		char c = v->str[i];

		if (!is_digit(c))
			return -EINVAL;
		/* 19 digits always fit; the 20th may not */
		if (i >= 19 && m > (UINT64_MAX - (uint64_t)(c - '0')) / 10)
			return -EINVAL;
		m = m * 10 + (uint64_t)(c - '0');
	}
	*out = m;
	return 0;
}

int json_int(const struct json_node *v, int *out)
{
	uint64_t m;
	struct json_node pos;

	if (!v || v->type != JSON_NUMBER || !v->len)
		return -EINVAL;
	pos = *v;
	if (v->str[0] == '-') {
		pos.str++;
		pos.len--;
	}
	if (json_u64(&pos, &m) || m > (uint64_t)INT_MAX + (v->str[0] == '-'))
		return -EINVAL;
	*out = v->str[0] == '-' ? (int)-(int64_t)m : (int)m;
	return 0;
}
