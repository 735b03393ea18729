// SPDX-License-Identifier: GPL-2.0-or-later
/* cli.c - command-line options, --help, and finding PROGRAM through PATH. */
#include "fortstat/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fortstat/sample.h"
#include "fortstat/timeline.h"
#include "fortstat/util.h"
#include "fortstat/version.h"

/*
 * An option: what getopt_long needs of it (its long name, has_arg, its
 * short letter or 0) and what it does: `fn` takes its argument (NULL when
 * it has none) and returns -1 to go on, or the status to exit with (a usage
 * error said in one line; 0 after --help and --version). The handlers
 * shared by several options set the field at `off` (offsetof) and say
 * `err` of a bad argument.
 */
struct cli_opt {
	const char *name;
	int has_arg;
	int letter;
	int (*fn)(struct options *o, const char *arg, const struct cli_opt *e);
	size_t off;
	const char *err;
};

#define FIELD(o, e, type) ((type *)((char *)(o) + (e)->off))

static int usage_error(const char *msg, const char *arg)
{
	if (arg)
		fs_error("%s '%s' (try 'fortstat --help')", msg, arg);
	else
		fs_error("%s (try 'fortstat --help')", msg);
	return EXIT_FS_ERROR;
}

/* A number of seconds above 0 and at most a year ("0.5", "60", "1e3"): 0 or -1. */
static int parse_seconds(const char *arg, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v > 0) || v > 366 * 86400.0)
		return -1;
	*out = v;
	return 0;
}

/* ---- the options' handlers ---- */

/* The bool at e->off set. */
static int opt_true(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	*FIELD(o, e, bool) = true;
	return -1;
}

/* The string at e->off set to arg. */
static int opt_string(struct options *o, const char *arg, const struct cli_opt *e)
{
	*FIELD(o, e, const char *) = arg;
	return -1;
}

/* The string at e->off set to arg, a file name: not empty. */
static int opt_file(struct options *o, const char *arg, const struct cli_opt *e)
{
	if (!*arg)
		return usage_error(e->err, NULL);
	*FIELD(o, e, const char *) = arg;
	return -1;
}

/* The size_t at e->off set to arg, a count from 1 to 1,000,000. */
static int opt_count(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > 1000000)
		return usage_error(e->err, arg);
	*FIELD(o, e, size_t) = (size_t)v;
	return -1;
}

static int opt_lib(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)e;
	if (o->n_libs == CLI_MAX_LIBS)
		return usage_error("too many -l patterns (at most 32):", arg);
	o->libs[o->n_libs++] = arg;
	return -1;
}

static int opt_format(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)e;
	if (report_parse_format(arg, &o->report.format) < 0)
		return usage_error("unknown --format (table, csv, json, folded, "
				   "callgrind, pprof):",
				   arg);
	return -1;
}

static int opt_sort(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)e;
	if (report_parse_sort(arg, &o->report.sort) < 0)
		return usage_error("unknown --sort key (time, calls, name, wait):", arg);
	return -1;
}

static int opt_timeline_min(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;

	(void)e;
	errno = 0;
	o->timeline_min_us = strtod(arg, &end);
	if (errno || end == arg || *end || !(o->timeline_min_us >= 0) || o->timeline_min_us > 1e12)
		return usage_error("--timeline-min needs a number of microseconds:", arg);
	return -1;
}

static int opt_timeline_max(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;
	long long v;

	(void)e;
	errno = 0;
	v = strtoll(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > TIMELINE_MAX_LIMIT)
		return usage_error("--timeline-max needs a number of calls:", arg);
	o->timeline_max = (size_t)v;
	return -1;
}

/* --sample[=HZ]: arg NULL without HZ. */
static int opt_sample(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;
	long v = SAMPLE_HZ_DEFAULT;

	(void)e;
	errno = 0;
	if (arg)
		v = strtol(arg, &end, 10);
	if (arg && (errno || end == arg || *end || v <= 0 || v > SAMPLE_HZ_MAX))
		return usage_error("--sample needs a rate in Hz (1 to 100000):", arg);
	o->sample_hz = (unsigned)v;
	return -1;
}

static int opt_progress(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	(void)e;
	o->progress = 1;
	return -1;
}

static int opt_no_progress(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	(void)e;
	o->progress = 0;
	return -1;
}

static int opt_interval(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)e;
	if (parse_seconds(arg, &o->interval_s) < 0)
		return usage_error("--interval needs a number of seconds above 0:", arg);
	return -1;
}

