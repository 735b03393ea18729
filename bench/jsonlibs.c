// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * jsonlibs.c - the CPU time of parsing JSON reports, one reader a build:
 * fortstat's own (-DUSE_OWN, with src/report/jsonin.c and src/util/util.c),
 * yajl's callbacks (-DUSE_YAJL), json-c's tokener (-DUSE_JSONC) or
 * jansson's json_loadb (-DUSE_JANSSON): their headers clash (json_type,
 * JSON_OBJECT), so each is a program of its own. bench/jsonlibs builds and
 * runs them on bench/merge's reports:
 *   jsonlibs-LIB MODE FILE...
 * Each file is read whole first; only the parse is timed (process CPU
 * time, CLOCK_PROCESS_CPUTIME_ID), and what it built is freed inside the
 * timing, as --merge would. Prints one line: mode, files, MiB, CPU
 * seconds, MiB/s and the values seen. Exit 1 when a file does not parse.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#if defined(USE_OWN)
#include "fortstat/jsonin.h"
#elif defined(USE_YAJL)
#include <yajl/yajl_parse.h>
#elif defined(USE_JSONC)
#include <json-c/json.h>
#elif defined(USE_JANSSON)
#include <jansson.h>
#else
#error "build with one of -DUSE_OWN, -DUSE_YAJL, -DUSE_JSONC, -DUSE_JANSSON"
#endif

static unsigned long n_vals; /* values seen: the parsers saw the same text */

static double cpu_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The whole file, NUL-terminated; *len its length. Exits on an error. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat sb;
	size_t n = 0;
	char *b;

	if (fd < 0 || fstat(fd, &sb) < 0) {
		perror(path);
		exit(2);
	}
	b = malloc((size_t)sb.st_size + 1);
	if (!b) {
		perror("malloc");
		exit(2);
	}
	while (n < (size_t)sb.st_size) {
		ssize_t k = read(fd, b + n, (size_t)sb.st_size - n);

		if (k <= 0) {
			perror(path);
			exit(2);
		}
		n += (size_t)k;
	}
	close(fd);
	b[n] = '\0';
	*len = n;
	return b;
}

#if defined(USE_OWN)
/* The members --merge reads (merge.c's keys): json_parse_keep builds no others. */
static const char *const keys[] = {"program",  "rank",	 "clock",   "count_only", "calls_timed",
				   "routines", "arcs",	 "stacks",  "merged",	  "name",
				   "calls",    "self_s", "total_s", "mainline",	  "file",
				   "line",     "caller", "callee",  "time_s",	  "frames"};
static struct json_doc doc; /* its node array reused from file to file, as --merge does */

static const char *const modes = "keep (what --merge calls) | all (every member built)";

static int parse(const char *mode, char *buf, size_t len)
{
	char err[160];
	int rc;

	if (!strcmp(mode, "keep"))
		rc = json_parse_keep(buf, len, &doc, keys, sizeof(keys) / sizeof(*keys), err,
				     sizeof(err));
	else if (!strcmp(mode, "all"))
		rc = json_parse_mut(buf, len, &doc, err, sizeof(err));
	else
		return -1;
	if (rc)
		fprintf(stderr, "fortstat's reader: %s\n", err);
	n_vals += doc.n_nodes;
	return rc ? 1 : 0;
}

#elif defined(USE_YAJL)
/* Callbacks that only count: the least a streaming parse can cost. */
static int y_null(void *c)
{
	n_vals++;
	return 1;
}

static int y_bool(void *c, int b)
{
	n_vals++;
	return 1;
}

static int y_number(void *c, const char *s, size_t len)
{
	n_vals++;
	return 1;
}

static int y_int(void *c, long long v)
{
	n_vals++;
	return 1;
}

static int y_double(void *c, double v)
{
	n_vals++;
	return 1;
}

static int y_string(void *c, const unsigned char *s, size_t len)
{
	n_vals++;
	return 1;
}

static int y_key(void *c, const unsigned char *s, size_t len)
{
	return 1;
}

static int y_open(void *c)
{
	n_vals++;
	return 1;
}

static int y_close(void *c)
{
	return 1;
}

