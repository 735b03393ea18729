// SPDX-License-Identifier: GPL-2.0-or-later
/* main.c - fortstat: time the routines of a program. Only main() decides to stop. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/books.h"
#include "fortstat/calib.h"
#include "fortstat/cli.h"
#include "fortstat/names.h"
#include "fortstat/precheck.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"

/* Load the names file of option opt (-n, -x) or stop with one line naming it. */
static int load_names(const char *path, struct names *nm, const char *opt)
{
	int err = names_load(path, nm);
	char *p = names_escape(path);

	if (err) {
		fs_error("%s: cannot read names file: %s", p, names_strerror(err));
		free(p);
		return EXIT_FS_ERROR;
	}
	if (!nm->n)
		fs_warn("%s: no names in it (empty, or only comments): %s", p,
			strcmp(opt, "-n") ? "-x excludes nothing" : "-n times the mainline alone");
	free(p);
	return 0;
}

/* Names that matched nothing are worth a line each (FORTSTAT never checked). */
static void warn_unmatched(const struct names *nm, const char *prog, bool libs)
{
	for (size_t i = 0; i < nm->n; i++) {
		char *path, *pat;

		if (nm->v[i].matched)
			continue;
		path = names_escape(nm->path);
		pat = names_escape(nm->v[i].pattern);
		fs_warn("%s:%d: '%s' matches no routine in %s%s", path, nm->v[i].line, pat, prog,
			libs ? " or the libraries of -l" : "");
		free(path);
		free(pat);
	}
}

/* Report files opened for -o FILE with %p (one a process). */
struct outfiles {
	FILE **f;
	char **name;
	size_t n;
};

/* FILE with each %p replaced by pid (and %% by %). */
static char *expand_pid(const char *fmt, int pid)
{
	size_t cap = strlen(fmt) + 32, n = 0;
	char *s = xmalloc(cap);

	for (const char *p = fmt; *p; p++) {
		if (n + 16 >= cap)
			s = xrealloc(s, cap *= 2);
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(s + n, cap - n, "%d", pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			s[n++] = '%';
			p++;
		} else {
			s[n++] = *p;
		}
	}
	s[n] = '\0';
	return s;
}

/*
 * Where the report of process pid goes: *out as it is, unless -o has %p:
 * then the file named after pid (appended to when an earlier image of the
 * same process wrote it). Returns 0, or -1 after saying why.
 */
static int out_for(const struct options *o, int pid, FILE **out, struct outfiles *outs)
{
	char *name;

	if (!o->output || !strstr(o->output, "%p"))
		return 0;
	name = expand_pid(o->output, pid);
	for (size_t i = 0; i < outs->n; i++) {
		if (!strcmp(outs->name[i], name)) {
			*out = outs->f[i];
			free(name);
			return 0;
		}
	}
	*out = fopen(name, "we");
	if (!*out) {
		fs_error("%s: cannot write the report: %s", name, strerror(errno));
		free(name);
		*out = stderr;
		return -1;
	}
	outs->f = xrealloc(outs->f, (outs->n + 1) * sizeof(*outs->f));
	outs->name = xrealloc(outs->name, (outs->n + 1) * sizeof(*outs->name));
	outs->f[outs->n] = *out;
	outs->name[outs->n++] = name;
	return 0;
}

static void report_one(FILE *out, const struct options *o, const struct symtab *st,
		       const struct acct *acct, const struct report_run *run)
{
	int err = report_write(out, st, acct, run, &o->report);

	if (err < 0)
		fs_error("%s: cannot write the report: %s", o->output ? o->output : "stderr",
			 strerror(-err));
}

/*
 * The run measured its stops: f1 and f2 from that (calib_use_measured).
 * Returns how many segments were measured when their measure was used, 0.
 */
static uint64_t adjust_calibration(const struct options *o, const struct trace_result *res,
				   struct calib *cal)
{
	double seg = cal->seg_ns;

	if (o->count_only)
		return 0;
	if (!calib_use_measured(cal, o->clock == CLOCK_KIND_WALL, res->seg_n, res->seg_cpu_ns,
				res->seg_wall_ns)) {
		if (cal->batches && res->seg_n)
			fs_info(1,
				"stops measured in the run: %" PRIu64
				" segments (too few): the calibration's f1 and f2 stand",
				res->seg_n);
		return 0;
	}
	fs_info(1,
		"stops measured in the run: %.3f us a segment (%" PRIu64
		" segments; calibration %.3f, %+.3f beyond): f1 = f2 = %.3f us",
		(cal->f1_ns - cal->resid_ns) / 1e3, res->seg_n, seg / 1e3, cal->resid_ns / 1e3,
		cal->f1_ns / 1e3);
	return res->seg_n;
}