static int opt_pid(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;
	long v;

	(void)e;
	errno = 0;
	v = strtol(arg, &end, 10);
	if (errno || end == arg || *end || v <= 0 || v > INT_MAX)
		return usage_error("-p needs a process id:", arg);
	o->pid = (int)v;
	return -1;
}

static int opt_duration(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;

	(void)e;
	errno = 0;
	o->duration = strtod(arg, &end);
	if (errno || end == arg || *end || !(o->duration > 0) || o->duration > 1e8)
		return usage_error("--duration needs a number of seconds > 0:", arg);
	return -1;
}

static int opt_probes(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	(void)e;
	o->probes = true;
	o->mech_asked = true;
	return -1;
}

static int opt_traps(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	(void)e;
	o->probes = false;
	o->mech_asked = true;
	return -1;
}

static int opt_throttle(struct options *o, const char *arg, const struct cli_opt *e)
{
	char *end;
	unsigned long long calls = strtoull(arg, &end, 10);
	double usec = *end == ',' ? strtod(end + 1, &end) : -1;

	(void)e;
	if (*end || calls < 1 || !(usec > 0) || usec > 1e9 || arg[0] == '-')
		return usage_error("--throttle is CALLS,USEC (e.g. 10000,10), not", arg);
	o->throttle_calls = calls;
	o->throttle_usec = usec;
	return -1;
}

static int opt_no_throttle(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	(void)e;
	o->throttle_calls = 0;
	return -1;
}

static int opt_clock(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)e;
	if (!strcmp(arg, "cpu"))
		o->clock = CLOCK_KIND_CPU;
	else if (!strcmp(arg, "wall"))
		o->clock = CLOCK_KIND_WALL;
	else if (!strcmp(arg, "both"))
		o->clock = CLOCK_KIND_CPU;
	else
		return usage_error("unknown --clock (cpu, wall, both):", arg);
	o->report.both = !strcmp(arg, "both");
	return -1;
}

static int opt_pin(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)e;
	if (!strcmp(arg, "auto"))
		o->pin = PIN_AUTO;
	else if (!strcmp(arg, "always"))
		o->pin = PIN_ALWAYS;
	else if (!strcmp(arg, "never"))
		o->pin = PIN_NEVER;
	else
		return usage_error("unknown --pin (auto, always, never):", arg);
	return -1;
}

static int opt_verbose(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)arg;
	(void)e;
	o->verbose++;
	return -1;
}

static int opt_help(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)o;
	(void)arg;
	(void)e;
	cli_usage(stdout);
	return 0;
}

static int opt_version(struct options *o, const char *arg, const struct cli_opt *e)
{
	(void)o;
	(void)arg;
	(void)e;
	printf("fortstat %s\n", fs_version());
	return 0;
}

#define AT(field) offsetof(struct options, field)

/* Every option, in the order getopt_long looks for a long name. */
static const struct cli_opt cli_opts[] = {
    {"names", required_argument, 'n', opt_string, AT(names_file), NULL},
    {"exclude", required_argument, 'x', opt_string, AT(exclude_file), NULL},
    {"all", no_argument, 0, opt_true, AT(all), NULL},
    {"lib", required_argument, 'l', opt_lib, 0, NULL},
    {"follow", no_argument, 'f', opt_true, AT(follow), NULL},
    {"pid", required_argument, 'p', opt_pid, 0, NULL},
    {"duration", required_argument, 0, opt_duration, 0, NULL},
    {"output", required_argument, 'o', opt_string, AT(output), NULL},
    {"format", required_argument, 0, opt_format, 0, NULL},
    {"sort", required_argument, 0, opt_sort, 0, NULL},
    {"zeros", no_argument, 'z', opt_true, AT(report.zeros), NULL},
    {"inclusive", no_argument, 0, opt_true, AT(report.inclusive), NULL},
    {"graph", no_argument, 0, opt_true, AT(report.graph), NULL},
    {"svg", required_argument, 0, opt_file, AT(svg), "--svg needs a file name"},
    {"timeline", required_argument, 0, opt_file, AT(timeline), "--timeline needs a file name"},
    {"timeline-min", required_argument, 0, opt_timeline_min, 0, NULL},
    {"timeline-max", required_argument, 0, opt_timeline_max, 0, NULL},
    {"lines", no_argument, 0, opt_true, AT(report.lines), NULL},
    {"sample", optional_argument, 0, opt_sample, 0, NULL},
    {"threads", no_argument, 0, opt_true, AT(report.threads), NULL},
    {"width", required_argument, 0, opt_count, AT(report.width),
     "--width needs a number of columns:"},
    {"top", required_argument, 0, opt_count, AT(report.top), "--top needs a number of rows:"},
    {"no-correct", no_argument, 0, opt_true, AT(no_correct), NULL},
    {"merge", no_argument, 0, opt_true, AT(merge), NULL},
    {"progress", no_argument, 0, opt_progress, 0, NULL},
    {"no-progress", no_argument, 0, opt_no_progress, 0, NULL},
    {"interval", required_argument, 0, opt_interval, 0, NULL},
    {"probes", no_argument, 0, opt_probes, 0, NULL},
    {"traps", no_argument, 0, opt_traps, 0, NULL},
    {"throttle", required_argument, 0, opt_throttle, 0, NULL},
    {"no-throttle", no_argument, 0, opt_no_throttle, 0, NULL},
    {"alloc", no_argument, 0, opt_true, AT(report.alloc), NULL},
    {"count-only", no_argument, 'c', opt_true, AT(count_only), NULL},
    {"clock", required_argument, 0, opt_clock, 0, NULL},
    {"pin", required_argument, 0, opt_pin, 0, NULL},
    {"verbose", no_argument, 'v', opt_verbose, 0, NULL},
    {"help", no_argument, 'h', opt_help, 0, NULL},
    {"version", no_argument, 'V', opt_version, 0, NULL},
};

