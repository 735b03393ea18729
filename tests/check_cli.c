// SPDX-License-Identifier: GPL-2.0-or-later
/* check_cli.c - Check suite for option parsing and the PATH search. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fortstat/cli.h"

static int parse(struct options *o, char **argv)
{
	int argc = 0;

	while (argv[argc])
		argc++;
	return cli_parse(argc, argv, o);
}

/* parse(o, argv) with what it writes to standard error in err (size n); its result. */
static int parse_err(struct options *o, char **argv, char *err, size_t n)
{
	char path[] = "/tmp/check_cli.XXXXXX";
	int fd = mkstemp(path), saved = dup(2), rc;
	ssize_t got;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_ge(saved, 0);
	unlink(path);
	fflush(stderr);
	dup2(fd, 2);
	rc = parse(o, argv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	got = pread(fd, err, n - 1, 0);
	ck_assert_int_ge(got, 0);
	err[got] = '\0';
	close(fd);
	return rc;
}

START_TEST(test_defaults)
{
	struct options o;
	char *argv[] = {"fortstat", "./prog", "-n", "x", NULL};
	char *traps[] = {"fortstat", "--traps", "./prog", NULL};
	char *both[] = {"fortstat", "--traps", "--probes", "./prog", NULL};

	/* the mechanism: in-process probes unless told (make check sets the traps) */
	unsetenv("FORTSTAT_MECHANISM");
	ck_assert_int_eq(parse(&o, traps), -1);
	ck_assert(!o.probes && o.mech_asked);
	ck_assert_int_eq(parse(&o, both), -1);
	ck_assert(o.probes && o.mech_asked);
	setenv("FORTSTAT_MECHANISM", "traps", 1);
	ck_assert_int_eq(parse(&o, argv), -1);
	ck_assert(!o.probes && o.mech_asked);
	unsetenv("FORTSTAT_MECHANISM");
	ck_assert_int_eq(parse(&o, argv), -1);
	ck_assert(o.probes && !o.mech_asked);
	ck_assert_int_eq(o.argc, 3);
	ck_assert_str_eq(o.argv[0], "./prog");
	/* PROGRAM's own options stay its own */
	ck_assert_str_eq(o.argv[1], "-n");
	ck_assert_ptr_null(o.names_file);
	ck_assert_int_eq(o.report.format, FMT_TABLE);
	ck_assert_int_eq(o.report.sort, SORT_TIME);
	ck_assert_int_eq(o.clock, CLOCK_KIND_CPU);
	ck_assert_int_eq(o.report.clock, CLOCK_KIND_CPU);
	ck_assert(!o.count_only && !o.all && !o.report.zeros);
	ck_assert_int_eq(o.verbose, 0);
}
END_TEST

START_TEST(test_every_option)
{
	struct options o;
	char *argv[] = {"fortstat",	"-n",	"n.txt", "--exclude=x.txt",
			"--all",	"-o",	"r.txt", "--format=json",
			"--sort=calls", "-z",	"-c",	 "--clock=wall",
			"-vv",		"prog", NULL};

	ck_assert_int_eq(parse(&o, argv), -1);
	ck_assert_str_eq(o.names_file, "n.txt");
	ck_assert_str_eq(o.exclude_file, "x.txt");
	ck_assert(o.all);
	ck_assert_str_eq(o.output, "r.txt");
	ck_assert_int_eq(o.report.format, FMT_JSON);
	ck_assert_int_eq(o.report.sort, SORT_CALLS);
	ck_assert(o.report.zeros);
	ck_assert(o.count_only);
	ck_assert_int_eq(o.clock, CLOCK_KIND_WALL);
	ck_assert_int_eq(o.report.clock, CLOCK_KIND_WALL);
	ck_assert_int_eq(o.verbose, 2);
	ck_assert_str_eq(o.argv[0], "prog");
}
END_TEST

START_TEST(test_long_forms)
{
	struct options o;
	char *argv[] = {"fortstat", "--names",	    "a",	 "--output", "b",
			"--zeros",  "--count-only", "--verbose", "--sort",   "name",
			"--format", "csv",	    "p",	 NULL};

	ck_assert_int_eq(parse(&o, argv), -1);
	ck_assert_str_eq(o.names_file, "a");
	ck_assert_str_eq(o.output, "b");
	ck_assert_int_eq(o.report.sort, SORT_NAME);
	ck_assert_int_eq(o.report.format, FMT_CSV);
	ck_assert(o.report.zeros && o.count_only);
	ck_assert_int_eq(o.verbose, 1);
}
END_TEST

START_TEST(test_views)
{
	struct options o;
	char *argv[] = {"fortstat",  "--inclusive",  "--graph",		"--svg=f.svg", "--lines",
			"--threads", "--no-correct", "--format=folded", "p",	       NULL};
	char *cg[] = {"fortstat", "--format", "callgrind", "--svg", "g.svg", "p", NULL};
	char *bad[] = {"fortstat", "--svg=", "p", NULL};
	char *none[] = {"fortstat", "p", NULL};
	char *pp[] = {"fortstat", "--format=pprof", "-o", "p.pb.gz", "p", NULL};

	ck_assert_int_eq(parse(&o, pp), -1);
	ck_assert_int_eq(o.report.format, FMT_PPROF);
	ck_assert_int_eq(parse(&o, argv), -1);
	ck_assert(o.report.inclusive && o.report.graph && o.report.lines && o.report.threads);
	ck_assert(o.no_correct);
	ck_assert_str_eq(o.svg, "f.svg");
	ck_assert_int_eq(o.report.format, FMT_FOLDED);
	ck_assert_int_eq(parse(&o, cg), -1);
	ck_assert_int_eq(o.report.format, FMT_CALLGRIND);
	ck_assert_str_eq(o.svg, "g.svg");
	ck_assert_int_eq(parse(&o, bad), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, none), -1);
	ck_assert(!o.report.inclusive && !o.report.graph && !o.report.lines && !o.report.threads);
	ck_assert(!o.no_correct && !o.svg);
}
END_TEST

