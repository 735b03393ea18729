// SPDX-License-Identifier: GPL-2.0-or-later
/* lines.c - samples to timed routines and source lines (lines.h), pure. */
#include "fortstat/lines.h"

#include <stdlib.h>
#include <string.h>

#include "fortstat/util.h"

static int cmp_extent(const void *p, const void *q)
{
	const struct lines_extent *a = p, *b = q;

	if (a->lo != b->lo)
		return a->lo < b->lo ? -1 : 1;
	return a->hi < b->hi ? -1 : a->hi > b->hi;
}

void lines_extents_sort(struct lines_extent *x, size_t n)
{
	if (n > 1)
		qsort(x, n, sizeof(*x), cmp_extent);
}

long lines_extent_find(const struct lines_extent *x, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	/* the last extent whose lo is at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr >= x[lo - 1].hi)
		return -1;
	return (long)(lo - 1);
}

/* By address; on one address, line 0 (a sequence's end) before the line that starts there. */
static int cmp_entry(const void *p, const void *q)
{
	const struct line_entry *a = p, *b = q;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

void line_table_sort(struct line_table *lt)
{
	if (lt->n > 1)
		qsort(lt->e, lt->n, sizeof(*lt->e), cmp_entry);
}

const struct line_entry *line_table_find(const struct line_table *lt, uint64_t addr)
{
	size_t lo = 0, hi = lt ? lt->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (lt->e[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &lt->e[lo - 1] : NULL;
}

void line_table_add(struct line_table *lt, uint64_t addr, uint32_t line, uint32_t file)
{
	if (lt->n == lt->cap) {
		lt->cap = lt->cap ? 2 * lt->cap : 256;
		lt->e = xrealloc(lt->e, lt->cap * sizeof(*lt->e));
	}
	lt->e[lt->n++] = (struct line_entry){addr, line, file};
}

uint32_t line_table_file(struct line_table *lt, const char *name)
{
	for (size_t i = 0; i < lt->n_files; i++)
		if (!strcmp(lt->files[i], name))
			return (uint32_t)i;
	if (lt->n_files == lt->cap_files) {
		lt->cap_files = lt->cap_files ? 2 * lt->cap_files : 16;
		lt->files = xrealloc(lt->files, lt->cap_files * sizeof(*lt->files));
	}
	lt->files[lt->n_files] = xstrdup(name);
	return (uint32_t)lt->n_files++;
}

void line_table_free(struct line_table *lt)
{
	for (size_t i = 0; i < lt->n_files; i++)
		free(lt->files[i]);
	free(lt->files);
	free(lt->e);
	memset(lt, 0, sizeof(*lt));
}

/* By routine, file, line: equal keys side by side to be summed. */
static int cmp_key(const void *p, const void *q)
{
	const struct lines_count *a = p, *b = q;

	if (a->routine != b->routine)
		return a->routine < b->routine ? -1 : 1;
	if (a->file != b->file)
		return a->file < b->file ? -1 : 1;
	return a->line < b->line ? -1 : a->line > b->line;
}

/* By routine, then most samples first, then by line and file. */
static int cmp_shown(const void *p, const void *q)
{
	const struct lines_count *a = p, *b = q;

	if (a->routine != b->routine)
		return a->routine < b->routine ? -1 : 1;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	if (a->line != b->line)
		return a->line < b->line ? -1 : 1;
	return a->file < b->file ? -1 : a->file > b->file;
}

struct lines_count *lines_attribute(const struct lines_sample *s, size_t ns,
				    const struct lines_extent *x, size_t nx,
				    const struct line_table *lt, size_t *n_out, uint64_t *outside)
{
	struct lines_count *c = NULL;
	size_t n = 0, k = 0;
	uint64_t out = 0;

	if (ns)
		c = xmalloc(ns * sizeof(*c));
	for (size_t i = 0; i < ns; i++) {
		long e = lines_extent_find(x, nx, s[i].addr);
		const struct line_entry *le;

		if (e < 0) {
			out += s[i].n;
			continue;
		}
		le = line_table_find(lt, s[i].addr);
		c[n].routine = x[e].routine;
		c[n].n = s[i].n;
		if (le && le->line && le->file < lt->n_files) {
			c[n].line = le->line;
			c[n].file = le->file;
		} else {
			c[n].line = 0;
			c[n].file = UINT32_MAX;
		}
		n++;
	}
	if (n > 1)
		qsort(c, n, sizeof(*c), cmp_key);
	for (size_t i = 0; i < n; i++) {
		if (k && !cmp_key(&c[k - 1], &c[i]))
			c[k - 1].n += c[i].n;
		else
			c[k++] = c[i];
	}
	if (k > 1)
		qsort(c, k, sizeof(*c), cmp_shown);
	if (outside)
		*outside = out;
	*n_out = k;
	if (!k) {
		free(c);
		return NULL;
	}
	return c;
}