#define N_OPTS (sizeof(cli_opts) / sizeof(cli_opts[0]))
/* getopt_long's value of a long option: its index in cli_opts past any letter. */
#define LONG_VAL 256

void cli_usage(FILE *out)
{
	fputs("Usage: fortstat [OPTION]... PROGRAM [ARGUMENT]...\n"
	      "  or:  fortstat [OPTION]... -p PID\n"
	      "  or:  fortstat --merge [OPTION]... FILE...\n"
	      "Run PROGRAM and report how often each of its routines was called and\n"
	      "how much time each took. Nothing is recompiled or relinked.\n"
	      "\n"
	      "Selecting routines:\n"
	      "  -n, --names=FILE     time only the routines named in FILE (the mainline\n"
	      "                       is always timed); one name or glob a line\n"
	      "  -x, --exclude=FILE   never time the routines named in FILE\n"
	      "      --all            also time runtime helpers and, in static executables,\n"
	      "                       the C library's routines\n"
	      "  -l, --lib=PATTERN    also time the routines of the shared libraries whose\n"
	      "                       soname or file name matches PATTERN (libblas,\n"
	      "                       'libm.so*'), loaded at start or by dlopen;\n"
	      "                       repeatable; -n/-x apply, LIB:NAME qualifies a name;\n"
	      "                       a stripped program is timed through these alone\n"
	      "\n"
	      "Processes:\n"
	      "  -f, --follow         also time the processes the program forks and the\n"
	      "                       programs they exec, one report each (see -o %p);\n"
	      "                       PROGRAM may be a #! script or a stripped shell\n"
	      "  -p, --pid=PID        attach to the running process PID and all its threads,\n"
	      "                       time it from then on, and detach on SIGINT or SIGTERM\n"
	      "                       (or when it exits): it runs on as if never traced\n"
	      "      --duration=SECONDS  with -p: detach after SECONDS\n"
	      "\n"
	      "Measuring:\n"
	      "  -c, --count-only     count calls only, no clocks (fastest)\n"
	      "      --clock=CLOCK    cpu (default: the thread's own CPU time), wall, or\n"
	      "                       both: each routine's CPU and wall time side by\n"
	      "                       side, and the time it waited (wall less CPU)\n"
	      "      --pin=WHEN       run fortstat and the program on one CPU: auto (default:\n"
	      "                       with --traps, while the program has one thread,\n"
	      "                       unless it uses OpenMP or TBB), always, or never\n"
	      "      --no-correct     print gross times: do not remove the calibrated\n"
	      "                       per-stop overhead\n"
	      "      --probes         time in-process: the program records its entries and\n"
	      "                       returns in memory shared with fortstat; stops only\n"
	      "                       for rare events (the default)\n"
	      "      --traps          time with a SIGTRAP at every entry and return,\n"
	      "                       FORTSTAT's classic way\n"
	      "      --throttle=CALLS,USEC  with --probes, a routine called CALLS times\n"
	      "                       whose mean self time is under USEC microseconds is\n"
	      "                       counted from then on, not timed (default 10000,10);\n"
	      "                       one on the trap path stops being counted: >=N;\n"
	      "                       with -f, later execs of a file start with its\n"
	      "                       earlier execs' throttles\n"
	      "      --no-throttle    time every call, however small and frequent\n"
	      "      --sample[=HZ]    also sample where each thread is, HZ times a second\n"
	      "                       of its CPU time (default 997; the kernel's software\n"
	      "                       CPU clock, perf_event_open): each routine's time\n"
	      "                       divided among its source lines (--lines, JSON,\n"
	      "                       callgrind); counts and times stay as they are\n"
	      "      --alloc          storage per routine: the allocations, bytes and\n"
	      "                       frees each routine made (self and inclusive), the\n"
	      "                       peak of live bytes and whose allocation reached it\n"
	      "                       (malloc, calloc, realloc, the aligned ones, C++ new\n"
	      "                       and delete, free); the allocator must be timed: in\n"
	      "                       the program, or its library by -l (-l libc)\n"
	      "\n"
	      "Reporting:\n"
	      "  -o, --output=FILE    write the report to FILE (default: standard error);\n"
	      "                       %p in FILE: one file per process, named by its pid;\n"
	      "                       %r: the MPI rank, %h: the host name; replaced whole\n"
	      "                       at the end (as --svg's): a killed fortstat leaves\n"
	      "                       the previous report\n"
	      "      --format=FORMAT  table (default), csv, json, folded (stacks for flame\n"
	      "                       graph tools), callgrind (for KCachegrind) or pprof\n"
	      "                       (gzipped profile.proto for go tool pprof, with -o)\n"
	      "      --sort=KEY       time (default), calls, name, or wait (wall less CPU\n"
	      "                       self time: what a routine waited)\n"
	      "  -z, --zeros          also list timed routines that were never called\n"
	      "      --inclusive      table: add inclusive time (with the routines called)\n"
	      "      --graph          table: add the call graph (callers, callees, arcs)\n"
	      "      --lines          table: add each routine's source file and line;\n"
	      "                       with --sample, its hottest lines under it\n"
	      "      --threads        also report each thread on its own, in every format\n"
	      "      --width=N        table: fit its lines in N columns, long names shortened\n"
	      "                       (C++ <…> and (…) elided, then …); default: the\n"
	      "                       terminal's width when the table goes there, else\n"
	      "                       full names (CSV, JSON, folded, callgrind always)\n"
	      "      --top=N          table: the first N rows only, then one line for the\n"
	      "                       rest; TOTAL counts every routine\n"
	      "      --svg=FILE       also write an interactive SVG flame graph to FILE\n"
	      "      --timeline=FILE  also write every call in time to FILE: Chrome\n"
	      "                       trace-event JSON for Perfetto (ui.perfetto.dev),\n"
	      "                       speedscope or Catapult, a track a thread and process (-f:\n"
	      "                       every one, one file); %r, %h as in -o, %p the\n"
	      "                       program's pid; replaced whole at the end\n"
	      "      --timeline-min=USEC  leave out calls shorter than USEC microseconds\n"
	      "                       (default 10; 0: every call timed)\n"
	      "      --timeline-max=CALLS  keep at most CALLS calls (default 1000000, about\n"
	      "                       100 MB): later ones are left out, said in the file\n"
	      "                       and on standard error\n"
	      "\n"
	      "While PROGRAM runs:\n"
	      "      --progress       show a status line on standard error (elapsed time,\n"
	      "                       calls, routines, threads, processes), redrawn twice\n"
	      "                       a second, on a terminal on its last row, kept out of\n"
	      "                       the program's output; the default when standard\n"
	      "                       error is a terminal\n"
	      "      --no-progress    never show the status line\n"
	      "      --interval=SECONDS  write a snapshot report every SECONDS\n"
	      "  kill -USR1 <fortstat's pid> writes a snapshot report of everything measured\n"
	      "  so far (to -o FILE, replaced whole, or standard error); PROGRAM runs on, and\n"
	      "  the final report replaces the last snapshot when it ends\n"
	      "\n"
	      "MPI and several runs:\n"
	      "  -o prof.%r.json      under mpirun, mpiexec or srun: one file per rank (%r\n"
	      "                       the rank, %p the pid, %h the host name, %% a %)\n"
	      "      --merge FILE...  merge JSON reports (ranks, -f processes, runs) into\n"
	      "                       one: calls and times as min, mean, max and sum, the\n"
	      "                       rank of the max and max/mean; written to standard\n"
	      "                       output or -o; --format, --sort, --inclusive, --svg,\n"
	      "                       --width, --top apply; options go before the files\n"
	      "\n"
	      "  -v, --verbose        say what fortstat does; repeat for more\n"
	      "  -h, --help           print this help and exit\n"
	      "  -V, --version        print the version and exit\n"
	      "\n"
	      "Exit status: PROGRAM's own; 128+N if it was killed by signal N;\n"
	      "125 if fortstat failed, 126 if PROGRAM cannot be timed, 127 if not found.\n"
	      "See fortstat(1).\n",
	      out);
}