/* --sample[=HZ]: 997 without a rate; a rate from 1 to 100000; not with -c or --merge. */
START_TEST(test_sample)
{
	struct options o;
	char *dflt[] = {"fortstat", "--sample", "--lines", "p", NULL};
	char *rate[] = {"fortstat", "--sample=2000", "p", NULL};
	char *none[] = {"fortstat", "p", NULL};
	char *zero[] = {"fortstat", "--sample=0", "p", NULL};
	char *high[] = {"fortstat", "--sample=100001", "p", NULL};
	char *word[] = {"fortstat", "--sample=fast", "p", NULL};
	char *count[] = {"fortstat", "-c", "--sample", "p", NULL};
	char *merge[] = {"fortstat", "--merge", "--sample", "a.json", NULL};
	struct trace_opts t;

	ck_assert_int_eq(parse(&o, dflt), -1);
	ck_assert_uint_eq(o.sample_hz, 997);
	ck_assert(o.report.lines);
	t = cli_trace_opts(&o);
	ck_assert_uint_eq(t.sample_hz, 997);
	ck_assert_int_eq(parse(&o, rate), -1);
	ck_assert_uint_eq(cli_trace_opts(&o).sample_hz, 2000);
	ck_assert_int_eq(parse(&o, none), -1);
	ck_assert_uint_eq(o.sample_hz, 0);
	ck_assert_int_eq(parse(&o, zero), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, high), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, word), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, count), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, merge), EXIT_FS_ERROR);
}
END_TEST

START_TEST(test_pin)
{
	struct options o;
	char *a1[] = {"fortstat", "p", NULL};
	char *a2[] = {"fortstat", "--pin=always", "p", NULL};
	char *a3[] = {"fortstat", "--pin", "never", "p", NULL};
	char *a4[] = {"fortstat", "--pin=auto", "p", NULL};

	ck_assert_int_eq(parse(&o, a1), -1);
	ck_assert_int_eq(o.pin, PIN_AUTO);
	ck_assert_int_eq(parse(&o, a2), -1);
	ck_assert_int_eq(o.pin, PIN_ALWAYS);
	ck_assert_int_eq(parse(&o, a3), -1);
	ck_assert_int_eq(o.pin, PIN_NEVER);
	ck_assert_int_eq(parse(&o, a4), -1);
	ck_assert_int_eq(o.pin, PIN_AUTO);
}
END_TEST

