/* SPDX-License-Identifier: GPL-2.0-or-later */
/* calibcache.c - a calibration kept for the next runs (see calibcache.h). */
#include "fortstat/calibcache.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "fortstat/version.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define CACHE_MAGIC "fortstat-calibration-2" /* 2: the round calls' figures */
#define CACHE_KEEP 16			     /* lines kept: the latest for each key */

/* The figures of a struct calib, in the order of a line. */
#define N_FIG 26
static double *figs(struct calib *c, double *v[N_FIG])
{
	double *a[N_FIG] = {&c->f1_ns,
			    &c->f2_ns,
			    &c->alt_f1_ns,
			    &c->alt_f2_ns,
			    &c->df1_ns,
			    &c->df2_ns,
			    &c->alt_df1_ns,
			    &c->alt_df2_ns,
			    &c->dresid_ns,
			    &c->alt_dresid_ns,
			    &c->seg_ns,
			    &c->alt_seg_ns,
			    &c->resid_ns,
			    &c->alt_resid_ns,
			    &c->count_ns,
			    &c->alt_count_ns,
			    &c->seconds,
			    &c->round_f1_ns,
			    &c->round_f2_ns,
			    &c->alt_round_f1_ns,
			    &c->alt_round_f2_ns,
			    &c->round_count_ns,
			    &c->alt_round_count_ns,
			    &c->u_callee_ns,
			    &c->u_caller_ns,
			    NULL};
	memcpy(v, a, sizeof(a));
	return v[0];
}

#define FNV_0 0xcbf29ce484222325ull

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

static uint64_t fnv_str(uint64_t h, const char *s)
{
	return fnv(h, s, strlen(s) + 1);
}

/* The first line of a small file (its newline cut), "" when unreadable. */
static void first_line(const char *path, const char *prefix, char *buf, size_t size)
{
	FILE *f = fopen(path, "re");
	char line[512];

	buf[0] = '\0';
	if (!f)
		return;
	while (fgets(line, sizeof(line), f))
		if (!prefix || !strncmp(line, prefix, strlen(prefix))) {
			snprintf(buf, size, "%.*s", (int)strcspn(line, "\n"), line);
			break;
		}
	fclose(f);
}

static const char *const env_keys[] = {
    "FORTSTAT_NO_PERF",	      "FORTSTAT_NO_SHARED",    "FORTSTAT_NO_STUBS",
    "FORTSTAT_PROBE_RING",    "FORTSTAT_SWITCH_PAGES", "FORTSTAT_TRAP_ROUTINES",
    "FORTSTAT_SAMPLE_REFUSE", "FORTSTAT_DEFER_DRAIN",  "LD_PRELOAD"};

/* Everything that decides what a call costs, hashed. */
static uint64_t cache_key(const struct trace_opts *o, int parallel_runtime)
{
	uint64_t h = FNV_0;
	char s[512];
	struct stat sb;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int v[11];

	h = fnv_str(h, fs_version());
	if (stat("/proc/self/exe", &sb) == 0) {
		int64_t id[5] = {(int64_t)sb.st_dev, (int64_t)sb.st_ino, (int64_t)sb.st_size,
				 (int64_t)sb.st_mtim.tv_sec, (int64_t)sb.st_mtim.tv_nsec};
		h = fnv(h, id, sizeof(id));
	}
	first_line("/proc/sys/kernel/random/boot_id", NULL, s, sizeof(s));
	h = fnv_str(h, s);
	first_line("/proc/cpuinfo", "model name", s, sizeof(s));
	h = fnv_str(h, s);
	if (ncpu < 1)
		ncpu = 1;
	v[0] = o->probes, v[1] = o->probe_stops, v[2] = o->go_program, v[3] = o->go_calib;
	v[4] = (int)o->pin, v[5] = (int)o->clock, v[6] = o->alloc, v[7] = o->follow;
	v[8] = o->all, v[9] = parallel_runtime, v[10] = (int)ncpu;
	h = fnv(h, v, sizeof(v));
	/* what the environment changes in a stop or a probe */
	for (size_t i = 0; i < sizeof(env_keys) / sizeof(env_keys[0]); i++) {
		const char *e = getenv(env_keys[i]);

		h = fnv_str(fnv_str(h, env_keys[i]), e ? e : "(unset)");
	}
	h = fnv(h, &o->throttle_calls, sizeof(o->throttle_calls));
	return fnv(h, &o->throttle_ns, sizeof(o->throttle_ns));
}

/* The cache file's path (malloc'ed), NULL without a home for it. */
static char *cache_path(void)
{
	const char *x = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");

	if (x && x[0] == '/')
		return xasprintf("%s/fortstat/calibration", x);
	if (home && home[0] == '/')
		return xasprintf("%s/.cache/fortstat/calibration", home);
	return NULL;
}

