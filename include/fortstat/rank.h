/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rank.h - fortstat as one rank of an MPI job: the rank and size that the
 * launcher (Open MPI, PMIx, MPICH/Hydra, Slurm) put in the environment
 * (the -o names it goes into, and whole writes: output.h).
 */
#ifndef FORTSTAT_RANK_H
#define FORTSTAT_RANK_H

#include <stdbool.h>

struct rank_info {
	bool known;	    /* a launcher's variable gave the rank */
	int rank;	    /* this process's rank (0 when !known) */
	int size;	    /* ranks in the job, 0 when no variable gave it */
	const char *source; /* the variable that gave the rank (static string), or NULL */
};

/*
 * The rank and size in envp (a NULL-terminated "NAME=VALUE" array, as
 * environ), first found of: OMPI_COMM_WORLD_RANK/OMPI_COMM_WORLD_SIZE,
 * PMIX_RANK (size from OMPI_COMM_WORLD_SIZE or PMI_SIZE when set),
 * PMI_RANK/PMI_SIZE, SLURM_PROCID/SLURM_NTASKS. A value that is not a whole
 * number in [0, INT_MAX] (or a size not above the rank) is ignored, as if
 * unset. Fills *ri; returns true when a rank was found. envp may be NULL.
 */
bool rank_from_env(char *const *envp, struct rank_info *ri);

/* rank_from_env on this process's environment. */
bool rank_detect(struct rank_info *ri);

#endif
