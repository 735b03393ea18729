// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_stop.c - naming stops: wait statuses, event words and int3
 * addresses, synthetic; and a real run whose waits fortstat's own signals
 * interrupt.
 */
#include <check.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/time.h>
#include <unistd.h>

#include "fortstat/account.h"
#include "fortstat/books.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "tracer/stop.h"
#include "tracer/tracer.h"
#include "probe/areas.h"
#include "tracer/wait.h"

#ifndef BUILDDIR
#error "BUILDDIR must name the build directory"
#endif

/* A wait status as the kernel makes them. */
static int stopped(int sig, int event)
{
	return (event << 16) | (sig << 8) | 0x7f;
}

static struct stop from(int status)
{
	struct stop s;

	stop_from_status(4242, status, &s);
	ck_assert_int_eq(s.tid, 4242);
	ck_assert_int_eq(s.status, status);
	ck_assert_uint_eq(s.ev, 0);
	return s;
}

START_TEST(test_status)
{
	ck_assert_int_eq(from(3 << 8).kind, STOP_GONE);	 /* exited with 3 */
	ck_assert_int_eq(from(SIGKILL).kind, STOP_GONE); /* killed */
	ck_assert_int_eq(from(0xffff).kind, STOP_NONE);	 /* continued */
	ck_assert_int_eq(from(stopped(SIGTRAP, 0)).kind, STOP_BREAK);
	ck_assert_int_eq(from(stopped(SIGSEGV, 0)).kind, STOP_SIGNAL);
	ck_assert_int_eq(from(stopped(SIGSEGV, 0)).sig, SIGSEGV);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_CLONE)).kind, STOP_CLONE);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_FORK)).kind, STOP_FORK);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_VFORK)).kind, STOP_VFORK);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_EXEC)).kind, STOP_EXEC);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_EXIT)).kind, STOP_EXIT);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_VFORK_DONE)).kind, STOP_EVENT);
	ck_assert_int_eq(from(stopped(SIGSTOP, PTRACE_EVENT_STOP)).kind, STOP_GROUP);
	ck_assert_int_eq(from(stopped(SIGTSTP, PTRACE_EVENT_STOP)).kind, STOP_GROUP);
	ck_assert_int_eq(from(stopped(SIGTTIN, PTRACE_EVENT_STOP)).kind, STOP_GROUP);
	ck_assert_int_eq(from(stopped(SIGTTOU, PTRACE_EVENT_STOP)).kind, STOP_GROUP);
	ck_assert_int_eq(from(stopped(SIGTRAP, PTRACE_EVENT_STOP)).kind, STOP_INTERRUPT);
	ck_assert_str_eq(stop_kind_name(STOP_RETURN_SITE), "return-site");
	ck_assert_str_eq(stop_kind_name(STOP_EXIT_PROBE), "exit-probe");
	ck_assert_str_eq(stop_kind_name((enum stop_kind)999), "?");
}
END_TEST

/*
 * A process with: patch 0 a stub (its int3 in scratch), 1 an int3 patch,
 * 2 the rendezvous, 3 an unwinder hook, 4 a dead stub (its library closed);
 * the common return trap and three return sites' traps made.
 */
#define RETRAP 0x10000
#define RSITES 0x20000
static struct patch patches[6];
static struct pstate ps;

static void setup(void)
{
	static const uint64_t trap[6] = {0x30010, 0x401000, 0x7f0000, 0x7f1000, 0x30110, 0x401040};

	memset(patches, 0, sizeof(patches));
	memset(&ps, 0, sizeof(ps));
	for (int i = 0; i < 6; i++) {
		patches[i].trap = trap[i];
		u64map_put(&ps.traps, trap[i], (uint64_t)i);
	}
	patches[0].stub = patches[4].stub = true;
	patches[4].dead = true;
	patches[2].rdebug = true;
	patches[3].unhook = true;
	patches[5].exit_probe = true; /* a Go routine's `ret` */
	patches[5].routine = 1;
	ps.patches = patches;
	ps.n_patches = 6;
	ps.retrap_trap = RETRAP;
	ps.rsites = RSITES;
	ps.rsite_n = 3;
}

static void teardown(void)
{
	u64map_free(&ps.traps);
	free(ps.probe.hot);
}

/*
 * What a drain reads of each patch (struct patch_hot): made from the
 * records once each, a later change through probe_hot_set, none past the
 * patches an exec left.
 */
