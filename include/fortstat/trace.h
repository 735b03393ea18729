/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trace.h - the ptrace engine (src/tracer/): launch PROGRAM, patch its
 * selected routines (entry stubs or int3), turn every stop into events of
 * its process's books, follow threads, forks, execs and libraries, and say
 * how the run ended.
 */
#ifndef FORTSTAT_TRACE_H
#define FORTSTAT_TRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stddef.h>

#include "fortstat/clockkind.h"
#include "fortstat/lines.h"

struct symtab;
struct books;

/* Where fortstat and the program run (--pin). */
enum pin_mode {
	PIN_AUTO,   /* one CPU while the program has one thread, unless it uses OpenMP/TBB */
	PIN_ALWAYS, /* one CPU for fortstat and every thread of the program */
	PIN_NEVER,  /* leave CPU placement to the scheduler */
};

#define TRACE_MAX_LIBS 32 /* -l patterns */

struct trace_result;

/* The run so far, for a status line (trace_opts.on_progress). */
struct trace_progress {
	double elapsed_s;	/* wall time since the program's exec */
	uint64_t calls;		/* calls counted so far, every process */
	size_t routines_called; /* the program's timed routines called at least once */
	size_t routines_timed;	/* the program's routines patched for timing */
	size_t threads;		/* threads alive now, every process */
	size_t processes;	/* processes alive now */
};

/*
 * A snapshot of the run (SIGUSR1 to fortstat, or trace_opts.interval_s):
 * `res` and `books` as trace_run would leave them if every process ended
 * now (running clocks closed INCOMPLETE at each thread's clocks read then,
 * res->snapshot set), both owned by the tracer and valid during the call
 * only. The program runs on meanwhile.
 */
typedef void (*trace_snapshot_fn)(const struct trace_result *res, struct books *books, void *arg);
typedef void (*trace_progress_fn)(const struct trace_progress *pg, void *arg);

