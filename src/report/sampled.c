// SPDX-License-Identifier: GPL-2.0-or-later
/* sampled.c - --sample: a section's samples made its routines' source lines (profile.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/lines.h"
#include "fortstat/profile.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"

/* The own routines' extents at link time (their index kept), for lines_attribute. */
static struct lines_extent *own_extents(const struct symtab *st, size_t *n)
{
	size_t own = st->n_own ? st->n_own : st->n, k = 0;
	struct lines_extent *x = xmalloc((own ? own : 1) * sizeof(*x));

	for (size_t i = 0; i < own && i < st->n; i++)
		if (st->r[i].size)
			x[k++] = (struct lines_extent){st->r[i].addr, st->r[i].addr + st->r[i].size,
						       (uint32_t)i};
	lines_extents_sort(x, k);
	*n = k;
	return x;
}

static int cmp_routine(const void *a, const void *b)
{
	const struct lines_count *x = a, *y = b;

	if (x->routine != y->routine)
		return x->routine < y->routine ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

/* A routine's lines: most samples first, then by line, the untimed callees last. */
static int cmp_line(const void *a, const void *b)
{
	const struct profile_line *x = a, *y = b;

	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	if (x->callees != y->callees)
		return x->callees ? 1 : -1;
	return x->line < y->line ? -1 : x->line > y->line;
}

int profile_add_lines(struct profile *p, size_t sec, const struct symtab *st,
		      const struct profile_samples *s, const struct lines_hit *hits, size_t n)
{
	struct profile_section *ps;
	struct lines_sample *smp = xmalloc((n ? n : 1) * sizeof(*smp));
	struct lines_count *c, *other = xmalloc((n ? n : 1) * sizeof(*other));
	struct line_table lt = {0};
	struct lines_extent *x;
	size_t nx, ns = 0, no = 0, nc = 0, own = st->n_own ? st->n_own : st->n;

	if (sec >= p->n_sections) {
		free(smp);
		free(other);
		return -EINVAL;
	}
	ps = &p->sections[sec];
	ps->samples = *s;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = hits[i].routine;

		if (r >= st->n || r >= ps->n_routines)
			continue;
		if (hits[i].off == LINES_CALLEES) /* line 1: its untimed callees' */
			other[no++] = (struct lines_count){r, UINT32_MAX, 1, hits[i].n};
		else if (r < own) /* its address in the file: the line table's */
			smp[ns++] = (struct lines_sample){st->r[r].addr + hits[i].off, hits[i].n};
		else /* a library's routine (-l): no line known */
			other[no++] = (struct lines_count){r, UINT32_MAX, 0, hits[i].n};
	}
	if (no > 1)
		qsort(other, no, sizeof(*other), cmp_routine);
	if (ns && st->path)
		symtab_line_table(st->path, &lt);
	x = own_extents(st, &nx);
	c = lines_attribute(smp, ns, x, nx, &lt, &nc, NULL);
	ps->lines = xcalloc(nc + no + 1, sizeof(*ps->lines));
	ps->line_at = xcalloc(ps->n_routines + 1, sizeof(*ps->line_at));
	for (size_t r = 0, ic = 0, io = 0; r < ps->n_routines; r++) {
		ps->line_at[r] = ps->n_lines;
		for (; ic < nc && c[ic].routine == r; ic++)
			ps->lines[ps->n_lines++] = (struct profile_line){
			    (uint32_t)r,
			    c[ic].file < lt.n_files ? xstrdup(lt.files[c[ic].file]) : NULL,
			    c[ic].file < lt.n_files ? (int)c[ic].line : 0, c[ic].n, false};
		/* hits of a library routine, or of untimed callees: one line each kind */
		for (; io < no && other[io].routine == r; io++) {
			/* the line made of the one before, when of the same kind */
			if (io && other[io - 1].routine == r &&
			    other[io - 1].line == other[io].line)
				ps->lines[ps->n_lines - 1].n += other[io].n;
			else
				ps->lines[ps->n_lines++] = (struct profile_line){
				    (uint32_t)r, NULL, 0, other[io].n, other[io].line == 1};
		}
		qsort(ps->lines + ps->line_at[r], ps->n_lines - ps->line_at[r], sizeof(*ps->lines),
		      cmp_line);
	}
	ps->line_at[ps->n_routines] = ps->n_lines;
	line_table_free(&lt);
	free(c);
	free(x);
	free(smp);
	free(other);
	return 0;
}
