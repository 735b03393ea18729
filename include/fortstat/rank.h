/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * rank.h - fortstat as one rank of an MPI job: the rank and size that the
 * launcher (Open MPI, PMIx, MPICH/Hydra, Slurm) put in the environment, the
 * names of -o files (%r, %p, %h, %%), and reports written whole so that the
 * ranks sharing a terminal never interleave.
 */
#ifndef FORTSTAT_RANK_H
#define FORTSTAT_RANK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/*
 * A report file name: fmt with %r replaced by ri's rank (0 when ri is NULL
 * or !known), %p by pid, %h by host (NULL: gethostname(), "localhost" when
 * that fails) and %% by %; any other % is kept as it is. Returns a malloc'ed
 * string (never NULL).
 */
char *rank_expand(const char *fmt, const struct rank_info *ri, int pid, const char *host);

/* True when fmt holds the conversion %conv ("%%conv" is a %% and a letter: no). */
bool rank_fmt_has(const char *fmt, char conv);

/*
 * Write len bytes of buf to out at once: out is flushed, then the bytes go
 * with write(2) on its descriptor, repeated only for what a short write left
 * (a terminal or pipe takes a report of up to PIPE_BUF in one piece, a file
 * with O_APPEND any size). Returns 0 or a negative errno.
 */
int rank_write_whole(FILE *out, const char *buf, size_t len);

#endif