/* What a traced run is asked to do (from the command line: cli_trace_opts). */
struct trace_opts {
	bool count_only;  /* -c: count calls, read no clock but the wall's */
	bool follow;	  /* -f: time forked children and exec'ed images too */
	bool all;	  /* --all: every routine, the C library's start-up too */
	bool probes;	  /* --probes: in-process probes, ptrace for rare events */
	bool probe_stops; /* with probes: every call still stops (their calibration) */
	/*
	 * With probes: a full ring's events are copied out at its stop and
	 * read while the thread runs on (drain.c); --pin=auto then pins
	 * nothing: the reading goes to another CPU. Off for --alloc and
	 * --sample (their events reach into the program or its samples) and
	 * with FORTSTAT_DEFER_DRAIN=0; drain.c also reads at the stop when
	 * the program may run on one CPU only (tracer.n_cpus).
	 */
	bool drain_behind;
	bool go_program; /* the program is Go, in process: calibrate Go's probes (calib.c) */
	bool go_calib;	 /* the calibration's Go pair: probed as Go's code (golang.c) */
	uint64_t throttle_calls; /* --throttle: a probed routine called this often ... */
	double throttle_ns;	 /* ... whose mean net self time is under this is counted only */
	/*
	 * --probes: what a call's events cost the program (calibrated): the
	 * caller's share, charged at the entry (f2: the stub before its TSC,
	 * the trampoline after its), the routine's at the return (f1).
	 */
	double probe_ns[FS_N_CLOCKS];
	double probe_ret_ns[FS_N_CLOCKS];
	double probe_count_ns[FS_N_CLOCKS]; /* a call through the count path (throttled) */
	/*
	 * The same three when the calls go round many routines (calib.h's
	 * round_*; 0: not measured, the flat ones stand): the drain weighs the
	 * two by the routines its latest events entered (drain.c, round_weigh).
	 */
	double probe_round_ns[FS_N_CLOCKS];
	double probe_round_ret_ns[FS_N_CLOCKS];
	double probe_round_count_ns[FS_N_CLOCKS];
	/*
	 * A measured stop's segment (the program's code between two stops,
	 * TSC to TSC) holds some of the stubs' own code: the calibration's
	 * empty routine's (seg_resid_ns[1], a segment ending at a return site:
	 * the routine's) and its driver's less its loop ([0], ending at an
	 * entry: the caller's). Charged with each such stop's measured cost
	 * (0: none; the calibration's own run takes 0).
	 */
	double seg_resid_ns[2];
	const char *libs[TRACE_MAX_LIBS]; /* -l: shared libraries to time too (patterns) */
	size_t n_libs;
	enum pin_mode pin;     /* --pin */
	enum clock_kind clock; /* --clock: the calibration's first figures */
	/*
	 * Live reports while the program runs (ticker.c), called from the
	 * tracer's loop between stops, never from a signal handler: a snapshot
	 * on each SIGUSR1 to fortstat and every interval_s seconds (0: only on
	 * SIGUSR1; NULL on_snapshot: a SIGUSR1 waits for a run that takes it),
	 * on_progress about twice a second (NULL: never).
	 */
	trace_snapshot_fn on_snapshot;
	double interval_s;
	trace_progress_fn on_progress;
	void *live_arg;		   /* their last argument */
	int pid;		   /* -p: attach to this running process (0: launch) */
	double duration_s;	   /* --duration: detach after this long (0: never) */
	uint64_t exe_dev, exe_ino; /* -p: its executable when its symbols were read */
	bool exitkill; /* the program dies with fortstat (the calibration's runs; --traps do) */
	unsigned sample_hz; /* --sample: instruction pointers sampled at this rate (0: not) */
	/*
	 * --alloc: the allocators (RT_ALLOC) are patched, their calls charged
	 * to the books' storage (books_alloc), and never timed themselves.
	 */
	bool alloc;
	/*
	 * -f: a process that ended, other than the program, keeps in its books
	 * and its table of routines only those it used (books_compact,
	 * symtab_compact): `fortstat -f make` holds a few hundred KiB for each
	 * cc1 it saw, not the 30 MB of its 26,000 routines. Off with --zeros
	 * (it lists the others) and --sample (its samples name routines by
	 * their numbers); books kept with a timeline or --alloc's storage,
	 * which name them so too, refuse it themselves (books_compact).
	 */
	bool compact_ended;
};
struct names;

/*
 * One thread's CPU time as the kernel counted it (usage.h: schedstat's
 * total split by stat's ticks), from when fortstat first saw it (its
 * creation, the exec, the attach) to its exit stop, and the wall time
 * between.
 */
struct trace_thread_usage {
	int tid;
	uint64_t user_ns, sys_ns, elapsed_ns;
};

/* The threads of a process, as the kernel counted their time. */
struct trace_usage {
	struct trace_thread_usage *threads; /* each thread that ended (a snapshot: and
					     * each still running, as of then); owned */
	size_t n;
	int n_cpus; /* the CPUs the program may run on (its affinity mask), 0: unknown */
};

/*
 * --sample: a process's threads' instruction pointers as the kernel's CPU
 * clock sampled them (src/tracer/sample.c), each given to the timed
 * routine whose code holds it (lines.h's rule).
 */
struct trace_samples {
	unsigned hz;		/* the rate asked for, 0: not sampled */
	bool refused;		/* perf_event_open refused: nothing was sampled */
	uint64_t n;		/* samples read */
	uint64_t outside;	/* ... in no timed routine's code */
	uint64_t lost;		/* samples the kernel said it dropped */
	bool full;		/* a ring was found full: some may have been dropped unsaid */
	struct lines_hit *hits; /* the others, by routine and offset (owned) */
	size_t n_hits;
};

/* With -f: a process other than the program, or an image exec'ed. */
/* Threads named in a report's lost switch records: the first few. */
#define TRACE_LOST_TIDS 4

/*
 * Context-switch records the kernel dropped (probes): the stops after
 * which a thread's CPU times were spread over elapsed time instead, the
 * records lost, the first threads (0: none).
 */
