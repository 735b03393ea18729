// SPDX-License-Identifier: GPL-2.0-or-later
/* check_names.c - Check suite for the names-file module (-n, -x). */
#include "fortstat/names.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* Parse a NUL-terminated string (the terminator is not part of the input). */
static void parse_str(const char *s, struct names *nm)
{
	ck_assert_int_eq(names_parse(s, strlen(s), NULL, nm), 0);
}

/* Write @len bytes into a new temporary file; returns its malloc'ed path. */
static char *write_temp(const char *data, size_t len)
{
	char *path = strdup("/tmp/check_names.XXXXXX");
	int fd;

	ck_assert_ptr_nonnull(path);
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, data, len), (ssize_t)len);
	ck_assert_int_eq(close(fd), 0);
	return path;
}

START_TEST(test_one_per_line)
{
	struct names nm;

	parse_str("dgemm_\nMAIN__\nfoo\n", &nm);
	ck_assert_uint_eq(nm.n, 3);
	ck_assert_str_eq(nm.v[0].pattern, "dgemm_");
	ck_assert_str_eq(nm.v[1].pattern, "MAIN__");
	ck_assert_str_eq(nm.v[2].pattern, "foo");
	ck_assert_int_eq(nm.v[0].line, 1);
	ck_assert_int_eq(nm.v[2].line, 3);
	ck_assert(!nm.v[0].is_glob);
	ck_assert_ptr_null(nm.path);
	names_free(&nm);
}
END_TEST

START_TEST(test_blanks_removed)
{
	struct names nm;

	/* FORTSTAT's card rule: "D GEMM _" is "DGEMM_". */
	parse_str("D GEMM _\n\tfoo\t\n  bar  \r\nb\fa\vz\n", &nm);
	ck_assert_uint_eq(nm.n, 4);
	ck_assert_str_eq(nm.v[0].pattern, "DGEMM_");
	ck_assert_str_eq(nm.v[1].pattern, "foo");
	ck_assert_str_eq(nm.v[2].pattern, "bar");
	ck_assert_str_eq(nm.v[3].pattern, "baz");
	names_free(&nm);
}
END_TEST

START_TEST(test_comments)
{
	struct names nm;

	parse_str("# a comment\nfoo # trailing\n   # indented\nb a#r\n#\nbaz#\n", &nm);
	ck_assert_uint_eq(nm.n, 3);
	ck_assert_str_eq(nm.v[0].pattern, "foo");
	ck_assert_int_eq(nm.v[0].line, 2);
	ck_assert_str_eq(nm.v[1].pattern, "ba");
	ck_assert_int_eq(nm.v[1].line, 4);
	ck_assert_str_eq(nm.v[2].pattern, "baz");
	ck_assert_int_eq(nm.v[2].line, 6);
	names_free(&nm);
}
END_TEST

START_TEST(test_blank_lines)
{
	struct names nm;

	parse_str("\n\n  \t \r\nfoo\n\n\r\n\f\nbar\n\n", &nm);
	ck_assert_uint_eq(nm.n, 2);
	ck_assert_str_eq(nm.v[0].pattern, "foo");
	ck_assert_int_eq(nm.v[0].line, 4);
	ck_assert_str_eq(nm.v[1].pattern, "bar");
	ck_assert_int_eq(nm.v[1].line, 8);
	names_free(&nm);
}
END_TEST

START_TEST(test_crlf)
{
	struct names nm;

	parse_str("foo\r\nbar\r\n", &nm);
	ck_assert_uint_eq(nm.n, 2);
	ck_assert_str_eq(nm.v[0].pattern, "foo");
	ck_assert_str_eq(nm.v[1].pattern, "bar");
	ck_assert(names_test(&nm, "bar"));
	names_free(&nm);
}
END_TEST

START_TEST(test_final_line_without_newline)
{
	struct names nm;

	parse_str("foo\nbar", &nm);
	ck_assert_uint_eq(nm.n, 2);
	ck_assert_str_eq(nm.v[1].pattern, "bar");
	ck_assert_int_eq(nm.v[1].line, 2);
	names_free(&nm);

	parse_str("solo", &nm);
	ck_assert_uint_eq(nm.n, 1);
	ck_assert_str_eq(nm.v[0].pattern, "solo");
	names_free(&nm);
}
END_TEST

START_TEST(test_empty)
{
	struct names nm;

	parse_str("", &nm);
	ck_assert_uint_eq(nm.n, 0);
	ck_assert(!names_test(&nm, "foo"));
	ck_assert(!names_match(&nm, "foo"));
	names_free(&nm);

	parse_str("# only\n  # comments\n\n", &nm);
	ck_assert_uint_eq(nm.n, 0);
	names_free(&nm);
}
END_TEST

