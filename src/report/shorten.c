// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * shorten.c - a routine's name to fit a table's column: C++ template
 * argument lists elided to <…>, then parameter lists to (…), then the
 * middle cut out for a … (perf's way, std::vector<…>::push_back).
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/report.h"
#include "fortstat/util.h"
#include "view.h"

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, one column */

/* Bytes of the character at s: a valid UTF-8 sequence, else one byte. */
static size_t char_len(const char *s)
{
	size_t n = utf8_len((const unsigned char *)s);

	return n ? n : 1;
}

size_t name_columns(const char *s)
{
	size_t cols = 0;

	while (*s) {
		s += char_len(s);
		cols++;
	}
	return cols;
}

/* The operator's own characters right after "operator" at s (<, <<=, ->, (), ...): bytes. */
static size_t operator_chars(const char *name, const char *s)
{
	static const char *const ops[] = {"<=>", "<<=", ">>=", "->*", "<<", ">>",
					  "<=",	 ">=",	"->",  "()",  "<",  ">"};
	const char *kw = s - 8;

	if (s - name < 8 || strncmp(kw, "operator", 8) != 0)
		return 0;
	if (kw > name && (kw[-1] == '_' || (kw[-1] >= 'a' && kw[-1] <= 'z') ||
			  (kw[-1] >= 'A' && kw[-1] <= 'Z') || (kw[-1] >= '0' && kw[-1] <= '9')))
		return 0; /* part of a longer identifier: my_operator<int> */
	for (size_t i = 0; i < sizeof(ops) / sizeof(*ops); i++)
		if (!strncmp(s, ops[i], strlen(ops[i])))
			return strlen(ops[i]);
	return 0;
}

/*
 * name with the contents of each outermost open..close pair (nested ones of
 * both kinds counted) replaced by …: "<…>" or "(…)". Empty pairs, the
 * characters of an operator (operator<, operator()) and "(anonymous
 * namespace)" stay. Malloc'ed.
 */
static char *elide(const char *name, char open, char close)
{
	size_t len = strlen(name);
	char *out = xcalloc(len + 4, 1), *o = out;
	const char *s = name;

	while (*s) {
		size_t op = operator_chars(name, s);
		const char *end;
		int depth_a = 0, depth_p = 0;

		if (op) {
			memcpy(o, s, op);
			o += op;
			s += op;
			continue;
		}
		if (*s != open || s[1] == close ||
		    (open == '(' && !strncmp(s, "(anonymous namespace)", 21))) {
			*o++ = *s++;
			continue;
		}
		/* the matching close: <> and () nested inside, operators skipped */
		for (end = s; *end; end++) {
			size_t k = operator_chars(name, end);

			if (k) {
				end += k - 1;
				continue;
			}
			depth_a += (*end == '<') - (*end == '>');
			depth_p += (*end == '(') - (*end == ')');
			if ((open == '<' ? depth_a : depth_p) == 0)
				break;
		}
		if (!*end || (size_t)(end - s) <= 3) {
			/* unbalanced, or no shorter elided: kept */
			*o++ = *s++;
			continue;
		}
		*o++ = open;
		memcpy(o, ELLIPSIS, 3);
		o += 3;
		*o++ = close;
		s = end + 1;
	}
	*o = '\0';
	return out;
}

/* s cut to at most `width` columns: its head, …, its tail. Malloc'ed. */
static char *cut_middle(const char *s, size_t width)
{
	size_t cols = name_columns(s), head = (width - 1) / 2, skip = cols - (width - 1);
	const char *p = s, *tail;
	char *out;

	for (size_t i = 0; i < head; i++)
		p += char_len(p);
	tail = p;
	for (size_t i = 0; i < skip; i++)
		tail += char_len(tail);
	/* no … beside the cut's own: an elided <…> or (…) cut through is gone */
	while (p > s && p - s >= 3 && !memcmp(p - 3, ELLIPSIS, 3))
		p -= 3;
	while (!strncmp(tail, ELLIPSIS, 3))
		tail += 3;
	out = xcalloc((size_t)(p - s) + 3 + strlen(tail) + 1, 1);
	memcpy(out, s, (size_t)(p - s));
	memcpy(out + (p - s), ELLIPSIS, 3);
	strcpy(out + (p - s) + 3, tail);
	return out;
}

char *name_shorten(const char *name, size_t width)
{
	char *a, *b;

	if (!width || name_columns(name) <= width)
		return xstrdup(name);
	a = elide(name, '<', '>');
	if (name_columns(a) <= width)
		return a;
	b = elide(a, '(', ')');
	free(a);
	if (name_columns(b) <= width)
		return b;
	a = cut_middle(b, width);
	free(b);
	return a;
}
