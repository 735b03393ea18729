// SPDX-License-Identifier: GPL-2.0-or-later
/* report.c - the FORTSTAT/FTN4TRA table, CSV and JSON reports of an accounting state. */
#include "fortstat/report.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"

#define NAME_WIDTH_MIN 20 /* the ROUTINE column is at least this wide */

/* One routine shown in the report. */
struct row {
	size_t idx;	  /* routine index in st and acct */
	const char *name; /* display name */
	char *owned;	  /* name, when made up here (no symbol name at all) */
	uint64_t calls;
	acct_time_t gross; /* gross self time */
	acct_time_t net;   /* self time after the overhead correction */
	acct_time_t shown; /* net or gross, as the run asks */
	bool incomplete;
	bool mainline;
};

/* Everything the three formats share. */
struct report {
	const struct symtab *st;
	const struct acct_routine *ar;
	const struct report_run *run;
	struct row *rows;
	size_t n_rows;
	uint64_t calls;	    /* calls timed: sum over shown routines */
	double sum_s;	    /* sum of shown times */
	double gross_sum_s; /* sum of gross times */
	double overhead_s;  /* sum of gross - net */
	double denom_s;	    /* what PERCENT is a percentage of (0: none) */
	double unaccounted_s;
	const char **names; /* display name of every routine (for arcs), or NULL */
	char **names_owned;
};

static double secs(acct_time_t ns)
{
	return (double)ns / 1e9;
}

/* The routine's readable name, or a made-up one in *owned (freed by the caller). */
static const char *routine_name(const struct routine *rt, char **owned)
{
	*owned = NULL;
	if (rt->display && rt->display[0])
		return rt->display;
	if (rt->n_names && rt->names[0] && rt->names[0][0])
		return rt->names[0];
	*owned = xasprintf("0x%" PRIx64, rt->addr);
	return *owned;
}