/* ---- parsing ---- */

/* o set to the defaults, then to FORTSTAT_MECHANISM's: -1, or a usage error's status. */
static int set_defaults(struct options *o)
{
	const char *mech;

	memset(o, 0, sizeof(*o));
	o->report.format = FMT_TABLE;
	o->report.sort = SORT_TIME;
	o->clock = CLOCK_KIND_CPU;
	o->pin = PIN_AUTO;
	o->progress = -1;
	o->probes = true; /* in-process probes; --traps for the classic way */
	/* 10,000 calls under 10 us each (TAU: 100,000; the mean is as sure after 10,000) */
	o->throttle_calls = 10000;
	o->throttle_usec = 10;
	o->timeline_min_us = TIMELINE_MIN_US_DEFAULT;
	o->timeline_max = TIMELINE_MAX_DEFAULT;
	/* The mechanism when neither --traps nor --probes says (the test suite runs both). */
	mech = getenv("FORTSTAT_MECHANISM");
	if (mech && *mech) {
		o->mech_asked = true;
		if (!strcmp(mech, "traps"))
			o->probes = false;
		else if (strcmp(mech, "probes"))
			return usage_error("FORTSTAT_MECHANISM is traps or probes, not", mech);
	}
	return -1;
}

/*
 * getopt_long's tables made from cli_opts: longs[N_OPTS + 1], each option's
 * value LONG_VAL + its index; shorts (3 * N_OPTS + 3 chars) the letters.
 */
