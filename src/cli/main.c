// SPDX-License-Identifier: GPL-2.0-or-later
/* main.c - fortstat: time the routines of a program. Only main() decides to stop. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/calib.h"
#include "fortstat/calibcache.h"
#include "fortstat/chrome.h"
#include "fortstat/cli.h"
#include "fortstat/mergecmd.h"
#include "fortstat/names.h"
#include "fortstat/output.h"
#include "fortstat/procfs.h"
#include "fortstat/precheck.h"
#include "fortstat/profile.h"
#include "fortstat/progress.h"
#include "fortstat/rank.h"
#include "fortstat/report.h"
#include "fortstat/symtab.h"
#include "fortstat/timeline.h"
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

/* One run of fortstat, from the command line to the exit status. */
struct session {
	struct options o;
	struct trace_opts trace; /* what the tracer needs of o */
	char *path;		 /* PROGRAM as found */
	struct symtab st;
	struct names names, exclude;
	struct calib cal;
	struct calib cal_traps; /* --probes: what a stop costs, for the calls that still trap */
	struct books *books;
	struct timeline *tl; /* --timeline: every call kept in time (NULL: none) */
	struct trace_result res;
	struct outputs outs;
	struct rank_info rank; /* one rank of an MPI job, or not (rank.known) */
};

/*
 * -f and a "#!" script (a wrapper, pyenv's python3 shim): run its
 * interpreter as the kernel would, [interpreter, its argument, the script,
 * the arguments], so that the interpreter is timed and the programs it runs
 * are followed; `#!/usr/bin/env NAME` runs NAME, found in PATH, as env
 * would. Without -f a script is refused (precheck: timing a shell times
 * the shell). Returns 0 (s->path and s->o.argv the interpreter's when it
 * was one), or the exit status after saying why not.
 */
static int script_interpreter(struct session *s)
{
	char head[256], *interp = NULL, *arg = NULL, **argv, *ipath = NULL;
	const char *base;
	bool env;
	ssize_t n;
	int fd = open(s->path, O_RDONLY | O_CLOEXEC), k = 0, rc = 0;

	if (fd < 0)
		return 0; /* the checks after say why */
	n = read(fd, head, sizeof(head));
	close(fd);
	if (n < 2 || !precheck_shebang(head, (size_t)n, &interp, &arg) || !interp[0])
		goto out; /* not a script; one without an interpreter is refused after */
	base = strrchr(interp, '/');
	base = base ? base + 1 : interp;
	env = !strcmp(base, "env") && arg && arg[0] != '-' && !strpbrk(arg, " \t=");
	rc = cli_find_program(env ? arg : interp, &ipath);
	if (rc)
		goto out;
	argv = xcalloc((size_t)s->o.argc + 3, sizeof(*argv));
	argv[k++] = env ? arg : interp;
	if (arg && !env)
		argv[k++] = arg;
	argv[k++] = s->path;
	for (int i = 1; i < s->o.argc; i++)
		argv[k++] = s->o.argv[i];
	fs_info(1, "%s: a script for %s%s%s: -f runs %s on it and follows what it runs", s->path,
		interp, arg ? " " : "", arg ? arg : "", ipath);
	s->o.argv = argv; /* (kept to the end: the report names the command) */
	s->o.argc = k;
	s->path = ipath;
	return 0;
out:
	free(interp);
	free(arg);
	return rc;
}

/*
 * Find PROGRAM, read its routines and the names files, choose what to time.
 * Returns 0, or the exit status after saying why not.
 */