/* --progress, --no-progress (the last wins), --interval: and what the tracer is told. */
START_TEST(test_live)
{
	struct options o;
	struct trace_opts t;
	char *a0[] = {"fortstat", "./prog", NULL};
	char *a1[] = {"fortstat", "--progress", "--interval=2.5", "./prog", NULL};
	char *a2[] = {"fortstat", "--progress", "--no-progress", "./prog", NULL};
	char *bad[][4] = {
	    {"fortstat", "--interval=0", "./prog", NULL},
	    {"fortstat", "--interval=-1", "./prog", NULL},
	    {"fortstat", "--interval=2s", "./prog", NULL},
	    {"fortstat", "--interval=", "./prog", NULL},
	    {"fortstat", "--interval=nan", "./prog", NULL},
	};

	ck_assert_int_eq(parse(&o, a0), -1);
	ck_assert_int_eq(o.progress, -1); /* when standard error is a terminal */
	ck_assert(o.interval_s == 0);
	ck_assert_int_eq(parse(&o, a1), -1);
	ck_assert_int_eq(o.progress, 1);
	ck_assert(o.interval_s == 2.5);
	t = cli_trace_opts(&o);
	ck_assert(t.interval_s == 2.5);
	ck_assert_ptr_null(t.on_snapshot); /* main's to set */
	ck_assert_int_eq(parse(&o, a2), -1);
	ck_assert_int_eq(o.progress, 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(parse(&o, bad[i]), EXIT_FS_ERROR);
}
END_TEST

START_TEST(test_errors)
{
	struct options o;
	char *a1[] = {"fortstat", NULL};
	char *a2[] = {"fortstat", "--format=xml", "p", NULL};
	char *a3[] = {"fortstat", "--sort=size", "p", NULL};
	char *a4[] = {"fortstat", "--clock=sundial", "p", NULL};
	char *a5[] = {"fortstat", "--bogus", "p", NULL};
	char *a6[] = {"fortstat", "-o", NULL};
	char *a7[] = {"fortstat", "-q", "p", NULL};
	char *a8[] = {"fortstat", "--pin=sometimes", "p", NULL};

	ck_assert_int_eq(parse(&o, a1), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a2), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a3), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a4), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a5), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a6), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a7), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a8), EXIT_FS_ERROR);
}
END_TEST

/*
 * The line each usage error writes, exactly (one per option that checks
 * its argument, and the checks of options together).
 */
