// SPDX-License-Identifier: GPL-2.0-or-later
/* check_rank.c - Check suite for the rank from synthetic environments, -o names, whole writes. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fortstat/rank.h"

START_TEST(test_none)
{
	char *env[] = {"PATH=/bin", "HOME=/root", NULL};
	struct rank_info ri;

	ck_assert(!rank_from_env(env, &ri));
	ck_assert(!ri.known);
	ck_assert_int_eq(ri.rank, 0);
	ck_assert_int_eq(ri.size, 0);
	ck_assert_ptr_null(ri.source);
	ck_assert(!rank_from_env(NULL, &ri));
}
END_TEST

START_TEST(test_launchers)
{
	char *ompi[] = {"OMPI_COMM_WORLD_SIZE=64", "OMPI_COMM_WORLD_RANK=17", NULL};
	char *pmix[] = {"PMIX_RANK=3", "PMI_SIZE=8", NULL};
	char *pmix_alone[] = {"PMIX_RANK=3", NULL};
	char *hydra[] = {"PMI_RANK=5", "PMI_SIZE=6", NULL};
	char *slurm[] = {"SLURM_NTASKS=128", "SLURM_PROCID=127", NULL};
	struct rank_info ri;

	ck_assert(rank_from_env(ompi, &ri));
	ck_assert_int_eq(ri.rank, 17);
	ck_assert_int_eq(ri.size, 64);
	ck_assert_str_eq(ri.source, "OMPI_COMM_WORLD_RANK");
	ck_assert(rank_from_env(pmix, &ri));
	ck_assert_int_eq(ri.rank, 3);
	ck_assert_int_eq(ri.size, 8);
	ck_assert_str_eq(ri.source, "PMIX_RANK");
	ck_assert(rank_from_env(pmix_alone, &ri));
	ck_assert_int_eq(ri.rank, 3);
	ck_assert_int_eq(ri.size, 0);
	ck_assert(rank_from_env(hydra, &ri));
	ck_assert_int_eq(ri.rank, 5);
	ck_assert_int_eq(ri.size, 6);
	ck_assert_str_eq(ri.source, "PMI_RANK");
	ck_assert(rank_from_env(slurm, &ri));
	ck_assert_int_eq(ri.rank, 127);
	ck_assert_int_eq(ri.size, 128);
	ck_assert_str_eq(ri.source, "SLURM_PROCID");
}
END_TEST

/* Open MPI started by srun has both: the MPI library's own rank wins. */
START_TEST(test_precedence)
{
	char *both[] = {
	    "SLURM_PROCID=0",	      "SLURM_NTASKS=1",		"PMI_RANK=9", "PMI_SIZE=10",
	    "OMPI_COMM_WORLD_RANK=2", "OMPI_COMM_WORLD_SIZE=4", NULL};
	struct rank_info ri;

	ck_assert(rank_from_env(both, &ri));
	ck_assert_int_eq(ri.rank, 2);
	ck_assert_int_eq(ri.size, 4);
}
END_TEST

START_TEST(test_bad_values)
{
	char *empty[] = {"OMPI_COMM_WORLD_RANK=", "SLURM_PROCID=4", "SLURM_NTASKS=5", NULL};
	char *neg[] = {"PMI_RANK=-1", NULL};
	char *junk[] = {"PMI_RANK=3x", NULL};
	char *huge[] = {"PMI_RANK=99999999999999999999", NULL};
	char *prefix[] = {"PMI_RANKS=3", "XPMI_RANK=3", NULL};
	char *small[] = {"PMI_RANK=4", "PMI_SIZE=4", NULL};
	char *nosize[] = {"PMI_RANK=4", "PMI_SIZE=lots", NULL};
	struct rank_info ri;

	/* an empty Open MPI rank is skipped: Slurm's stands */
	ck_assert(rank_from_env(empty, &ri));
	ck_assert_int_eq(ri.rank, 4);
	ck_assert_int_eq(ri.size, 5);
	ck_assert(!rank_from_env(neg, &ri));
	ck_assert(!rank_from_env(junk, &ri));
	ck_assert(!rank_from_env(huge, &ri));
	ck_assert(!rank_from_env(prefix, &ri));
	/* a size not above the rank is no size */
	ck_assert(rank_from_env(small, &ri));
	ck_assert_int_eq(ri.rank, 4);
	ck_assert_int_eq(ri.size, 0);
	ck_assert(rank_from_env(nosize, &ri));
	ck_assert_int_eq(ri.size, 0);
}
END_TEST

