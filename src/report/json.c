// SPDX-License-Identifier: GPL-2.0-or-later
/* json.c - the JSON view: the run, its routines and arcs on both clocks, and per-thread results. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/report.h"
#include "fortstat/usage.h"
#include "fortstat/util.h"
#include "view.h"

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
	const struct profile_arc *x = *(const struct profile_arc *const *)p;
	const struct profile_arc *y = *(const struct profile_arc *const *)q;
	/* the root (PROFILE_NONE) first, then by routine index */
	uint64_t xc = x->caller == PROFILE_NONE ? 0 : (uint64_t)x->caller + 1;
	uint64_t yc = y->caller == PROFILE_NONE ? 0 : (uint64_t)y->caller + 1;

	if (xc != yc)
		return xc < yc ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
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

/* The number f (ns) with three decimals, or null when it is not finite. */
static void json_ns(FILE *out, double f)
{
	if (isfinite(f))
		fprintf(out, "%.3f", f);
	else
		fputs("null", out);
}

/* A percentage with two decimals, or null when it is not finite (no time). */
static void json_pct(FILE *out, double v)
{
	if (isfinite(v))
		fprintf(out, "%.2f", v);
	else
		fputs("null", out);
}

/*
 * --sample: , "lines": [{"file": F, "line": L, "callees": C, "samples": N,
 * "share": S, "self_s": T}, ...]: every source line of the routine's
 * samples, most first (callees: not a line, the untimed code it called);
 * share of its samples, and its self time times that share. The whole
 * process's set only.
 */
static void json_lines(FILE *out, const struct report *rp, const struct row *r)
{
	const struct profile_section *sec = rp->sec;
	uint64_t all = 0;

	if (!sec->line_at || rp->set->tid)
		return;
	for (size_t k = sec->line_at[r->idx]; k < sec->line_at[r->idx + 1]; k++)
		all += sec->lines[k].n;
	fputs(", \"lines\": [", out);
	for (size_t k = sec->line_at[r->idx]; k < sec->line_at[r->idx + 1]; k++) {
		const struct profile_line *l = &sec->lines[k];
		double share = (double)l->n / (double)all;

		fputs(k > sec->line_at[r->idx] ? ", {\"file\": " : "{\"file\": ", out);
		json_str(out, l->file);
		if (l->line > 0)
			fprintf(out, ", \"line\": %d", l->line);
		else
			fputs(", \"line\": null", out);
		fprintf(out,
			", \"callees\": %s, \"samples\": %" PRIu64
			", \"share\": %.6f, \"self_s\": ",
			l->callees ? "true" : "false", l->n, share);
		json_secs(out, secs(r->shown) * share, rp->timed);
		fputc('}', out);
	}
	fputc(']', out);
}

/* --alloc: storage per routine (the process's rows, not a thread's) and its totals. */
static bool json_alloc_on(const struct report *rp)
{
	return rp->opts->alloc && rp->sec->alloc && rp->set == &rp->sec->all;
}

/* ,\n  "alloc": {...}: the process's storage, its peak and whose allocation reached it. */
static void json_alloc(FILE *out, const struct report *rp)
{
	const struct alloc_totals *t = &rp->sec->alloc_total;

	if (!json_alloc_on(rp))
		return;
	fprintf(out,
		",\n  \"alloc\": {\"allocs\": %" PRIu64 ", \"bytes\": %" PRIu64
		", \"frees\": %" PRIu64 ", \"outside_allocs\": %" PRIu64
		", \"outside_bytes\": %" PRIu64 ", \"outside_frees\": %" PRIu64
		", \"unknown_frees\": %" PRIu64 ", \"live_bytes\": %" PRIu64
		", \"peak_bytes\": %" PRIu64 ", \"peak_routine\": ",
		t->allocs, t->bytes, t->frees, t->outside_allocs, t->outside_bytes,
		t->outside_frees, t->unknown_frees, t->live, t->peak);
	json_str(out, t->peak_routine < rp->sec->n_routines
			  ? rp->sec->routines[t->peak_routine].name
			  : NULL);
	fputc('}', out);
}

