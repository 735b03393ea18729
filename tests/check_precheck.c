// SPDX-License-Identifier: GPL-2.0-or-later
/* check_precheck.c - Check suite for the checks made before PROGRAM runs. */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fortstat/util.h"
#include "fortstat/precheck.h"
#include "fortstat/procfs.h"

/* The start of a real /proc/PID/status of a kernel with user shadow stacks. */
static const char status_cet[] = "Name:\tsolver\n"
				 "Umask:\t0022\n"
				 "State:\tS (sleeping)\n"
				 "Tgid:\t4242\n"
				 "Pid:\t4242\n"
				 "PPid:\t4241\n"
				 "TracerPid:\t4241\n"
				 "CapEff:\t0000000000080000\n"
				 "x86_Thread_features:\tshstk wrss\n"
				 "x86_Thread_features_locked:\tshstk\n"
				 "Seccomp:\t0\n";

START_TEST(test_shstk)
{
	ck_assert(precheck_status_shstk(status_cet));
	ck_assert(precheck_status_shstk("x86_Thread_features:\tshstk\n"));
	ck_assert(precheck_status_shstk("x86_Thread_features:\twrss shstk\n"));
	/* the last line, without its newline */
	ck_assert(precheck_status_shstk("Pid:\t1\nx86_Thread_features: shstk"));
	/* no such line (no CONFIG_X86_USER_SHADOW_STACK, or not x86) */
	ck_assert(!precheck_status_shstk("Name:\tsolver\nPid:\t1\n"));
	ck_assert(!precheck_status_shstk(""));
	/* the line is there but lists nothing */
	ck_assert(!precheck_status_shstk("x86_Thread_features:\t\nSeccomp:\t0\n"));
	ck_assert(!precheck_status_shstk("x86_Thread_features:"));
	ck_assert(!precheck_status_shstk("x86_Thread_features:\twrss\n"));
	/* only a word that is shstk counts, only on its own line */
	ck_assert(!precheck_status_shstk("x86_Thread_features:\tshstkx wrss\n"));
	ck_assert(!precheck_status_shstk("x86_Thread_features:\t\nSeccomp:\tshstk\n"));
	/* locked is not enabled */
	ck_assert(!precheck_status_shstk("x86_Thread_features:\t\n"
					 "x86_Thread_features_locked:\tshstk\n"));
	ck_assert(!precheck_status_shstk("x86_Thread_features_locked:\tshstk\n"));
}
END_TEST

START_TEST(test_thread_shstk)
{
	char path[64], buf[8192];
	FILE *f;
	size_t n;
	int want, got;

	/* The same answer as the parser gives on our own status. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)getpid());
	f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	want = precheck_status_shstk(buf);
	got = precheck_thread_shstk(getpid());
	ck_assert_int_eq(got, want);
	ck_assert_int_eq(precheck_thread_shstk(0), want);
	/* no such thread */
	got = precheck_thread_shstk(INT_MAX);
	ck_assert_int_eq(got, -ENOENT);
}
END_TEST

START_TEST(test_status_fields)
{
	ck_assert_int_eq(strncmp(proc_field(status_cet, "Pid"), "4242\n", 5), 0);
	ck_assert_int_eq(strncmp(proc_field(status_cet, "Name"), "solver\n", 7), 0);
	ck_assert_ptr_null(proc_field(status_cet, "Tracer"));
	ck_assert_ptr_null(proc_field(status_cet, "Nothing"));
	ck_assert_int_eq(precheck_status_tracer(status_cet), 4241);
	ck_assert_int_eq(precheck_status_tracer("TracerPid:\t0\n"), 0);
	ck_assert_int_eq(precheck_status_tracer("Pid:\t7\n"), 0);
	/* CapEff bit 19 is CAP_SYS_PTRACE */
	ck_assert(precheck_status_has_cap(status_cet, 19));
	ck_assert(!precheck_status_has_cap(status_cet, 21));
	ck_assert(precheck_status_has_cap("CapEff:\t000001ffffffffff\n", 40));
	ck_assert(!precheck_status_has_cap("CapEff:\t0000000000000000\n", 19));
	ck_assert(!precheck_status_has_cap("CapPrm:\t000001ffffffffff\n", 19));
	ck_assert(!precheck_status_has_cap("CapEff:\t\n", 19));
}
END_TEST

/* shebang TEXT INTERP ARG: the parse of TEXT (ARG NULL: none). */
static void shebang(const char *text, const char *interp, const char *arg)
{
	char *i, *a;

	ck_assert_msg(precheck_shebang(text, strlen(text), &i, &a), "%s", text);
	ck_assert_str_eq(i, interp);
	if (arg)
		ck_assert_str_eq(a, arg);
	else
		ck_assert_ptr_null(a);
	free(i);
	free(a);
}

/* procfs.c on this process itself: what the kernel says of it, read three ways. */
struct find_self {
	uint64_t pc;
	char path[4096];
	char perm[5];
};

