// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * merge_write.c - fortstat --merge's views, from the report model
 * (profile.h) that merge_profile fills: each routine's spread over the
 * inputs (min/mean/max/sum, the input of the max) beside the sums. The
 * table, CSV, JSON and SVG are written here; folded stacks, callgrind and
 * pprof by the run's writers (folded.c, callgrind.c, pprof.c) from the sums.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "csv.h"
#include "merge_int.h"
#include "view.h"
#include "xml.h"

/*
 * The merged profile as the views read it: its one section's routines and
 * their spreads, the sums' arcs and calling contexts, the inputs.
 */
struct mview {
	const struct profile *p;
	const struct profile_routine *rt; /* n_r of them */
	const struct profile_merged *ms;  /* ... each one's spread over the inputs */
	size_t n_r;
	const struct profile_input *in;
	size_t n_in;
	const struct profile_arc *arcs;
	size_t n_arcs;
	const struct profile_node *nodes;
	size_t n_nodes;
	const char *program, *clock;
	bool count_only, no_stacks;
	enum clock_kind c; /* the sums' clock */
};

static void mview_of(struct mview *v, const struct profile *p)
{
	const struct profile_section *sec = &p->sections[0];

	*v = (struct mview){.p = p,
			    .rt = sec->routines,
			    .ms = sec->merged,
			    .n_r = sec->n_routines,
			    .in = p->inputs,
			    .n_in = p->n_inputs,
			    .arcs = sec->all.arcs,
			    .n_arcs = sec->all.n_arcs,
			    .nodes = sec->all.nodes,
			    .n_nodes = sec->all.n_nodes,
			    .program = sec->label,
			    .clock = p->merged_clock,
			    .count_only = sec->count_only,
			    .no_stacks = p->merged_no_stacks,
			    .c = merge_clock(p->merged_clock)};
}

/* ---- writing ---- */

static double mean_of(const struct mview *m, const struct profile_spread *s)
{
	return s->sum / (double)m->n_in;
}

/* Min and max with the inputs that lack the routine counted as 0. */
static double min_of(const struct mview *m, const struct profile_spread *s)
{
	return s->seen < m->n_in && s->min > 0 ? 0 : s->min;
}

static double max_of(const struct mview *m, const struct profile_spread *s)
{
	return s->seen < m->n_in && s->max < 0 ? 0 : s->max;
}

/* The label of input i: its rank, else its position among the inputs. */
static long input_label(const struct mview *m, uint32_t i)
{
	return m->in[i].rank >= 0 ? m->in[i].rank : (long)i;
}

static bool all_ranked(const struct mview *m)
{
	for (size_t i = 0; i < m->n_in; i++)
		if (m->in[i].rank < 0)
			return false;
	return true;
}

static int cmp_rows(const void *p, const void *q, void *arg)
{
	const struct mview *m = ((void **)arg)[0];
	const struct report_opts *o = ((void **)arg)[1];
	uint32_t i = *(const uint32_t *)p, k = *(const uint32_t *)q;
	const struct profile_merged *x = &m->ms[i], *y = &m->ms[k];
	double a = 0, b = 0;

	if (o->sort == SORT_TIME && !m->count_only)
		a = x->self.sum, b = y->self.sum;
	else if (o->sort != SORT_NAME)
		a = x->calls.sum, b = y->calls.sum;
	if (a != b)
		return a > b ? -1 : 1;
	return strcmp(m->rt[i].name, m->rt[k].name);
}

/* The routines to show (called in some input), sorted as opts says; *n of them. */
static uint32_t *sorted_rows(const struct mview *m, const struct report_opts *opts, size_t *n)
{
	uint32_t *v = xcalloc(m->n_r + 1, sizeof(*v));
	const void *arg[2] = {m, opts};

	*n = 0;
	for (size_t i = 0; i < m->n_r; i++)
		if (m->ms[i].calls.seen)
			v[(*n)++] = (uint32_t)i;
	qsort_r(v, *n, sizeof(*v), cmp_rows, (void *)arg);
	return v;
}