START_TEST(test_error_messages)
{
	static const struct {
		const char *argv[6];
		const char *line;
	} cases[] = {
	    {{"--bogus", "p"}, "unknown option: '--bogus'"},
	    {{"-q", "p"}, "unknown option: '-q'"},
	    {{"--format"}, "option needs an argument: '--format'"},
	    {{"-o"}, "option needs an argument: '-o'"},
	    {{"--format=xml", "p"},
	     "unknown --format (table, csv, json, folded, callgrind, pprof): 'xml'"},
	    {{"--sort=size", "p"}, "unknown --sort key (time, calls, name, wait): 'size'"},
	    {{"--svg=", "p"}, "--svg needs a file name"},
	    {{"--timeline=", "p"}, "--timeline needs a file name"},
	    {{"--timeline-min=-1", "p"}, "--timeline-min needs a number of microseconds: '-1'"},
	    {{"--timeline-max=0", "p"}, "--timeline-max needs a number of calls: '0'"},
	    {{"--sample=0", "p"}, "--sample needs a rate in Hz (1 to 100000): '0'"},
	    {{"--width=0", "p"}, "--width needs a number of columns: '0'"},
	    {{"--top=x", "p"}, "--top needs a number of rows: 'x'"},
	    {{"--interval=0", "p"}, "--interval needs a number of seconds above 0: '0'"},
	    {{"-p", "x"}, "-p needs a process id: 'x'"},
	    {{"--duration=0", "-p", "1"}, "--duration needs a number of seconds > 0: '0'"},
	    {{"--throttle=10", "p"}, "--throttle is CALLS,USEC (e.g. 10000,10), not '10'"},
	    {{"--clock=sundial", "p"}, "unknown --clock (cpu, wall, both): 'sundial'"},
	    {{"--pin=sometimes", "p"}, "unknown --pin (auto, always, never): 'sometimes'"},
	    {{"--merge", "--sample"}, "--sample is for a run, not --merge"},
	    {{"--merge", "--timeline=t"}, "--timeline is for a run, not --merge"},
	    {{"--merge", "--sort=wait"}, "--sort=wait needs a run's two clocks: not with --merge"},
	    {{"--duration=1", "p"}, "--duration needs -p PID"},
	    {{"--sample", "-c", "p"}, "--sample divides times: not with -c"},
	    {{"--timeline=t", "-c", "p"}, "--timeline needs times: not with -c"},
	    {{"--alloc", "-c", "p"}, "--alloc needs the allocators' returns: not with -c"},
	    {{"-p", "1", "p"}, "-p attaches to a running process: no PROGRAM with it: 'p'"},
	    {{"-p", "1", "-f"}, "-f cannot be used with -p"},
	    {{NULL}, "no PROGRAM given"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char *argv[8] = {"fortstat"}, got[256], want[256];
		struct options o;
		size_t n;

		for (n = 0; n < 6 && cases[i].argv[n]; n++)
			argv[n + 1] = (char *)cases[i].argv[n];
		ck_assert_int_eq(parse_err(&o, argv, got, sizeof(got)), EXIT_FS_ERROR);
		snprintf(want, sizeof(want), "fortstat: error: %s (try 'fortstat --help')\n",
			 cases[i].line);
		ck_assert_str_eq(got, want);
	}
}
END_TEST

/*
 * Every option --help names (--NAME and -X) is one the parser knows: given
 * alone, it may want an argument or a PROGRAM, never be unknown. (--help's
 * and --version's output goes to /dev/null.)
 */
START_TEST(test_help_options)
{
	char *help = NULL, *p, *opt, *seen[256], err[512];
	size_t len = 0, n_long = 0, n_short = 0, n_seen = 0;
	FILE *f = open_memstream(&help, &len);
	int out = dup(1), null = open("/dev/null", O_WRONLY);

	ck_assert_ptr_nonnull(f);
	cli_usage(f);
	fclose(f);
	ck_assert_int_ge(null, 0);
	fflush(stdout);
	dup2(null, 1);
	for (p = help; (p = strchr(p, '-'));) {
		size_t k = p[1] == '-' ? 2 : 1, m = k;
		struct options o;
		char *argv[3] = {"fortstat", NULL, NULL};
		int rc;

		while ((p[m] >= 'a' && p[m] <= 'z') || (p[m] >= 'A' && p[m] <= 'Z') ||
		       (m > k && p[m] == '-'))
			m++;
		/* an option: "--name" (two letters at least), or "-x" alone after a space */
		if (m == k || (k == 2 && m < 4) ||
		    (k == 1 && (m != 2 || p == help || p[-1] != ' '))) {
			p += m;
			continue;
		}
		opt = strndup(p, m);
		argv[1] = opt;
		rc = parse_err(&o, argv, err, sizeof(err));
		ck_assert_msg(!strstr(err, "unknown option"), "%s: %s", opt, err);
		ck_assert_msg(rc == -1 || rc == 0 || rc == EXIT_FS_ERROR, "%s: %d", opt, rc);
		k == 2 ? n_long++ : n_short++;
		/* kept to the end: getopt may still point into the last argv */
		ck_assert_uint_lt(n_seen, 256);
		seen[n_seen++] = opt;
		p += m;
	}
	fflush(stdout);
	dup2(out, 1);
	close(out);
	close(null);
	ck_assert_uint_ge(n_long, 38); /* each of the 38 long options at least once */
	ck_assert_uint_ge(n_short, 11);
	while (n_seen)
		free(seen[--n_seen]);
	free(help);
}
END_TEST

/* -p PID and --duration: no PROGRAM, no -f; the tracer gets both. */
START_TEST(test_attach)
{
	struct options o;
	struct trace_opts t;
	char *a1[] = {"fortstat", "-p", "1234", "--duration=1.5", "-c", NULL};
	char *a2[] = {"fortstat", "--pid=42", NULL};
	char *a3[] = {"fortstat", "-p", "42", "./prog", NULL};
	char *a4[] = {"fortstat", "-p", "42", "-f", NULL};
	char *a5[] = {"fortstat", "--duration=1", "./prog", NULL};
	char *a6[] = {"fortstat", "-p", "0", NULL};
	char *a7[] = {"fortstat", "-p", "12x", NULL};
	char *a8[] = {"fortstat", "-p", "42", "--duration=0", NULL};
	char *a9[] = {"fortstat", "-p", "42", "--duration=soon", NULL};
	char *a10[] = {"fortstat", "--probes", "-p", "42", NULL};

	ck_assert_int_eq(parse(&o, a1), -1);
	ck_assert_int_eq(o.pid, 1234);
	ck_assert_int_eq(o.argc, 0);
	t = cli_trace_opts(&o);
	ck_assert_int_eq(t.pid, 1234);
	ck_assert(t.duration_s == 1.5);
	ck_assert(t.count_only);
	ck_assert_int_eq(parse(&o, a2), -1);
	ck_assert_int_eq(o.pid, 42);
	ck_assert(o.duration == 0);
	ck_assert_int_eq(parse(&o, a3), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a4), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a5), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a6), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a7), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a8), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a9), EXIT_FS_ERROR);
	ck_assert_int_eq(parse(&o, a10), -1);
	ck_assert(o.probes); /* asked for: main says it is not for -p yet, traps time it */
}
END_TEST

