// SPDX-License-Identifier: GPL-2.0-or-later
/* rank.c - the MPI rank from the launcher's environment. */
#include "fortstat/rank.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fortstat/util.h"

extern char **environ;

/* The value of name in envp, or NULL. */
static const char *env_get(char *const *envp, const char *name)
{
	size_t len = strlen(name);

	for (; envp && *envp; envp++)
		if (!strncmp(*envp, name, len) && (*envp)[len] == '=')
			return *envp + len + 1;
	return NULL;
}

/* A whole number in [0, INT_MAX] from name in envp, or -1. */
static int env_int(char *const *envp, const char *name)
{
	const char *s = env_get(envp, name);
	char *end;
	long v;

	if (!s || *s < '0' || *s > '9')
		return -1;
	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || *end || v > INT_MAX)
		return -1;
	return (int)v;
}

bool rank_from_env(char *const *envp, struct rank_info *ri)
{
	static const struct {
		const char *rank, *size[2];
	} vars[] = {
	    {"OMPI_COMM_WORLD_RANK", {"OMPI_COMM_WORLD_SIZE", NULL}},
	    {"PMIX_RANK", {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}},
	    {"PMI_RANK", {"PMI_SIZE", NULL}},
	    {"SLURM_PROCID", {"SLURM_NTASKS", NULL}},
	};

	memset(ri, 0, sizeof(*ri));
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		int rank = env_int(envp, vars[i].rank);

		if (rank < 0)
			continue;
		ri->known = true;
		ri->rank = rank;
		ri->source = vars[i].rank;
		for (size_t k = 0; k < 2 && vars[i].size[k]; k++) {
			int size = env_int(envp, vars[i].size[k]);

			if (size > rank) {
				ri->size = size;
				break;
			}
		}
		return true;
	}
	return false;
}

bool rank_detect(struct rank_info *ri)
{
	return rank_from_env(environ, ri);
}