START_TEST(test_hot)
{
	const unsigned all = HOT_LIVE | HOT_NORETURN | HOT_WATCH;

	patches[0].routine = 7;
	patches[0].throttle = 0x30100;
	patches[0].noreturn = true;
	patches[4].routine = 8;
	probe_hot_sync(&ps);
	ck_assert_uint_eq(ps.probe.n_hot, 6);
	ck_assert_uint_eq(ps.probe.hot[0].routine, 7);
	ck_assert_uint_eq(ps.probe.hot[0].flags, all);
	ck_assert_uint_eq(ps.probe.hot[1].flags, 0); /* an int3 patch */
	ck_assert_uint_eq(ps.probe.hot[3].flags, 0); /* an unwinder hook */
	ck_assert_uint_eq(ps.probe.hot[4].flags, 0); /* a dead stub */
	ck_assert_uint_eq(ps.probe.hot[5].flags, 0); /* a Go exit probe */
	/* made once: a record changed since is not read again at the next drain */
	patches[0].noreturn = false;
	probe_hot_sync(&ps);
	ck_assert_uint_eq(ps.probe.hot[0].flags, all);
	probe_hot_set(&ps, 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_WATCH);
	patches[0].noreturn = true;
	/* a throttle candidate (probe_throttle_candidate's mark): kept by a change */
	ps.probe.hot[0].flags = HOT_LIVE | HOT_NORETURN | HOT_CAND;
	probe_hot_set(&ps, 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_NORETURN | HOT_CAND);
	patches[0].throttled = true; /* still listed: throttle() passes over it */
	probe_hot_set(&ps, 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_NORETURN | HOT_CAND);
	ps.probe.hot[0].flags &= (uint8_t)~HOT_CAND; /* throttle() took it */
	probe_hot_set(&ps, 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_NORETURN);
	patches[0].dead = true; /* its library closed */
	probe_hot_set(&ps, 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_NORETURN);
	/* an exec: no patches, then the new image's at the same indices */
	ps.n_patches = 0;
	probe_hot_sync(&ps);
	ck_assert_uint_eq(ps.probe.n_hot, 0);
	probe_hot_set(&ps, 0); /* none to change */
	memset(&patches[0], 0, sizeof(patches[0]));
	patches[0].stub = true;
	patches[0].routine = 3;
	patches[0].throttle = 0x30200;
	ps.n_patches = 1;
	probe_hot_sync(&ps);
	ck_assert_uint_eq(ps.probe.n_hot, 1);
	ck_assert_uint_eq(ps.probe.hot[0].routine, 3);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_WATCH);
}
END_TEST

/*
 * A throttle candidate is marked in its drain entry (HOT_CAND), once a
 * drain, never read from its record: a patch without a throttle flag, or
 * out of range, is none; one made since the last drain is synced first.
 */
START_TEST(test_candidates)
{
	struct trace_opts o = {.throttle_calls = 10};
	struct tracer tr = {.o = &o, .ps = &ps};

	ps.probes = true;
	patches[0].routine = 7;
	patches[0].throttle = 0x30100;
	ps.n_patches = 5;
	probe_hot_sync(&ps);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_WATCH);
	probe_throttle_candidate(&tr, 0);
	probe_throttle_candidate(&tr, 0); /* listed once */
	probe_throttle_candidate(&tr, 1); /* no throttle flag: an int3 patch */
	probe_throttle_candidate(&tr, 9); /* no such patch */
	ck_assert_uint_eq(ps.probe.n_cand, 1);
	ck_assert_uint_eq(ps.probe.cand[0], 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_CAND);
	/* a change to its record keeps the mark (it is still listed) */
	patches[0].noreturn = true;
	probe_hot_set(&ps, 0);
	ck_assert_uint_eq(ps.probe.hot[0].flags, HOT_LIVE | HOT_NORETURN | HOT_CAND);
	/* a patch made since the last drain, with a flag: its entry made, then marked */
	patches[5].stub = true;
	patches[5].routine = 2;
	patches[5].throttle = 0x30200;
	patches[5].exit_probe = false;
	ps.n_patches = 6;
	probe_throttle_candidate(&tr, 5);
	ck_assert_uint_eq(ps.probe.n_hot, 6);
	ck_assert_uint_eq(ps.probe.n_cand, 2);
	ck_assert_uint_eq(ps.probe.hot[5].flags, HOT_LIVE | HOT_CAND);
	/* none without --throttle */
	o.throttle_calls = 0;
	patches[4].dead = false;
	patches[4].routine = 3;
	patches[4].throttle = 0x30300;
	probe_hot_set(&ps, 4);
	probe_throttle_candidate(&tr, 4);
	ck_assert_uint_eq(ps.probe.n_cand, 2);
	free(ps.probe.cand);
}
END_TEST

static struct stop page(uint32_t ev, bool *decided)
{
	struct stop s;

	stop_from_status(7, stopped(SIGTRAP, 0), &s);
	s.ev = ev;
	*decided = stop_from_page(&ps, &s);
	return s;
}

