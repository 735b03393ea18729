/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.h - the ptrace engine: launch PROGRAM, patch its selected routines
 * with int3, turn stops into accounting events, and report how it ended.
 */
#ifndef FORTSTAT_TRACE_H
#define FORTSTAT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

struct symtab;
struct acct;
struct options;
struct names;

/* With -f: a process other than the program, or an image exec'ed. */
struct trace_section {
	int pid;
	char *path;	     /* its program (owned) */
	struct symtab *st;   /* its routines (owned when own_st; else the program's) */
	bool own_st;
	struct acct *acct;   /* owned */
	struct acct *acct2;  /* owned, may be NULL */
	struct acct *net, *net2; /* owned, may be NULL: as acct, acct2 on net times */
	int exit_status;     /* status, or 128+N; 0 when it exec'ed on */
	int term_signal;
	double total_time_s, total_time2_s;
	bool counted_only;
	bool execed;	     /* it ended by exec'ing a new image (a section follows) */
	char note[160];
};

struct trace_result {
	int exit_status;     /* what fortstat exits with: status, or 128+N */
	int term_signal;     /* N when the program was killed by signal N */
	bool started;	     /* PROGRAM was exec'ed (there is something to report) */
	double total_time_s; /* program time on the chosen clock */
	double total_time2_s; /* program time on the other clock */
	size_t n_patched;    /* routines patched */
	size_t n_refused;    /* selected routines left unpatched (see -v) */
	bool counted_only;   /* calls were counted, not timed (a CET shadow stack) */
	char note[160];	     /* how the run ended, when it is worth a line */
	int pid;	     /* the program's process id */
	/*
	 * What the stops cost each segment, measured in this run (acct_ovh_estimate,
	 * ns) on the CPU and the wall clock, over seg_n segments (0: not measured).
	 */
	uint64_t seg_n;
	double seg_cpu_ns, seg_wall_ns;
	struct trace_section *sections; /* -f: the other processes and images */
	size_t n_sections;
};

/* Free what res owns (sections). */
void trace_result_free(struct trace_result *res);

/*
 * Run PROGRAM (`path`, with `argv` as its argv and fortstat's environment),
 * time the RT_SELECTED routines of `st` (routine i of st is routine i of
 * acct) and feed `acct` (on the clock that options choose) and `acct2` (on
 * the other clock; may be NULL) until the program ends. Routines that cannot be
 * patched lose RT_SELECTED. With -l (o->libs), routines of the matching
 * shared libraries are chosen with `names`/`exclude` (may be NULL) as they
 * load, appended to `st`, and both accounting states grow to match.
 * Returns 0 when the program ran (res filled), or a negative errno when it
 * could not be started or traced (an error line has been printed).
 */
/*
 * Net times, segment by segment: two more accounting states fed the same
 * events on each thread's clocks less the overhead of every stop so far --
 * measured (trace_result.seg_*) where the stop had timestamps, else the
 * estimate est_ns (est2_ns on the other clock) a stop.
 */
struct trace_net {
	struct acct *acct;  /* on the chosen clock */
	struct acct *acct2; /* on the other (may be NULL) */
	double est_ns, est2_ns;
};

int trace_run(const char *path, char *const argv[], struct symtab *st, struct acct *acct,
	      struct acct *acct2, struct names *names, struct names *exclude,
	      const struct options *o, const struct trace_net *net, struct trace_result *res);

#endif
