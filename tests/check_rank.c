// SPDX-License-Identifier: GPL-2.0-or-later
/* check_rank.c - Check suite for the rank from synthetic environments. */
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
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