struct trace_cs_lost {
	uint64_t windows, records;
	int tids[TRACE_LOST_TIDS];
};

struct trace_section {
	int pid;
	char *path;	   /* its program (owned) */
	struct symtab *st; /* its routines (owned when own_st; else the program's) */
	bool own_st;
	struct books *books; /* its accounting (owned) */
	int exit_status;     /* status, or 128+N; 0 when it exec'ed on */
	int term_signal;
	double total_s[FS_N_CLOCKS]; /* its time on each clock */
	bool counted_only;
	bool execed;  /* it ended by exec'ing a new image (a section follows) */
	bool running; /* a snapshot's: it has not ended yet */
	bool probes;  /* as in trace_result, for this process */
	uint64_t probe_events;
	uint64_t trap_calls; /* as in trace_result, for this process */
	double trap_cost_ns[FS_N_CLOCKS];
	double overhead_ns[FS_N_CLOCKS]; /* as in trace_result, for this process */
	uint64_t not_followed;		 /* as in trace_result, for this process */
	struct trace_cs_lost cs_lost;	 /* as in trace_result, for this process */
	struct trace_usage usage;	 /* as in trace_result, for this process */
	struct trace_samples samples;	 /* as in trace_result, for this process */
	char note[160];
};

struct trace_result {
	int exit_status;	     /* what fortstat exits with: status, or 128+N */
	int term_signal;	     /* N when the program was killed by signal N */
	bool started;		     /* PROGRAM was exec'ed (there is something to report) */
	double total_s[FS_N_CLOCKS]; /* program time on each clock */
	size_t n_patched;	     /* routines patched */
	size_t n_refused;	     /* selected routines left unpatched (see -v) */
	bool probes;		     /* the program's calls were recorded in-process (--probes) */
	uint64_t probe_events;	     /* entries and returns (or calls, -c) read from its probes */
	/*
	 * Calls of timed routines whose entry was a ptrace stop (with probes:
	 * routines whose entry took no stub, threads without an area...; with
	 * the traps: every call), and what their stops (entries, returns
	 * through a trap) cost on each clock, ns: their number times the mean
	 * a stop was charged (0 with -c).
	 */
	uint64_t trap_calls;
	double trap_cost_ns[FS_N_CLOCKS];
	/*
	 * The stops' cost (probes or traps) taken off the threads' clocks, in
	 * the timed routines and outside them (books_overhead); 0 when the
	 * times are not corrected.
	 */
	double overhead_ns[FS_N_CLOCKS];
	struct trace_cs_lost cs_lost; /* context-switch records dropped */
	/*
	 * Processes the program started that were let go untimed (without -f:
	 * forked children, and vfork children that exec'ed, as posix_spawn's
	 * and system()'s): their calls and time are in no report.
	 */
	uint64_t not_followed;
	bool counted_only; /* calls were counted, not timed (a CET shadow stack) */
	char note[160];	   /* how the run ended, when it is worth a line */
	int pid;	   /* the program's process id */
	/*
	 * What the stops cost each segment, measured in this run (acct_ovh_estimate,
	 * ns) on the CPU and the wall clock, over seg_n segments (0: not measured).
	 */
	uint64_t seg_n;
	double seg_cpu_ns, seg_wall_ns;
	/*
	 * The program's own time a measured segment, its mean by the stop that
	 * ends it: [0] an entry's, [1] a return site's (ns; 0: none). The
	 * calibration's are trace_opts.seg_resid_ns.
	 */
	double seg_u_ns[2];
	struct trace_section *sections; /* -f: the other processes and images */
	size_t n_sections;
	bool snapshot;		  /* a snapshot: the run goes on (trace_snapshot_fn) */
	bool running;		  /* a snapshot's: the program has not ended yet */
	double snapshot_s;	  /* when it was taken, seconds of wall time since the exec */
	bool attached;		  /* -p: a running process was attached to (pid) */
	bool detached;		  /* ... and let go, still running, before it ended */
	char *active;		  /* -p: the routines its threads were in at attach, ", "-separated
				   * (owned; NULL: none known) */
	struct trace_usage usage; /* the program's threads' user and system time */
	struct trace_samples samples; /* --sample: the program's */
};