static int load_program(struct session *s)
{
	const struct options *o = &s->o;
	size_t n_sel;
	int rc, err;

	if (o->pid) {
		/* -p: the running process's executable, as the kernel holds it */
		char exe[48];

		rc = trace_attach_check(o->pid, &s->path, &s->trace.exe_dev, &s->trace.exe_ino);
		if (rc)
			return rc;
		proc_path(exe, sizeof(exe), o->pid, 0, "exe");
		err = symtab_load(exe, &s->st);
		if (err == SYMTAB_ENOSYMS && !o->n_libs && !s->st.is_static) {
			char *sugg[8], *eg;
			size_t n =
			    names_suggest_libs(s->st.needed, s->st.n_needed, NULL, 0, sugg, 8);

			eg = n ? names_lib_example(sugg, n, NULL, 0, o->pid, NULL)
			       : xasprintf("e.g. fortstat -p %d -l libc", o->pid);
			fs_error(
			    "-p %d: %s has no function symbols (stripped?): time its libraries' "
			    "routines with -l, %s",
			    o->pid, s->path, eg);
			free(eg);
			for (size_t i = 0; i < n; i++)
				free(sugg[i]);
			return EXIT_FS_CANNOT;
		}
	} else {
		rc = cli_find_program(o->argv[0], &s->path);
		if (rc)
			return rc;
		if (o->follow && (rc = script_interpreter(s)) != 0)
			return rc;
		rc = precheck_program(s->path);
		if (rc)
			return rc;
		err = symtab_load(s->path, &s->st);
	}
	if ((err == SYMTAB_ENOSYMS || err == SYMTAB_EBADSHDR) && o->n_libs && !s->st.is_static) {
		/* Stripped: nothing of its own to time, but its libraries' routines. */
		fs_info(1, "%s: %s: only the libraries of -l are timed", s->path,
			symtab_strerror(err));
		err = 0;
	} else if (err == SYMTAB_ENOSYMS && o->follow && !s->st.is_static) {
		/* -f: followed untimed for the programs it runs, as an exec'ed one is */
		fs_info(1, "%s: %s: followed untimed, for the programs it runs", s->path,
			symtab_strerror(err));
		err = 0;
	}
	if (err) {
		symtab_say_error(s->path, &s->st, err);
		return EXIT_FS_CANNOT;
	}
	if (o->names_file && load_names(o->names_file, &s->names, "-n"))
		return EXIT_FS_ERROR;
	if (o->exclude_file && load_names(o->exclude_file, &s->exclude, "-x"))
		return EXIT_FS_ERROR;
	n_sel = symtab_select(&s->st, o->names_file ? &s->names : NULL,
			      o->exclude_file ? &s->exclude : NULL, o->all);
	/* With -l, names may match library routines: said once the run is over. */
	if (!o->n_libs) {
		if (o->names_file)
			warn_unmatched(&s->names, s->path, false);
		if (o->exclude_file)
			warn_unmatched(&s->exclude, s->path, false);
	}
	fs_info(1, "%s: %zu routines, %zu selected for timing", s->path, s->st.n, n_sel);
	if (o->report.alloc && !symtab_select_alloc(&s->st) && !s->st.is_static && !o->n_libs) {
		/* a dynamic program's allocator is in the C library, timed by -l */
		fs_error("--alloc: malloc is in libc.so.6, not in %s: add -l libc", s->path);
		return EXIT_FS_ERROR;
	}
	return 0;
}

/*
 * Check that the report's file (-o without %p) and the flame graph's can be
 * written, without touching them (they are replaced whole at the end):
 * 0 or EXIT_FS_ERROR.
 */
static int open_outputs(struct session *s)
{
	int err;

	if (outputs_open(&s->outs, s->o.output, s->rank.rank) < 0)
		return EXIT_FS_ERROR;
	if (s->o.svg && (err = output_check(s->o.svg)) < 0) {
		fs_error("%s: cannot write the flame graph: %s", s->o.svg, strerror(-err));
		return EXIT_FS_ERROR;
	}
	if (s->o.timeline && !output_fmt_has(s->o.timeline, 'p')) {
		char *name = output_expand(s->o.timeline, s->rank.rank, getpid(), NULL);

		err = output_check(name);
		if (err < 0)
			fs_error("%s: cannot write the timeline: %s", name, strerror(-err));
		free(name);
		if (err < 0)
			return EXIT_FS_ERROR;
	}
	return 0;
}

/*
 * --format=pprof is gzip data: never to a terminal, nor to standard error
 * (where the program's messages and fortstat's go too) for a run. Returns
 * 0, or EXIT_FS_ERROR after one line saying why.
 */
static int check_binary(const struct options *o, int rank)
{
	char *name;
	bool tty;

	if (o->report.format != FMT_PPROF)
		return 0;
	if (!o->output && o->merge && !isatty(STDOUT_FILENO))
		return 0;
	if (!o->output) {
		fs_error(o->merge ? "--format=pprof writes gzip data: not to a terminal "
				    "(give -o FILE, or redirect standard output)"
				  : "--format=pprof writes gzip data: give -o FILE");
		return EXIT_FS_ERROR;
	}
	name = output_expand(o->output, rank, getpid(), NULL);
	tty = output_is_terminal(name);
	if (tty)
		fs_error("-o %s: a terminal: --format=pprof writes gzip data to a file", name);
	free(name);
	return tty ? EXIT_FS_ERROR : 0;
}

/*
 * A calibration for options t: one kept from a run a moment ago on this
 * machine (calibcache.h), else measured now and kept. Returns 0 or a
 * negative errno.
 */
static int calibrate_for(const struct trace_opts *t, int parallel_runtime, struct calib *cal,
			 const char *what)
{
	double age;
	int err;

	if (!calib_cache_get(t, parallel_runtime, cal, &age)) {
		fs_info(
		    1,
		    "calibration of the %s: taken from a run %.0f s ago (%s=0: measure it afresh)",
		    what, age, CALIB_CACHE_ENV);
		return 0;
	}
	err = calib_run(t, parallel_runtime, cal);
	if (!err)
		calib_cache_put(t, parallel_runtime, cal);
	return err;
}

