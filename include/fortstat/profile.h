/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * profile.h - the report model: what one run of fortstat measured, as plain
 * data that every view (table, CSV, JSON, folded, callgrind, SVG) reads. It
 * is built from the books of each traced process (profile_add_books), or by
 * anything else that knows the same facts (merging the JSON reports of
 * several runs or MPI ranks). A profile owns all its memory: it outlives the
 * books and the symbol tables it was built from.
 *
 * Times are nanoseconds (acct_time_t) unless the name ends in _s (seconds,
 * double) or _ns (double). Every time has a value on each clock, indexed by
 * enum clock_kind (CLOCK_KIND_CPU: the thread's CPU time, CLOCK_KIND_WALL);
 * which clock a view shows is a report option (report_opts.clock), not part
 * of the profile. "Shown" times are what the views print: net of the stops'
 * overhead when the profile corrects (profile.correct; from the net books
 * when they were kept, else FTN4TRA's formula with f1 and f2), gross with
 * --no-correct. "Gross" times are the clock's advance as it was read. In a
 * count-only section (profile_section.count_only) no time means anything.
 *
 * A fortstat JSON report holds one section on its "clock": a routine's
 * "calls", "self_s" (self), "gross_self_s", "total_s" (total),
 * "gross_total_s", "self_uncertainty_s" (self_unc), and the same four times
 * on each clock in its "cpu" and "wall" objects; "f1_ns", "f2_ns",
 * "stops_measured", "mechanism" ("traps" or "probes"), "probe_events",
 * "trap_calls", "trap_cost_s", "overhead_removed" (correct),
 * "overhead_uncertainty_s", "gross_total_time_s" (total_s), "warnings"
 * (trust.h); an arc's "time_s" and "self_s"; per-thread results with
 * --threads (every key: the man page's JSON REPORT, checked by
 * tests/e2e/jsonkeys.sh). Not in it: calls_made, the calling contexts, and
 * a routine's overhead when it was not removed.
 */
#ifndef FORTSTAT_PROFILE_H
#define FORTSTAT_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "fortstat/account.h"
#include "fortstat/alloc.h"
#include "fortstat/clockkind.h"

struct books;
struct symtab;
struct lines_hit;

#define PROFILE_NONE ((uint32_t)-1) /* "no routine": the root of a stack, or no parent */
#define PROFILE_LOST_TIDS 4	    /* threads named for lost switch records */

/* What a routine is (the same in every set of results of a section). */
struct profile_routine {
	char *name;	/* display name: source name, else symbol name, else "0x<addr>" */
	char *module;	/* the object it comes from (library path), or NULL: the program */
	char **aliases; /* its symbol names, n_aliases of them (may be 0) */
	size_t n_aliases;
	uint64_t addr;	       /* its address in the symbol table (run-time for libraries) */
	char *file;	       /* source file, or NULL when unknown */
	int line;	       /* source line, 0 when unknown */
	bool mainline;	       /* the mainline (marked '*') */
	bool selected;	       /* chosen for timing: only selected routines are shown */
	uint64_t throttled_at; /* counted only after this many calls (--throttle), 0: timed */
	bool calls_lower;      /* its calls are a lower bound: uncounted once throttled (its
				* entry's int3 removed, --throttle) */
	bool throttle_carried; /* counted only from its first call: throttled in an earlier
				* exec of its file (-f, --throttle), throttled_at 0 */
};

/* A routine's results in one set (the whole process, or one thread). */
struct profile_stats {
	uint64_t calls;			/* entries, counted and chained ones too */
	uint64_t calls_made;		/* calls it made to timed routines that returned to it */
	acct_time_t self[FS_N_CLOCKS];	/* shown self time, ns */
	acct_time_t total[FS_N_CLOCKS]; /* shown inclusive time, ns (recursion once) */
	acct_time_t gross_self[FS_N_CLOCKS];  /* gross self time, ns */
	acct_time_t gross_total[FS_N_CLOCKS]; /* gross inclusive time, ns */
	/*
	 * The stops' overhead in its self time, ns: gross self less the net self
	 * (net books when kept and correcting, else the formula), whether it was
	 * removed (correct) or only estimated (--no-correct). Negative when the
	 * calibration's factors are.
	 */
	int64_t overhead[FS_N_CLOCKS];
	/*
	 * How sure the shown self time is, ns: the uncertainty of the overhead
	 * removed from it (acct_net_uncertainty of its calls and calls_made
	 * with the profile's df1, df2); 0 when nothing was removed.
	 */
	double self_unc[FS_N_CLOCKS];
	bool incomplete; /* its clock still ran when its thread or process ended */
};

/* Calls from one routine to another, and the callee's time along them. */
struct profile_arc {
	uint32_t caller; /* routine index, or PROFILE_NONE (called from no timed routine) */
	uint32_t callee; /* routine index */
	uint64_t calls;
	/*
	 * The callee's shown inclusive and self time in the calls along this
	 * arc, seconds: from the net books when kept (and correcting), else the
	 * arc's share of the gross time, scaled as the callee's shown time.
	 */
	double time_s[FS_N_CLOCKS];
	double self_s[FS_N_CLOCKS];
};

/*
 * A node of the calling-context tree (as struct acct_node): node 0 is the
 * root (routine and parent PROFILE_NONE); every other node's parent has a
 * smaller index; a path holds each routine at most once (recursion folded).
 */
struct profile_node {
	uint32_t parent;	       /* node index, PROFILE_NONE for the root */
	uint32_t routine;	       /* routine index, PROFILE_NONE for the root */
	uint64_t calls;		       /* entries into this context */
	uint64_t calls_made;	       /* calls made from it to timed routines */
	acct_time_t self[FS_N_CLOCKS]; /* shown self time in this context, ns */
};

/*
 * --merge: one quantity of a routine over the inputs (calls, or seconds on
 * the inputs' clock), as they were read: over the inputs that have the
 * routine (an input without it counts 0 there, which the views apply).
 */
struct profile_spread {
	double min, max, sum;
	uint32_t imax; /* the input of the max */
	uint32_t seen; /* inputs that have the routine */
};

/* --merge: a routine's calls, self and inclusive time over the inputs. */
struct profile_merged {
	struct profile_spread calls, self, total;
};

/* --merge: one report merged: its file, and its MPI rank (-1: none). */
struct profile_input {
	char *file;
	int rank;
};

/*
 * User and system CPU time as the kernel counted them (usage.h), and the
 * elapsed (wall) time they were counted over: a thread's from when fortstat
 * first saw it to its exit; a process's, its threads' sums over its time.
 */
struct profile_usage {
	bool known; /* measured (not: a report merged, a thread not read) */
	double user_s, sys_s, elapsed_s;
};

/* One thread's usage, with its id (profile_facts). */
struct profile_thread_usage {
	int tid;
	double user_s, sys_s, elapsed_s;
};

/* One set of results: a whole process (tid 0), or one of its threads. */
struct profile_set {
	int tid;		    /* the thread's id, 0 for the whole process */
	struct profile_usage usage; /* its CPU time as the kernel counted it */
	struct profile_stats *r;    /* per routine, n_routines of the section */
	struct profile_arc *arcs;   /* in no particular order */
	size_t n_arcs;
	struct profile_node *nodes; /* at least the root when built from books */
	size_t n_nodes;
};

/* --sample: n samples of a routine at one of its source lines. */
struct profile_line {
	uint32_t routine; /* routine index */
	char *file;	  /* source file, NULL: not known (then line 0) */
	int line;
	uint64_t n;
	bool callees; /* not a line: the untimed code it called (FORTSTAT's folding) */
};

/* --sample: what was sampled in a section (hz 0: nothing was asked). */
struct profile_samples {
	unsigned hz;	  /* the rate asked for */
	bool refused;	  /* the kernel refused: nothing was sampled */
	uint64_t n;	  /* samples read */
	uint64_t outside; /* ... in no timed routine's code (lines.h's rule) */
	uint64_t lost;	  /* samples the kernel said it dropped */
	bool full;	  /* a ring was found full: more may have been dropped */
};

/* One traced process image: the program, or with -f a followed process or image. */
struct profile_section {
	char *label;	 /* what the views call it: the program's path, "path [pid N]" with -f */
	int pid;	 /* its process id */
	int exit_status; /* its exit status, or 128+N when killed by signal N; 0 when it exec'ed */
	int term_signal; /* N when killed by signal N, else 0 */
	/*
	 * Its time on each clock, gross, seconds (with -c the wall clock's on
	 * both: no CPU clock is read). The views show it less the overhead
	 * summed over the selected routines when the profile corrects.
	 */
	double total_s[FS_N_CLOCKS];
	bool count_only;       /* calls were counted, not timed: no time is meaningful */
	bool running;	       /* a snapshot: it still ran (exit_status means nothing yet) */
	bool probes;	       /* its calls were recorded in-process (--probes), not by stops */
	uint64_t probe_events; /* ... how many entries and returns (calls with -c) */
	/*
	 * Calls of timed routines whose entry was a ptrace stop (with the
	 * traps: every call), and what their stops cost on each clock, seconds
	 * (removed with the overhead when the profile corrects).
	 */
	uint64_t trap_calls;
	double trap_cost_s[FS_N_CLOCKS];
	/*
	 * Processes it started that were let go untimed (without -f: forked
	 * children, vfork children that exec'ed): in no section.
	 */
	uint64_t not_followed;
	/*
	 * The overhead taken off its threads' clocks in all, seconds: in the
	 * timed routines (each routine's gross less its net time) and outside
	 * them, in the code that calls them (then part of the unaccounted
	 * time). The views remove the larger of it and the routines' sum from
	 * the program's time; 0 when unknown (a merge of old reports).
	 */
	double overhead_all_s[FS_N_CLOCKS];
	/*
	 * Context-switch records the kernel dropped: the stops after which a
	 * thread's CPU times were spread over elapsed time, the records, the
	 * first threads (0: none).
	 */
	uint64_t cs_lost_windows, cs_lost_records;
	int cs_lost_tids[PROFILE_LOST_TIDS];
	/*
	 * The program has no symbol table of its own (stripped: its routines,
	 * if any, are the few it exports), and the libraries it names
	 * (DT_NEEDED, n_needed of them): what the report's warning suggests.
	 */
	bool stripped;
	char **needed;
	size_t n_needed;
	/*
	 * The clocks this section has times of: both for a traced run; a clock
	 * not known (a report that had one clock only) has zero times.
	 */
	bool clock_known[FS_N_CLOCKS];
	char *note;    /* one line about how it ended, or NULL */
	int n_cpus;    /* the CPUs the program could run on (utilisation's), 0: unknown */
	bool attached; /* -p: a running process (pid), timed from the attach */
	bool detached; /* ... and let go before it ended (its status is unknown) */
	char *active;  /* -p: the routines its threads were in at attach, ", "-separated, or NULL */
	struct profile_routine *routines; /* n_routines, index as in its symbol table */
	size_t n_routines;
	/*
	 * --sample: what was sampled, and each routine's samples by source line:
	 * routine i's are lines[line_at[i] .. line_at[i + 1]), most first
	 * (line_at NULL: none, profile_add_lines).
	 */
	struct profile_samples samples;
	struct profile_line *lines;
	size_t n_lines;
	size_t *line_at;
	/*
	 * --alloc: each routine's storage (n_routines of them; NULL: not
	 * measured) and the process's totals, its peak (alloc.h).
	 */
	struct alloc_routine *alloc;
	struct alloc_totals alloc_total;
	struct alloc_ctx *alloc_ctx; /* ... their calling contexts (alloc.h), n_alloc_ctx */
	size_t n_alloc_ctx;
	/*
	 * --merge: each routine's spread over the inputs (n_routines of them;
	 * NULL: one run), beside `all`, which then holds the sums: calls, and
	 * times on the inputs' clock (profile.merged_clock).
	 */
	struct profile_merged *merged;
	struct profile_set all;	     /* every thread's results together */
	struct profile_set *threads; /* each thread's, in order of first event */
	size_t n_threads;
};

/* What one run of fortstat measured: the run's facts and its sections. */
struct profile {
	char **argv;  /* PROGRAM's argv, NULL-terminated (owned; NULL: unknown) */
	bool correct; /* shown times are net of the overhead (false: --no-correct) */
	/* The stops' overhead on each clock, ns: per entry (f1) and per call made (f2). */
	double f1_ns[FS_N_CLOCKS];
	double f2_ns[FS_N_CLOCKS];
	uint64_t stops_measured; /* segments whose measured cost gave f1 = f2; 0: calibration */
	/* How well f1 and f2 are known, ns (calib.h's spreads; 0: unknown, profile_set_spread). */
	double df1_ns[FS_N_CLOCKS];
	double df2_ns[FS_N_CLOCKS];
	struct profile_section *sections; /* the program first; with -f the others follow */
	size_t n_sections;
	bool ranked;	/* fortstat ran as one rank of an MPI job (rank.h): */
	int rank, size; /* its rank, and the job's size (0: unknown) */
	char **libs;	/* the -l patterns given (profile_set_libs; NULL: none) */
	size_t n_libs;
	/*
	 * --merge: the reports merged (n_inputs of them; 0: one run), the
	 * clock they named (NULL: none said), whether one had no calling
	 * contexts ("stacks": a report of an older fortstat).
	 */
	struct profile_input *inputs;
	size_t n_inputs;
	char *merged_clock;
	bool merged_no_stacks;
};

/* The facts of one section that the books do not hold (see profile_section). */
struct profile_facts {
	const char *label;
	int pid;
	int exit_status;
	int term_signal;
	double total_s[FS_N_CLOCKS];
	bool count_only;
	bool running; /* a snapshot of a process still running */
	bool probes;  /* as in profile_section */
	uint64_t probe_events;
	uint64_t trap_calls;
	double trap_cost_s[FS_N_CLOCKS];
	double overhead_all_s[FS_N_CLOCKS];	   /* as in profile_section */
	uint64_t not_followed;			   /* as in profile_section */
	uint64_t cs_lost_windows, cs_lost_records; /* as in profile_section */
	int cs_lost_tids[PROFILE_LOST_TIDS];
	bool stripped;
	char *const *needed; /* n_needed, may be NULL */
	size_t n_needed;
	const char *note;	 /* may be NULL */
	bool attached, detached; /* as in profile_section */
	const char *active;	 /* may be NULL */
	/*
	 * Each thread's usage (n_usage of them; NULL: not measured): the
	 * process's is their sum over total_s[CLOCK_KIND_WALL]; a thread's
	 * results get theirs by tid (summed when a tid comes twice).
	 */
	const struct profile_thread_usage *usage;
	size_t n_usage;
	int n_cpus;
};

/*
 * A new profile with no section: argv copied (may be NULL), f1/f2 per clock
 * (ns), stops_measured and correct as in struct profile. Never NULL.
 */
struct profile *profile_new(char *const *argv, const double f1_ns[FS_N_CLOCKS],
			    const double f2_ns[FS_N_CLOCKS], uint64_t stops_measured, bool correct);
void profile_free(struct profile *p);

/*
 * How well f1 and f2 are known on each clock, ns (their spread over the
 * calibration's batches): the sections added after it carry each routine's
 * uncertainty (profile_stats.self_unc).
 */
void profile_set_spread(struct profile *p, const double df1_ns[FS_N_CLOCKS],
			const double df2_ns[FS_N_CLOCKS]);

/* The -l patterns given (n of them, copied): what the report's warning leaves out. */
void profile_set_libs(struct profile *p, const char *const *libs, size_t n);

/*
 * Add a section built from `b` (routine i of b is routine i of st) with the
 * facts f (strings copied): per routine, arc, calling context and thread its
 * shown and gross times on both clocks, as struct profile_stats says.
 * Returns 0, or -EINVAL when st and b disagree on the number of routines.
 */
int profile_add_books(struct profile *p, const struct profile_facts *f, const struct symtab *st,
		      const struct books *b);

/*
 * --alloc: the storage of the last section added, from alloc books m (its
 * routines the section's; NULL: nothing). The allocators themselves
 * (RT_ALLOC) are never selected rows.
 */
void profile_set_alloc(struct profile *p, const struct alloc_books *m);

/*
 * As profile_add_books, from accounting states: gross[c] the gross books of
 * clock c (NULL: that clock is not known; at least one is; the same state
 * twice for counts only), net[c] the net books of clock c or NULL (then the
 * formula; not used with --no-correct). All must have st->n routines, else
 * -EINVAL; a net state whose arcs or calling contexts do not match its
 * gross one's is not used for them.
 */
int profile_add_accts(struct profile *p, const struct profile_facts *f, const struct symtab *st,
		      const struct acct *const gross[FS_N_CLOCKS],
		      const struct acct *const net[FS_N_CLOCKS]);

/*
 * --sample: section sec's samples (s) and the hits (routine, offset in its
 * code: lines.h) made lines of its routines, by lines_attribute: the
 * program's own routines' (link-time addresses in st) with the line table
 * of st->path's DWARF, a library's (-l) at no line. Hits whose routine is
 * not one of the section's are left out. Returns 0 or -EINVAL (no section sec).
 */
int profile_add_lines(struct profile *p, size_t sec, const struct symtab *st,
		      const struct profile_samples *s, const struct lines_hit *hits, size_t n);

#endif