static void getopt_tables(struct option *longs, char *shorts)
{
	char *s = shorts;

	/* '+': options stop at PROGRAM; its own options are its own. ':': a missing argument */
	*s++ = '+';
	*s++ = ':';
	for (size_t i = 0; i < N_OPTS; i++) {
		const struct cli_opt *e = &cli_opts[i];

		longs[i] = (struct option){e->name, e->has_arg, NULL, LONG_VAL + (int)i};
		if (!e->letter)
			continue;
		*s++ = (char)e->letter;
		if (e->has_arg != no_argument)
			*s++ = ':';
		if (e->has_arg == optional_argument)
			*s++ = ':';
	}
	longs[N_OPTS] = (struct option){NULL, 0, NULL, 0};
	*s = '\0';
}

/* The option getopt_long's value c stands for, or NULL (unknown). */
static const struct cli_opt *opt_of(int c)
{
	if (c >= LONG_VAL && c < LONG_VAL + (int)N_OPTS)
		return &cli_opts[c - LONG_VAL];
	for (size_t i = 0; i < N_OPTS; i++)
		if (cli_opts[i].letter && cli_opts[i].letter == c)
			return &cli_opts[i];
	return NULL;
}

/*
 * The options taken (the first `optind` of argv): what they say together,
 * and PROGRAM and its arguments (or --merge's FILEs) in o->argv. Returns
 * -1, or a usage error's status.
 */
static int check_options(int argc, char **argv, struct options *o)
{
	if (o->merge && o->sample_hz)
		return usage_error("--sample is for a run, not --merge", NULL);
	if (o->merge && o->timeline)
		return usage_error("--timeline is for a run, not --merge", NULL);
	if (o->merge) {
		/* FILE... (none is merge_command's to say) */
		if (o->report.sort == SORT_WAIT)
			return usage_error("--sort=wait needs a run's two clocks: not with --merge",
					   NULL);
		o->argv = argv + optind;
		o->argc = argc - optind;
		return -1;
	}
	if (o->duration > 0 && !o->pid)
		return usage_error("--duration needs -p PID", NULL);
	if (o->sample_hz && o->count_only)
		return usage_error("--sample divides times: not with -c", NULL);
	if (o->timeline && o->count_only)
		return usage_error("--timeline needs times: not with -c", NULL);
	if (o->report.alloc && o->count_only)
		return usage_error("--alloc needs the allocators' returns: not with -c", NULL);
	if (o->pid) {
		if (optind < argc)
			return usage_error("-p attaches to a running process: no PROGRAM with it:",
					   argv[optind]);
		if (o->follow)
			return usage_error("-f cannot be used with -p", NULL);
		o->argv = argv + optind;
		o->argc = 0;
		o->report.clock = o->clock;
		return -1;
	}
	if (optind >= argc)
		return usage_error("no PROGRAM given", NULL);
	o->argv = argv + optind;
	o->argc = argc - optind;
	o->report.clock = o->clock; /* the clock whose times the report shows */
	return -1;
}