/* The overhead of a stop, measured before the program runs. */
static void calibrate(struct session *s)
{
	const struct options *o = &s->o;
	struct calib *cal = &s->cal;
	int err;

	if (o->count_only)
		return;
	/*
	 * With probes, some calls still stop (entries that take no stub, the
	 * first calls, threads without an area): a stop's cost is measured
	 * through the traps too, and a probe's through the probes. The traps
	 * are measured with the probes set up (every call trapping): a stop
	 * then costs the thread its two context-switch records more (about
	 * 1 us of 5), which a calibration without them left in the net times.
	 */
	if (s->trace.probes) {
		struct trace_opts traps = s->trace;

		traps.probe_stops = true;
		if (calibrate_for(&traps, s->st.parallel_runtime, &s->cal_traps, "stops"))
			memset(&s->cal_traps, 0, sizeof(s->cal_traps));
	}
	err = calibrate_for(&s->trace, s->st.parallel_runtime, cal,
			    s->trace.probes ? "probes" : "stops");
	if (err)
		fs_warn("calibration failed (%s): times are gross", strerror(-err));
	else
		fs_info(1,
			"calibration: f1 %.2f us per entry, f2 %.2f us per call made "
			"(%s clock; %s: %.2f, %.2f), median of %zu batches of %zu calls "
			"(spread %.4f, %.4f us), %.3f s",
			cal->f1_ns / 1e3, cal->f2_ns / 1e3,
			o->clock == CLOCK_KIND_WALL ? "wall" : "cpu",
			o->clock == CLOCK_KIND_WALL ? "cpu" : "wall", cal->alt_f1_ns / 1e3,
			cal->alt_f2_ns / 1e3, cal->batches, cal->calls, cal->df1_ns / 1e3,
			cal->df2_ns / 1e3, cal->seconds);
}

/* The other clock than c. */
static enum clock_kind other_clock(enum clock_kind c)
{
	return c == CLOCK_KIND_WALL ? CLOCK_KIND_CPU : CLOCK_KIND_WALL;
}

/* timeline_full_fn: the bound reached, said once while the program runs. */
static void say_timeline_full(const struct timeline *tl, void *arg)
{
	fs_warn("--timeline=%s: %zu calls kept, the bound (--timeline-max): the calls that end "
		"from now on are left out of it",
		(const char *)arg, tl->max_events);
}