int main(int argc, char **argv)
{
	struct options o;
	struct names names = { 0 }, exclude = { 0 };
	struct symtab st;
	struct trace_result res;
	struct calib cal;
	struct report_run run;
	struct books *books;
	enum clock_kind ck, alt;
	double est[FS_N_CLOCKS] = { 0, 0 };
	FILE *out = stderr, *svg = NULL;
	char *path;
	size_t n_sel;
	struct outfiles outs = { 0 };
	char *prog_label = NULL;
	FILE *prev = NULL;
	int rc, err;

	rc = cli_parse(argc, argv, &o);
	if (rc >= 0)
		return rc;
	fs_verbose = o.verbose;

	rc = cli_find_program(o.argv[0], &path);
	if (rc)
		return rc;
	rc = precheck_program(path);
	if (rc) {
		free(path);
		return rc;
	}
	err = symtab_load(path, &st);
	if ((err == SYMTAB_ENOSYMS || err == SYMTAB_EBADSHDR) && o.n_libs && !st.is_static) {
		/* Stripped: nothing of its own to time, but its libraries' routines. */
		fs_info(1, "%s: %s: only the libraries of -l are timed", path,
			symtab_strerror(err));
		err = 0;
	}
	if (err) {
		symtab_say_error(path, &st, err);
		symtab_free(&st);
		return EXIT_FS_CANNOT;
	}
	if (o.names_file && load_names(o.names_file, &names, "-n"))
		return EXIT_FS_ERROR;
	if (o.exclude_file && load_names(o.exclude_file, &exclude, "-x"))
		return EXIT_FS_ERROR;
	n_sel = symtab_select(&st, o.names_file ? &names : NULL,
			      o.exclude_file ? &exclude : NULL, o.all);
	/* With -l, names may match library routines: said once the run is over. */
	if (o.names_file && !o.n_libs)
		warn_unmatched(&names, path, o.n_libs > 0);
	if (o.exclude_file && !o.n_libs)
		warn_unmatched(&exclude, path, o.n_libs > 0);
	fs_info(1, "%s: %zu routines, %zu selected for timing", path, st.n, n_sel);
	if (o.output && !strstr(o.output, "%p")) {
		out = fopen(o.output, "we");
		if (!out) {
			fs_error("%s: cannot write the report: %s", o.output, strerror(errno));
			return EXIT_FS_ERROR;
		}
	}
	if (o.svg) {
		svg = fopen(o.svg, "we");
		if (!svg) {
			fs_error("%s: cannot write the flame graph: %s", o.svg, strerror(errno));
			if (out != stderr)
				fclose(out);
			return EXIT_FS_ERROR;
		}
	}

	/* The overhead of a stop, measured before the program runs. */
	memset(&cal, 0, sizeof(cal));
	if (!o.count_only) {
		err = calib_run(&o, st.parallel_runtime, &cal);
		if (err)
			fs_warn("calibration failed (%s): times are gross", strerror(-err));
		else
			fs_info(1,
				"calibration: f1 %.2f us per entry, f2 %.2f us per call made "
				"(%s clock; %s: %.2f, %.2f), median of %zu batches of %zu calls, "
				"%.3f s",
				cal.f1_ns / 1e3, cal.f2_ns / 1e3,
				o.clock == CLOCK_KIND_WALL ? "wall" : "cpu",
				o.clock == CLOCK_KIND_WALL ? "cpu" : "wall", cal.alt_f1_ns / 1e3,
				cal.alt_f2_ns / 1e3, cal.batches, cal.calls, cal.seconds);
	}

	/* Both clocks are read at every stop; net times segment by segment when corrected. */
	ck = o.clock;
	alt = ck == CLOCK_KIND_WALL ? CLOCK_KIND_CPU : CLOCK_KIND_WALL;
	books = books_new(st.n, !o.count_only, !o.count_only && !o.no_correct && cal.batches);
	est[ck] = (cal.f1_ns + cal.f2_ns) / 2;
	est[alt] = (cal.alt_f1_ns + cal.alt_f2_ns) / 2;
	err = trace_run(path, o.argv, &st, books, o.names_file ? &names : NULL,
			o.exclude_file ? &exclude : NULL, &o, est, &res);
	if (err || !res.started) {
		/* Nothing was measured: the error has been said in one line. */
		rc = res.exit_status ? res.exit_status : EXIT_FS_ERROR;
		goto done;
	}
	if (o.names_file && o.n_libs)
		warn_unmatched(&names, path, o.n_libs > 0);
	if (o.exclude_file && o.n_libs)
		warn_unmatched(&exclude, path, o.n_libs > 0);
	if (res.note[0])
		fs_warn("%s", res.note);
	memset(&run, 0, sizeof(run));
	run.stops_measured = adjust_calibration(&o, &res, &cal);
	run.program = path;
	if (o.follow)
		run.program = prog_label = xasprintf("%s [pid %d]", path, res.pid);
	run.argv = o.argv;
	run.exit_status = res.exit_status;
	run.term_signal = res.term_signal;
	run.clock = o.clock == CLOCK_KIND_WALL ? "wall" : "cpu";
	run.count_only = o.count_only || res.counted_only;
	/* count-only reads no CPU clock: its program time is the wall's */
	run.total_time_s = res.total_s[o.count_only ? CLOCK_KIND_WALL : ck];
	run.correct = !o.no_correct;
	run.f1_ns = cal.f1_ns;
	run.f2_ns = cal.f2_ns;
	run.alt = books_timed(books) ? books_acct(books, alt, false) : NULL;
	run.net = books_acct(books, ck, true);
	run.alt_net = books_acct(books, alt, true);
	run.alt_clock = o.clock == CLOCK_KIND_WALL ? "cpu" : "wall";
	run.alt_f1_ns = cal.alt_f1_ns;
	run.alt_f2_ns = cal.alt_f2_ns;
	run.note = res.note[0] ? res.note : NULL;
	fflush(stdout);
	/* Libraries loaded in a followed child may have grown the shared table. */
	books_grow(books, st.n);
	if (out_for(&o, res.pid, &out, &outs) == 0)
		report_one(out, &o, &st, books_acct(books, ck, false), &run);
	prev = out;
	for (size_t i = 0; i < res.n_sections; i++) {
		const struct trace_section *sec = &res.sections[i];
		struct report_run r2 = run;
		char *label;

		/* Images without symbols were followed for their children only; a
		 * forked copy that exec'ed before calling anything has nothing to say. */
		if (!sec->st->n || (sec->execed && !books_total_calls(sec->books)))
			continue;
		label = xasprintf("%s [pid %d]", sec->path, sec->pid);
		books_grow(sec->books, sec->st->n);
		r2.program = label;
		r2.exit_status = sec->exit_status;
		r2.term_signal = sec->term_signal;
		r2.count_only = o.count_only || sec->counted_only;
		r2.total_time_s = sec->total_s[o.count_only ? CLOCK_KIND_WALL : ck];
		r2.alt = books_timed(sec->books) ? books_acct(sec->books, alt, false) : NULL;
		r2.net = books_acct(sec->books, ck, true);
		r2.alt_net = books_acct(sec->books, alt, true);
		r2.note = sec->note[0] ? sec->note : NULL;
		if (out_for(&o, sec->pid, &out, &outs) == 0) {
			if (out == prev && (o.report.format == FMT_TABLE ||
					    o.report.format == FMT_CSV))
				fputc('\n', out);
			prev = out;
			report_one(out, &o, sec->st, books_acct(sec->books, ck, false), &r2);
		}
		free(label);
	}
	err = svg ? report_write_svg(svg, &st, books_acct(books, ck, false), &run, &o.report) : 0;
	if (err < 0)
		fs_error("%s: cannot write the flame graph: %s", o.svg, strerror(-err));
	rc = res.exit_status;
done:
	if (out != stderr && !outs.n && fclose(out) != 0) {
		fs_error("%s: cannot write the report: %s", o.output, strerror(errno));
		if (rc == 0)
			rc = EXIT_FS_ERROR;
	}
	for (size_t i = 0; i < outs.n; i++) {
		if (fclose(outs.f[i]) != 0) {
			fs_error("%s: cannot write the report: %s", outs.name[i], strerror(errno));
			if (rc == 0)
				rc = EXIT_FS_ERROR;
		}
		free(outs.name[i]);
	}
	free(outs.f);
	free(outs.name);
	free(prog_label);
	trace_result_free(&res);
	if (svg && fclose(svg) != 0) {
		fs_error("%s: cannot write the flame graph: %s", o.svg, strerror(errno));
		if (rc == 0)
			rc = EXIT_FS_ERROR;
	}
	books_free(books);
	names_free(&names);
	names_free(&exclude);
	symtab_free(&st);
	free(path);
	return rc;
}
