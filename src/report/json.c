// SPDX-License-Identifier: GPL-2.0-or-later
/* json.c - the JSON view: the run, its routines and arcs on both clocks, and per-thread results. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"
#include "view.h"

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

/* A routine's times on the other clock, net of that clock's overhead when correcting. */
static acct_time_t alt_net(const struct report_run *run, const struct acct_routine *a,
			   bool inclusive)
{
	acct_time_t g = inclusive ? a->total : a->self;

	if (!run->correct)
		return g;
	if (run->alt_net && run->alt &&
	    acct_n_routines(run->alt_net) == acct_n_routines(run->alt)) {
		const struct acct_routine *n =
		    &acct_routines(run->alt_net)[a - acct_routines(run->alt)];

		return inclusive ? n->total : n->self;
	}
	if (inclusive)
		return acct_net(g, a->total_entries, a->total_calls_made, run->alt_f1_ns,
				run->alt_f2_ns);
	return acct_net(g, a->calls, a->calls_made, run->alt_f1_ns, run->alt_f2_ns);
}

/* , "cpu": {"self_s": ..., "gross_self_s": ..., "total_s": ..., "gross_total_s": ...} */
static void json_clock(FILE *out, const char *name, double self, double gross, double total,
		       double gross_total)
{
	fprintf(out, ", \"%s\": {\"self_s\": ", name);
	json_secs(out, self, true);
	fputs(", \"gross_self_s\": ", out);
	json_secs(out, gross, true);
	fputs(", \"total_s\": ", out);
	json_secs(out, total, true);
	fputs(", \"gross_total_s\": ", out);
	json_secs(out, gross_total, true);
	fputc('}', out);
}

/* both: add each routine's times on both clocks (the whole program, not a thread). */
static void json_routines_arcs(FILE *out, const struct report *rp, int ind, bool both)
{
	const struct symtab *st = rp->st;
	bool timed = !rp->run->count_only;
	const struct acct_arc **sorted;
	size_t n_sorted = 0, i, k;

	fprintf(out, "%*s\"routines\": [", ind, "");
	for (i = 0; i < rp->n_rows; i++) {
		const struct row *r = &rp->rows[i];
		const struct routine *rt = &st->r[r->idx];

		fprintf(out, "%s\n%*s{\"name\": ", i ? "," : "", ind + 2, "");
		json_str(out, r->name);
		fputs(", \"module\": ", out);
		json_str(out, rt->module);
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
		json_secs(out, secs(r->incl), timed);
		fputs(", \"gross_total_s\": ", out);
		json_secs(out, secs(rp->ar[r->idx].total), timed);
		fputs(", \"total_percent\": ", out);
		if (timed)
			fprintf(out, "%.6f", percent(rp, secs(r->incl)));
		else
			fputs("null", out);
		if (timed && both && rp->run->alt) {
			/* both clocks: the chosen one as shown, the other from alt */
			const struct report_run *run = rp->run;
			const struct acct_routine *a2 = &acct_routines(run->alt)[r->idx];
			bool cpu = !strcmp(run->clock, "cpu");

			json_clock(out, cpu ? "cpu" : "wall", secs(r->shown), secs(r->gross),
				   secs(r->incl), secs(rp->ar[r->idx].total));
			json_clock(out, run->alt_clock, secs(alt_net(run, a2, false)),
				   secs(a2->self), secs(alt_net(run, a2, true)), secs(a2->total));
		}
		fprintf(out, ", \"incomplete\": %s, \"address\": \"0x%" PRIx64 "\", \"file\": ",
			timed && r->incomplete ? "true" : "false", rt->addr);
		json_str(out, rt->file);
		if (rt->line > 0)
			fprintf(out, ", \"line\": %d}", rt->line);
		else
			fputs(", \"line\": null}", out);
	}
	if (rp->n_rows)
		fprintf(out, "\n%*s", ind, "");
	fprintf(out, "],\n%*s\"arcs\": [", ind, "");

	sorted = xcalloc(rp->prof->n_arcs ? rp->prof->n_arcs : 1, sizeof(*sorted));
	for (i = 0; i < rp->prof->n_arcs; i++) {
		const struct acct_arc *a = &rp->prof->arcs[i];

		if (selected(st, a->callee) && (a->caller == ACCT_NONE || a->caller < st->n))
			sorted[n_sorted++] = a;
	}
	qsort(sorted, n_sorted, sizeof(*sorted), cmp_arc);
	for (i = 0; i < n_sorted; i++) {
		const struct acct_arc *a = sorted[i];

		fprintf(out, "%s\n%*s{\"caller\": ", i ? "," : "", ind + 2, "");
		json_str(out, a->caller == ACCT_NONE ? NULL : rp->names[a->caller]);
		fputs(", \"callee\": ", out);
		json_str(out, rp->names[a->callee]);
		fprintf(out, ", \"calls\": %" PRIu64 ", \"time_s\": ", a->calls);
		json_secs(out, arc_time_s(rp, a), timed);
		fputs(", \"self_s\": ", out);
		json_secs(out, arc_self_s(rp, a), timed);
		fputc('}', out);
	}
	free(sorted);
	if (n_sorted)
		fprintf(out, "\n%*s", ind, "");
	fputc(']', out);
}

void write_json(FILE *out, const struct report *rp, const struct acct *acct)
{
	const struct report_run *run = rp->run;
	bool timed = !run->count_only;
	size_t i, t;

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
	fprintf(out, ",\n  \"stops_measured\": %" PRIu64, run->stops_measured);
	fputs(",\n  \"total_time_s\": ", out);
	json_secs(out, rp->total_s, true);
	fputs(",\n  \"gross_total_time_s\": ", out);
	json_secs(out, run->total_time_s, true);
	fputs(",\n  \"unaccounted_s\": ", out);
	json_secs(out, rp->unaccounted_s, timed);
	fputs(",\n  \"overhead_s\": ", out);
	json_secs(out, rp->overhead_s, timed);
	fprintf(out, ",\n  \"calls_timed\": %" PRIu64 ",\n", rp->calls);
	json_routines_arcs(out, rp, 2, true);
	if (rp->opts->threads) {
		fputs(",\n  \"threads\": [", out);
		for (t = 0; t < acct_n_threads(acct); t++) {
			struct prof p = prof_thread(acct, rp->run, t);
			struct report tr;

			report_build(&tr, rp->st, &p, run, rp->opts);
			fprintf(out, "%s\n    {\"tid\": %d, \"calls_timed\": %" PRIu64 ",\n",
				t ? "," : "", p.tid, tr.calls);
			json_routines_arcs(out, &tr, 6, false);
			fputc('}', out);
			report_free(&tr);
		}
		fputs(t ? "\n  ]" : "]", out);
	}
	fputs("\n}\n", out);
}