/* The tracer's options are the command line's, nothing more and nothing less. */
START_TEST(test_trace_opts)
{
	struct options o;
	char *argv[] = {"fortstat", "-c",	"-f",	       "--all",	       "-l",	 "libm",
			"-l",	    "libblas*", "--pin=never", "--clock=wall", "./prog", NULL};
	struct trace_opts t;

	ck_assert_int_eq(parse(&o, argv), -1);
	t = cli_trace_opts(&o);
	ck_assert(t.count_only && t.follow && t.all);
	ck_assert_uint_eq(t.n_libs, 2);
	ck_assert_str_eq(t.libs[0], "libm");
	ck_assert_str_eq(t.libs[1], "libblas*");
	ck_assert_ptr_null(t.libs[2]);
	ck_assert_int_eq(t.pin, PIN_NEVER);
	ck_assert_int_eq(t.clock, CLOCK_KIND_WALL);
}
END_TEST

START_TEST(test_find_program)
{
	char dir[] = "/tmp/check_cli.XXXXXX";
	char *path = NULL, *exe, *noexe, *oldpath = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
	FILE *f;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_ne(asprintf(&exe, "%s/tool", dir), -1);
	ck_assert_int_ne(asprintf(&noexe, "%s/plain", dir), -1);
	f = fopen(exe, "w");
	fputs("x", f);
	fclose(f);
	chmod(exe, 0755);
	f = fopen(noexe, "w");
	fputs("x", f);
	fclose(f);
	chmod(noexe, 0644);

	setenv("PATH", "/nonexistent:", 1);
	ck_assert_int_eq(cli_find_program("tool", &path), EXIT_FS_NOTFOUND);
	setenv("PATH", dir, 1);
	ck_assert_int_eq(cli_find_program("tool", &path), 0);
	ck_assert_str_eq(path, exe);
	free(path);
	ck_assert_int_eq(cli_find_program("plain", &path), EXIT_FS_CANNOT);
	ck_assert_int_eq(cli_find_program("nothing", &path), EXIT_FS_NOTFOUND);
	ck_assert_int_eq(cli_find_program(exe, &path), 0);
	free(path);
	ck_assert_int_eq(cli_find_program(noexe, &path), EXIT_FS_CANNOT);
	ck_assert_int_eq(cli_find_program(dir, &path), EXIT_FS_CANNOT);
	ck_assert_int_eq(cli_find_program("./no/such", &path), EXIT_FS_NOTFOUND);
	ck_assert_int_eq(cli_find_program("", &path), EXIT_FS_NOTFOUND);
	if (oldpath)
		setenv("PATH", oldpath, 1);
	unlink(exe);
	unlink(noexe);
	rmdir(dir);
	free(exe);
	free(noexe);
	free(oldpath);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cli");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_defaults);
	tcase_add_test(tc, test_every_option);
	tcase_add_test(tc, test_long_forms);
	tcase_add_test(tc, test_views);
	tcase_add_test(tc, test_sample);
	tcase_add_test(tc, test_live);
	tcase_add_test(tc, test_errors);
	tcase_add_test(tc, test_error_messages);
	tcase_add_test(tc, test_help_options);
	tcase_add_test(tc, test_pin);
	tcase_add_test(tc, test_find_program);
	tcase_add_test(tc, test_trace_opts);
	tcase_add_test(tc, test_attach);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