/* Run and trace PROGRAM into s->books. Returns 0, or the exit status when nothing ran. */
static int run_program(struct session *s)
{
	const struct options *o = &s->o;
	const struct calib *cal = &s->cal;
	enum clock_kind ck = o->clock, alt = other_clock(ck);
	double est[FS_N_CLOCKS] = {0, 0};
	int err;

	/* Both clocks are read at every stop; net times segment by segment when corrected. */
	s->books =
	    books_new(s->st.n, !o->count_only, !o->count_only && !o->no_correct && cal->batches);
	if (o->timeline) {
		/* every call as it closes, the -f processes' too (books_new_like) */
		s->tl =
		    timeline_new((acct_time_t)(o->timeline_min_us * 1e3 + 0.5), o->timeline_max);
		s->tl->on_full = say_timeline_full;
		s->tl->full_arg = (void *)o->timeline;
		books_record(s->books, s->tl);
	}
	if (o->report.alloc)
		books_alloc_keep(s->books); /* and the -f processes' (books_new_like) */
	est[ck] = (cal->f1_ns + cal->f2_ns) / 2;
	est[alt] = (cal->alt_f1_ns + cal->alt_f2_ns) / 2;
	if (s->trace.probes) {
		/*
		 * An event's cost is the probes' calibration: f2 at an entry (the
		 * caller's part), f1 at a return (the routine's); a stop's, the traps'.
		 */
		s->trace.probe_ns[ck] = cal->f2_ns;
		s->trace.probe_ns[alt] = cal->alt_f2_ns;
		s->trace.probe_ret_ns[ck] = cal->f1_ns;
		s->trace.probe_ret_ns[alt] = cal->alt_f1_ns;
		s->trace.probe_count_ns[ck] = cal->count_ns;
		s->trace.probe_count_ns[alt] = cal->alt_count_ns;
		if (!s->trace.go_program) { /* Go's probes: Go's own flat figures alone */
			s->trace.probe_round_ns[ck] = cal->round_f2_ns;
			s->trace.probe_round_ns[alt] = cal->alt_round_f2_ns;
			s->trace.probe_round_ret_ns[ck] = cal->round_f1_ns;
			s->trace.probe_round_ret_ns[alt] = cal->alt_round_f1_ns;
			s->trace.probe_round_count_ns[ck] = cal->round_count_ns;
			s->trace.probe_round_count_ns[alt] = cal->alt_round_count_ns;
		}
		if (s->cal_traps.batches) {
			est[ck] = (s->cal_traps.f1_ns + s->cal_traps.f2_ns) / 2;
			est[alt] = (s->cal_traps.alt_f1_ns + s->cal_traps.alt_f2_ns) / 2;
		}
	}
	/* what the stubs take of a measured stop's segment (the traps' calibration) */
	{
		const struct calib *ct = s->trace.probes ? &s->cal_traps : cal;

		if (!o->no_correct && ct->batches) {
			s->trace.seg_resid_ns[0] = ct->u_caller_ns;
			s->trace.seg_resid_ns[1] = ct->u_callee_ns;
		}
	}
	if (o->pid)
		err = trace_attach(&s->st, s->books, o->names_file ? &s->names : NULL,
				   o->exclude_file ? &s->exclude : NULL, &s->trace, est, &s->res);
	else
		err =
		    trace_run(s->path, o->argv, &s->st, s->books, o->names_file ? &s->names : NULL,
			      o->exclude_file ? &s->exclude : NULL, &s->trace, est, &s->res);
	if (err || !s->res.started) {
		/* Nothing was measured: the error has been said in one line. */
		return s->res.exit_status ? s->res.exit_status : EXIT_FS_ERROR;
	}
	if (o->n_libs) {
		if (o->names_file)
			warn_unmatched(&s->names, s->path, true);
		if (o->exclude_file)
			warn_unmatched(&s->exclude, s->path, true);
	}
	if (s->res.note[0] && s->res.detached)
		fs_info(1, "%s", s->res.note); /* as asked: no news */
	else if (s->res.note[0])
		fs_warn("%s", s->res.note);
	if (o->report.alloc && books_alloc_books(s->books)) {
		struct alloc_totals t;

		/* -l named other libraries than the allocator's */
		alloc_totals(books_alloc_books(s->books), &t);
		if (!t.allocs && !t.frees && !s->st.is_static)
			fs_warn("--alloc: no allocator call was seen: malloc is in libc.so.6: add "
				"-l libc");
	}
	return 0;
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

/* Add one process's section to p: its books grown to its routines first. */
/* The context-switch records lost in a traced process, into its facts. */
static void lost_facts(struct profile_facts *f, const struct trace_cs_lost *l)
{
	f->cs_lost_windows = l->windows;
	f->cs_lost_records = l->records;
	for (size_t k = 0; k < PROFILE_LOST_TIDS && k < TRACE_LOST_TIDS; k++)
		f->cs_lost_tids[k] = l->tids[k];
}

static void add_section(struct profile *p, const struct options *o, struct profile_facts *f,
			const double total_s[FS_N_CLOCKS], struct symtab *st, struct books *b,
			const struct trace_usage *u, const struct trace_samples *smp)
{
	struct profile_thread_usage *tu = xcalloc(u->n ? u->n : 1, sizeof(*tu));
	int rc;

	/* its threads' user and system time, as the kernel counted them */
	for (size_t i = 0; i < u->n; i++)
		tu[i] = (struct profile_thread_usage){.tid = u->threads[i].tid,
						      .user_s = u->threads[i].user_ns / 1e9,
						      .sys_s = u->threads[i].sys_ns / 1e9,
						      .elapsed_s = u->threads[i].elapsed_ns / 1e9};
	f->usage = tu;
	f->n_usage = u->n;
	f->n_cpus = u->n_cpus;
	/* count-only reads no CPU clock: its program time is the wall's */
	for (int c = 0; c < FS_N_CLOCKS; c++)
		f->total_s[c] = total_s[o->count_only ? CLOCK_KIND_WALL : c];
	f->count_only = o->count_only || f->count_only;
	/* Libraries loaded in a followed child may have grown the table. */
	books_grow(b, st->n);
	rc = profile_add_books(p, f, st, b);
	books_drop_views(b); /* the lanes' copies: the profile holds what they said */
	if (rc < 0)
		fs_warn("%s: the books disagree with the routines: no report", f->label);
	else if (smp->hz) /* --sample: its routines' time divided among their lines */
		profile_add_lines(p, p->n_sections - 1, st,
				  &(struct profile_samples){smp->hz, smp->refused, smp->n,
							    smp->outside, smp->lost, smp->full},
				  smp->hits, smp->n_hits);
	free(tu);
}

/*
 * The profile of the run (res, the program's books b, the calibration cal):
 * the program, then the processes and images followed (-f).
 */
static struct profile *build_profile(struct session *s, const struct trace_result *res,
				     struct books *b, const struct calib *cal,
				     uint64_t stops_measured)
{
	const struct options *o = &s->o;
	enum clock_kind ck = o->clock, alt = other_clock(ck);
	double f1[FS_N_CLOCKS], f2[FS_N_CLOCKS];
	struct profile *p;
	struct profile_facts f;
	char *label;

	f1[ck] = cal->f1_ns;
	f2[ck] = cal->f2_ns;
	f1[alt] = cal->alt_f1_ns;
	f2[alt] = cal->alt_f2_ns;
	p = profile_new(o->argv, f1, f2, stops_measured, !o->no_correct);
	f1[ck] = cal->df1_ns;
	f2[ck] = cal->df2_ns;
	f1[alt] = cal->alt_df1_ns;
	f2[alt] = cal->alt_df2_ns;
	profile_set_spread(p, f1, f2);
	p->ranked = s->rank.known;
	p->rank = s->rank.rank;
	p->size = s->rank.size;
	profile_set_libs(p, o->libs, o->n_libs);
	label = o->follow ? xasprintf("%s [pid %d]", s->path, res->pid) : xstrdup(s->path);
	f = (struct profile_facts){.label = label,
				   .pid = res->pid,
				   .exit_status = res->exit_status,
				   .term_signal = res->term_signal,
				   .count_only = res->counted_only,
				   .running = res->running,
				   .probes = res->probes,
				   .probe_events = res->probe_events,
				   .trap_calls = res->trap_calls,
				   .not_followed = res->not_followed,
				   .stripped = !s->st.has_symtab,
				   .needed = s->st.needed,
				   .n_needed = s->st.n_needed,
				   .note = res->note[0] ? res->note : NULL,
				   .attached = res->attached,
				   .detached = res->detached,
				   .active = res->active};
	for (int c = 0; c < FS_N_CLOCKS; c++) {
		f.trap_cost_s[c] = res->trap_cost_ns[c] / 1e9;
		f.overhead_all_s[c] = res->overhead_ns[c] / 1e9;
	}
	lost_facts(&f, &res->cs_lost);
	add_section(p, o, &f, res->total_s, &s->st, b, &res->usage, &res->samples);
	free(label);
	for (size_t i = 0; i < res->n_sections; i++) {
		const struct trace_section *sec = &res->sections[i];

		/* Images without symbols were followed for their children only; a
		 * forked copy that exec'ed before calling anything has nothing to say. */
		if (!sec->st->n || (sec->execed && !books_total_calls(sec->books)))
			continue;
		label = xasprintf("%s [pid %d]", sec->path, sec->pid);
		f = (struct profile_facts){.label = label,
					   .pid = sec->pid,
					   .exit_status = sec->exit_status,
					   .term_signal = sec->term_signal,
					   .count_only = sec->counted_only,
					   .running = sec->running,
					   .probes = sec->probes,
					   .probe_events = sec->probe_events,
					   .trap_calls = sec->trap_calls,
					   .not_followed = sec->not_followed,
					   .stripped = !sec->st->has_symtab,
					   .needed = sec->st->needed,
					   .n_needed = sec->st->n_needed,
					   .note = sec->note[0] ? sec->note : NULL};
		for (int c = 0; c < FS_N_CLOCKS; c++) {
			f.trap_cost_s[c] = sec->trap_cost_ns[c] / 1e9;
			f.overhead_all_s[c] = sec->overhead_ns[c] / 1e9;
		}
		lost_facts(&f, &sec->cs_lost);
		add_section(p, o, &f, sec->total_s, sec->st, sec->books, &sec->usage,
			    &sec->samples);
		free(label);
	}
	return p;
}

/*
 * Section i's report into out: after a blank line (gap), the text open (or
 * NULL), and before "]\n" (close). 0 or a negative errno.
 */
static int render(FILE *out, const struct profile *p, size_t i, const struct report_opts *ro,
		  bool gap, const char *open, bool close)
{
	int err;

	if (gap)
		fputc('\n', out);
	if (open)
		fputs(open, out);
	err = report_write(out, p, i, ro);
	if (close)
		fputs("]\n", out);
	return err;
}

/*
 * Section i's report to out with one write(2), so that the reports of MPI
 * ranks sharing a terminal never interleave (render says what goes around
 * it). 0 or a negative errno.
 */
static int write_whole(FILE *out, const struct profile *p, size_t i, const struct report_opts *ro,
		       bool gap, const char *open, bool close)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem)
		return -errno;
	err = render(mem, p, i, ro, gap, open, close);
	if (fclose(mem) != 0 && !err)
		err = -ENOMEM;
	if (!err)
		err = output_write_whole(out, buf, len);
	free(buf);
	return err;
}

