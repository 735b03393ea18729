// SPDX-License-Identifier: GPL-2.0-or-later
/* cli.c - command-line options, --help, and finding PROGRAM through PATH. */
#include "fortstat/cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"
#include "fortstat/sample.h"
#include "fortstat/timeline.h"
#include "fortstat/util.h"
#include "fortstat/version.h"

enum {
	OPT_ALL = 256,
	OPT_FORMAT,
	OPT_SORT,
	OPT_CLOCK,
	OPT_PIN,
	OPT_INCLUSIVE,
	OPT_GRAPH,
	OPT_SVG,
	OPT_LINES,
	OPT_THREADS,
	OPT_NO_CORRECT,
	OPT_MERGE,
	OPT_PROGRESS,
	OPT_NO_PROGRESS,
	OPT_INTERVAL,
	OPT_DURATION,
	OPT_PROBES,
	OPT_TRAPS,
	OPT_THROTTLE,
	OPT_NO_THROTTLE,
	OPT_WIDTH,
	OPT_TOP,
	OPT_TIMELINE,
	OPT_TIMELINE_MIN,
	OPT_TIMELINE_MAX,
	OPT_SAMPLE,
	OPT_ALLOC,
};

static const struct option long_opts[] = {
    {"names", required_argument, NULL, 'n'},
    {"exclude", required_argument, NULL, 'x'},
    {"all", no_argument, NULL, OPT_ALL},
    {"lib", required_argument, NULL, 'l'},
    {"follow", no_argument, NULL, 'f'},
    {"pid", required_argument, NULL, 'p'},
    {"duration", required_argument, NULL, OPT_DURATION},
    {"output", required_argument, NULL, 'o'},
    {"format", required_argument, NULL, OPT_FORMAT},
    {"sort", required_argument, NULL, OPT_SORT},
    {"zeros", no_argument, NULL, 'z'},
    {"inclusive", no_argument, NULL, OPT_INCLUSIVE},
    {"graph", no_argument, NULL, OPT_GRAPH},
    {"svg", required_argument, NULL, OPT_SVG},
    {"timeline", required_argument, NULL, OPT_TIMELINE},
    {"timeline-min", required_argument, NULL, OPT_TIMELINE_MIN},
    {"timeline-max", required_argument, NULL, OPT_TIMELINE_MAX},
    {"lines", no_argument, NULL, OPT_LINES},
    {"sample", optional_argument, NULL, OPT_SAMPLE},
    {"threads", no_argument, NULL, OPT_THREADS},
    {"width", required_argument, NULL, OPT_WIDTH},
    {"top", required_argument, NULL, OPT_TOP},
    {"no-correct", no_argument, NULL, OPT_NO_CORRECT},
    {"merge", no_argument, NULL, OPT_MERGE},
    {"progress", no_argument, NULL, OPT_PROGRESS},
    {"no-progress", no_argument, NULL, OPT_NO_PROGRESS},
    {"interval", required_argument, NULL, OPT_INTERVAL},
    {"probes", no_argument, NULL, OPT_PROBES},
    {"traps", no_argument, NULL, OPT_TRAPS},
    {"throttle", required_argument, NULL, OPT_THROTTLE},
    {"no-throttle", no_argument, NULL, OPT_NO_THROTTLE},
    {"alloc", no_argument, NULL, OPT_ALLOC},
    {"count-only", no_argument, NULL, 'c'},
    {"clock", required_argument, NULL, OPT_CLOCK},
    {"pin", required_argument, NULL, OPT_PIN},
    {"verbose", no_argument, NULL, 'v'},
    {"help", no_argument, NULL, 'h'},
    {"version", no_argument, NULL, 'V'},
    {NULL, 0, NULL, 0},
};

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
	      "                       programs they exec, one report each (see -o %p)\n"
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
	      "                       while the program has one thread, unless it uses\n"
	      "                       OpenMP or TBB), always, or never\n"
	      "      --no-correct     print gross times: do not remove the calibrated\n"
	      "                       per-stop overhead\n"
	      "      --probes         time in-process: the program records its entries and\n"
	      "                       returns in memory shared with fortstat; stops only\n"
	      "                       for rare events (the default)\n"
	      "      --traps          time with a SIGTRAP at every entry and return,\n"
	      "                       FORTSTAT's classic way\n"
	      "      --throttle=CALLS,USEC  with --probes, a routine called CALLS times\n"
	      "                       whose mean self time is under USEC microseconds is\n"
	      "                       counted from then on, not timed (default 100000,10);\n"
	      "                       one on the trap path stops being counted: >=N\n"
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
	      "                       trace-event JSON for Perfetto (ui.perfetto.dev) or\n"
	      "                       chrome://tracing, a track a thread and process (-f:\n"
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