/*
 * The ROUTINE column: the longest name shown, at most 60 columns (longer
 * names overflow it), and with a width (--width, the terminal's) at most
 * what the other columns leave of it, at least 20 (the names shortened).
 */
static int name_width(const struct mview *m, const uint32_t *rows, size_t n,
		      const struct report_opts *opts)
{
	size_t w = 8, other = 2 + 13 + 15 + 13;

	for (size_t i = 0; i < n; i++) {
		size_t l = name_columns(m->rt[rows[i]].name);

		if (l > w)
			w = l;
	}
	w = w > 60 ? 60 : w;
	other += m->count_only ? 9 + 10 + 15 : 13 * 3 + 9 + 10 + 13 + (opts->inclusive ? 26 : 0);
	if (opts->width && w > 20 && w + other > opts->width)
		w = opts->width > other + 20 ? opts->width - other : 20;
	return (int)w;
}

/* A name padded to w columns; with a width, shortened to fit them. */
static void put_name(FILE *out, const char *name, int w, const struct report_opts *opts)
{
	char *s = name_shorten(name, opts->width ? (size_t)w : 0);

	fputs(s, out);
	for (size_t cols = name_columns(s); cols < (size_t)w; cols++)
		fputc(' ', out);
	free(s);
}

/* --top: "  (12 more routines: 3.2 % of the sum)", the rows not shown. */
static void rest_line(const struct mview *m, FILE *out, const uint32_t *rows, size_t n,
		      size_t shown)
{
	double all = 0, rest = 0;

	if (shown >= n)
		return;
	for (size_t i = 0; i < n; i++) {
		const struct profile_merged *r = &m->ms[rows[i]];
		double v = m->count_only ? r->calls.sum : r->self.sum;

		all += v;
		if (i >= shown)
			rest += v;
	}
	fprintf(out, "  (%zu more routine%s: %.1f %% of the %s)\n", n - shown,
		n - shown == 1 ? "" : "s", all > 0 ? 100.0 * rest / all : 0.0,
		m->count_only ? "calls" : "time");
}

static void fmt_imbalance(char *buf, size_t len, const struct mview *m,
			  const struct profile_spread *s)
{
	double mean = mean_of(m, s);

	if (mean > 0)
		snprintf(buf, len, "%.2f", max_of(m, s) / mean);
	else
		snprintf(buf, len, "-");
}

static void merged_table(const struct mview *m, FILE *out, const struct report_opts *opts)
{
	size_t n, i;
	uint32_t *rows = sorted_rows(m, opts, &n);
	int w = name_width(m, rows, n, opts);
	size_t shown = opts->top && opts->top < n ? opts->top : n;
	const char *at = all_ranked(m) ? "RANK" : "INPUT";
	char imb[32];

	fprintf(out, "fortstat --merge: %zu input%s of %s", m->n_in, m->n_in == 1 ? "" : "s",
		m->program);
	if (m->count_only)
		fputs(", count only\n\n", out);
	else
		fprintf(out, ", %s clock; times are self times\n\n", m->clock ? m->clock : "?");
	fputs("  ", out);
	put_name(out, "ROUTINE", w, opts);
	fprintf(out, " %12s %14s %12s", "CALLS MIN", "CALLS MEAN", "CALLS MAX");
	if (m->count_only)
		fprintf(out, " %8s %9s %14s\n", at, "MAX/MEAN", "CALLS SUM");
	else {
		fprintf(out, " %12s %12s %12s %8s %9s %12s", "MIN (SEC)", "MEAN (SEC)", "MAX (SEC)",
			at, "MAX/MEAN", "SUM (SEC)");
		if (opts->inclusive)
			fprintf(out, " %12s %12s", "INCL MEAN", "INCL MAX");
		fputc('\n', out);
	}
	for (i = 0; i < shown; i++) {
		const struct profile_routine *rt = &m->rt[rows[i]];
		const struct profile_merged *r = &m->ms[rows[i]];
		const struct profile_spread *s = m->count_only ? &r->calls : &r->self;

		fmt_imbalance(imb, sizeof(imb), m, s);
		fprintf(out, "%c ", rt->mainline ? '*' : ' ');
		put_name(out, rt->name, w, opts);
		fprintf(out, " %12.0f %14.2f %12.0f", min_of(m, &r->calls), mean_of(m, &r->calls),
			max_of(m, &r->calls));
		if (m->count_only) {
			fprintf(out, " %8ld %9s %14.0f\n", input_label(m, s->imax), imb, s->sum);
			continue;
		}
		fprintf(out, " %12.6f %12.6f %12.6f %8ld %9s %12.6f", min_of(m, s), mean_of(m, s),
			max_of(m, s), input_label(m, s->imax), imb, s->sum);
		if (opts->inclusive)
			fprintf(out, " %12.6f %12.6f", mean_of(m, &r->total), max_of(m, &r->total));
		fputc('\n', out);
	}
	rest_line(m, out, rows, n, shown);
	fprintf(out,
		"\n  %s: the %s of the max; MAX/MEAN: imbalance; a routine missing from "
		"an input counts 0 there\n",
		at, all_ranked(m) ? "rank" : "input (0: the first file)");
	free(rows);
}

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