/*
 * Every section's report into the files of -o, each file replaced whole
 * (output_replace: a reader never sees half a report, and a fortstat killed
 * before leaves the previous report whole); used by snapshots and by the
 * final report. Returns 0, or -1 when one could not be written (said).
 */
static int write_replacing(struct session *s, const struct profile *p)
{
	const struct options *o = &s->o;
	bool json = o->report.format == FMT_JSON;
	size_t n = p->n_sections;
	char **name = xcalloc(n ? n : 1, sizeof(*name));
	bool *done = xcalloc(n ? n : 1, sizeof(*done));
	size_t *secs = xcalloc(n ? n : 1, sizeof(*secs));
	int rc = 0;

	for (size_t i = 0; i < n; i++)
		name[i] = output_expand(o->output, s->rank.rank, p->sections[i].pid, NULL);
	for (size_t i = 0; i < n; i++) {
		char *buf = NULL;
		size_t len = 0, group = 0, k = 0;
		FILE *mem;
		bool renamed;
		int err = 0;

		if (done[i])
			continue;
		for (size_t j = i; j < n; j++)
			group += !strcmp(name[j], name[i]);
		mem = open_memstream(&buf, &len);
		if (!mem) {
			fs_error("%s: cannot write the report: %s", name[i], strerror(errno));
			rc = -1;
			break;
		}
		for (size_t j = i; j < n && !err; j++) {
			if (strcmp(name[j], name[i]))
				continue;
			done[j] = true;
			if (o->report.format == FMT_PPROF) {
				/* one profile for the group: gzipped messages do not concatenate */
				secs[k++] = j;
				continue;
			}
			err = render(mem, p, j, &o->report, k && !json,
				     json && group > 1 ? (k ? ",\n" : "[\n") : NULL,
				     json && group > 1 && k + 1 == group);
			k++;
		}
		if (o->report.format == FMT_PPROF && !err)
			err = report_write_pprof(mem, p, secs, k, &o->report);
		if (fclose(mem) != 0 && !err)
			err = -ENOMEM;
		if (!err)
			err = output_replace(name[i], buf, len, &renamed);
		if (err) {
			fs_error("%s: cannot write the report: %s", name[i], strerror(-err));
			rc = -1;
		}
		free(buf);
	}
	for (size_t i = 0; i < n; i++)
		free(name[i]);
	free(name);
	free(done);
	free(secs);
	return rc;
}