START_TEST(test_page)
{
	bool d;
	struct stop s;

	s = page(INSN_EV_RETURN, &d);
	ck_assert(d && s.kind == STOP_RETURN && s.from_page);
	s = page(INSN_EV_RETURN_SITE, &d);
	ck_assert(d && s.kind == STOP_RETURN_SITE);
	s = page(1, &d); /* patch 0, a stub */
	ck_assert(d && s.kind == STOP_ENTRY && s.patch == 0 && s.from_page);
	page(2, &d); /* an int3 patch never writes the word: not trusted */
	ck_assert(!d);
	page(5, &d); /* a dead stub */
	ck_assert(!d);
	s = page(7, &d); /* past the table: written by the program, not by us */
	ck_assert(!d && s.kind == STOP_BREAK && !s.from_page);
	page(6, &d); /* an exit probe writes no word either */
	ck_assert(!d);
	page(0x7fffffff, &d);
	ck_assert(!d);
	page(0, &d);
	ck_assert(!d);
}
END_TEST

static struct stop pc(uint64_t addr, bool count_only)
{
	struct stop s;

	stop_from_status(7, stopped(SIGTRAP, 0), &s);
	s.sig = 0;
	stop_from_pc(&ps, count_only, addr, &s);
	return s;
}

START_TEST(test_pc)
{
	ck_assert_int_eq(pc(RETRAP, false).kind, STOP_RETURN);
	ck_assert_int_eq(pc(RSITES + INSN_RSITE_TRAP, false).kind, STOP_RETURN_SITE);
	ck_assert_int_eq(pc(RSITES + 2 * INSN_RSITE_SIZE + INSN_RSITE_TRAP, false).kind,
			 STOP_RETURN_SITE);
	/* a site not made yet, or not at a trap's offset: the program's own SIGTRAP */
	ck_assert_int_eq(pc(RSITES + 3 * INSN_RSITE_SIZE + INSN_RSITE_TRAP, false).kind,
			 STOP_SIGNAL);
	ck_assert_int_eq(pc(RSITES + INSN_RSITE_TRAP + 1, false).kind, STOP_SIGNAL);
	ck_assert_int_eq(pc(0x30010, false).kind, STOP_ENTRY);
	ck_assert_uint_eq(pc(0x401000, false).patch, 1);
	ck_assert_int_eq(pc(0x401000, false).kind, STOP_ENTRY);
	ck_assert_int_eq(pc(0x7f0000, false).kind, STOP_RENDEZVOUS);
	ck_assert_int_eq(pc(0x7f1000, false).kind, STOP_UNWINDER);
	ck_assert_uint_eq(pc(0x7f1000, false).patch, 3);
	ck_assert_int_eq(pc(0x30110, false).kind, STOP_SIGNAL); /* dead */
	ck_assert_int_eq(pc(0x30110, false).sig, SIGTRAP);
	ck_assert_int_eq(pc(0x401001, false).kind, STOP_SIGNAL);
	ck_assert(!pc(0x401000, false).from_page);
	/* a Go routine's exit probe: an exit, whatever the mode (-c patches none) */
	ck_assert_int_eq(pc(0x401040, false).kind, STOP_EXIT_PROBE);
	ck_assert_uint_eq(pc(0x401040, false).patch, 5);
	ck_assert_int_eq(pc(0x401040, true).kind, STOP_EXIT_PROBE);
	ck_assert_int_eq(pc(0x401041, false).kind, STOP_SIGNAL);
	/* count-only: no return traps, entries counted, the rendezvous still followed */
	ck_assert_int_eq(pc(RETRAP, true).kind, STOP_SIGNAL);
	ck_assert_int_eq(pc(RSITES + INSN_RSITE_TRAP, true).kind, STOP_SIGNAL);
	ck_assert_int_eq(pc(0x401000, true).kind, STOP_COUNT);
	ck_assert_int_eq(pc(0x30010, true).kind, STOP_COUNT);
	ck_assert_int_eq(pc(0x7f0000, true).kind, STOP_RENDEZVOUS);
}
END_TEST

static volatile sig_atomic_t n_alarms;

static void on_alarm(int sig)
{
	(void)sig;
	n_alarms++;
}

/*
 * fortstat's own signals have no SA_RESTART (SIGIO of the context-switch
 * records, the ticker's SIGALRM): each wait of the tracer goes on after
 * them. The wait for the program's exec returned the error instead: the
 * run was given up, its child left stopped. Here a timer interrupts every
 * 50 us, the whole run through, five runs.
 */