static void merged_csv(const struct mview *m, FILE *out, const struct report_opts *opts)
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

/* {"min": ..., "mean": ..., "max": ..., "sum": ..., "max_input": i, "imbalance": x} */
static void json_stat(FILE *out, const struct mview *m, const struct profile_spread *s, bool whole,
		      bool timed)
{
	double mean = mean_of(m, s);

	if (!timed) {
		fputs("null", out);
		return;
	}
	if (whole)
		fprintf(out, "{\"min\": %.0f, \"mean\": %.6f, \"max\": %.0f, \"sum\": %.0f",
			min_of(m, s), mean, max_of(m, s), s->sum);
	else
		fprintf(out, "{\"min\": %.9f, \"mean\": %.9f, \"max\": %.9f, \"sum\": %.9f",
			min_of(m, s), mean, max_of(m, s), s->sum);
	fprintf(out, ", \"max_input\": %" PRIu32, s->imax);
	if (m->in[s->imax].rank >= 0)
		fprintf(out, ", \"max_rank\": %d", m->in[s->imax].rank);
	fputs(", \"imbalance\": ", out);
	if (mean > 0)
		fprintf(out, "%.6f}", max_of(m, s) / mean);
	else
		fputs("null}", out);
}

static void merged_json(const struct mview *m, FILE *out, const struct report_opts *opts)
{
	bool timed = !m->count_only;
	size_t n, i;
	uint32_t *rows = sorted_rows(m, opts, &n);

	fputs("{\n  \"merged\": true,\n  \"program\": ", out);
	json_str(out, m->program);
	fprintf(out, ",\n  \"inputs\": %zu,\n  \"files\": [", m->n_in);
	for (i = 0; i < m->n_in; i++) {
		fputs(i ? ",\n    {\"file\": " : "\n    {\"file\": ", out);
		json_str(out, m->in[i].file);
		if (m->in[i].rank >= 0)
			fprintf(out, ", \"rank\": %d}", m->in[i].rank);
		else
			fputs(", \"rank\": null}", out);
	}
	fputs(m->n_in ? "\n  ],\n  \"clock\": " : "],\n  \"clock\": ", out);
	json_str(out, m->clock);
	fprintf(out, ",\n  \"count_only\": %s,\n  \"routines\": [",
		m->count_only ? "true" : "false");
	for (i = 0; i < n; i++) {
		const struct profile_routine *rt = &m->rt[rows[i]];
		const struct profile_merged *r = &m->ms[rows[i]];

		fprintf(out, "%s\n    {\"name\": ", i ? "," : "");
		json_str(out, rt->name);
		fprintf(out, ", \"mainline\": %s, \"inputs_with\": %" PRIu32 ", \"calls\": ",
			rt->mainline ? "true" : "false", r->calls.seen);
		json_stat(out, m, &r->calls, true, true);
		fputs(", \"self_s\": ", out);
		json_stat(out, m, &r->self, false, timed);
		fputs(", \"total_s\": ", out);
		json_stat(out, m, &r->total, false, timed);
		fputs(", \"file\": ", out);
		json_str(out, rt->file);
		if (rt->line > 0)
			fprintf(out, ", \"line\": %d}", rt->line);
		else
			fputs(", \"line\": null}", out);
	}
	fputs(n ? "\n  ],\n  \"arcs\": [" : "],\n  \"arcs\": [", out);
	for (i = 0; i < m->n_arcs; i++) {
		const struct profile_arc *a = &m->arcs[i];

		fprintf(out, "%s\n    {\"caller\": ", i ? "," : "");
		json_str(out, a->caller == PROFILE_NONE ? NULL : m->rt[a->caller].name);
		fputs(", \"callee\": ", out);
		json_str(out, m->rt[a->callee].name);
		fprintf(out, ", \"calls\": %" PRIu64, a->calls);
		if (timed)
			fprintf(out, ", \"time_s\": %.9f, \"self_s\": %.9f}", a->time_s[m->c],
				a->self_s[m->c]);
		else
			fputs(", \"time_s\": null, \"self_s\": null}", out);
	}
	fputs(m->n_arcs ? "\n  ]\n}\n" : "]\n}\n", out);
	free(rows);
}