/* The flame graph of the program's section into `path`, replaced whole: 0 or -errno. */
static int write_svg_whole(const char *path, const struct profile *p,
			   const struct report_opts *opts)
{
	char *buf = NULL;
	size_t len = 0;
	bool renamed;
	FILE *mem = open_memstream(&buf, &len);
	int err;

	if (!mem)
		return -errno;
	err = report_write_svg(mem, p, 0, opts);
	if (fclose(mem) != 0 && !err)
		err = -ENOMEM;
	if (!err)
		err = output_replace(path, buf, len, &renamed);
	free(buf);
	return err;
}

/*
 * Every section's report where -o says, and the flame graph of the
 * program's. Returns 0, or -1 when one could not be written (said).
 */
static int write_reports(struct session *s, const struct profile *p, bool snapshot)
{
	const struct options *o = &s->o;
	bool json = o->report.format == FMT_JSON;
	FILE **to = xcalloc(p->n_sections ? p->n_sections : 1, sizeof(*to));
	bool *again = xcalloc(p->n_sections ? p->n_sections : 1, sizeof(*again));
	/* -o's files are replaced whole, by snapshots and by the final report */
	bool replacing = o->output != NULL;
	int err, rc = 0;

	fflush(stdout);
	if (!replacing)
		progress_erase(); /* the report may go to the terminal */
	if (replacing)
		rc = write_replacing(s, p);
	for (size_t i = 0; i < p->n_sections && !replacing; i++)
		to[i] = outputs_for(&s->outs, p->sections[i].pid, &again[i]);
	for (size_t i = 0; i < p->n_sections; i++) {
		size_t before = 0, after = 0;

		if (!to[i])
			continue;
		for (size_t j = 0; j < p->n_sections; j++)
			if (to[j] == to[i]) {
				before += j < i;
				after += j > i;
			}
		err = write_whole(to[i], p, i, &o->report, again[i] && !json,
				  json && before + after ? (before ? ",\n" : "[\n") : NULL,
				  json && before + after && !after);
		if (err < 0) {
			fs_error("%s: cannot write the report: %s",
				 o->output ? o->output : "stderr", strerror(-err));
			rc = -1;
		}
	}
	err = o->svg && p->n_sections && !snapshot ? write_svg_whole(o->svg, p, &o->report) : 0;
	if (err < 0) {
		fs_error("%s: cannot write the flame graph: %s", o->svg, strerror(-err));
		rc = -1;
	}
	free(to);
	free(again);
	return rc;
}