/* One routine's object; both: its times on both clocks too (the chosen one first). */
static void json_routine(FILE *out, const struct report *rp, const struct row *r, bool both)
{
	const struct profile_routine *rt = &rp->sec->routines[r->idx];
	const struct profile_stats *s = &rp->set->r[r->idx];
	bool timed = rp->timed;
	size_t k;

	json_str(out, r->name);
	fputs(", \"module\": ", out);
	json_str(out, rt->module);
	fputs(", \"aliases\": [", out);
	for (k = 0; k < rt->n_aliases; k++) {
		if (k)
			fputs(", ", out);
		json_str(out, rt->aliases[k]);
	}
	fprintf(out, "], \"mainline\": %s, \"calls\": %" PRIu64 ", \"self_s\": ",
		r->mainline ? "true" : "false", r->calls);
	json_secs(out, secs(r->shown), timed);
	fputs(", \"self_uncertainty_s\": ", out);
	json_secs(out, r->unc / 1e9, timed);
	fputs(", \"gross_self_s\": ", out);
	json_secs(out, secs(r->gross), timed);
	fputs(", \"total_s\": ", out);
	json_secs(out, secs(r->incl), timed);
	fputs(", \"gross_total_s\": ", out);
	json_secs(out, secs(s->gross_total[rp->c]), timed);
	fputs(", \"total_percent\": ", out);
	if (timed)
		fprintf(out, "%.6f", percent(rp, secs(r->incl)));
	else
		fputs("null", out);
	both =
	    both && rp->sec->clock_known[CLOCK_KIND_CPU] && rp->sec->clock_known[CLOCK_KIND_WALL];
	for (int n = 0; timed && both && n < FS_N_CLOCKS; n++) {
		enum clock_kind c =
		    n ? (rp->c == CLOCK_KIND_CPU ? CLOCK_KIND_WALL : CLOCK_KIND_CPU) : rp->c;

		json_clock(out, clock_name(c), secs(s->self[c]), secs(s->gross_self[c]),
			   secs(s->total[c]), secs(s->gross_total[c]));
	}
	if (timed && rp->sec->clock_known[CLOCK_KIND_CPU] &&
	    rp->sec->clock_known[CLOCK_KIND_WALL]) {
		fputs(", \"wait_s\": ", out);
		json_secs(out, secs(r->wait), true);
	}
	fprintf(out, ", \"incomplete\": %s", timed && r->incomplete ? "true" : "false");
	if (rt->throttled_at || rt->throttle_carried)
		fprintf(out, ", \"throttled_after\": %" PRIu64, rt->throttled_at);
	else
		fputs(", \"throttled_after\": null", out);
	fprintf(out, ", \"calls_lower_bound\": %s", rt->calls_lower ? "true" : "false");
	if (rt->throttle_carried)
		fputs(", \"throttle_carried\": true", out);
	if (json_alloc_on(rp)) {
		const struct alloc_routine *a = &rp->sec->alloc[r->idx];

		fprintf(out,
			", \"alloc\": {\"allocs\": %" PRIu64 ", \"bytes\": %" PRIu64
			", \"frees\": %" PRIu64 ", \"allocs_incl\": %" PRIu64
			", \"bytes_incl\": %" PRIu64 ", \"frees_incl\": %" PRIu64 "}",
			a->allocs, a->bytes, a->frees, a->allocs_incl, a->bytes_incl,
			a->frees_incl);
	}
	fprintf(out, ", \"address\": \"0x%" PRIx64 "\", \"file\": ", rt->addr);
	json_str(out, rt->file);
	if (rt->line > 0)
		fprintf(out, ", \"line\": %d", rt->line);
	else
		fputs(", \"line\": null", out);
	json_lines(out, rp, r);
	fputc('}', out);
}

/* The "arcs" member's elements of one set of results, at `ind` spaces; their number. */
static size_t json_arcs(FILE *out, const struct report *rp, int ind)
{
	const struct profile_arc **sorted;
	size_t n_sorted = 0, i;

	sorted = xcalloc(rp->set->n_arcs ? rp->set->n_arcs : 1, sizeof(*sorted));
	for (i = 0; i < rp->set->n_arcs; i++) {
		const struct profile_arc *a = &rp->set->arcs[i];

		if (selected(rp, a->callee) &&
		    (a->caller == PROFILE_NONE || a->caller < rp->sec->n_routines))
			sorted[n_sorted++] = a;
	}
	qsort(sorted, n_sorted, sizeof(*sorted), cmp_arc);
	for (i = 0; i < n_sorted; i++) {
		const struct profile_arc *a = sorted[i];

		fprintf(out, "%s\n%*s{\"caller\": ", i ? "," : "", ind + 2, "");
		json_str(out, a->caller == PROFILE_NONE ? NULL : rname(rp, a->caller));
		fputs(", \"callee\": ", out);
		json_str(out, rname(rp, a->callee));
		fprintf(out, ", \"calls\": %" PRIu64 ", \"time_s\": ", a->calls);
		json_secs(out, arc_time_s(rp, a), rp->timed);
		fputs(", \"self_s\": ", out);
		json_secs(out, arc_self_s(rp, a), rp->timed);
		fputc('}', out);
	}
	free(sorted);
	return n_sorted;
}

/*
 * The "routines" and "arcs" members of one set of results, at `ind` spaces;
 * both: each routine's times on both clocks (the whole program, not a thread).
 */
