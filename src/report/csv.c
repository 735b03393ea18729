// SPDX-License-Identifier: GPL-2.0-or-later
/* csv.c - the CSV view: a row per routine (per thread with --threads). */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "csv.h"
#include "view.h"

/* One CSV field, quoted as RFC 4180 asks when it holds a comma, quote or line break. */
void csv_field(FILE *out, const char *s)
{
	if (!s)
		return;
	if (!strpbrk(s, ",\"\r\n")) {
		fputs(s, out);
		return;
	}
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', out);
		fputc(*s, out);
	}
	fputc('"', out);
}

/* --alloc: the storage columns (the process's: not with --threads). */
static bool csv_alloc(const struct report *rp)
{
	return rp->opts->alloc && rp->sec->alloc && !rp->opts->threads;
}

/* The CSV rows of one set of results; `tid` (0: none) ends each row when asked. */
static void csv_rows(FILE *out, const struct report *rp, bool with_tid)
{
	bool timed = rp->timed;
	size_t i;

	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct profile_routine *rt = &rp->sec->routines[r->idx];
		double s = secs(r->shown);

		csv_field(out, r->name);
		fprintf(out, ",%" PRIu64 ",", r->calls);
		if (timed)
			fprintf(out, "%.9f,%.9f,%.6f,%.9f", s, secs(r->incl), percent(rp, s),
				r->calls ? s / (double)r->calls : 0.0);
		else
			fputs(",,,", out);
		fprintf(out, ",%d,%d,0x%" PRIx64 ",", timed && r->incomplete, r->mainline,
			rt->addr);
		csv_field(out, rt->file);
		fputc(',', out);
		if (rt->line > 0)
			fprintf(out, "%d", rt->line);
		fputc(',', out);
		if (timed)
			fprintf(out, "%.6f", percent(rp, secs(r->incl)));
		fprintf(out, ",%d", rt->calls_lower);
		if (show_both(rp))
			fprintf(out, ",%.9f,%.9f,%.9f", secs(r->cpu), secs(r->wall), secs(r->wait));
		if (csv_alloc(rp)) {
			const struct alloc_routine *a = &rp->sec->alloc[r->idx];

			fprintf(out,
				",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64
				",%" PRIu64,
				a->allocs, a->bytes, a->frees, a->allocs_incl, a->bytes_incl,
				a->frees_incl);
		}
		if (with_tid) {
			fputc(',', out);
			if (rp->set->tid)
				fprintf(out, "%d", rp->set->tid);
		}
		fputc('\n', out);
	}
}

void write_csv(FILE *out, const struct report *rp)
{
	bool threads = rp->opts->threads;
	size_t t;

	fputs("routine,calls,self_s,total_s,percent,avg_s,incomplete,mainline,address,file,line,"
	      "total_percent,calls_lower_bound",
	      out);
	if (show_both(rp))
		fputs(",cpu_self_s,wall_self_s,wait_s", out);
	if (csv_alloc(rp))
		fputs(",allocs,bytes,frees,allocs_incl,bytes_incl,frees_incl", out);
	fputs(threads ? ",thread\n" : "\n", out);
	csv_rows(out, rp, threads);
	for (t = 0; threads && t < rp->sec->n_threads; t++) {
		const struct profile_set *th = &rp->sec->threads[t];
		struct report tr;

		report_build(&tr, rp->p, rp->sec, th, rp->opts);
		csv_rows(out, &tr, true);
		report_free(&tr);
	}
}

/* ---- a merge's CSV ---- */

static void csv_stat(FILE *out, const struct mview *m, const struct profile_spread *s, bool timed)
{
	if (!timed) {
		fputs(",,,,,,", out);
		return;
	}
	fprintf(out, ",%.9f,%.9f,%.9f,%.9f,%ld,", min_of(m, s), mean_of(m, s), max_of(m, s), s->sum,
		input_label(m, s->imax));
	if (mean_of(m, s) > 0)
		fprintf(out, "%.6f", max_of(m, s) / mean_of(m, s));
}

void write_merged_csv(const struct mview *m, FILE *out, const struct report_opts *opts)
{
	size_t n;
	uint32_t *rows = sorted_rows(m, opts, &n);

	fputs("routine,mainline,calls_min,calls_mean,calls_max,calls_sum,calls_max_at,"
	      "self_min_s,self_mean_s,self_max_s,self_sum_s,self_max_at,self_imbalance,"
	      "total_min_s,total_mean_s,total_max_s,total_sum_s,total_max_at,total_imbalance\n",
	      out);
	for (size_t i = 0; i < n; i++) {
		const struct profile_routine *rt = &m->rt[rows[i]];
		const struct profile_merged *r = &m->ms[rows[i]];

		csv_field(out, rt->name);
		fprintf(out, ",%d,%.0f,%.6f,%.0f,%.0f,%ld", rt->mainline, min_of(m, &r->calls),
			mean_of(m, &r->calls), max_of(m, &r->calls), r->calls.sum,
			input_label(m, r->calls.imax));
		csv_stat(out, m, &r->self, !m->count_only);
		csv_stat(out, m, &r->total, !m->count_only);
		fputc('\n', out);
	}
	free(rows);
}