/*
 * From now on SIGUSR1 to fortstat asks for a snapshot (trace_opts.on_snapshot)
 * instead of ending fortstat: one that arrives before a run's loop is taken
 * when it starts. Call once, before the first trace_run.
 */
void trace_catch_snapshot_signal(void);

/* Free what res owns (sections). */
void trace_result_free(struct trace_result *res);

/*
 * Run PROGRAM (`path`, with `argv` as its argv and fortstat's environment),
 * time the RT_SELECTED routines of `st` (routine i of st is routine i of
 * `books`) and feed `books` until the program ends. Routines that cannot be
 * patched lose RT_SELECTED. With -l (o->libs), routines of the matching
 * shared libraries are chosen with `names`/`exclude` (may be NULL) as they
 * load, appended to `st`, and the books grow to match. With net books, a
 * stop whose cost was not measured costs est_ns[clock] (may be NULL: 0)
 * until 100 stops were measured, then the mean measured.
 * Returns 0 when the program ran (res filled), or a negative errno when it
 * could not be started or traced (an error line has been printed).
 */
int trace_run(const char *path, char *const argv[], struct symtab *st, struct books *books,
	      struct names *names, struct names *exclude, const struct trace_opts *o,
	      const double est_ns[FS_N_CLOCKS], struct trace_result *res);

/*
 * Is `st` a Go program (it has runtime.morestack)? Its routines are timed
 * at their entries and their own returns (src/tracer/golang.c), in process
 * when launched and built by Go 1.17 or later (trace_go_regabi); else by
 * traps: ask for o->probes false, calibration too.
 */
bool trace_is_go(const struct symtab *st);

/*
 * Does Go program `st` keep its goroutine in R14 (the register ABI of Go
 * 1.17 and later: its assembly routines are named *.abi0)? Go's in-process
 * probes read it there.
 */
bool trace_go_regabi(const struct symtab *st);

/*
 * May fortstat attach to process `pid` (-p)? Refuses, in one line each: no
 * such process (EXIT_FS_NOTFOUND); fortstat itself or its parent, a zombie,
 * a process already traced (naming the tracer), one whose executable cannot
 * be read (another user's, Yama's ptrace_scope: says which and how to
 * allow it) (EXIT_FS_CANNOT). Returns 0 with its executable's path in
 * *path (malloc'ed) and its identity (device, inode) in *dev and *ino, or
 * that exit status.
 */
int trace_attach_check(int pid, char **path, uint64_t *dev, uint64_t *ino);

/*
 * Attach to the running process o->pid and every one of its threads
 * (PTRACE_SEIZE), stop them all, patch the RT_SELECTED routines of `st`
 * (read from its executable) while no thread's instruction pointer lies in
 * bytes being patched (refused when its executable is no longer the file of
 * o->exe_dev, o->exe_ino: it exec'ed meanwhile), and the -l libraries
 * already loaded, then time the
 * calls that start from then on as trace_run does. Detach on SIGINT,
 * SIGTERM or SIGHUP to fortstat or after o->duration_s seconds: every patch
 * is removed and every hooked return address put back while all threads are
 * stopped, so the process runs on as if never traced (fortstat's scratch
 * pages stay mapped in it, unused). Frames active at attach are not timed:
 * res->active names the routines the threads were in. Returns 0 with res
 * filled (res->exit_status 0 when detached, else the process's status as
 * trace_run's), or a negative errno when it could not be attached (one line
 * said; the process was left as it was).
 */
int trace_attach(struct symtab *st, struct books *books, struct names *names, struct names *exclude,
		 const struct trace_opts *o, const double est_ns[FS_N_CLOCKS],
		 struct trace_result *res);

#endif
