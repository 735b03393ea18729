// SPDX-License-Identifier: GPL-2.0-or-later
/* check_output.c - where the reports go: -o FILE, one file a process with %p, stderr. */
#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fortstat/output.h"

static char dir[] = "/tmp/check_output.XXXXXX";

static void setup(void)
{
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
	char cmd[256];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	strcpy(dir, "/tmp/check_output.XXXXXX");
}

/* The contents of file `name` in dir (malloc'ed), or NULL when it is not there. */
static char *contents(const char *name)
{
	char path[512], *buf = NULL;
	size_t cap = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	if (getdelim(&buf, &cap, '\0', f) < 0) {
		free(buf);
		buf = strdup("");
	}
	fclose(f);
	return buf;
}

START_TEST(test_expand)
{
	char *s;

	s = output_expand("r.%p.txt", 0, 1234, NULL);
	ck_assert_str_eq(s, "r.1234.txt");
	free(s);
	s = output_expand("%p%p-%%p-%", 0, 7, NULL);
	ck_assert_str_eq(s, "77-%p-%");
	free(s);
	s = output_expand("plain", 0, 7, NULL);
	ck_assert_str_eq(s, "plain");
	free(s);
	/* long names grow */
	s = output_expand("%p%p%p%p%p%p%p%p%p%p", 0, -2147483647, NULL);
	ck_assert_uint_eq(strlen(s), 110);
	free(s);
}
END_TEST

START_TEST(test_expand_rank)
{
	char *s;

	s = output_expand("prof.%r.json", 12, 4242, "node7");
	ck_assert_str_eq(s, "prof.12.json");
	free(s);
	s = output_expand("%h/%r-%p.%%r%%", 12, 4242, "node7");
	ck_assert_str_eq(s, "node7/12-4242.%r%");
	free(s);
	s = output_expand("prof.%r", 0, 1, "h");
	ck_assert_str_eq(s, "prof.0");
	free(s);
	/* unknown conversions and a trailing % stay as they are */
	s = output_expand("a%xb%", 12, 1, "h");
	ck_assert_str_eq(s, "a%xb%");
	free(s);
	s = output_expand("", 12, 1, "h");
	ck_assert_str_eq(s, "");
	free(s);
	/* long expansions grow the buffer */
	s = output_expand("%h%h%h%h", 12, 1, "a-rather-long-host-name.example.org");
	ck_assert_uint_eq(strlen(s), 4 * strlen("a-rather-long-host-name.example.org"));
	free(s);
	/* %h with no host given: this machine's name */
	{
		char host[256] = "";

		ck_assert_int_eq(gethostname(host, sizeof(host) - 1), 0);
		s = output_expand("%h", 12, 1, NULL);
		ck_assert_str_eq(s, host);
		free(s);
	}
}
END_TEST

START_TEST(test_fmt_has)
{
	ck_assert(output_fmt_has("prof.%p", 'p'));
	ck_assert(!output_fmt_has("prof.%%p", 'p'));
	ck_assert(output_fmt_has("prof.%%%p", 'p'));
	ck_assert(!output_fmt_has("prof.%r", 'p'));
	ck_assert(output_fmt_has("prof.%r", 'r'));
	ck_assert(!output_fmt_has("prof.%", 'p'));
	ck_assert(!output_fmt_has(NULL, 'p'));
}
END_TEST

/* What went through stdio before and the whole buffer after, in that order. */
START_TEST(test_write_whole)
{
	char path[] = "/tmp/check_output_whole.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	char buf[64] = "";
	static const char body[] = "one report\nin one piece\n";

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("before\n", f);
	ck_assert_int_eq(output_write_whole(f, body, strlen(body)), 0);
	fclose(f);
	f = fopen(path, "r");
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), strlen("before\n") + strlen(body));
	fclose(f);
	unlink(path);
	ck_assert_str_eq(buf, "before\none report\nin one piece\n");
}
END_TEST

/* Without -o every report goes to stderr, one after the other. */
START_TEST(test_stderr)
{
	struct outputs o;
	bool again = true;

	ck_assert_int_eq(outputs_open(&o, NULL, 0), 0);
	ck_assert_ptr_eq(outputs_for(&o, 1, &again), stderr);
	ck_assert(!again);
	ck_assert_ptr_eq(outputs_for(&o, 2, &again), stderr);
	ck_assert(again);
	ck_assert_int_eq(outputs_close(&o), 0);
}
END_TEST