int cli_parse(int argc, char **argv, struct options *o)
{
	struct option longs[N_OPTS + 1];
	char shorts[3 * N_OPTS + 3];
	const struct cli_opt *e;
	int c, rc;

	rc = set_defaults(o);
	if (rc >= 0)
		return rc;
	getopt_tables(longs, shorts);
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
		if (c == ':')
			return usage_error("option needs an argument:", argv[optind - 1]);
		e = opt_of(c);
		if (!e)
			return usage_error("unknown option:", argv[optind - 1]);
		rc = e->fn(o, optarg, e);
		if (rc >= 0)
			return rc;
	}
	return check_options(argc, argv, o);
}

/* 0 if path is a regular file we may execute; else a negative errno. */
static int check_exec(const char *path)
{
	struct stat sb;

	if (stat(path, &sb) < 0)
		return -errno;
	if (S_ISDIR(sb.st_mode))
		return -EISDIR;
	if (!S_ISREG(sb.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	return 0;
}

int cli_find_program(const char *name, char **path)
{
	const char *p, *env;
	int err, seen = 0;

	*path = NULL;
	if (!*name) {
		fs_error("'': no such file or directory");
		return EXIT_FS_NOTFOUND;
	}
	if (strchr(name, '/')) {
		err = check_exec(name);
		if (err == -ENOENT || err == -ENOTDIR) {
			fs_error("%s: %s", name, strerror(-err));
			return EXIT_FS_NOTFOUND;
		}
		if (err) {
			fs_error("%s: cannot be run: %s", name, strerror(-err));
			return EXIT_FS_CANNOT;
		}
		*path = xstrdup(name);
		return 0;
	}
	env = getenv("PATH");
	if (!env)
		env = "/usr/local/bin:/usr/bin:/bin";
	for (p = env;; p = strchr(p, ':') + 1) {
		size_t len = strcspn(p, ":");
		char *cand =
		    len ? xasprintf("%.*s/%s", (int)len, p, name) : xasprintf("./%s", name);

		err = check_exec(cand);
		if (!err) {
			*path = cand;
			return 0;
		}
		if (err == -EACCES)
			seen = 1;
		free(cand);
		if (!p[len])
			break;
	}
	if (seen) {
		fs_error("%s: found in PATH but not executable", name);
		return EXIT_FS_CANNOT;
	}
	fs_error("%s: command not found", name);
	return EXIT_FS_NOTFOUND;
}

struct trace_opts cli_trace_opts(const struct options *o)
{
	struct trace_opts t = {
	    .count_only = o->count_only,
	    .follow = o->follow,
	    .all = o->all,
	    .n_libs = o->n_libs,
	    .pin = o->pin,
	    .clock = o->clock,
	    .interval_s = o->interval_s,
	    .pid = o->pid,
	    .duration_s = o->duration,
	    .probes = o->probes,
	    .throttle_calls = o->throttle_calls,
	    .throttle_ns = o->throttle_usec * 1e3,
	    .sample_hz = o->sample_hz,
	    .alloc = o->report.alloc,
	    .compact_ended =
		!o->report.zeros && !o->sample_hz &&
		!(getenv("FORTSTAT_COMPACT") && !strcmp(getenv("FORTSTAT_COMPACT"), "0")),
	    .drain_behind =
		o->probes && !o->sample_hz && !o->report.alloc &&
		!(getenv("FORTSTAT_DEFER_DRAIN") && !strcmp(getenv("FORTSTAT_DEFER_DRAIN"), "0")),
	};

	for (size_t i = 0; i < o->n_libs && i < TRACE_MAX_LIBS; i++)
		t.libs[i] = o->libs[i];
	return t;
}