static int holds_pc(const struct proc_map *m, void *arg)
{
	struct find_self *w = arg;

	if (w->pc < m->lo || w->pc >= m->hi)
		return 0;
	snprintf(w->path, sizeof(w->path), "%s", m->path);
	memcpy(w->perm, m->perm, sizeof(w->perm));
	return 7;
}

START_TEST(test_procfs_self)
{
	struct find_self w = {.pc = (uint64_t)(uintptr_t)&holds_pc};
	char exe[4096], name[64];
	ssize_t len = proc_exe(getpid(), exe, sizeof(exe));

	ck_assert_int_gt(len, 0);
	ck_assert_int_eq((int)strlen(exe), (int)len);
	/* the mapping of this function's code is executable and is our exe */
	ck_assert_int_eq(proc_maps_each(getpid(), holds_pc, &w), 7);
	ck_assert_int_eq(w.perm[2], 'x');
	ck_assert_str_eq(w.path, exe);
	ck_assert_int_eq(proc_status_num(getpid(), 0, "Tgid", 10, -1), getpid());
	ck_assert_int_eq(proc_status_num(getpid(), getpid(), "Pid", 10, -1), getpid());
	ck_assert_int_eq(proc_status_num(0, 0, "Pid", 10, -1), getpid());
	ck_assert_int_eq(proc_status_num(getpid(), 0, "NoSuchField", 10, -3), -3);
	ck_assert_int_eq(proc_status(getpid(), 0, "NoSuchField", name, sizeof(name)), -ENOENT);
	ck_assert_str_eq(name, "");
	ck_assert_int_eq(proc_status(getpid(), 0, "Name", name, sizeof(name)), 0);
	ck_assert_str_eq(name, "check_precheck");
	/* a process that is not there */
	ck_assert_int_eq(proc_maps_each(INT_MAX, holds_pc, &w), -ENOENT);
	ck_assert_int_eq((int)proc_exe(INT_MAX, exe, sizeof(exe)), -ENOENT);
}
END_TEST

START_TEST(test_shebang)
{
	char *i, *a;

	shebang("#!/bin/sh\necho hi\n", "/bin/sh", NULL);
	shebang("#! /bin/sh\n", "/bin/sh", NULL);
	shebang("#!/bin/sh", "/bin/sh", NULL);
	shebang("#!/usr/bin/awk -f\n", "/usr/bin/awk", "-f");
	shebang("#!/usr/bin/env python3 \n", "/usr/bin/env", "python3");
	/* the rest of the line is one argument, as the kernel passes it */
	shebang("#!/bin/bash -e -x\r\n", "/bin/bash", "-e -x");
	shebang("#!\t/usr/bin/env  -S  perl -w\nprint 1;\n", "/usr/bin/env", "-S  perl -w");
	shebang("#!\n", "", NULL);
	shebang("#!   \n", "", NULL);
	ck_assert(!precheck_shebang("\177ELF", 4, &i, &a));
	ck_assert(!precheck_shebang("echo hi\n", 8, &i, &a));
	ck_assert(!precheck_shebang("#", 1, &i, &a));
	ck_assert(!precheck_shebang("#!/bin/sh", 1, &i, &a));
	ck_assert(!precheck_shebang(" #!/bin/sh\n", 11, &i, &a));
}
END_TEST

/* write_file NAME TEXT MODE: a file in the current directory. */
static void write_file(const char *name, const char *text, mode_t mode)
{
	FILE *f = fopen(name, "w");

	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(chmod(name, mode), 0);
}

START_TEST(test_program)
{
	char dir[] = "/tmp/check_precheck.XXXXXX", *old = getcwd(NULL, 0);

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
	write_file("run.sh", "#!/bin/sh\necho hi\n", 0755);
	write_file("empty.sh", "#!\n", 0755);
	write_file("text", "echo hi\n", 0755);
	ck_assert_int_eq(precheck_program("./run.sh"), EXIT_FS_CANNOT);
	ck_assert_int_eq(precheck_program("./empty.sh"), EXIT_FS_CANNOT);
	/* not a script: symtab_load says what it is */
	ck_assert_int_eq(precheck_program("./text"), 0);
	ck_assert_int_eq(precheck_program("./no-such-file"), 0);
	ck_assert_int_eq(precheck_program(BUILDDIR "/fortstat"), 0);
	unlink("run.sh");
	unlink("empty.sh");
	unlink("text");
	ck_assert_int_eq(chdir(old), 0);
	ck_assert_int_eq(rmdir(dir), 0);
	free(old);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("precheck");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_shstk);
	tcase_add_test(tc, test_thread_shstk);
	tcase_add_test(tc, test_status_fields);
	tcase_add_test(tc, test_procfs_self);
	tcase_add_test(tc, test_shebang);
	tcase_add_test(tc, test_program);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
