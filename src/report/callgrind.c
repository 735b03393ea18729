// SPDX-License-Identifier: GPL-2.0-or-later
/* callgrind.c - a callgrind profile (callgrind_annotate, KCachegrind): self time, calls, arcs. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "view.h"

/* Sum of the rows' shown self times, each rounded to microseconds. */
static uint64_t sum_shown_us(const struct report *rp)
{
	uint64_t s = 0;
	size_t i;

	for (i = 0; i < rp->n_rows; i++)
		s += (rp->rows[i].shown + 500) / 1000;
	return s;
}

/* --alloc: the events Allocs and Bytes too (the process's: not with --threads). */
static bool cg_alloc(const struct report *rp)
{
	return rp->opts->alloc && rp->sec->alloc && rp->set == &rp->sec->all;
}

/*
 * " ALLOCS BYTES" of routine i: its own (arc NULL), or along an arc into
 * it the callee's inclusive storage shared by the calls from its callers
 * (a recursive arc: none, its storage is counted once already).
 */
static void cg_alloc_cost(FILE *out, const struct report *rp, const struct arc_index *ix, size_t i,
			  const struct profile_arc *a)
{
	const struct alloc_routine *m = &rp->sec->alloc[i];
	uint64_t calls = rp->set->r[i].calls;

	if (!cg_alloc(rp))
		return;
	for (size_t k = ix->caller_at[i]; a && k < ix->caller_at[i + 1]; k++)
		if (ix->by_caller[k]->callee == i && ix->by_caller[k]->calls <= calls)
			calls -= ix->by_caller[k]->calls;
	if (!a)
		fprintf(out, " %" PRIu64 " %" PRIu64, m->allocs, m->bytes);
	else if (calls && a->caller != i)
		fprintf(out, " %" PRIu64 " %" PRIu64,
			(uint64_t)((double)m->allocs_incl * (double)a->calls / (double)calls + 0.5),
			(uint64_t)((double)m->bytes_incl * (double)a->calls / (double)calls + 0.5));
	else
		fputs(" 0 0", out);
}

static void cg_pos(FILE *out, const char *key, const struct profile_routine *rt)
{
	fprintf(out, "%s=%s\n", key, rt->file ? rt->file : "???");
}

/* Are file names a and b one file (the same, or one a path ending in the other)? */
static bool same_file(const char *a, const char *b)
{
	size_t la, lb;

	if (!a || !b)
		return !a && !b;
	la = strlen(a);
	lb = strlen(b);
	if (la == lb)
		return !strcmp(a, b);
	if (la < lb)
		return b[lb - la - 1] == '/' && !strcmp(b + lb - la, a);
	return a[la - lb - 1] == '/' && !strcmp(a + la - lb, b);
}

/*
 * --sample: routine r's self time (us microseconds) divided among the lines
 * of its samples, one cost line each (a line of another file, inlined,
 * under fi=), their costs adding up to us exactly (each the rounded
 * cumulative share less the previous one). Returns false when the routine
 * has no samples: its self cost is then written whole by the caller.
 */
static bool cg_lines(FILE *out, const struct report *rp, const struct row *r, uint64_t us)
{
	const struct profile_section *sec = rp->sec;
	const struct profile_routine *rt = &sec->routines[r->idx];
	uint64_t all = 0, cum = 0, prev = 0;
	bool away = false;

	if (!sec->line_at || rp->set->tid || !rp->timed)
		return false;
	for (size_t k = sec->line_at[r->idx]; k < sec->line_at[r->idx + 1]; k++)
		all += sec->lines[k].n;
	if (!all)
		return false;
	/* the calls at its declaration, its time at its lines */
	fprintf(out, "%d 0 %" PRIu64 "\n", rt->line > 0 ? rt->line : 0, r->calls);
	for (size_t k = sec->line_at[r->idx]; k < sec->line_at[r->idx + 1]; k++) {
		const struct profile_line *l = &sec->lines[k];
		uint64_t upto;

		cum += l->n;
		upto = (uint64_t)((double)us * (double)cum / (double)all + 0.5);
		if (l->file && !same_file(l->file, rt->file)) {
			fprintf(out, "fi=%s\n", l->file);
			away = true;
		} else if (away) {
			cg_pos(out, "fe", rt);
			away = false;
		}
		fprintf(out, "%d %" PRIu64 " 0\n", l->line, upto - prev);
		prev = upto;
	}
	if (away)
		cg_pos(out, "fe", rt);
	return true;
}

/*
 * A callgrind profile: per routine its self time (us) and calls, and per
 * arc the calls and the callee's inclusive time along it. Times are
 * rounded to whole microseconds; the summary is the sum of the self costs.
 */