/*
 * -o FILE without %p: only checked at start, never truncated nor created
 * (the reports replace it whole at the end): the old contents stay, a
 * missing file stays missing.
 */
START_TEST(test_one_file)
{
	char name[512], *s;
	struct outputs o;
	FILE *f;

	snprintf(name, sizeof(name), "%s/report.txt", dir);
	f = fopen(name, "w");
	fputs("old contents\n", f);
	fclose(f);
	ck_assert_int_eq(outputs_open(&o, name, 0), 0);
	s = contents("report.txt");
	ck_assert_str_eq(s, "old contents\n");
	free(s);
	ck_assert_int_eq(outputs_close(&o), 0);
	s = contents("report.txt");
	ck_assert_str_eq(s, "old contents\n");
	free(s);
	snprintf(name, sizeof(name), "%s/new.txt", dir);
	ck_assert_int_eq(outputs_open(&o, name, 0), 0);
	ck_assert_int_eq(outputs_close(&o), 0);
	ck_assert_ptr_null(contents("new.txt"));
}
END_TEST

/*
 * output_check: a directory, a path through a file, a directory that is not
 * writable (unless the file in it is) are refused; nothing is made.
 */
START_TEST(test_check)
{
	char name[512], sub[512];
	FILE *f;

	ck_assert_int_eq(output_check(dir), -EISDIR);
	snprintf(name, sizeof(name), "%s/plain", dir);
	f = fopen(name, "w");
	fclose(f);
	snprintf(sub, sizeof(sub), "%s/plain/x", dir);
	ck_assert_int_eq(output_check(sub), -ENOTDIR);
	ck_assert_int_eq(output_check("rel-name-here"), 0);
	ck_assert_int_eq(access("rel-name-here", F_OK), -1);
	if (geteuid() == 0)
		return; /* root writes anywhere */
	snprintf(sub, sizeof(sub), "%s/ro", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
	snprintf(name, sizeof(name), "%s/ro/kept", dir);
	f = fopen(name, "w");
	fclose(f);
	ck_assert_int_eq(chmod(sub, 0555), 0);
	ck_assert_int_eq(output_check(name), 0); /* written in place */
	snprintf(name, sizeof(name), "%s/ro/new", dir);
	ck_assert_int_eq(output_check(name), -EACCES);
	ck_assert_int_eq(chmod(sub, 0755), 0);
}
END_TEST

/* %p: one file a process, opened when its first report comes; the same process appends. */
START_TEST(test_per_process)
{
	char name[512], *s;
	struct outputs o;
	bool again;
	FILE *a, *b;

	snprintf(name, sizeof(name), "%s/r.%%p", dir);
	ck_assert_int_eq(outputs_open(&o, name, 0), 0);
	s = contents("r.100");
	ck_assert_ptr_null(s);
	a = outputs_for(&o, 100, &again);
	ck_assert_ptr_nonnull(a);
	ck_assert(!again);
	fputs("parent\n", a);
	b = outputs_for(&o, 101, &again);
	ck_assert_ptr_nonnull(b);
	ck_assert_ptr_ne(a, b);
	ck_assert(!again);
	fputs("child\n", b);
	/* an image of the child after exec: its process's file, right after */
	ck_assert_ptr_eq(outputs_for(&o, 101, &again), b);
	ck_assert(again);
	fputs("child after exec\n", b);
	ck_assert_ptr_eq(outputs_for(&o, 100, &again), a);
	ck_assert(!again);
	ck_assert_uint_eq(o.n, 2);
	ck_assert_int_eq(outputs_close(&o), 0);
	s = contents("r.100");
	ck_assert_str_eq(s, "parent\n");
	free(s);
	s = contents("r.101");
	ck_assert_str_eq(s, "child\nchild after exec\n");
	free(s);
	/* %r is the rank given to outputs_open, in every process's name */
	snprintf(name, sizeof(name), "%s/q.%%r.%%p", dir);
	ck_assert_int_eq(outputs_open(&o, name, 7), 0);
	a = outputs_for(&o, 100, &again);
	ck_assert_ptr_nonnull(a);
	fputs("rank 7\n", a);
	ck_assert_int_eq(outputs_close(&o), 0);
	s = contents("q.7.100");
	ck_assert_str_eq(s, "rank 7\n");
	free(s);
}
END_TEST

/* A file that cannot be created: said, and refused (NULL, a negative errno). */
START_TEST(test_cannot_open)
{
	char name[512];
	struct outputs o;
	bool again;

	snprintf(name, sizeof(name), "%s/no/such/dir/r.txt", dir);
	ck_assert_int_eq(outputs_open(&o, name, 0), -ENOENT);
	ck_assert_int_eq(outputs_close(&o), 0);
	snprintf(name, sizeof(name), "%s/no/r.%%p", dir);
	ck_assert_int_eq(outputs_open(&o, name, 0), 0);
	ck_assert_ptr_null(outputs_for(&o, 5, &again));
	ck_assert(!again);
	ck_assert_int_eq(outputs_close(&o), 0);
}
END_TEST

/* A device is checked by opening it, and written in place: a write that fails says so. */
START_TEST(test_close_error)
{
	struct outputs o;
	bool renamed = true;

	if (access("/dev/full", W_OK) != 0)
		return;
	ck_assert_int_eq(outputs_open(&o, "/dev/full", 0), 0);
	ck_assert_int_eq(outputs_close(&o), 0);
	ck_assert_int_eq(output_replace("/dev/full", "does not fit\n", 13, &renamed), -ENOSPC);
	ck_assert(!renamed);
}
END_TEST

/*
 * output_replace: a regular file is replaced by a new one (an open reader
 * keeps the old text), a symbolic link's target is replaced, the mode is
 * 0666 less the umask, and nothing else is left in the folder.
 */
START_TEST(test_replace)
{
	char path[512], link[512];
	FILE *old;
	char *text, buf[16] = "";
	bool renamed = false;
	struct stat sb;
	mode_t mask = umask(022);

	snprintf(path, sizeof(path), "%s/rep.txt", dir);
	ck_assert_int_eq(output_replace(path, "first\n", 6, &renamed), 0);
	ck_assert(renamed);
	text = contents("rep.txt");
	ck_assert_str_eq(text, "first\n");
	free(text);
	old = fopen(path, "r");
	ck_assert_ptr_nonnull(old);
	ck_assert_int_eq(output_replace(path, "second\n", 7, &renamed), 0);
	text = contents("rep.txt");
	ck_assert_str_eq(text, "second\n");
	free(text);
	ck_assert_ptr_nonnull(fgets(buf, sizeof(buf), old));
	ck_assert_str_eq(buf, "first\n"); /* a reader saw a whole report */
	fclose(old);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0644);
	/* an existing file keeps its permissions */
	ck_assert_int_eq(chmod(path, 0600), 0);
	ck_assert_int_eq(output_replace(path, "again\n", 6, &renamed), 0);
	ck_assert_int_eq(stat(path, &sb), 0);
	ck_assert_uint_eq(sb.st_mode & 0777, 0600);
	/* through a symbolic link: the target */
	snprintf(link, sizeof(link), "%s/link.txt", dir);
	ck_assert_int_eq(symlink("rep.txt", link), 0);
	ck_assert_int_eq(output_replace(link, "third\n", 6, &renamed), 0);
	ck_assert_int_eq(lstat(link, &sb), 0);
	ck_assert(S_ISLNK(sb.st_mode));
	text = contents("rep.txt");
	ck_assert_str_eq(text, "third\n");
	free(text);
	/* only the two names are in the folder: no temporary file left */
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "test $(ls -A '%s' | wc -l) = 2", dir);
		ck_assert_int_eq(system(cmd), 0);
	}
	/* a folder that does not exist: an error, nothing written */
	snprintf(path, sizeof(path), "%s/no/such/rep.txt", dir);
	ck_assert_int_eq(output_replace(path, "x", 1, &renamed), -ENOENT);
	ck_assert(!renamed);
	umask(mask);
}
END_TEST

static Suite *output_suite(void)
{
	Suite *s = suite_create("output");
	TCase *tc = tcase_create("output");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, test_expand);
	tcase_add_test(tc, test_expand_rank);
	tcase_add_test(tc, test_fmt_has);
	tcase_add_test(tc, test_write_whole);
	tcase_add_test(tc, test_stderr);
	tcase_add_test(tc, test_one_file);
	tcase_add_test(tc, test_check);
	tcase_add_test(tc, test_per_process);
	tcase_add_test(tc, test_cannot_open);
	tcase_add_test(tc, test_close_error);
	tcase_add_test(tc, test_replace);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(output_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