static int cmp_name(const struct row *x, const struct row *y)
{
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int cmp_time(const void *p, const void *q)
{
	const struct row *x = p, *y = q;

	if (x->shown != y->shown)
		return x->shown > y->shown ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_calls(const void *p, const void *q)
{
	const struct row *x = p, *y = q;

	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return cmp_name(x, y);
}

static int cmp_names(const void *p, const void *q)
{
	return cmp_name(p, q);
}

/* Collect, correct and sort the routines to show; compute the totals. */
static void report_build(struct report *rp, const struct symtab *st, const struct acct *acct,
			 const struct report_run *run, const struct report_opts *opts)
{
	const struct acct_routine *ar = acct_routines(acct);
	enum report_sort sort = opts->sort;
	int (*cmp)(const void *, const void *) = cmp_time;
	size_t i;

	memset(rp, 0, sizeof(*rp));
	rp->st = st;
	rp->ar = ar;
	rp->run = run;
	rp->rows = xcalloc(st->n ? st->n : 1, sizeof(*rp->rows));
	for (i = 0; i < st->n; i++) {
		const struct routine *rt = &st->r[i];
		struct row *w;

		if (!(rt->flags & RT_SELECTED) || (!ar[i].calls && !opts->zeros))
			continue;
		w = &rp->rows[rp->n_rows++];
		w->idx = i;
		w->name = routine_name(rt, &w->owned);
		w->calls = ar[i].calls;
		w->gross = ar[i].self;
		w->net =
		    acct_net(ar[i].self, ar[i].calls, ar[i].calls_made, run->f1_ns, run->f2_ns);
		w->shown = run->correct ? w->net : w->gross;
		w->incomplete = ar[i].incomplete;
		w->mainline = rt->flags & RT_MAINLINE;
		rp->calls += w->calls;
		rp->sum_s += secs(w->shown);
		rp->gross_sum_s += secs(w->gross);
		if (w->gross >= w->net)
			rp->overhead_s += secs(w->gross - w->net);
		else /* negative factors */
			rp->overhead_s -= secs(w->net - w->gross);
	}
	if (run->count_only && sort == SORT_TIME)
		sort = SORT_CALLS; /* no times: the most called first */
	if (sort == SORT_CALLS)
		cmp = cmp_calls;
	else if (sort == SORT_NAME)
		cmp = cmp_names;
	qsort(rp->rows, rp->n_rows, sizeof(*rp->rows), cmp);
	rp->denom_s = run->total_time_s > 0 ? run->total_time_s : rp->sum_s;
	rp->unaccounted_s = run->total_time_s - rp->sum_s;
	if (fabs(rp->unaccounted_s) < 5e-10)
		rp->unaccounted_s = 0; /* no "-0.000000" from rounding */
}

/* Display names of every routine, for the arcs of the JSON report. */
static void report_names(struct report *rp)
{
	size_t i;

	rp->names = xcalloc(rp->st->n ? rp->st->n : 1, sizeof(*rp->names));
	rp->names_owned = xcalloc(rp->st->n ? rp->st->n : 1, sizeof(*rp->names_owned));
	for (i = 0; i < rp->st->n; i++)
		rp->names[i] = routine_name(&rp->st->r[i], &rp->names_owned[i]);
}

static void report_free(struct report *rp)
{
	size_t i;

	for (i = 0; i < rp->n_rows; i++)
		free(rp->rows[i].owned);
	free(rp->rows);
	if (rp->names_owned)
		for (i = 0; i < rp->st->n; i++)
			free(rp->names_owned[i]);
	free(rp->names_owned);
	free(rp->names);
}

static double percent(const struct report *rp, double s)
{
	return rp->denom_s > 0 ? 100.0 * s / rp->denom_s : 0.0;
}

/* ---- table ---- */

static void write_table(FILE *out, const struct report *rp)
{
	const struct report_run *run = rp->run;
	bool timed = !run->count_only;
	int w = NAME_WIDTH_MIN;
	char num[32];
	size_t i;

	for (i = 0; i < rp->n_rows; i++) {
		size_t len = strlen(rp->rows[i].name);

		if (len > (size_t)w)
			w = len > 4096 ? 4096 : (int)len;
	}

	fprintf(out, "fortstat: %s (", run->program ? run->program : "?");
	if (run->term_signal)
		fprintf(out, "killed by signal %d", run->term_signal);
	else
		fprintf(out, "exit status %d", run->exit_status);
	if (timed)
		fprintf(out, "), %s clock\n", run->clock ? run->clock : "?");
	else
		fputs("), count only\n", out);
	if (run->note)
		fprintf(out, "fortstat: %s\n", run->note);
	fputc('\n', out);

	fprintf(out, "  %-*s %12s", w, "ROUTINE", "CALLED");
	if (timed)
		fprintf(out, "%16s%9s%14s", "TIME (SEC)", "PERCENT", "AV SEC/CALL");
	fputc('\n', out);

	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		double s = secs(r->shown);

		fprintf(out, "%c %-*s %12" PRIu64, r->mainline ? '*' : ' ', w, r->name, r->calls);
		if (timed) {
			fprintf(out, "%16.6f%9.2f%14.6f", s, percent(rp, s),
				r->calls ? s / (double)r->calls : 0.0);
			if (r->incomplete)
				fputs("  INCOMPLETE", out);
		}
		fputc('\n', out);
	}
	fprintf(out, "  %-*s %12" PRIu64, w, "TOTAL", rp->calls);
	if (timed)
		fprintf(out, "%16.6f%9.2f", rp->sum_s, percent(rp, rp->sum_s));
	fputs("\n\n", out);

	if (!timed) {
		fprintf(out, "  %-22s %14" PRIu64 "\n", "calls timed", rp->calls);
		return;
	}
	fprintf(out, "  %-22s %14.6f s\n", "total program time", run->total_time_s);
	fprintf(out, "  %-22s %14.6f s", "time unaccounted", rp->unaccounted_s);
	if (run->total_time_s > 0)
		fprintf(out, " %7.2f %%", 100.0 * rp->unaccounted_s / run->total_time_s);
	fputc('\n', out);
	fprintf(out, "  %-22s %14" PRIu64 "\n", "calls timed", rp->calls);
	snprintf(num, sizeof(num), "%14.6f", rp->overhead_s);
	if (run->correct)
		fprintf(out, "  %-22s %s s   (f1 %.2f us per entry, f2 %.2f us per call made)\n",
			"overhead removed", num, run->f1_ns / 1e3, run->f2_ns / 1e3);
	else if (run->f1_ns != 0 || run->f2_ns != 0)
		fprintf(out,
			"  %-22s %s s   (not removed; f1 %.2f us per entry, f2 %.2f us per call "
			"made)\n",
			"overhead estimated", num, run->f1_ns / 1e3, run->f2_ns / 1e3);
}

/* ---- CSV ---- */

/* One CSV field, quoted as RFC 4180 asks when it holds a comma, quote or line break. */
static void csv_field(FILE *out, const char *s)
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

static void write_csv(FILE *out, const struct report *rp)
{
	bool timed = !rp->run->count_only;
	size_t i;

	fputs("routine,calls,self_s,total_s,percent,avg_s,incomplete,mainline,address,file,line\n",
	      out);
	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct routine *rt = &rp->st->r[r->idx];
		double s = secs(r->shown);

		csv_field(out, r->name);
		fprintf(out, ",%" PRIu64 ",", r->calls);
		if (timed)
			fprintf(out, "%.9f,%.9f,%.6f,%.9f", s, secs(rp->ar[r->idx].total),
				percent(rp, s), r->calls ? s / (double)r->calls : 0.0);
		else
			fputs(",,,", out);
		fprintf(out, ",%d,%d,0x%" PRIx64 ",", timed && r->incomplete, r->mainline,
			rt->addr);
		csv_field(out, rt->file);
		fputc(',', out);
		if (rt->line > 0)
			fprintf(out, "%d", rt->line);
		fputc('\n', out);
	}
}

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence at s, or 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n, i;
	unsigned char lo = 0x80, hi = 0xbf;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		n = 2;
	else if (c >= 0xe0 && c <= 0xef)
		n = 3;
	else if (c >= 0xf0 && c <= 0xf4)
		n = 4;
	else
		return 0;
	if (c == 0xe0)
		lo = 0xa0;
	else if (c == 0xed)
		hi = 0x9f;
	else if (c == 0xf0)
		lo = 0x90;
	else if (c == 0xf4)
		hi = 0x8f;
	if (s[1] < lo || s[1] > hi)
		return 0;
	for (i = 2; i < n; i++)
		if (s[i] < 0x80 || s[i] > 0xbf)
			return 0;
	return n;
}