static void write_callgrind_part(FILE *out, const struct report *rp, int part, uint64_t *tot_us,
				 uint64_t *tot_calls)
{
	bool timed = rp->timed;
	uint64_t sum_us = 0, sum_calls = 0, sum_allocs = 0, sum_bytes = 0;
	size_t i, k;
	struct arc_index ix;

	sum_us = timed ? sum_shown_us(rp) : 0;
	sum_calls = rp->calls;
	for (i = 0; cg_alloc(rp) && i < rp->n_rows; i++) {
		sum_allocs += rp->sec->alloc[rp->rows[i].idx].allocs;
		sum_bytes += rp->sec->alloc[rp->rows[i].idx].bytes;
	}
	if (!part) {
		fprintf(out, "summary: %" PRIu64 " %" PRIu64, sum_us, sum_calls);
		if (cg_alloc(rp))
			fprintf(out, " %" PRIu64 " %" PRIu64, sum_allocs, sum_bytes);
		fputc('\n', out);
	}
	*tot_us += sum_us;
	*tot_calls += sum_calls;
	arc_index_build(&ix, rp->set, rp->sec->n_routines);
	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct profile_routine *rt = &rp->sec->routines[r->idx];

		fputc('\n', out);
		if (rp->set->tid)
			fprintf(out, "ob=thread %d\n", rp->set->tid);
		cg_pos(out, "fl", rt);
		fprintf(out, "fn=%s\n", r->name);
		if (!cg_lines(out, rp, r, timed ? (r->shown + 500) / 1000 : 0)) {
			fprintf(out, "%d %" PRIu64 " %" PRIu64, rt->line > 0 ? rt->line : 0,
				timed ? (r->shown + 500) / 1000 : 0, r->calls);
			cg_alloc_cost(out, rp, &ix, r->idx, NULL);
			fputc('\n', out);
		} else if (cg_alloc(
			       rp)) { /* the time at its lines, its storage at its declaration */
			fprintf(out, "%d 0 0", rt->line > 0 ? rt->line : 0);
			cg_alloc_cost(out, rp, &ix, r->idx, NULL);
			fputc('\n', out);
		}
		for (k = ix.caller_at[r->idx]; k < ix.caller_at[r->idx + 1]; k++) {
			const struct profile_arc *a = ix.by_caller[k];
			const struct profile_routine *ct;

			if (!selected(rp, a->callee))
				continue;
			ct = &rp->sec->routines[a->callee];
			if (rp->set->tid)
				fprintf(out, "cob=thread %d\n", rp->set->tid);
			cg_pos(out, "cfi", ct);
			fprintf(out, "cfn=%s\n", rname(rp, a->callee));
			fprintf(out, "calls=%" PRIu64 " %d\n", a->calls,
				ct->line > 0 ? ct->line : 0);
			fprintf(out, "%d %" PRIu64 " %" PRIu64, rt->line > 0 ? rt->line : 0,
				timed ? (uint64_t)(arc_time_s(rp, a) * 1e6 + 0.5) : 0, a->calls);
			cg_alloc_cost(out, rp, &ix, a->callee, a);
			fputc('\n', out);
		}
	}
	arc_index_free(&ix);
}

void write_callgrind(FILE *out, const struct report *rp)
{
	char **argv = rp->p->argv;
	uint64_t us = 0, calls = 0;
	size_t i, t;

	/* a merge (profile.inputs) says so, and how many reports it summed */
	fputs("# callgrind format\nversion: 1\ncreator: fortstat " PACKAGE_VERSION, out);
	fputs(rp->p->n_inputs ? " --merge\ncmd:" : "\ncmd:", out);
	for (i = 0; argv && argv[i]; i++) {
		fputc(' ', out);
		folded_name(out, argv[i]);
	}
	if (!argv && rp->sec->label)
		fprintf(out, " %s", rp->sec->label);
	if (rp->p->n_inputs)
		fprintf(out, " (%zu inputs merged)", rp->p->n_inputs);
	fputs("\npositions: line\n", out);
	fputs("event: us : self time (microseconds)\nevent: calls : calls\n", out);
	if (cg_alloc(rp) && !rp->opts->threads)
		fputs("event: Allocs : allocations\nevent: Bytes : bytes allocated\n"
		      "events: us calls Allocs Bytes\n",
		      out);
	else
		fputs("events: us calls\n", out);
	if (!rp->opts->threads) {
		write_callgrind_part(out, rp, 0, &us, &calls);
		if (cg_alloc(rp)) {
			uint64_t n = 0, b = 0;

			for (i = 0; i < rp->n_rows; i++) {
				n += rp->sec->alloc[rp->rows[i].idx].allocs;
				b += rp->sec->alloc[rp->rows[i].idx].bytes;
			}
			fprintf(out, "\ntotals: %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64 "\n",
				us, calls, n, b);
			return;
		}
	} else {
		/* each thread's routines in an "object" of their own: KCachegrind keeps them apart
		 */
		fprintf(out, "summary: %" PRIu64 " %" PRIu64 "\n",
			!rp->timed ? 0 : sum_shown_us(rp), rp->calls);
		for (t = 0; t < rp->sec->n_threads; t++) {
			const struct profile_set *th = &rp->sec->threads[t];
			struct report tr;

			report_build(&tr, rp->p, rp->sec, th, rp->opts);
			write_callgrind_part(out, &tr, (int)t + 1, &us, &calls);
			report_free(&tr);
		}
	}
	fprintf(out, "\ntotals: %" PRIu64 " %" PRIu64 "\n", us, calls);
}