START_TEST(test_expand)
{
	struct rank_info ri = {.known = true, .rank = 12, .size = 16, .source = "PMI_RANK"};
	struct rank_info none = {0};
	char *s;

	s = rank_expand("prof.%r.json", &ri, 4242, "node7");
	ck_assert_str_eq(s, "prof.12.json");
	free(s);
	s = rank_expand("%h/%r-%p.%%r%%", &ri, 4242, "node7");
	ck_assert_str_eq(s, "node7/12-4242.%r%");
	free(s);
	s = rank_expand("prof.%r", &none, 1, "h");
	ck_assert_str_eq(s, "prof.0");
	free(s);
	s = rank_expand("prof.%r", NULL, 1, "h");
	ck_assert_str_eq(s, "prof.0");
	free(s);
	/* unknown conversions and a trailing % stay as they are */
	s = rank_expand("a%xb%", &ri, 1, "h");
	ck_assert_str_eq(s, "a%xb%");
	free(s);
	s = rank_expand("", &ri, 1, "h");
	ck_assert_str_eq(s, "");
	free(s);
	/* long expansions grow the buffer */
	s = rank_expand("%h%h%h%h", &ri, 1, "a-rather-long-host-name.example.org");
	ck_assert_uint_eq(strlen(s), 4 * strlen("a-rather-long-host-name.example.org"));
	free(s);
	/* %h with no host given: this machine's name */
	{
		char host[256] = "";

		ck_assert_int_eq(gethostname(host, sizeof(host) - 1), 0);
		s = rank_expand("%h", &ri, 1, NULL);
		ck_assert_str_eq(s, host);
		free(s);
	}
}
END_TEST

START_TEST(test_fmt_has)
{
	ck_assert(rank_fmt_has("prof.%p", 'p'));
	ck_assert(!rank_fmt_has("prof.%%p", 'p'));
	ck_assert(rank_fmt_has("prof.%%%p", 'p'));
	ck_assert(!rank_fmt_has("prof.%r", 'p'));
	ck_assert(rank_fmt_has("prof.%r", 'r'));
	ck_assert(!rank_fmt_has("prof.%", 'p'));
	ck_assert(!rank_fmt_has(NULL, 'p'));
}
END_TEST

/* What went through stdio before and the whole buffer after, in that order. */
START_TEST(test_write_whole)
{
	char path[] = "/tmp/check_rank.XXXXXX";
	int fd = mkstemp(path);
	FILE *f;
	char buf[64] = "";
	static const char body[] = "one report\nin one piece\n";

	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("before\n", f);
	ck_assert_int_eq(rank_write_whole(f, body, strlen(body)), 0);
	fclose(f);
	f = fopen(path, "r");
	ck_assert_uint_eq(fread(buf, 1, sizeof(buf) - 1, f), strlen("before\n") + strlen(body));
	fclose(f);
	unlink(path);
	ck_assert_str_eq(buf, "before\none report\nin one piece\n");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rank");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_none);
	tcase_add_test(tc, test_launchers);
	tcase_add_test(tc, test_precedence);
	tcase_add_test(tc, test_bad_values);
	tcase_add_test(tc, test_expand);
	tcase_add_test(tc, test_fmt_has);
	tcase_add_test(tc, test_write_whole);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