START_TEST(test_waits_go_on_after_signals)
{
	static char prog[] = BUILDDIR "/fixtures/bin/chain-O0";
	char *argv[] = {prog, NULL};
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	struct itimerval it = {{0, 50}, {0, 50}}, off = {{0, 0}, {0, 0}};
	struct trace_opts o;
	struct symtab st;
	long imain, iwork;

	ck_assert_int_eq(symtab_load(prog, &st), 0);
	symtab_select(&st, NULL, NULL, false);
	imain = symtab_mainline(&st);
	iwork = -1;
	for (size_t i = 0; i < st.n; i++)
		if (!strcmp(st.r[i].names[0], "work"))
			iwork = (long)i;
	ck_assert(imain >= 0 && iwork >= 0);
	memset(&o, 0, sizeof(o));
	o.count_only = true;
	o.pin = PIN_NEVER;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	for (int k = 0; k < 5; k++) {
		struct books *b = books_new(st.n, false, false);
		const struct acct_routine *r;
		struct trace_result res;
		int err;

		n_alarms = 0;
		setitimer(ITIMER_REAL, &it, NULL);
		err = trace_run(prog, argv, &st, b, NULL, NULL, &o, NULL, &res);
		setitimer(ITIMER_REAL, &off, NULL);
		ck_assert_msg(err == 0, "run %d: %s after %d signals", k, strerror(-err),
			      (int)n_alarms);
		ck_assert_int_gt(n_alarms, 0);
		ck_assert(res.started);
		ck_assert_int_eq(res.exit_status, 0);
		r = acct_routines(books_acct(b, CLOCK_KIND_WALL, false));
		ck_assert_uint_eq(r[imain].calls, 1);
		ck_assert_uint_eq(r[iwork].calls, 1000);
		trace_result_free(&res);
		books_free(b);
	}
	sigaction(SIGALRM, &old, NULL);
	symtab_free(&st);
}
END_TEST

/*
 * The one wait (next_stop) on real children: a poll with nothing there, a
 * wait that one of fortstat's signals interrupts (handed back with
 * NEXT_INTR, else gone on with), an end named with its exit status, a
 * killed child's signal, nothing left; and the one resume on a process
 * that is not traced (ESRCH: no error said, -ESRCH returned).
 */
START_TEST(test_next_stop)
{
	struct sigaction sa = {.sa_handler = on_alarm}, old;
	struct itimerval it = {{0, 20000}, {0, 20000}}, off = {{0, 0}, {0, 0}};
	struct stop s;
	int code = -1;
	pid_t pid, other;
	int go[2];
	char c;

	/*
	 * The child waits for the pipe to close, then ends 200 ms later: the
	 * poll and the interrupted wait cannot see it end, however late this
	 * process runs on a loaded machine (a child sleeping 300 ms from its
	 * start made them race: 2 of 4 runs failed at load 13).
	 */
	ck_assert_int_eq(pipe(go), 0);
	pid = fork();
	if (pid == 0) {
		close(go[1]);
		while (read(go[0], &c, 1) > 0)
			;
		usleep(200000);
		_exit(3);
	}
	close(go[0]);
	ck_assert_int_gt(pid, 0);
	ck_assert_int_eq(next_stop(pid, NEXT_POLL, &s), 0);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, &old);
	n_alarms = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	ck_assert_int_eq(next_stop(pid, NEXT_INTR, &s), -EINTR);
	close(go[1]);
	ck_assert_int_eq(next_stop(pid, 0, &s), 1);
	setitimer(ITIMER_REAL, &off, NULL);
	sigaction(SIGALRM, &old, NULL);
	ck_assert_int_gt(n_alarms, 1); /* interrupted, and went on */
	ck_assert_int_eq(s.tid, pid);
	ck_assert_int_eq(s.kind, STOP_GONE);
	ck_assert(stop_exit_code(s.status, &code));
	ck_assert_int_eq(code, 3);

	other = fork();
	if (other == 0) {
		pause();
		_exit(0);
	}
	ck_assert_int_gt(other, 0);
	ck_assert_int_eq(tracee_resume(PTRACE_CONT, other, 0), -ESRCH); /* not ours to trace */
	kill(other, SIGKILL);
	ck_assert_int_eq(next_stop(-1, 0, &s), 1);
	ck_assert_int_eq(s.tid, other);
	ck_assert_int_eq(s.kind, STOP_GONE);
	ck_assert_int_eq(stop_term_signal(s.status), SIGKILL);
	ck_assert_int_eq(next_stop(-1, 0, &s), -ECHILD);
}
END_TEST

static Suite *stop_suite(void)
{
	Suite *s = suite_create("stop");
	TCase *tc = tcase_create("decode");
	TCase *run = tcase_create("run");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_page);
	tcase_add_test(tc, test_pc);
	tcase_add_test(tc, test_hot);
	tcase_add_test(tc, test_candidates);
	suite_add_tcase(s, tc);
	tcase_set_timeout(run, 60);
	tcase_add_test(run, test_waits_go_on_after_signals);
	tcase_add_test(run, test_next_stop);
	suite_add_tcase(s, run);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(stop_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
