// SPDX-License-Identifier: GPL-2.0-or-later
/* folded.c - folded stacks ("a;b;c N"), one line per calling context. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "view.h"

struct folded_line {
	char *text;
	size_t len;
};

static int cmp_folded(const void *p, const void *q)
{
	const struct folded_line *x = p, *y = q;

	return strcmp(x->text, y->text);
}

/*
 * Collect the folded lines ("a;b;c N") of one set of results into *v (grown
 * as needed), each stack prefixed by `prefix` (or none).
 */
static void folded_collect(const struct report *rp, const char *prefix, struct folded_line **v,
			   size_t *n, size_t *cap)
{
	const struct profile_set *p = rp->set;
	uint32_t *path = xcalloc(rp->sec->n_routines + 2, sizeof(*path));
	size_t i;

	for (i = 1; i < p->n_nodes; i++) {
		uint64_t val = node_value(rp, i);
		size_t depth = 0;
		uint32_t k;
		FILE *f;

		if (!val)
			continue;
		for (k = (uint32_t)i; k && k != PROFILE_NONE && depth < rp->sec->n_routines + 1;
		     k = p->nodes[k].parent)
			path[depth++] = k;
		if (*n == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			*v = xrealloc(*v, *cap * sizeof(**v));
		}
		(*v)[*n].text = NULL;
		f = open_memstream(&(*v)[*n].text, &(*v)[*n].len);
		if (!f)
			continue;
		if (prefix)
			fprintf(f, "%s;", prefix);
		while (depth--) {
			uint32_t r = p->nodes[path[depth]].routine;

			folded_name(f, r < rp->sec->n_routines ? rname(rp, r) : "?");
			if (depth)
				fputc(';', f);
		}
		fprintf(f, " %" PRIu64 "\n", val);
		fclose(f);
		(*n)++;
	}
	free(path);
}

/* Folded stacks, one line per stack of timed routines, sorted. */
void write_folded(FILE *out, const struct report *rp)
{
	struct folded_line *v = NULL;
	size_t n = 0, cap = 0, i, t;

	if (!rp->opts->threads) {
		folded_collect(rp, NULL, &v, &n, &cap);
	} else {
		for (t = 0; t < rp->sec->n_threads; t++) {
			const struct profile_set *th = &rp->sec->threads[t];
			struct report tr;
			char prefix[32];

			report_build(&tr, rp->p, rp->sec, th, rp->opts);
			stack_name(th->tid, prefix, sizeof(prefix));
			folded_collect(&tr, prefix, &v, &n, &cap);
			report_free(&tr);
		}
	}
	qsort(v, n, sizeof(*v), cmp_folded);
	for (i = 0; i < n; i++) {
		fwrite(v[i].text, 1, v[i].len, out);
		free(v[i].text);
	}
	free(v);
}