/*
 * --timeline: the calls of the program and of every process followed, as
 * Chrome trace-event JSON in one file (%p: the program's pid), replaced
 * whole (the bound was said when reached, say_timeline_full). Returns 0, or -1
 * when the file could not be written (said).
 */
static int write_timeline(struct session *s)
{
	const struct trace_result *res = &s->res;
	struct chrome_proc *procs = xcalloc(res->n_sections + 1, sizeof(*procs));
	size_t n = 0, len = 0;
	char *name = output_expand(s->o.timeline, s->rank.rank, res->pid, NULL), *buf = NULL;
	FILE *mem = open_memstream(&buf, &len);
	bool renamed;
	int err;

	procs[n++] =
	    (struct chrome_proc){books_timeline_group(s->books), res->pid, s->path, &s->st};
	for (size_t i = 0; i < res->n_sections; i++) {
		const struct trace_section *sec = &res->sections[i];

		procs[n++] = (struct chrome_proc){books_timeline_group(sec->books), sec->pid,
						  sec->path, sec->st};
	}
	err = mem ? chrome_write(mem, s->tl, procs, n) : -errno;
	if (mem && fclose(mem) != 0 && !err)
		err = -ENOMEM;
	if (!err)
		err = output_replace(name, buf, len, &renamed);
	if (err)
		fs_error("%s: cannot write the timeline: %s", name, strerror(-err));
	free(buf);
	free(name);
	free(procs);
	return err ? -1 : 0;
}

/* A section's program: its label less the " [pid N]" that -f adds. */
static size_t program_len(const char *label)
{
	const char *b = strstr(label, " [pid ");

	return b ? (size_t)(b - label) : strlen(label);
}

/* Warnings a and b alike but for their figures (digits and points). */
static bool same_words(const char *a, const char *b)
{
	for (;;) {
		while (*a && (isdigit((unsigned char)*a) || *a == '.'))
			a++;
		while (*b && (isdigit((unsigned char)*b) || *b == '.'))
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++, b++;
	}
}

/*
 * The reports' warnings (report_warning: times that cannot be trusted, with
 * the way forward) on stderr too, once each, when the reports went to the
 * files of -o: the table's footer and JSON's "warnings" hold them there,
 * CSV and the other views do not, and the user watches the terminal. With
 * -f, a warning that a program's earlier process had (but for its figures:
 * make runs as, and gcc, once a file) is not said again; the processes it
 * was not said for are counted in one line after the warnings: their own
 * sections of the reports hold it.
 */
static void say_warnings(const struct session *s, const struct profile *p)
{
	char **said;  /* a section's warning, when it was said */
	size_t *more; /* ... and how many others it stood for */

	if (!s->o.output || !p->n_sections)
		return; /* the reports are on stderr, warnings and all */
	said = xcalloc(p->n_sections, sizeof(*said));
	more = xcalloc(p->n_sections, sizeof(*more));
	for (size_t i = 0; i < p->n_sections; i++) {
		const char *l = p->sections[i].label;
		size_t k = 0;

		said[i] = report_warning(p, i, &s->o.report);
		if (!said[i])
			continue;
		while (k < i && !(said[k] && program_len(p->sections[k].label) == program_len(l) &&
				  !strncmp(p->sections[k].label, l, program_len(l)) &&
				  same_words(said[k], said[i])))
			k++;
		if (k < i) {
			more[k]++;
			free(said[i]);
			said[i] = NULL;
		} else if (p->n_sections > 1) {
			fs_warn("%s: %s", l, said[i]);
		} else {
			fs_warn("%s", said[i]);
		}
	}
	for (size_t k = 0; k < p->n_sections; k++) {
		if (more[k])
			fs_warn("%.*s: the same for %zu more process%s of this program (%s)",
				(int)program_len(p->sections[k].label), p->sections[k].label,
				more[k], more[k] > 1 ? "es" : "",
				more[k] > 1 ? "their own sections of the report have their figures"
					    : "its own section of the report has its figures");
		free(said[k]);
	}
	free(said);
	free(more);
}

/* trace_snapshot_fn: a report of the run so far, where the final one will go. */
static void on_snapshot(const struct trace_result *res, struct books *books, void *arg)
{
	struct session *s = arg;
	struct calib cal = s->cal; /* the run's own stays as it is until the end */
	int verbose = fs_verbose;
	struct profile *p;
	uint64_t stops;

	fs_verbose = 0; /* the calibration's lines are said once, at the end */
	stops = adjust_calibration(&s->o, res, &cal);
	fs_verbose = verbose;
	p = build_profile(s, res, books, &cal, stops);
	write_reports(s, p, true);
	profile_free(p);
}

