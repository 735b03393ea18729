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
	uint32_t x = ((const struct lines_count *)a)->routine;
	uint32_t y = ((const struct lines_count *)b)->routine;

	return x < y ? -1 : x > y;
}

int profile_add_lines(struct profile *p, size_t sec, const struct symtab *st,
		      const struct profile_samples *s, const struct lines_hit *hits, size_t n)
{
	struct profile_section *ps;
	struct lines_sample *smp = xmalloc((n ? n : 1) * sizeof(*smp));
	struct lines_count *c, *lib = xmalloc((n ? n : 1) * sizeof(*lib));
	struct line_table lt = {0};
	struct lines_extent *x;
	size_t nx, ns = 0, nl = 0, nc = 0, own = st->n_own ? st->n_own : st->n;

	if (sec >= p->n_sections) {
		free(smp);
		free(lib);
		return -EINVAL;
	}
	ps = &p->sections[sec];
	ps->samples = *s;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = hits[i].routine;

		if (r >= st->n || r >= ps->n_routines)
			continue;
		if (r < own) /* its address in the file: the line table's */
			smp[ns++] = (struct lines_sample){st->r[r].addr + hits[i].off, hits[i].n};
		else
			lib[nl++] = (struct lines_count){r, UINT32_MAX, 0, hits[i].n};
	}
	if (nl > 1)
		qsort(lib, nl, sizeof(*lib), cmp_routine);
	if (ns && st->path)
		symtab_line_table(st->path, &lt);
	x = own_extents(st, &nx);
	c = lines_attribute(smp, ns, x, nx, &lt, &nc, NULL);
	ps->lines = xcalloc(nc + nl + 1, sizeof(*ps->lines));
	ps->line_at = xcalloc(ps->n_routines + 1, sizeof(*ps->line_at));
	/* routine by routine: each one's lines (most first), then its hits of a library */
	for (size_t r = 0, ic = 0, il = 0; r < ps->n_routines; r++) {
		ps->line_at[r] = ps->n_lines;
		for (; ic < nc && c[ic].routine == r; ic++) {
			struct profile_line *l = &ps->lines[ps->n_lines++];

			l->routine = (uint32_t)r;
			l->n = c[ic].n;
			l->line = (int)c[ic].line;
			l->file = c[ic].file < lt.n_files ? xstrdup(lt.files[c[ic].file]) : NULL;
		}
		for (uint64_t sum = 0; il < nl && lib[il].routine <= r; il++) {
			sum += lib[il].n; /* hits of one library routine, sorted below: sum them */
			if (il + 1 == nl || lib[il + 1].routine != lib[il].routine) {
				ps->lines[ps->n_lines++] =
				    (struct profile_line){lib[il].routine, NULL, 0, sum};
				sum = 0;
			}
		}
	}
	ps->line_at[ps->n_routines] = ps->n_lines;
	line_table_free(&lt);
	free(c);
	free(x);
	free(smp);
	free(lib);
	return 0;
}