/*
 * A JSON string (or null): escapes quotes, backslashes and control
 * characters; bytes that are not UTF-8 become U+FFFD.
 */
static void json_str(FILE *out, const char *str)
{
	const unsigned char *s = (const unsigned char *)str;

	if (!s) {
		fputs("null", out);
		return;
	}
	fputc('"', out);
	while (*s) {
		size_t n;

		switch (*s) {
		case '"':
			fputs("\\\"", out);
			break;
		case '\\':
			fputs("\\\\", out);
			break;
		case '\n':
			fputs("\\n", out);
			break;
		case '\r':
			fputs("\\r", out);
			break;
		case '\t':
			fputs("\\t", out);
			break;
		default:
			if (*s < 0x20 || *s == 0x7f) {
				fprintf(out, "\\u%04x", *s);
				break;
			}
			n = utf8_len(s);
			if (!n) {
				fputs("\\ufffd", out);
				break;
			}
			fwrite(s, 1, n, out);
			s += n;
			continue;
		}
		s++;
	}
	fputc('"', out);
}

/* A number of seconds (null if it is not finite or times are not kept). */
static void json_secs(FILE *out, double v, bool timed)
{
	if (!timed || !isfinite(v))
		fputs("null", out);
	else
		fprintf(out, "%.9f", v);
}