/* A context's value in folded stacks and flame graphs: self microseconds, or calls. */
static uint64_t merged_value(const struct mview *m, const struct profile_node *x)
{
	if (m->count_only)
		return x->calls;
	return (x->self[m->c] + 500) / 1000;
}

/* A view that the run's writer makes of the merged profile: the sums, on the inputs' clock. */
static int run_view(const struct mview *m, FILE *out, const struct report_opts *opts)
{
	struct report_opts o = *opts;

	o.clock = m->c;
	o.threads = false;
	return report_write(out, m->p, 0, &o);
}

static int write_view(const struct mview *m, FILE *out, const struct report_opts *opts)
{
	switch (opts->format) {
	case FMT_CSV:
		merged_csv(m, out, opts);
		break;
	case FMT_JSON:
		merged_json(m, out, opts);
		break;
	case FMT_FOLDED:
		if (m->no_stacks) {
			fs_error("folded stacks: an input has no \"stacks\" (a report of an older "
				 "fortstat)");
			return -ENODATA;
		}
		return run_view(m, out, opts);
	case FMT_CALLGRIND:
		return run_view(m, out, opts);
	case FMT_PPROF:
		if (m->no_stacks) {
			fs_error("pprof: an input has no \"stacks\" (a report of an older "
				 "fortstat)");
			return -ENODATA;
		}
		return run_view(m, out, opts);
	case FMT_TABLE:
	default:
		merged_table(m, out, opts);
		break;
	}
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* ---- the flame graph ---- */

static int cmp_siblings(const void *p, const void *q, void *arg)
{
	const struct mview *cmp_m = arg;
	const struct profile_node *x = &cmp_m->nodes[*(const uint32_t *)p];
	const struct profile_node *y = &cmp_m->nodes[*(const uint32_t *)q];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return strcmp(cmp_m->rt[x->routine].name, cmp_m->rt[y->routine].name);
}

/*
 * A flame graph of the summed contexts: each frame as wide as its inclusive
 * value (self microseconds, or calls when counting), children in name order.
 */
static int write_svg_view(const struct mview *m, FILE *out)
{
	size_t n = m->n_nodes, i;
	double *incl = xcalloc(n, sizeof(*incl)), *x = xcalloc(n, sizeof(*x));
	double *next_x = xcalloc(n, sizeof(*next_x));
	int *depth = xcalloc(n, sizeof(*depth)), max_depth = 0;
	uint32_t *order = xcalloc(n, sizeof(*order));
	const double width = 1200, fh = 17;
	double scale;

	if (!m->n_in)
		return -EINVAL;
	if (m->no_stacks) {
		fs_error("flame graph: an input has no \"stacks\" (a report of an older fortstat)");
		free(incl), free(x), free(next_x), free(depth), free(order);
		return -ENODATA;
	}
	/* a parent's index is below its children's */
	for (i = n; i-- > 1;) {
		incl[i] += (double)merged_value(m, &m->nodes[i]);
		incl[m->nodes[i].parent] += incl[i];
	}
	for (i = 1; i < n; i++) {
		depth[i] = depth[m->nodes[i].parent] + 1;
		if (depth[i] > max_depth)
			max_depth = depth[i];
		order[i - 1] = (uint32_t)i;
	}
	qsort_r(order, n - 1, sizeof(*order), cmp_siblings, (void *)m);
	/*
	 * Siblings in name order. Sorted by parent index, a parent's group comes
	 * after its own parent's (a smaller index): it is placed before its children.
	 */
	for (i = 0; i + 1 < n; i++) {
		uint32_t k = order[i], p = m->nodes[k].parent;

		x[k] = x[p] + next_x[p];
		next_x[p] += incl[k];
	}
	scale = incl[0] > 0 ? (width - 20) / incl[0] : 0;
	fprintf(out,
		"<?xml version=\"1.0\" standalone=\"no\"?>\n"
		"<svg version=\"1.1\" width=\"%.0f\" height=\"%.0f\" "
		"xmlns=\"http://www.w3.org/2000/svg\">\n"
		"<rect x=\"0\" y=\"0\" width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		"<text x=\"10\" y=\"20\" font-family=\"monospace\" font-size=\"14\">",
		width, (max_depth + 3) * fh);
	xml_str(out, m->program);
	fprintf(out, ": %zu inputs merged (%s)</text>\n", m->n_in,
		m->count_only ? "calls" : "self microseconds, summed");
	for (i = 1; i < n; i++) {
		double w = incl[i] * scale, y = (max_depth - depth[i] + 2) * fh;
		const char *name = m->rt[m->nodes[i].routine].name;
		unsigned h = (unsigned)hash_name(name);

		if (w < 0.5)
			continue;
		fprintf(out, "<g><title>");
		xml_str(out, name);
		fprintf(out,
			" (%.0f %s)</title><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			"height=\"%.0f\" fill=\"rgb(%u,%u,%u)\" rx=\"2\"/>",
			incl[i], m->count_only ? "calls" : "us", 10 + x[i] * scale, y, w, fh - 1,
			205 + h % 50, 80 + (h >> 8) % 150, (h >> 16) % 55);
		/* the name when it fits, about 7 px a character */
		if ((double)strlen(name) * 7 < w - 6) {
			fprintf(out,
				"<text x=\"%.1f\" y=\"%.1f\" font-family=\"monospace\" "
				"font-size=\"11\">",
				13 + x[i] * scale, y + fh - 5);
			xml_str(out, name);
			fputs("</text>", out);
		}
		fputs("</g>\n", out);
	}
	fputs("</svg>\n", out);
	free(incl), free(x), free(next_x), free(depth), free(order);
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

int report_write_merged(FILE *out, const struct profile *p, const struct report_opts *opts)
{
	struct mview m;

	if (!p || !p->n_inputs || p->n_sections != 1 || !p->sections[0].merged)
		return -EINVAL;
	mview_of(&m, p);
	return write_view(&m, out, opts);
}

int report_write_merged_svg(FILE *out, const struct profile *p)
{
	struct mview m;

	if (!p || !p->n_inputs || p->n_sections != 1 || !p->sections[0].merged)
		return -EINVAL;
	mview_of(&m, p);
	return write_svg_view(&m, out);
}

int merge_write(const struct merge *mg, FILE *out, const struct report_opts *opts)
{
	struct profile *p;
	int err;

	if (!mg->n_in)
		return -EINVAL;
	p = merge_profile(mg);
	err = report_write_merged(out, p, opts);
	profile_free(p);
	return err;
}

int merge_write_svg(const struct merge *mg, FILE *out)
{
	struct profile *p;
	int err;

	if (!mg->n_in)
		return -EINVAL;
	p = merge_profile(mg);
	err = report_write_merged_svg(out, p);
	profile_free(p);
	return err;
}
