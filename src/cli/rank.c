// SPDX-License-Identifier: GPL-2.0-or-later
/* rank.c - the MPI rank from the launcher's environment, -o names, and whole writes. */
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

bool rank_fmt_has(const char *fmt, char conv)
{
	for (const char *p = fmt; p && *p; p++) {
		if (p[0] != '%' || !p[1])
			continue;
		if (p[1] == conv)
			return true;
		p++; /* %% and the others: two characters */
	}
	return false;
}

char *rank_expand(const char *fmt, const struct rank_info *ri, int pid, const char *host)
{
	char hbuf[HOST_NAME_MAX + 1];
	size_t cap = strlen(fmt) + 32, n = 0;
	char *s = xmalloc(cap);

	if (!host && rank_fmt_has(fmt, 'h')) {
		if (gethostname(hbuf, sizeof(hbuf)) < 0)
			snprintf(hbuf, sizeof(hbuf), "localhost");
		hbuf[sizeof(hbuf) - 1] = '\0';
		host = hbuf;
	}
	for (const char *p = fmt; *p; p++) {
		const char *piece = NULL;
		char num[16], one[2] = {*p, '\0'};
		size_t len;

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(num, sizeof(num), "%d", pid);
			piece = num;
		} else if (p[0] == '%' && p[1] == 'r') {
			snprintf(num, sizeof(num), "%d", ri && ri->known ? ri->rank : 0);
			piece = num;
		} else if (p[0] == '%' && p[1] == 'h') {
			piece = host;
		} else if (p[0] == '%' && p[1] == '%') {
			piece = "%";
		}
		if (piece)
			p++;
		else
			piece = one;
		len = strlen(piece);
		while (n + len + 1 > cap)
			s = xrealloc(s, cap *= 2);
		memcpy(s + n, piece, len);
		n += len;
	}
	s[n] = '\0';
	return s;
}

int rank_write_whole(FILE *out, const char *buf, size_t len)
{
	int fd;

	if (fflush(out) != 0)
		return -errno;
	fd = fileno(out);
	if (fd < 0)
		return -EBADF;
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}