static void json_routines_arcs(FILE *out, const struct report *rp, int ind, bool both)
{
	size_t i;

	fprintf(out, "%*s\"routines\": [", ind, "");
	for (i = 0; i < rp->n_rows; i++) {
		fprintf(out, "%s\n%*s{\"name\": ", i ? "," : "", ind + 2, "");
		json_routine(out, rp, &rp->rows[i], both);
	}
	if (rp->n_rows)
		fprintf(out, "\n%*s", ind, "");
	fprintf(out, "],\n%*s\"arcs\": [", ind, "");
	if (json_arcs(out, rp, ind))
		fprintf(out, "\n%*s", ind, "");
	fputc(']', out);
}

/*
 * --sample: ,\n  "sampling": {"hz": H, "samples": N, "outside": M, "lost": K,
 * "lost_more": B, "refused": R}: what was sampled (lost_more: a ring was
 * found full, more may have been lost unsaid).
 */
static void json_sampling(FILE *out, const struct report *rp)
{
	const struct profile_samples *s = &rp->sec->samples;

	if (!s->hz || rp->set->tid)
		return;
	fprintf(out,
		",\n  \"sampling\": {\"hz\": %u, \"samples\": %" PRIu64 ", \"outside\": %" PRIu64
		", \"lost\": %" PRIu64 ", \"lost_more\": %s, \"refused\": %s}",
		s->hz, s->n, s->outside, s->lost, s->full ? "true" : "false",
		s->refused ? "true" : "false");
}

/*
 * "usage": {"user_s": U, "system_s": S, "elapsed_s": E, "cpus": N,
 * "utilisation_percent": P, "concurrency": C}: the set's CPU time as the
 * kernel counted it (usage.h); null when it was not measured.
 */
static void json_usage(FILE *out, const struct report *rp)
{
	const struct profile_usage *u = &rp->set->usage;
	double cpu_s = u->user_s + u->sys_s;

	fputs("\"usage\": ", out);
	if (!u->known) {
		fputs("null", out);
		return;
	}
	fputs("{\"user_s\": ", out);
	json_secs(out, u->user_s, true);
	fputs(", \"system_s\": ", out);
	json_secs(out, u->sys_s, true);
	fputs(", \"elapsed_s\": ", out);
	json_secs(out, u->elapsed_s, true);
	if (rp->sec->n_cpus > 0)
		fprintf(out, ", \"cpus\": %d", rp->sec->n_cpus);
	else
		fputs(", \"cpus\": null", out);
	fputs(", \"utilisation_percent\": ", out);
	json_pct(out, usage_utilisation(cpu_s, u->elapsed_s, rp->sec->n_cpus));
	fputs(", \"concurrency\": ", out);
	json_ns(out, usage_concurrency(cpu_s, u->elapsed_s));
	fputc('}', out);
}