/* numbers as their text (yajl_number: no conversion) */
static const yajl_callbacks raw = {.yajl_null = y_null,
				   .yajl_boolean = y_bool,
				   .yajl_number = y_number,
				   .yajl_string = y_string,
				   .yajl_start_map = y_open,
				   .yajl_map_key = y_key,
				   .yajl_end_map = y_close,
				   .yajl_start_array = y_open,
				   .yajl_end_array = y_close};
/* numbers converted by yajl (strtoll, strtod) */
static const yajl_callbacks conv = {.yajl_null = y_null,
				    .yajl_boolean = y_bool,
				    .yajl_integer = y_int,
				    .yajl_double = y_double,
				    .yajl_string = y_string,
				    .yajl_start_map = y_open,
				    .yajl_map_key = y_key,
				    .yajl_end_map = y_close,
				    .yajl_start_array = y_open,
				    .yajl_end_array = y_close};

static const char *const modes = "raw (numbers as text) | novalidate (raw, no UTF-8 check) | "
				 "conv (numbers converted by yajl)";

static int parse(const char *mode, char *buf, size_t len)
{
	bool is_conv = !strcmp(mode, "conv");
	yajl_handle h;
	yajl_status st;

	if (!is_conv && strcmp(mode, "raw") && strcmp(mode, "novalidate"))
		return -1;
	h = yajl_alloc(is_conv ? &conv : &raw, NULL, NULL);
	if (!h)
		return 1;
	if (!strcmp(mode, "novalidate"))
		yajl_config(h, yajl_dont_validate_strings, 1);
	st = yajl_parse(h, (const unsigned char *)buf, len);
	if (st == yajl_status_ok)
		st = yajl_complete_parse(h);
	if (st != yajl_status_ok) {
		unsigned char *e = yajl_get_error(h, 1, (const unsigned char *)buf, len);

		fprintf(stderr, "yajl: %s", (const char *)e);
		yajl_free_error(h, e);
	}
	yajl_free(h);
	return st != yajl_status_ok;
}

#elif defined(USE_JSONC)
static const char *const modes = "tokener (json_tokener_parse_ex, the tree freed)";

static int parse(const char *mode, char *buf, size_t len)
{
	json_tokener *t;
	json_object *o;

	if (strcmp(mode, "tokener"))
		return -1;
	if (len > INT32_MAX)
		return 1;
	t = json_tokener_new();
	o = json_tokener_parse_ex(t, buf, (int)len);
	if (!o) {
		fprintf(stderr, "json-c: %s\n", json_tokener_error_desc(json_tokener_get_error(t)));
		json_tokener_free(t);
		return 1;
	}
	n_vals++;
	json_object_put(o);
	json_tokener_free(t);
	return 0;
}

#else /* USE_JANSSON */
static const char *const modes = "loadb (json_loadb, the tree freed)";

static int parse(const char *mode, char *buf, size_t len)
{
	json_error_t e;
	json_t *o;

	if (strcmp(mode, "loadb"))
		return -1;
	o = json_loadb(buf, len, 0, &e);
	if (!o) {
		fprintf(stderr, "jansson: line %d: %s\n", e.line, e.text);
		return 1;
	}
	n_vals++;
	json_decref(o);
	return 0;
}
#endif

int main(int argc, char **argv)
{
	double t = 0, mib;
	size_t bytes = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: %s MODE FILE...\n  MODE: %s\n", argv[0], modes);
		return 2;
	}
	for (int i = 2; i < argc; i++) {
		size_t len;
		char *buf = slurp(argv[i], &len);
		double t0 = cpu_s();
		int rc = parse(argv[1], buf, len);

		t += cpu_s() - t0;
		free(buf);
		if (rc < 0) {
			fprintf(stderr, "%s: no mode %s (%s)\n", argv[0], argv[1], modes);
			return 2;
		}
		if (rc) {
			fprintf(stderr, "%s: %s does not parse\n", argv[0], argv[i]);
			return 1;
		}
		bytes += len;
	}
#if defined(USE_OWN)
	json_free(&doc);
#endif
	mib = (double)bytes / 1048576.0;
	printf("%-11s %5d files %8.1f MiB  parse CPU %8.3f s %8.1f MiB/s  %lu values\n", argv[1],
	       argc - 2, mib, t, t > 0 ? mib / t : 0, n_vals);
	return 0;
}