START_TEST(test_nul_bytes)
{
	static const char data[] = "foo\0junk\nba\0\0r\n\0\nbaz";
	struct names nm;

	/* A NUL ends that line's content; the next line is read normally. */
	ck_assert_int_eq(names_parse(data, sizeof(data) - 1, NULL, &nm), 0);
	ck_assert_uint_eq(nm.n, 3);
	ck_assert_str_eq(nm.v[0].pattern, "foo");
	ck_assert_str_eq(nm.v[1].pattern, "ba");
	ck_assert_str_eq(nm.v[2].pattern, "baz");
	ck_assert_int_eq(nm.v[2].line, 4);
	names_free(&nm);
}
END_TEST

START_TEST(test_glob_flags)
{
	struct names nm;

	parse_str("dgemm_*\n*_MOD_*\nf?o\n[abc]x\nplain\n", &nm);
	ck_assert_uint_eq(nm.n, 5);
	ck_assert(nm.v[0].is_glob);
	ck_assert(nm.v[1].is_glob);
	ck_assert(nm.v[2].is_glob);
	ck_assert(nm.v[3].is_glob);
	ck_assert(!nm.v[4].is_glob);
	names_free(&nm);
}
END_TEST

START_TEST(test_glob_matching)
{
	struct names nm;

	parse_str("dgemm_*\n*_MOD_*\nf?o\n[abc]x\n", &nm);
	ck_assert(names_test(&nm, "dgemm_"));
	ck_assert(names_test(&nm, "dgemm_kernel"));
	ck_assert(!names_test(&nm, "sgemm_"));
	ck_assert(names_test(&nm, "__linalg_MOD_solve"));
	ck_assert(!names_test(&nm, "__linalg_mod_solve"));
	ck_assert(names_test(&nm, "foo"));
	ck_assert(names_test(&nm, "f_o"));
	ck_assert(!names_test(&nm, "fo"));
	ck_assert(!names_test(&nm, "fooo"));
	ck_assert(names_test(&nm, "ax"));
	ck_assert(names_test(&nm, "cx"));
	ck_assert(!names_test(&nm, "dx"));
	/* No flags: '*' crosses '/' and '.', and a leading '.' is not special. */
	ck_assert(names_test(&nm, "dgemm_.cold"));
	names_free(&nm);
}
END_TEST

START_TEST(test_exact_matching)
{
	struct names nm;

	parse_str("MAIN__\nfoo_\n", &nm);
	ck_assert(names_test(&nm, "MAIN__"));
	ck_assert(names_test(&nm, "foo_"));
	ck_assert(!names_test(&nm, "main__"));
	ck_assert(!names_test(&nm, "foo"));
	ck_assert(!names_test(&nm, "foo__"));
	ck_assert(!names_test(&nm, ""));
	names_free(&nm);
}
END_TEST

START_TEST(test_matched_counter)
{
	struct names nm;

	parse_str("foo\nf*\n*o\nbar\n", &nm);
	ck_assert(names_match(&nm, "foo")); /* foo, f*, *o */
	ck_assert(names_match(&nm, "fx"));  /* f* */
	ck_assert(!names_match(&nm, "zzz"));
	ck_assert(names_match(&nm, "foo"));
	ck_assert_uint_eq(nm.v[0].matched, 2);
	ck_assert_uint_eq(nm.v[1].matched, 3);
	ck_assert_uint_eq(nm.v[2].matched, 2);
	ck_assert_uint_eq(nm.v[3].matched, 0);

	/* names_test never counts. */
	ck_assert(names_test(&nm, "bar"));
	ck_assert_uint_eq(nm.v[3].matched, 0);
	names_free(&nm);
}
END_TEST

START_TEST(test_null_names)
{
	ck_assert(!names_match(NULL, "foo"));
	ck_assert(!names_test(NULL, "foo"));
	names_free(NULL);
}
END_TEST

START_TEST(test_parse_keeps_path)
{
	struct names nm;

	ck_assert_int_eq(names_parse("a\n", 2, "some/file", &nm), 0);
	ck_assert_str_eq(nm.path, "some/file");
	names_free(&nm);
	ck_assert_ptr_null(nm.path);
	ck_assert_ptr_null(nm.v);
	ck_assert_uint_eq(nm.n, 0);
}
END_TEST