/* The longest age taken (s), 0 when the cache is off. */
static double max_age(void)
{
	const char *e = getenv(CALIB_CACHE_ENV);
	char *end;
	double a;

	if (!e || !*e)
		return CALIB_CACHE_AGE_S;
	a = strtod(e, &end);
	return *end || !(a > 0) || a > 1e9 ? 0 : a;
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

char *calib_cache_line(uint64_t key, double t, const struct calib *cal)
{
	struct calib c = *cal;
	double *v[N_FIG];
	char *line, *more;

	figs(&c, v);
	line = xasprintf("%s %016llx %.3f %zu %zu", CACHE_MAGIC, (unsigned long long)key, t,
			 c.batches, c.calls);
	for (int k = 0; v[k]; k++) {
		more = xasprintf("%s %a", line, *v[k]);
		free(line);
		line = more;
	}
	/* the line's own check: a line cut or changed is not taken */
	more = xasprintf("%s #%016llx", line, (unsigned long long)fnv_str(FNV_0, line));
	free(line);
	return more;
}

int calib_cache_parse(const char *line, uint64_t *key, double *t, struct calib *cal)
{
	struct calib c = {0};
	double *v[N_FIG];
	const char *p = line;
	char *end;
	size_t ml = strlen(CACHE_MAGIC);
	unsigned long long n[2];

	const char *sum = strrchr(line, '#');
	char *body;
	bool whole;

	if (!sum || sum == line || sum[-1] != ' ' || strncmp(p, CACHE_MAGIC " ", ml + 1))
		return -1;
	body = strndup(line, (size_t)(sum - 1 - line));
	whole = body && strtoull(sum + 1, &end, 16) == fnv_str(FNV_0, body) && end == sum + 17 &&
		!end[strspn(end, "\n")];
	free(body);
	if (!whole)
		return -1;
	p += ml + 1;
	errno = 0;
	*key = strtoull(p, &end, 16);
	if (end == p || *end != ' ')
		return -1;
	p = end;
	*t = strtod(p, &end);
	if (end == p || !isfinite(*t) || *t < 0)
		return -1;
	p = end;
	for (int k = 0; k < 2; k++) {
		n[k] = strtoull(p, &end, 10);
		if (end == p || errno)
			return -1;
		p = end;
	}
	if (n[0] < 1 || n[0] > CALIB_MAX_BATCHES || n[1] < 1 || n[1] > 10000000)
		return -1;
	c.batches = (size_t)n[0];
	c.calls = (size_t)n[1];
	figs(&c, v);
	for (int k = 0; v[k]; k++) {
		*v[k] = strtod(p, &end);
		/*
		 * a cost of a call or a stop: between 0 and 10 ms; what f1 and f2
		 * hold beyond a stop's measure (resid) may be below 0
		 */
		double lo = v[k] == &c.resid_ns || v[k] == &c.alt_resid_ns ? -1e7 : 0;

		if (end == p || !isfinite(*v[k]) || *v[k] < lo || *v[k] > 1e7)
			return -1;
		p = end;
	}
	if (p != sum - 1)
		return -1;
	*cal = c;
	return 0;
}

int calib_cache_get(const struct trace_opts *o, int parallel_runtime, struct calib *out,
		    double *age_s)
{
	double age = max_age(), t, best_t = -1, now = now_s();
	uint64_t key, want;
	struct calib c, best;
	char *path, *line = NULL;
	size_t cap = 0;
	FILE *f;

	if (!(age > 0) || !(path = cache_path()))
		return -1;
	f = fopen(path, "re");
	free(path);
	if (!f)
		return -1;
	want = cache_key(o, parallel_runtime);
	fs_info(3, "calibration cache: looking for %016llx", (unsigned long long)want);
	while (getline(&line, &cap, f) > 0)
		if (!calib_cache_parse(line, &key, &t, &c) && key == want && t > best_t) {
			best = c;
			best_t = t;
		}
	free(line);
	fclose(f);
	if (best_t < 0 || now - best_t > age || now < best_t - 1)
		return -1;
	*out = best;
	*age_s = now - best_t;
	return 0;
}

/* mkdir -p of path's directory (made for the user alone). */
static void make_dirs(const char *path)
{
	char *d = xstrdup(path);

	for (char *p = strchr(d + 1, '/'); p; p = strchr(p + 1, '/')) {
		*p = '\0';
		mkdir(d, 0700); /* EEXIST for most */
		*p = '/';
	}
	free(d);
}

void calib_cache_put(const struct trace_opts *o, int parallel_runtime, const struct calib *cal)
{
	char *path, *tmp, *line = NULL, *kept[CACHE_KEEP];
	size_t cap = 0, n = 0;
	uint64_t key = cache_key(o, parallel_runtime), k;
	double t;
	struct calib c;
	FILE *f;
	int fd;

	if (!(max_age() > 0) || !cal->batches || !(path = cache_path()))
		return;
	fs_info(3, "calibration cache: keeping %016llx", (unsigned long long)key);
	kept[n++] = calib_cache_line(key, now_s(), cal);
	f = fopen(path, "re");
	while (f && getline(&line, &cap, f) > 0) {
		/* the other keys' latest lines, sane ones only */
		if (n < CACHE_KEEP && !calib_cache_parse(line, &k, &t, &c) && k != key) {
			line[strcspn(line, "\n")] = '\0';
			kept[n++] = xstrdup(line);
		}
	}
	if (f)
		fclose(f);
	free(line);
	make_dirs(path);
	tmp = xasprintf("%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd >= 0) {
		FILE *w = fdopen(fd, "w");
		bool ok = w != NULL;

		for (size_t i = 0; w && i < n; i++)
			ok &= fprintf(w, "%s\n", kept[i]) > 0;
		if (w)
			ok &= fclose(w) == 0;
		else
			close(fd);
		if (!ok || rename(tmp, path) < 0)
			unlink(tmp);
	}
	for (size_t i = 0; i < n; i++)
		free(kept[i]);
	free(tmp);
	free(path);
}