int cli_parse(int argc, char **argv, struct options *o)
{
	const char *mech;
	int c;

	memset(o, 0, sizeof(*o));
	o->report.format = FMT_TABLE;
	o->report.sort = SORT_TIME;
	o->clock = CLOCK_KIND_CPU;
	o->pin = PIN_AUTO;
	o->progress = -1;
	o->probes = true; /* in-process probes; --traps for the classic way */
	/* TAU's throttle: 100,000 calls under 10 us each */
	o->throttle_calls = 100000;
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
	optind = 1;
	opterr = 0;
	/* '+': options stop at PROGRAM; its own options are its own. */
	while ((c = getopt_long(argc, argv, "+:n:x:l:o:p:fzcvhV", long_opts, NULL)) != -1) {
		switch (c) {
		case 'n':
			o->names_file = optarg;
			break;
		case 'x':
			o->exclude_file = optarg;
			break;
		case OPT_ALL:
			o->all = true;
			break;
		case 'f':
			o->follow = true;
			break;
		case 'l':
			if (o->n_libs == CLI_MAX_LIBS)
				return usage_error("too many -l patterns (at most 32):", optarg);
			o->libs[o->n_libs++] = optarg;
			break;
		case 'o':
			o->output = optarg;
			break;
		case OPT_FORMAT:
			if (report_parse_format(optarg, &o->report.format) < 0)
				return usage_error("unknown --format (table, csv, json, folded, "
						   "callgrind, pprof):",
						   optarg);
			break;
		case OPT_SORT:
			if (report_parse_sort(optarg, &o->report.sort) < 0)
				return usage_error("unknown --sort key (time, calls, name, wait):",
						   optarg);
			break;
		case 'z':
			o->report.zeros = true;
			break;
		case 'c':
			o->count_only = true;
			break;
		case OPT_INCLUSIVE:
			o->report.inclusive = true;
			break;
		case OPT_GRAPH:
			o->report.graph = true;
			break;
		case OPT_SVG:
			if (!*optarg)
				return usage_error("--svg needs a file name", NULL);
			o->svg = optarg;
			break;
		case OPT_TIMELINE:
			if (!*optarg)
				return usage_error("--timeline needs a file name", NULL);
			o->timeline = optarg;
			break;
		case OPT_TIMELINE_MIN: {
			char *end;

			errno = 0;
			o->timeline_min_us = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->timeline_min_us >= 0) ||
			    o->timeline_min_us > 1e12)
				return usage_error("--timeline-min needs a number of microseconds:",
						   optarg);
			break;
		}
		case OPT_TIMELINE_MAX: {
			char *end;
			long long v;

			errno = 0;
			v = strtoll(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > TIMELINE_MAX_LIMIT)
				return usage_error("--timeline-max needs a number of calls:",
						   optarg);
			o->timeline_max = (size_t)v;
			break;
		}
		case OPT_LINES:
			o->report.lines = true;
			break;
		case OPT_SAMPLE: {
			char *end;
			long v = SAMPLE_HZ_DEFAULT;

			errno = 0;
			if (optarg)
				v = strtol(optarg, &end, 10);
			if (optarg &&
			    (errno || end == optarg || *end || v <= 0 || v > SAMPLE_HZ_MAX))
				return usage_error("--sample needs a rate in Hz (1 to 100000):",
						   optarg);
			o->sample_hz = (unsigned)v;
			break;
		}
		case OPT_THREADS:
			o->report.threads = true;
			break;
		case OPT_WIDTH:
		case OPT_TOP: {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > 1000000)
				return usage_error(c == OPT_WIDTH
						       ? "--width needs a number of columns:"
						       : "--top needs a number of rows:",
						   optarg);
			if (c == OPT_WIDTH)
				o->report.width = (size_t)v;
			else
				o->report.top = (size_t)v;
			break;
		}
		case OPT_NO_CORRECT:
			o->no_correct = true;
			break;
		case OPT_MERGE:
			o->merge = true;
			break;
		case OPT_PROGRESS:
			o->progress = 1;
			break;
		case OPT_NO_PROGRESS:
			o->progress = 0;
			break;
		case OPT_INTERVAL:
			if (parse_seconds(optarg, &o->interval_s) < 0)
				return usage_error("--interval needs a number of seconds above 0:",
						   optarg);
			break;
		case 'p': {
			char *end;
			long v;

			errno = 0;
			v = strtol(optarg, &end, 10);
			if (errno || end == optarg || *end || v <= 0 || v > INT_MAX)
				return usage_error("-p needs a process id:", optarg);
			o->pid = (int)v;
			break;
		}
		case OPT_DURATION: {
			char *end;

			errno = 0;
			o->duration = strtod(optarg, &end);
			if (errno || end == optarg || *end || !(o->duration > 0) ||
			    o->duration > 1e8)
				return usage_error("--duration needs a number of seconds > 0:",
						   optarg);
			break;
		}
		case OPT_PROBES:
			o->probes = true;
			o->mech_asked = true;
			break;
		case OPT_TRAPS:
			o->probes = false;
			o->mech_asked = true;
			break;
		case OPT_THROTTLE: {
			char *end;
			unsigned long long calls = strtoull(optarg, &end, 10);
			double usec = *end == ',' ? strtod(end + 1, &end) : -1;

			if (*end || calls < 1 || !(usec > 0) || usec > 1e9 || optarg[0] == '-')
				return usage_error("--throttle is CALLS,USEC (e.g. 100000,10), not",
						   optarg);
			o->throttle_calls = calls;
			o->throttle_usec = usec;
			break;
		}
		case OPT_NO_THROTTLE:
			o->throttle_calls = 0;
			break;
		case OPT_ALLOC:
			o->report.alloc = true;
			break;
		case OPT_CLOCK:
			if (!strcmp(optarg, "cpu"))
				o->clock = CLOCK_KIND_CPU;
			else if (!strcmp(optarg, "wall"))
				o->clock = CLOCK_KIND_WALL;
			else if (!strcmp(optarg, "both"))
				o->clock = CLOCK_KIND_CPU;
			else
				return usage_error("unknown --clock (cpu, wall, both):", optarg);
			o->report.both = !strcmp(optarg, "both");
			break;
		case OPT_PIN:
			if (!strcmp(optarg, "auto"))
				o->pin = PIN_AUTO;
			else if (!strcmp(optarg, "always"))
				o->pin = PIN_ALWAYS;
			else if (!strcmp(optarg, "never"))
				o->pin = PIN_NEVER;
			else
				return usage_error("unknown --pin (auto, always, never):", optarg);
			break;
		case 'v':
			o->verbose++;
			break;
		case 'h':
			cli_usage(stdout);
			return 0;
		case 'V':
			printf("fortstat %s\n", fs_version());
			return 0;
		case ':':
			return usage_error("option needs an argument:", argv[optind - 1]);
		default:
			return usage_error("unknown option:", argv[optind - 1]);
		}
	}
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
	};

	for (size_t i = 0; i < o->n_libs && i < TRACE_MAX_LIBS; i++)
		t.libs[i] = o->libs[i];
	return t;
}