START_TEST(test_load_file)
{
	static const char data[] = "# routines to time\nD GEMM _\nfoo_ # the solver\n\n*_MOD_*";
	char *path = write_temp(data, sizeof(data) - 1);
	struct names nm;

	ck_assert_int_eq(names_load(path, &nm), 0);
	ck_assert_str_eq(nm.path, path);
	ck_assert_uint_eq(nm.n, 3);
	ck_assert_str_eq(nm.v[0].pattern, "DGEMM_");
	ck_assert_int_eq(nm.v[0].line, 2);
	ck_assert_str_eq(nm.v[1].pattern, "foo_");
	ck_assert_str_eq(nm.v[2].pattern, "*_MOD_*");
	ck_assert_int_eq(nm.v[2].line, 5);
	ck_assert(names_match(&nm, "__m_MOD_x"));
	ck_assert_uint_eq(nm.v[2].matched, 1);
	names_free(&nm);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_load_empty_file)
{
	char *path = write_temp("", 0);
	struct names nm;

	ck_assert_int_eq(names_load(path, &nm), 0);
	ck_assert_uint_eq(nm.n, 0);
	names_free(&nm);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_load_large_file)
{
	/* Larger than one read buffer, to exercise the growth path. */
	size_t count = 5000, i, len = 0;
	char *data = malloc(count * 16), *path;
	struct names nm;

	ck_assert_ptr_nonnull(data);
	for (i = 0; i < count; i++)
		len += (size_t)sprintf(data + len, "r%zu_\n", i);
	path = write_temp(data, len);
	ck_assert_int_eq(names_load(path, &nm), 0);
	ck_assert_uint_eq(nm.n, count);
	ck_assert_str_eq(nm.v[count - 1].pattern, "r4999_");
	ck_assert_int_eq(nm.v[count - 1].line, (int)count);
	names_free(&nm);
	unlink(path);
	free(path);
	free(data);
}
END_TEST

START_TEST(test_load_nul_bytes)
{
	static const char data[] = "foo\0bar\nbaz\0";
	char *path = write_temp(data, sizeof(data) - 1);
	struct names nm;

	/* A NUL byte: not a text file (names_parse alone stays lenient). */
	ck_assert_int_eq(names_load(path, &nm), NAMES_ENOTTEXT);
	ck_assert_uint_eq(nm.n, 0);
	ck_assert_ptr_null(nm.path);
	ck_assert_str_eq(names_strerror(NAMES_ENOTTEXT), "not a text file");
	names_free(&nm);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_load_binary)
{
	struct names nm;

	/* An executable given to -n by mistake. */
	ck_assert_int_eq(names_load("/proc/self/exe", &nm), NAMES_ENOTTEXT);
	ck_assert_uint_eq(nm.n, 0);
	names_free(&nm);
}
END_TEST

START_TEST(test_is_text)
{
	static const char utf8[] = "# r\xc3\xa9sum\xc3\xa9\r\nfoo_\tbar\f\v\n";

	ck_assert(names_is_text("", 0));
	ck_assert(names_is_text(utf8, sizeof(utf8) - 1));
	ck_assert(!names_is_text("foo\0", 4));
	ck_assert(!names_is_text("foo\x1b[2Jbar\n", 11));
	ck_assert(!names_is_text("a\x7f", 2));
	ck_assert(!names_is_text("\x7f"
				 "ELF\x02\x01",
				 6));
	ck_assert_str_eq(names_strerror(-ENOENT), strerror(ENOENT));
}
END_TEST

START_TEST(test_escape)
{
	char *s;

	s = names_escape("foo_::bar<int>");
	ck_assert_str_eq(s, "foo_::bar<int>");
	free(s);
	s = names_escape("a\x1b[2J\\b\n\xc3\xa9");
	ck_assert_str_eq(s, "a\\x1b[2J\\\\b\\x0a\\xc3\\xa9");
	free(s);
	s = names_escape("");
	ck_assert_str_eq(s, "");
	free(s);
}
END_TEST

START_TEST(test_load_missing)
{
	struct names nm;

	ck_assert_int_eq(names_load("/nonexistent/fortstat/names.txt", &nm), -ENOENT);
	ck_assert_uint_eq(nm.n, 0);
	ck_assert_ptr_null(nm.v);
	ck_assert_ptr_null(nm.path);
	names_free(&nm);
}
END_TEST

START_TEST(test_load_directory)
{
	char dir[] = "/tmp/check_names_dir.XXXXXX";
	struct names nm;

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(names_load(dir, &nm), -EISDIR);
	ck_assert_uint_eq(nm.n, 0);
	ck_assert_ptr_null(nm.path);
	names_free(&nm);
	rmdir(dir);
}
END_TEST

