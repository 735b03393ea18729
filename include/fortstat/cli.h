/* SPDX-License-Identifier: GPL-2.0-or-later */
/* cli.h - command-line options, usage, and finding PROGRAM. */
#ifndef FORTSTAT_CLI_H
#define FORTSTAT_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "fortstat/clockkind.h"
#include "fortstat/report.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"

#define CLI_MAX_LIBS TRACE_MAX_LIBS /* -l patterns */

struct options {
	const char *names_file;		/* -n */
	const char *exclude_file;	/* -x */
	bool all;			/* --all */
	const char *libs[CLI_MAX_LIBS]; /* -l: shared libraries to time too (patterns) */
	size_t n_libs;
	bool follow;	    /* -f: time forked children and exec'ed images too */
	const char *output; /* -o */
	struct report_opts
	    report;		/* --format, --sort, -z, --inclusive, --graph, --lines, --threads */
	const char *svg;	/* --svg: flame graph file, or NULL */
	const char *timeline;	/* --timeline: trace-event JSON file, or NULL */
	double timeline_min_us; /* --timeline-min: shorter calls left out */
	size_t timeline_max;	/* --timeline-max: calls kept at most */
	bool no_correct;	/* --no-correct: gross times */
	bool probes;		/* --probes (--traps: false, the default) */
	bool mech_asked;	/* --probes, --traps or FORTSTAT_MECHANISM said which */
	uint64_t throttle_calls; /* --throttle=CALLS,USEC (0: --no-throttle) */
	double throttle_usec;
	unsigned sample_hz;    /* --sample[=HZ]: sampled at this rate (0: not) */
	bool count_only;       /* -c */
	enum clock_kind clock; /* --clock */
	enum pin_mode pin;     /* --pin */
	int verbose;	       /* -v (repeatable) */
	bool merge;	       /* --merge: argv holds the FILEs (argc may be 0) */
	int progress;	       /* --progress 1, --no-progress 0, -1: when stderr is a terminal */
	double interval_s;     /* --interval: a snapshot every interval_s seconds, 0: none */
	int pid;	       /* -p: attach to this process instead of running PROGRAM (0: none) */
	double duration;       /* --duration: with -p, detach after this many seconds (0: never) */
	char **argv;	       /* PROGRAM and its arguments, or --merge's FILEs (main's argv);
				* with -p: empty (argc 0) */
	int argc;
};

/*
 * Parse the command line. Returns -1 to go on and run, or an exit status to
 * exit with at once (0 after --help/--version, EXIT_FS_ERROR after a usage
 * error, which has been reported in one line).
 */
int cli_parse(int argc, char **argv, struct options *o);

/* Write the --help text. */
void cli_usage(FILE *out);

/*
 * Find PROGRAM as a shell would: a name with a '/' is used as it is, else
 * each PATH directory in turn. On success returns 0 and a malloc'ed path in
 * *path. Returns EXIT_FS_NOTFOUND or EXIT_FS_CANNOT after printing one line.
 */
int cli_find_program(const char *name, char **path);

/* What the tracer needs of the options (the live reports' callbacks are main's to set). */
struct trace_opts cli_trace_opts(const struct options *o);

#endif
