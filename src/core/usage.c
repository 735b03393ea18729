// SPDX-License-Identifier: GPL-2.0-or-later
/* usage.c - user and system time from the kernel's readings; utilisation and concurrency. */
#include "fortstat/usage.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The number at *s (digits only), *s moved past it; -1 when there is none. */
static int number(const char **s, uint64_t *v)
{
	char *end;

	if (**s < '0' || **s > '9')
		return -1;
	errno = 0;
	*v = strtoull(*s, &end, 10);
	if (errno)
		return -1;
	*s = end;
	return 0;
}

int usage_parse_stat(const char *buf, uint64_t *utime, uint64_t *stime)
{
	const char *p = strrchr(buf, ')');
	uint64_t v;

	if (!p)
		return -1;
	p++;
	/* after ")": field 3 (state) is the first; utime is field 14, stime 15 */
	for (int field = 3; field <= 15; field++) {
		while (*p == ' ')
			p++;
		if (!*p)
			return -1;
		if (field < 14) {
			while (*p && *p != ' ')
				p++;
			continue;
		}
		if (number(&p, &v) < 0 || (*p && *p != ' ' && *p != '\n'))
			return -1;
		if (field == 14)
			*utime = v;
		else
			*stime = v;
	}
	return 0;
}

struct usage_split usage_between(const struct usage_reading *a, const struct usage_reading *b)
{
	struct usage_split s = {0, 0};
	uint64_t run = b->run_ns > a->run_ns ? b->run_ns - a->run_ns : 0;
	uint64_t ut = b->utime > a->utime ? b->utime - a->utime : 0;
	uint64_t st = b->stime > a->stime ? b->stime - a->stime : 0;

	if (!st) {
		s.user_ns = run;
	} else if (!ut) {
		s.sys_ns = run;
	} else {
		/* run * st / (ut + st) without overflow: in long double */
		s.sys_ns = (uint64_t)((long double)run * (long double)st / (long double)(ut + st));
		if (s.sys_ns > run)
			s.sys_ns = run;
		s.user_ns = run - s.sys_ns;
	}
	return s;
}

double usage_concurrency(double cpu_s, double elapsed_s)
{
	if (!(elapsed_s > 0))
		return NAN;
	return cpu_s / elapsed_s;
}

double usage_utilisation(double cpu_s, double elapsed_s, int n_cpus)
{
	if (!(elapsed_s > 0) || n_cpus < 1)
		return NAN;
	return 100.0 * cpu_s / (elapsed_s * n_cpus);
}

uint64_t usage_wait_ns(uint64_t wall_ns, uint64_t cpu_ns)
{
	return wall_ns > cpu_ns ? wall_ns - cpu_ns : 0;
}