/* names_load as an unprivileged user: in a child, so that root can drop to nobody. */
static int load_as_nobody(const char *path)
{
	struct names nm;
	pid_t pid = fork();
	int st, r;

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (geteuid() == 0 && (setgid(65534) < 0 || setuid(65534) < 0))
			_exit(200);
		r = names_load(path, &nm);
		names_free(&nm);
		_exit(r == -EACCES ? 0 : 1);
	}
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert(WIFEXITED(st));
	return WEXITSTATUS(st);
}

START_TEST(test_load_unreadable)
{
	char *path = write_temp("foo\n", 4);

	ck_assert_int_eq(chmod(path, 0), 0);
	ck_assert_int_eq(load_as_nobody(path), 0);
	unlink(path);
	free(path);
}
END_TEST

START_TEST(test_qualifier)
{
	ck_assert_uint_eq(names_qualifier("liblapack:lsame_"), 10);
	ck_assert_uint_eq(names_qualifier("lsame_"), 0);
	/* scopes of C++ and Fortran are not qualifiers */
	ck_assert_uint_eq(names_qualifier("ns::f"), 0);
	ck_assert_uint_eq(names_qualifier("m::p"), 0);
	ck_assert_uint_eq(names_qualifier("libfoo:ns::f"), 7);
	ck_assert_uint_eq(names_qualifier("ns::f:x"), 6);
	/* a colon at either end qualifies nothing */
	ck_assert_uint_eq(names_qualifier(":f"), 0);
	ck_assert_uint_eq(names_qualifier("lib:"), 0);
}
END_TEST

START_TEST(test_lib_match)
{
#define LM(pat, name) names_lib_match(pat, strlen(pat), name)
	ck_assert(LM("libm", "libm.so.6"));
	ck_assert(LM("libm", "/lib/x86_64-linux-gnu/libm.so.6"));
	ck_assert(LM("libm", "libm-2.36.so"));
	ck_assert(LM("libm", "libm"));
	ck_assert(!LM("libm", "libmvec.so.1"));
	ck_assert(!LM("libm", "/usr/lib/libm/other.so"));
	ck_assert(LM("libm.so*", "/lib/libm.so.6"));
	ck_assert(!LM("libm.so*", "libmvec.so.1"));
	ck_assert(LM("libblas", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3.11.0"));
	/* a '/' in the pattern: the whole path */
	ck_assert(LM("/usr/lib/*/blas/*", "/usr/lib/x86_64-linux-gnu/blas/libblas.so.3"));
	ck_assert(!LM("/usr/lib/*/blas/*", "libblas.so.3"));
	ck_assert(!LM("libblas", NULL));
	/* only the first len bytes are the pattern (LIB of LIB:NAME) */
	ck_assert(names_lib_match("libm:sin", 4, "libm.so.6"));
#undef LM
}
END_TEST

static Suite *names_suite(void)
{
	Suite *s = suite_create("names");
	TCase *parse = tcase_create("parse");
	TCase *match = tcase_create("match");
	TCase *load = tcase_create("load");

	tcase_add_test(parse, test_one_per_line);
	tcase_add_test(parse, test_blanks_removed);
	tcase_add_test(parse, test_comments);
	tcase_add_test(parse, test_blank_lines);
	tcase_add_test(parse, test_crlf);
	tcase_add_test(parse, test_final_line_without_newline);
	tcase_add_test(parse, test_empty);
	tcase_add_test(parse, test_nul_bytes);
	tcase_add_test(parse, test_glob_flags);
	tcase_add_test(parse, test_parse_keeps_path);
	suite_add_tcase(s, parse);

	tcase_add_test(match, test_glob_matching);
	tcase_add_test(match, test_exact_matching);
	tcase_add_test(match, test_matched_counter);
	tcase_add_test(match, test_null_names);
	tcase_add_test(match, test_qualifier);
	tcase_add_test(match, test_lib_match);
	suite_add_tcase(s, match);

	tcase_add_test(load, test_load_file);
	tcase_add_test(load, test_load_empty_file);
	tcase_add_test(load, test_load_large_file);
	tcase_add_test(load, test_load_nul_bytes);
	tcase_add_test(load, test_load_binary);
	tcase_add_test(load, test_is_text);
	tcase_add_test(load, test_escape);
	tcase_add_test(load, test_load_missing);
	tcase_add_test(load, test_load_directory);
	tcase_add_test(load, test_load_unreadable);
	suite_add_tcase(s, load);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(names_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