/* The run's facts and totals: the members before "routines". */
static void json_head(FILE *out, const struct report *rp)
{
	const struct profile *p = rp->p;
	const struct profile_section *sec = rp->sec;
	bool timed = rp->timed;
	struct trust t;
	size_t i;

	fputs("{\n  \"version\": \"" PACKAGE_VERSION "\",\n  \"program\": ", out);
	json_str(out, sec->label);
	fputs(",\n  \"argv\": [", out);
	for (i = 0; p->argv && p->argv[i]; i++) {
		if (i)
			fputs(", ", out);
		json_str(out, p->argv[i]);
	}
	fputs("],\n", out);
	if (p->ranked && p->size)
		fprintf(out, "  \"rank\": %d,\n  \"size\": %d,\n", p->rank, p->size);
	else if (p->ranked)
		fprintf(out, "  \"rank\": %d,\n  \"size\": null,\n", p->rank);
	fprintf(out,
		"  \"exit_status\": %d,\n  \"term_signal\": %d,\n  \"note\": ", sec->exit_status,
		sec->term_signal);
	json_str(out, sec->note);
	if (sec->attached) {
		fprintf(out,
			",\n  \"attached\": {\"pid\": %d, \"detached\": %s, \"active\": ", sec->pid,
			sec->detached ? "true" : "false");
		json_str(out, sec->active);
		fputc('}', out);
	}
	fputs(",\n  \"clock\": ", out);
	json_str(out, clock_name(rp->c));
	fprintf(out, ",\n  \"count_only\": %s,\n  \"overhead_removed\": %s,\n",
		sec->count_only ? "true" : "false", timed && p->correct ? "true" : "false");
	fputs("  \"f1_ns\": ", out);
	json_ns(out, p->f1_ns[rp->c]);
	fputs(",\n  \"f2_ns\": ", out);
	json_ns(out, p->f2_ns[rp->c]);
	fprintf(out, ",\n  \"stops_measured\": %" PRIu64, p->stops_measured);
	fprintf(out, ",\n  \"mechanism\": \"%s\"", sec->probes ? "probes" : "traps");
	fprintf(out, ",\n  \"probe_events\": %" PRIu64, sec->probe_events);
	fprintf(out, ",\n  \"trap_calls\": %" PRIu64, sec->trap_calls);
	fputs(",\n  \"trap_cost_s\": ", out);
	json_secs(out, sec->trap_cost_s[rp->c], timed);
	fprintf(out, ",\n  \"processes_not_followed\": %" PRIu64, sec->not_followed);
	fprintf(out,
		",\n  \"switch_records_lost\": %" PRIu64 ",\n  \"switch_lost_stops\": %" PRIu64
		",\n  \"switch_lost_tids\": [",
		sec->cs_lost_records, sec->cs_lost_windows);
	for (size_t k = 0; k < PROFILE_LOST_TIDS && sec->cs_lost_tids[k]; k++)
		fprintf(out, "%s%d", k ? ", " : "", sec->cs_lost_tids[k]);
	fputc(']', out);
	fputs(",\n  \"total_time_s\": ", out);
	json_secs(out, rp->total_s, true);
	fputs(",\n  \"gross_total_time_s\": ", out);
	json_secs(out, sec->total_s[rp->c], true);
	fputs(",\n  \"unaccounted_s\": ", out);
	json_secs(out, rp->unaccounted_s, timed);
	fputs(",\n  \"overhead_s\": ", out);
	json_secs(out, rp->overhead_s, timed);
	fputs(",\n  \"overhead_uncertainty_s\": ", out);
	json_secs(out, rp->overhead_unc_s, timed);
	report_trust(rp, &t);
	fputs(",\n  \"overhead_percent\": ", out);
	json_pct(out, t.overhead_pct);
	fputs(",\n  \"unaccounted_percent\": ", out);
	json_pct(out, t.unaccounted_pct);
	fputs(",\n  ", out);
	json_usage(out, rp);
	fprintf(out, ",\n  \"calls_timed\": %" PRIu64, rp->calls);
	json_sampling(out, rp);
	json_alloc(out, rp);
	fputs(",\n  \"warnings\": [", out);
	if (t.warning)
		json_str(out, t.warning);
	fputs("],\n", out);
	trust_free(&t);
}

/*
 * ,\n  "stacks": [{"frames": ["main", "a"], "calls": N, "self_s": S}, ...]: each
 * calling context of the set, outermost frame first (what --merge folds).
 */
static void json_stacks(FILE *out, const struct report *rp)
{
	const struct profile_set *p = rp->set;
	size_t nr = rp->sec->n_routines, i, n = 0;
	uint32_t *path = xcalloc(nr + 2, sizeof(*path));

	fputs(",\n  \"stacks\": [", out);
	for (i = 1; i < p->n_nodes; i++) {
		const struct profile_node *x = &p->nodes[i];
		size_t depth = 0;
		uint32_t k;

		if (!x->calls)
			continue;
		for (k = (uint32_t)i; k && k != PROFILE_NONE && depth < nr + 1;
		     k = p->nodes[k].parent)
			path[depth++] = k;
		fprintf(out, "%s\n    {\"frames\": [", n++ ? "," : "");
		while (depth--) {
			uint32_t r = p->nodes[path[depth]].routine;

			json_str(out, r < nr ? rname(rp, r) : "?");
			if (depth)
				fputs(", ", out);
		}
		fprintf(out, "], \"calls\": %" PRIu64 ", \"self_s\": ", x->calls);
		json_secs(out, secs(x->self[rp->c]), rp->timed);
		fputc('}', out);
	}
	fputs(n ? "\n  ]" : "]", out);
	free(path);
}

void write_json(FILE *out, const struct report *rp)
{
	size_t t;

	json_head(out, rp);
	json_routines_arcs(out, rp, 2, true);
	json_stacks(out, rp);
	if (rp->opts->threads) {
		fputs(",\n  \"threads\": [", out);
		for (t = 0; t < rp->sec->n_threads; t++) {
			const struct profile_set *th = &rp->sec->threads[t];
			struct report tr;

			report_build(&tr, rp->p, rp->sec, th, rp->opts);
			fprintf(out, "%s\n    {\"tid\": %d, \"calls_timed\": %" PRIu64 ",\n      ",
				t ? "," : "", th->tid, tr.calls);
			json_usage(out, &tr);
			fputs(",\n", out);
			json_routines_arcs(out, &tr, 6, false);
			fputc('}', out);
			report_free(&tr);
		}
		fputs(t ? "\n  ]" : "]", out);
	}
	fputs("\n}\n", out);
}

/* ---- a merge's JSON ---- */

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

void write_merged_json(const struct mview *m, FILE *out, const struct report_opts *opts)
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