/* trace_progress_fn: the status line. */
static void on_progress(const struct trace_progress *pg, void *arg)
{
	(void)arg;
	progress_draw(pg);
}

/* Close the reports' files and free everything; rc, or EXIT_FS_ERROR when a file failed. */
static int finish(struct session *s, int rc)
{
	if (outputs_close(&s->outs) < 0 && rc == 0)
		rc = EXIT_FS_ERROR;
	trace_result_free(&s->res);
	books_free(s->books);
	timeline_free(s->tl);
	names_free(&s->names);
	names_free(&s->exclude);
	symtab_free(&s->st);
	free(s->path);
	return rc;
}

/*
 * The table's width: --width's; without it the terminal's when the reports
 * go to fd (no -o) and that is one; else 0, no limit (full names in a
 * file or a pipe: what a script reads, as the other formats keep them).
 */
static size_t report_width(const struct options *o, int fd)
{
	struct winsize ws;

	if (o->report.width || o->output || !isatty(fd))
		return o->report.width;
	if (ioctl(fd, TIOCGWINSZ, &ws) < 0 || !ws.ws_col)
		return 0;
	return ws.ws_col;
}

int main(int argc, char **argv)
{
	struct session s = {0};
	struct profile *p;
	int rc;

	rc = cli_parse(argc, argv, &s.o);
	if (rc >= 0)
		return rc;
	fs_verbose = s.o.verbose;
	/* the reports go to standard error; --merge's to standard output */
	s.o.report.width = report_width(&s.o, s.o.merge ? STDOUT_FILENO : STDERR_FILENO);
	rank_detect(&s.rank);
	if (check_binary(&s.o, s.rank.rank))
		return EXIT_FS_ERROR;
	if (s.o.merge)
		return merge_command(s.o.argv, (size_t)s.o.argc, &s.o.report, s.o.output, s.o.svg);
	if (s.rank.known)
		fs_info(1, "rank %d of %d (%s)", s.rank.rank, s.rank.size, s.rank.source);
	else if (s.o.output && output_fmt_has(s.o.output, 'r'))
		fs_warn("-o %s: no MPI rank in the environment: %%r is 0", s.o.output);
	if (!s.rank.known && s.o.timeline && output_fmt_has(s.o.timeline, 'r'))
		fs_warn("--timeline=%s: no MPI rank in the environment: %%r is 0", s.o.timeline);
	s.trace = cli_trace_opts(&s.o);
	/* Live reports: snapshots on SIGUSR1 (and --interval), the status line. */
	trace_catch_snapshot_signal();
	s.trace.on_snapshot = on_snapshot;
	if (s.o.progress > 0 || (s.o.progress < 0 && isatty(STDERR_FILENO)))
		s.trace.on_progress = on_progress;
	s.trace.live_arg = &s;
	rc = load_program(&s);
	if (!rc)
		rc = open_outputs(&s);
	if (rc)
		return finish(&s, rc);
	if (s.trace.probes && trace_is_go(&s.st) && (s.o.pid || !trace_go_regabi(&s.st))) {
		/*
		 * A Go program launched takes the probes (exit probes at its
		 * routines' rets, golang.c); attached to, or built before Go
		 * 1.17 (no goroutine in R14, which the probes read), the traps.
		 * Said as a warning when the probes were asked for, under -v
		 * otherwise.
		 */
		const char *why = s.o.pid ? "not for a Go program attached to: traps instead"
					  : "not for a Go program before Go 1.17 (no goroutine in "
					    "R14): traps instead";

		if (s.o.mech_asked)
			fs_warn("--probes: %s", why);
		else
			fs_info(1, "--probes: %s", why);
		s.trace.probes = false;
	}
	s.trace.go_program = s.trace.probes && trace_is_go(&s.st);
	calibrate(&s);
	rc = run_program(&s);
	progress_erase();
	if (rc)
		return finish(&s, rc);
	p = build_profile(&s, &s.res, s.books, &s.cal, adjust_calibration(&s.o, &s.res, &s.cal));
	rc = s.res.exit_status;
	/* The program's own failure status stands; a lost report fails a run that went well. */
	if (write_reports(&s, p, false) < 0 && rc == 0)
		rc = EXIT_FS_ERROR;
	if (s.tl && write_timeline(&s) < 0 && rc == 0)
		rc = EXIT_FS_ERROR;
	say_warnings(&s, p);
	profile_free(p);
	return finish(&s, rc);
}