static int cmp_arc(const void *p, const void *q)
{
	const struct acct_arc *x = *(const struct acct_arc *const *)p;
	const struct acct_arc *y = *(const struct acct_arc *const *)q;
	/* the root (ACCT_NONE) first, then by routine index */
	uint64_t xc = x->caller == ACCT_NONE ? 0 : (uint64_t)x->caller + 1;
	uint64_t yc = y->caller == ACCT_NONE ? 0 : (uint64_t)y->caller + 1;

	if (xc != yc)
		return xc < yc ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

static bool selected(const struct symtab *st, uint32_t i)
{
	return i < st->n && (st->r[i].flags & RT_SELECTED);
}

static void write_json(FILE *out, const struct report *rp, const struct acct *acct)
{
	const struct report_run *run = rp->run;
	const struct symtab *st = rp->st;
	bool timed = !run->count_only;
	const struct acct_arc *arcs, **sorted;
	size_t n_arcs, n_sorted = 0, i, k;

	fputs("{\n  \"program\": ", out);
	json_str(out, run->program);
	fputs(",\n  \"argv\": [", out);
	for (i = 0; run->argv && run->argv[i]; i++) {
		if (i)
			fputs(", ", out);
		json_str(out, run->argv[i]);
	}
	fprintf(out, "],\n  \"exit_status\": %d,\n  \"term_signal\": %d,\n  \"note\": ",
		run->exit_status, run->term_signal);
	json_str(out, run->note);
	fputs(",\n  \"clock\": ", out);
	json_str(out, run->clock);
	fprintf(out, ",\n  \"count_only\": %s,\n  \"overhead_removed\": %s,\n",
		run->count_only ? "true" : "false", timed && run->correct ? "true" : "false");
	fputs("  \"f1_ns\": ", out);
	if (isfinite(run->f1_ns))
		fprintf(out, "%.3f", run->f1_ns);
	else
		fputs("null", out);
	fputs(",\n  \"f2_ns\": ", out);
	if (isfinite(run->f2_ns))
		fprintf(out, "%.3f", run->f2_ns);
	else
		fputs("null", out);
	fputs(",\n  \"total_time_s\": ", out);
	json_secs(out, run->total_time_s, true);
	fputs(",\n  \"unaccounted_s\": ", out);
	json_secs(out, rp->unaccounted_s, timed);
	fputs(",\n  \"overhead_s\": ", out);
	json_secs(out, rp->overhead_s, timed);
	fprintf(out, ",\n  \"calls_timed\": %" PRIu64 ",\n  \"routines\": [", rp->calls);

	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct routine *rt = &st->r[r->idx];

		fputs(i ? ",\n    {\"name\": " : "\n    {\"name\": ", out);
		json_str(out, r->name);
		fputs(", \"aliases\": [", out);
		for (k = 0; k < rt->n_names; k++) {
			if (k)
				fputs(", ", out);
			json_str(out, rt->names[k]);
		}
		fprintf(out, "], \"mainline\": %s, \"calls\": %" PRIu64 ", \"self_s\": ",
			r->mainline ? "true" : "false", r->calls);
		json_secs(out, secs(r->shown), timed);
		fputs(", \"gross_self_s\": ", out);
		json_secs(out, secs(r->gross), timed);
		fputs(", \"total_s\": ", out);
		json_secs(out, secs(rp->ar[r->idx].total), timed);
		fprintf(out, ", \"incomplete\": %s, \"address\": \"0x%" PRIx64 "\", \"file\": ",
			timed && r->incomplete ? "true" : "false", rt->addr);
		json_str(out, rt->file);
		if (rt->line > 0)
			fprintf(out, ", \"line\": %d}", rt->line);
		else
			fputs(", \"line\": null}", out);
	}
	fputs(rp->n_rows ? "\n  ],\n  \"arcs\": [" : "],\n  \"arcs\": [", out);

	arcs = acct_arcs(acct, &n_arcs);
	sorted = xcalloc(n_arcs ? n_arcs : 1, sizeof(*sorted));
	for (i = 0; i < n_arcs; i++)
		if (selected(st, arcs[i].callee) &&
		    (arcs[i].caller == ACCT_NONE || arcs[i].caller < st->n))
			sorted[n_sorted++] = &arcs[i];
	qsort(sorted, n_sorted, sizeof(*sorted), cmp_arc);
	for (i = 0; i < n_sorted; i++) {
		const struct acct_arc *a = sorted[i];

		fputs(i ? ",\n    {\"caller\": " : "\n    {\"caller\": ", out);
		json_str(out, a->caller == ACCT_NONE ? NULL : rp->names[a->caller]);
		fputs(", \"callee\": ", out);
		json_str(out, rp->names[a->callee]);
		fprintf(out, ", \"calls\": %" PRIu64 ", \"time_s\": ", a->calls);
		json_secs(out, secs(a->time), timed);
		fputc('}', out);
	}
	free(sorted);
	fputs(n_sorted ? "\n  ]\n}\n" : "]\n}\n", out);
}

/*
 * Write the report of acct over st in opts->format to out. Returns 0,
 * -EINVAL when st and acct disagree on the number of routines, or the
 * negative errno of a write error (out is flushed and checked).
 */
int report_write(FILE *out, const struct symtab *st, const struct acct *acct,
		 const struct report_run *run, const struct report_opts *opts)
{
	struct report rp;

	if (!out || !st || !acct || !run || !opts || acct_n_routines(acct) != st->n)
		return -EINVAL;
	report_build(&rp, st, acct, run, opts);
	switch (opts->format) {
	case FMT_CSV:
		write_csv(out, &rp);
		break;
	case FMT_JSON:
		report_names(&rp);
		write_json(out, &rp, acct);
		break;
	case FMT_TABLE:
	default:
		write_table(out, &rp);
		break;
	}
	report_free(&rp);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* "table", "csv" or "json" into *f: 0, or -1 (f untouched) for anything else. */
int report_parse_format(const char *s, enum report_format *f)
{
	if (!s)
		return -1;
	if (!strcmp(s, "table"))
		*f = FMT_TABLE;
	else if (!strcmp(s, "csv"))
		*f = FMT_CSV;
	else if (!strcmp(s, "json"))
		*f = FMT_JSON;
	else
		return -1;
	return 0;
}

/* "time", "calls" or "name" into *s_out: 0, or -1 (untouched) for anything else. */
int report_parse_sort(const char *s, enum report_sort *s_out)
{
	if (!s)
		return -1;
	if (!strcmp(s, "time"))
		*s_out = SORT_TIME;
	else if (!strcmp(s, "calls"))
		*s_out = SORT_CALLS;
	else if (!strcmp(s, "name"))
		*s_out = SORT_NAME;
	else
		return -1;
	return 0;
}
