// SPDX-License-Identifier: GPL-2.0-or-later
/* check_merge.c - Check suite for the JSON reader and --merge on synthetic reports. */
#include <check.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fortstat/jsonin.h"
#include "fortstat/merge.h"
#include "fortstat/profile.h"

/* ---- the JSON reader ---- */

START_TEST(test_json_values)
{
	static const char text[] =
	    " {\"a\": [1, -2.5, 3e2, true, false, null], \"s\": \"x\\\"\\u00e9\\ud83d\\ude00\\n\","
	    " \"o\": {}, \"e\": []} ";
	struct json_doc d;
	const struct json_node *root, *a, *v;
	double x;
	uint64_t u;
	int i;

	ck_assert_int_eq(json_parse(text, strlen(text), &d, NULL, 0), 0);
	ck_assert_uint_eq(d.used, strlen(text));
	root = json_root(&d);
	ck_assert_int_eq(root->type, JSON_OBJECT);
	ck_assert_uint_eq(root->n, 4);
	a = json_get(&d, root, "a");
	ck_assert_uint_eq(a->n, 6);
	v = json_first(&d, a);
	ck_assert_int_eq(json_u64(v, &u), 0);
	ck_assert_uint_eq(u, 1);
	v = json_next(&d, v);
	ck_assert_int_eq(json_double(v, &x), 0);
	ck_assert(x == -2.5);
	ck_assert_int_eq(json_u64(v, &u), -EINVAL);
	ck_assert_int_eq(json_int(v, &i), -EINVAL);
	v = json_next(&d, v);
	ck_assert_int_eq(json_double(v, &x), 0);
	ck_assert(x == 300);
	v = json_next(&d, v);
	ck_assert_int_eq(v->type, JSON_TRUE);
	v = json_next(&d, json_next(&d, v));
	ck_assert_int_eq(v->type, JSON_NULL);
	ck_assert_ptr_null(json_next(&d, v));
	ck_assert_str_eq(json_string(json_get(&d, root, "s")), "x\"\xc3\xa9\xf0\x9f\x98\x80\n");
	ck_assert_uint_eq(json_get(&d, root, "o")->n, 0);
	ck_assert_ptr_null(json_first(&d, json_get(&d, root, "e")));
	ck_assert_ptr_null(json_get(&d, root, "missing"));
	ck_assert_ptr_null(json_get(&d, a, "a")); /* not an object */
	json_free(&d);
}
END_TEST

START_TEST(test_json_numbers)
{
	static const struct {
		const char *text;
		double v;
	} ok[] = {{"0", 0},
		  {"0.000000001", 1e-9},
		  {"12.345678901", 12.345678901},
		  {"-0.5", -0.5},
		  {"123456789012345678901234", 1.2345678901234568e23},
		  {"1.5E-3", 1.5e-3},
		  /* eight digits at a time, and the rest one by one */
		  {"0.12345678", 0.12345678},
		  {"-98765432.1", -98765432.1},
		  {"1234567.12345678", 1234567.12345678},
		  {"12345678.12345678", 12345678.12345678}};
	struct json_doc d;
	double x;
	int k;
	uint64_t u;

	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		ck_assert_int_eq(json_parse(ok[i].text, strlen(ok[i].text), &d, NULL, 0), 0);
		ck_assert_int_eq(json_double(json_root(&d), &x), 0);
		ck_assert_msg(x == ok[i].v, "%s: %.17g", ok[i].text, x);
		json_free(&d);
	}
	ck_assert_int_eq(json_parse("18446744073709551615", 20, &d, NULL, 0), 0);
	ck_assert_int_eq(json_u64(json_root(&d), &u), 0);
	ck_assert(u == UINT64_MAX);
	json_free(&d);
	ck_assert_int_eq(json_parse("18446744073709551616", 20, &d, NULL, 0), 0);
	ck_assert_int_eq(json_u64(json_root(&d), &u), -EINVAL);
	json_free(&d);
	ck_assert_int_eq(json_parse("-2147483648", 11, &d, NULL, 0), 0);
	ck_assert_int_eq(json_int(json_root(&d), &k), 0);
	ck_assert_int_eq(k, -2147483647 - 1);
	json_free(&d);
	ck_assert_int_eq(json_parse("2147483648", 10, &d, NULL, 0), 0);
	ck_assert_int_eq(json_int(json_root(&d), &k), -EINVAL);
	json_free(&d);
	ck_assert_int_eq(json_parse("1e999", 5, &d, NULL, 0), 0);
	ck_assert_int_eq(json_double(json_root(&d), &x), -EINVAL);
	json_free(&d);
}
END_TEST

START_TEST(test_json_errors)
{
	static const struct {
		const char *text, *err;
	} bad[] = {
	    {"{", "line 1: unexpected end (truncated?)"},
	    {"{\"a\": 1,}", "line 1: expected a member name"},
	    {"[1 2]", "line 1: expected ',' or ']'"},
	    {"{\"a\" 1}", "line 1: expected ':'"},
	    {"\n\n[01]", "line 3: expected ',' or ']'"},
	    {"[1.]", "line 1: bad number"},
	    {"[-]", "line 1: bad number"},
	    {"[+1]", "line 1: unexpected character"},
	    {"[tru]", "line 1: unexpected character"},
	    {"[\"a\x01\"]", "line 1: control character in a string"},
	    {"[\"\\x\"]", "line 1: bad escape in a string"},
	    {"[\"\\u12g4\"]", "line 1: bad \\u escape in a string"},
	    {"[\"\\udc00\"]", "line 1: lone low surrogate in a string"},
	    {"[\"\\ud800x\"]", "line 1: lone high surrogate in a string"},
	    {"[\"\xc3\x28\"]", "line 1: invalid UTF-8 in a string"},
	    {"[\"\xed\xa0\x80\"]", "line 1: invalid UTF-8 in a string"},
	    {"[\"abc", "line 1: unexpected end in a string (truncated?)"},
	    /* a report cut inside a number (mpi.sh's 500 bytes, in distcheck's longer paths) */
	    {"{\"a\": 0.", "line 1: unexpected end in a number (truncated?)"},
	    {"[1, -", "line 1: unexpected end in a number (truncated?)"},
	    {"[1e", "line 1: unexpected end in a number (truncated?)"},
	    {"[1e+", "line 1: unexpected end in a number (truncated?)"},
	    {"[12", "line 1: unexpected end (truncated?)"},
	    /* cut inside a word, an escape or a character: truncated too */
	    {"{\"a\": nu", "line 1: unexpected end in null (truncated?)"},
	    {"[t", "line 1: unexpected end in true (truncated?)"},
	    {"[fals", "line 1: unexpected end in false (truncated?)"},
	    {"[\"\\u00", "line 1: unexpected end in a string (truncated?)"},
	    {"[\"\\u00x", "line 1: bad \\u escape in a string"},
	    {"[\"\\ud83d\\uD", "line 1: unexpected end in a string (truncated?)"},
	    {"[\"\\ud83d\\u0", "line 1: lone high surrogate in a string"},
	    {"[\"\xf0\x9f\x98", "line 1: unexpected end in a string (truncated?)"},
	    {"[\"\xed\xa0", "line 1: invalid UTF-8 in a string"},
	    {"[\"\xc3", "line 1: unexpected end in a string (truncated?)"},
	    {"[\"\xc0", "line 1: invalid UTF-8 in a string"},
	    {"'a'", "line 1: unexpected character"},
	};
	struct json_doc d;
	char err[128];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_int_eq(json_parse(bad[i].text, strlen(bad[i].text), &d, err, sizeof(err)),
				 -EINVAL);
		ck_assert_str_eq(err, bad[i].err);
		ck_assert_ptr_null(json_root(&d));
		json_free(&d);
	}
	ck_assert_int_eq(json_parse(" \n\t", 3, &d, err, sizeof(err)), -ENODATA);
	json_free(&d);
	ck_assert_int_eq(json_parse(NULL, 0, &d, err, sizeof(err)), -ENODATA);
	json_free(&d);
}
END_TEST

/*
 * Every cut of a report says it may be truncated, wherever it falls: in a
 * word, a number, an escape, a character of several bytes (mpi.sh cuts a
 * report at 500 bytes, and what is there depends on the paths).
 */
START_TEST(test_json_cuts)
{
	static const char text[] =
	    "{\"program\": \"./caf\xc3\xa9 \\u00e9\\ud83d\\ude00 \xf0\x9f\x98\x80\",\n"
	    "  \"rank\": null, \"count_only\": false, \"merged\": true,\n"
	    "  \"routines\": [{\"name\": \"a\\\"b\", \"self_s\": -1.25e+3, \"calls\": 10}]}";
	size_t len = strlen(text);
	struct json_doc d;
	char err[128];

	for (size_t cut = 1; cut < len; cut++) {
		ck_assert_int_eq(json_parse(text, cut, &d, err, sizeof(err)), -EINVAL);
		ck_assert_msg(strstr(err, "(truncated?)"), "cut at %zu: %s", cut, err);
		json_free(&d);
	}
	ck_assert_int_eq(json_parse(text, len, &d, err, sizeof(err)), 0);
	json_free(&d);
}
END_TEST

/* Nesting is bounded: a deep text is an error, not a crash. */
START_TEST(test_json_depth)
{
	size_t n = 100000;
	char *deep = malloc(n);
	struct json_doc d;
	char err[128];

	memset(deep, '[', n);
	ck_assert_int_eq(json_parse(deep, n, &d, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: nested more than 64 deep");
	json_free(&d);
	free(deep);
}
END_TEST

/* json_parse_keep: members not asked for are left out, nested or not, and checked all the same. */
START_TEST(test_json_keep)
{
	static const char *const keep[] = {"name", "calls", "o"};
	char text[] =
	    "{\"skip\": {\"name\": [1, {\"x\": \"\\u00e9\\\"\\ud83d\\ude00\"}], \"calls\": 2},"
	    " \"name\": \"n\\u0041\", \"s\\u0074r\": \"a\\\\b\\n\", \"calls\": 7,"
	    " \"o\": {\"cpu\": {\"self_s\": 1e3}, \"calls\": [true, null]},"
	    " \"n\\u0061me\": \"second\"}";
	size_t len = strlen(text); /* the parse writes into text */
	struct json_doc d = {0};
	const struct json_node *root, *v, *o;
	uint64_t u;

	ck_assert_int_eq(json_parse_keep(text, len, &d, keep, 3, NULL, 0), 0);
	ck_assert_uint_eq(d.used, len);
	root = json_root(&d);
	/* "skip" and "str" are gone; the escaped "n\u0061me" is "name" and kept */
	ck_assert_uint_eq(root->n, 4);
	v = json_first(&d, root);
	ck_assert_str_eq(v->key, "name");
	ck_assert_uint_eq(v->key_id, 0);
	ck_assert_str_eq(json_string(v), "nA");
	v = json_next(&d, v);
	ck_assert_uint_eq(v->key_id, 1);
	ck_assert_int_eq(json_u64(v, &u), 0);
	ck_assert_uint_eq(u, 7);
	o = json_next(&d, v);
	ck_assert_uint_eq(o->key_id, 2);
	/* inside a kept object, the filter still applies: "cpu" is gone */
	ck_assert_uint_eq(o->n, 1);
	ck_assert_ptr_null(json_get(&d, o, "cpu"));
	v = json_get(&d, o, "calls");
	ck_assert_uint_eq(v->n, 2);
	/* a kept array's elements are all there, without a key */
	ck_assert_uint_eq(json_first(&d, v)->key_id, JSON_NONE);
	ck_assert_str_eq(json_string(json_next(&d, o)), "second");
	ck_assert_uint_eq(json_next(&d, o)->key_id, 0);
	/* the plain parse keeps all, and no key_id */
	json_free(&d);
	ck_assert_int_eq(json_parse("{\"a\": 1}", 8, &d, NULL, 0), 0);
	ck_assert_uint_eq(json_first(&d, json_root(&d))->key_id, JSON_NONE);
	json_free(&d);
}
END_TEST

/* What is wrong inside a skipped member is an error as anywhere else, with its line. */
START_TEST(test_json_keep_errors)
{
	static const char *const keep[] = {"name"};
	static const struct {
		const char *text, *err;
	} bad[] = {
	    {"{\"x\": {\"y\": [1, 2}}", "line 1: expected ',' or ']'"},
	    {"{\"x\": {\"y\": [1, 2]", "line 1: unexpected end (truncated?)"},
	    {"{\"x\": \"abc", "line 1: unexpected end in a string (truncated?)"},
	    {"{\"x\": \"a\\", "line 1: unexpected end in a string (truncated?)"},
	    {"{\"x\": [\"\\q\"]}", "line 1: bad escape in a string"},
	    {"{\"x\": \"\\ud800\"}", "line 1: lone high surrogate in a string"},
	    {"{\"x\": \"\xc3\x28\"}", "line 1: invalid UTF-8 in a string"},
	    {"{\"x\": \"a\tb\"}", "line 1: control character in a string"},
	    {"{\"x\":\n{\"y\": 01}}", "line 2: expected ',' or '}'"},
	    {"{\"x\": 1.e5}", "line 1: bad number"},
	    {"{\"x\": -}", "line 1: bad number"},
	    {"{\"x\": nul}", "line 1: unexpected character"},
	    {"{\"x\": {1: 2}}", "line 1: expected a member name"},
	    {"{\"x\": {\"y\" 2}}", "line 1: expected ':'"},
	    {"{\"x\": 1,}", "line 1: expected a member name"},
	    {"{\"x\": 1", "line 1: unexpected end (truncated?)"},
	};
	struct json_doc d = {0};
	char err[128], buf[64];
	size_t n = 100000;
	char *deep = malloc(n + 8);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(buf, sizeof(buf), "%s", bad[i].text);
		ck_assert_int_eq(json_parse_keep(buf, strlen(buf), &d, keep, 1, err, sizeof(err)),
				 -EINVAL);
		ck_assert_msg(!strcmp(err, bad[i].err), "%s: %s", bad[i].text, err);
		ck_assert_ptr_null(json_root(&d));
	}
	/* nesting is bounded in skipped members too */
	memcpy(deep, "{\"x\": ", 6);
	memset(deep + 6, '[', n);
	ck_assert_int_eq(json_parse_keep(deep, n + 6, &d, keep, 1, err, sizeof(err)), -EINVAL);
	ck_assert_str_eq(err, "line 1: nested more than 64 deep");
	/* too many keys: an error, and nothing left of the parse before */
	snprintf(buf, sizeof(buf), "[1]");
	ck_assert_int_eq(json_parse_keep(buf, 3, &d, keep, 1, err, sizeof(err)), 0);
	ck_assert_ptr_nonnull(json_root(&d));
	ck_assert_int_eq(json_parse_keep(buf, 3, &d, keep, JSON_MAX_KEEP + 1, err, sizeof(err)),
			 -EINVAL);
	ck_assert_ptr_null(json_root(&d));
	json_free(&d);
	free(deep);
}
END_TEST

/* ---- merging ---- */

/* a and b both in s, a first. */
static bool before(const char *s, const char *a, const char *b)
{
	const char *x = strstr(s, a), *y = strstr(s, b);

	return x && y && x < y;
}

/* A report of `prog` as fortstat writes it (the members --merge reads, and a few more). */
static char *report(const char *prog, int rank, const char *routines, const char *arcs,
		    const char *stacks)
{
	char *s = NULL;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	fprintf(f, "{\n  \"program\": \"%s\",\n  \"argv\": [\"%s\"],\n", prog, prog);
	if (rank >= 0)
		fprintf(f, "  \"rank\": %d,\n  \"size\": 4,\n", rank);
	fprintf(f,
		"  \"exit_status\": 0,\n  \"clock\": \"cpu\",\n  \"count_only\": false,\n"
		"  \"calls_timed\": 0,\n  \"routines\": [%s],\n  \"arcs\": [%s]",
		routines, arcs);
	if (stacks)
		fprintf(f, ",\n  \"stacks\": [%s]", stacks);
	fputs("\n}\n", f);
	fclose(f);
	return s;
}

#define RT(name, calls, self, total, main)                                                         \
	"{\"name\": \"" name "\", \"module\": null, \"aliases\": [], \"mainline\": " main          \
	", \"calls\": " calls ", \"self_s\": " self ", \"total_s\": " total                        \
	", \"file\": \"x.c\", \"line\": 3}"

/* The merged report of the given texts in format fmt. */
static char *merged(struct merge *m, enum report_format fmt, enum report_sort sort)
{
	struct report_opts o = {.format = fmt, .sort = sort};
	char *s = NULL;
	size_t len;
	FILE *f = open_memstream(&s, &len);

	ck_assert_int_eq(merge_write(m, f, &o), 0);
	fclose(f);
	return s;
}

static void add(struct merge *m, char *text)
{
	ck_assert_int_eq(merge_add_text(m, "synthetic", text, strlen(text)), 0);
	free(text);
}

/* Three ranks: work missing from rank 0, uneven elsewhere. */
static struct merge *three_ranks(void)
{
	struct merge *m = merge_new();

	add(m, report("./p", 0,
		      RT("main", "1", "0.5", "1.5", "true") "," RT("solve", "10", "1.0", "1.0",
								   "false"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 1.5, "
		      "\"self_s\": 0.5},"
		      "{\"caller\": \"main\", \"callee\": \"solve\", \"calls\": 10, \"time_s\": "
		      "1.0, \"self_s\": 1.0}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 0.5},"
		      "{\"frames\": [\"main\", \"solve\"], \"calls\": 10, \"self_s\": 1.0}"));
	add(m, report("./p", 1,
		      RT("main", "1", "0.25", "4.25",
			 "true") "," RT("solve", "20", "3.0", "3.0",
					"false") "," RT("work", "5", "1.0", "1.0", "false"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 4.25, "
		      "\"self_s\": 0.25},"
		      "{\"caller\": \"main\", \"callee\": \"solve\", \"calls\": 20, \"time_s\": "
		      "3.0, \"self_s\": 3.0},"
		      "{\"caller\": \"main\", \"callee\": \"work\", \"calls\": 5, \"time_s\": 1.0, "
		      "\"self_s\": 1.0}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 0.25},"
		      "{\"frames\": [\"main\", \"solve\"], \"calls\": 20, \"self_s\": 3.0},"
		      "{\"frames\": [\"main\", \"work\"], \"calls\": 5, \"self_s\": 1.0}"));
	add(m, report("./p", 2,
		      RT("main", "1", "0.75", "5.75",
			 "true") "," RT("solve", "30", "2.0", "2.0",
					"false") "," RT("work", "7", "3.0", "3.0", "false"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 5.75, "
		      "\"self_s\": 0.75},"
		      "{\"caller\": \"main\", \"callee\": \"solve\", \"calls\": 30, \"time_s\": "
		      "2.0, \"self_s\": 2.0},"
		      "{\"caller\": \"main\", \"callee\": \"work\", \"calls\": 7, \"time_s\": 3.0, "
		      "\"self_s\": 3.0}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 0.75},"
		      "{\"frames\": [\"main\", \"solve\"], \"calls\": 30, \"self_s\": 2.0},"
		      "{\"frames\": [\"main\", \"work\"], \"calls\": 7, \"self_s\": 3.0}"));
	ck_assert_uint_eq(merge_n_inputs(m), 3);
	return m;
}

/* The merge as the report model: the spreads beside the sums, arcs, contexts and inputs. */
START_TEST(test_merge_profile)
{
	struct merge *m = three_ranks();
	struct profile *p = merge_profile(m);
	const struct profile_section *sec;
	uint32_t solve = PROFILE_NONE, work = PROFILE_NONE, main_r = PROFILE_NONE;
	uint64_t node_calls = 0;

	ck_assert_uint_eq(p->n_sections, 1);
	sec = &p->sections[0];
	ck_assert_str_eq(sec->label, "./p");
	ck_assert(!sec->count_only);
	ck_assert(sec->clock_known[CLOCK_KIND_CPU] && !sec->clock_known[CLOCK_KIND_WALL]);
	ck_assert_str_eq(p->merged_clock, "cpu");
	ck_assert_uint_eq(p->n_inputs, 3);
	ck_assert_int_eq(p->inputs[1].rank, 1);
	ck_assert_str_eq(p->inputs[2].file, "synthetic");
	ck_assert_uint_eq(sec->n_routines, 3);
	for (uint32_t i = 0; i < sec->n_routines; i++) {
		if (!strcmp(sec->routines[i].name, "solve"))
			solve = i;
		else if (!strcmp(sec->routines[i].name, "work"))
			work = i;
		else if (!strcmp(sec->routines[i].name, "main"))
			main_r = i;
	}
	ck_assert(solve != PROFILE_NONE && work != PROFILE_NONE && main_r != PROFILE_NONE);
	ck_assert(sec->routines[main_r].mainline && !sec->routines[solve].mainline);
	ck_assert_str_eq(sec->routines[solve].file, "x.c");
	/* solve: calls 10 20 30, self 1 3 2 s: sums in `all`, the spread beside */
	ck_assert_uint_eq(sec->all.r[solve].calls, 60);
	ck_assert_uint_eq(sec->all.r[solve].self[CLOCK_KIND_CPU], 6000000000ULL);
	ck_assert_uint_eq(sec->all.r[solve].self[CLOCK_KIND_WALL], 0);
	ck_assert(sec->merged[solve].calls.min == 10 && sec->merged[solve].calls.max == 30);
	ck_assert_uint_eq(sec->merged[solve].self.imax, 1);
	ck_assert(sec->merged[solve].self.sum == 6.0);
	/* work is in two inputs of three */
	ck_assert_uint_eq(sec->merged[work].calls.seen, 2);
	ck_assert_uint_eq(sec->all.r[work].calls, 12);
	/* arcs summed: main -> solve 60 calls, 6 s */
	for (size_t k = 0; k < sec->all.n_arcs; k++) {
		const struct profile_arc *a = &sec->all.arcs[k];

		if (a->caller == main_r && a->callee == solve) {
			ck_assert_uint_eq(a->calls, 60);
			ck_assert(a->time_s[CLOCK_KIND_CPU] == 6.0);
		}
		if (a->callee == main_r)
			ck_assert_uint_eq(a->caller, PROFILE_NONE);
	}
	/* the contexts: the root, main, main;solve, main;work; every call in one */
	ck_assert_uint_eq(sec->all.n_nodes, 4);
	ck_assert_uint_eq(sec->all.nodes[0].parent, PROFILE_NONE);
	for (size_t k = 1; k < sec->all.n_nodes; k++) {
		ck_assert_uint_lt(sec->all.nodes[k].parent, k);
		node_calls += sec->all.nodes[k].calls;
		if (sec->all.nodes[k].routine == work)
			ck_assert_uint_eq(sec->all.nodes[k].self[CLOCK_KIND_CPU], 4000000000ULL);
	}
	ck_assert_uint_eq(node_calls, 3 + 60 + 12);
	profile_free(p);
	merge_free(m);
}
END_TEST

START_TEST(test_merge_json)
{
	struct merge *m = three_ranks();
	char *s = merged(m, FMT_JSON, SORT_TIME);

	ck_assert_ptr_nonnull(strstr(s, "\"inputs\": 3,"));
	/* solve: calls 10 20 30, self 1 3 2: the max in rank 1 */
	ck_assert_ptr_nonnull(strstr(
	    s,
	    "{\"name\": \"solve\", \"mainline\": false, \"inputs_with\": 3, "
	    "\"calls\": {\"min\": 10, \"mean\": 20.000000, \"max\": 30, \"sum\": 60, "
	    "\"max_input\": 2, \"max_rank\": 2, \"imbalance\": 1.500000}, "
	    "\"self_s\": {\"min\": 1.000000000, \"mean\": 2.000000000, \"max\": 3.000000000, "
	    "\"sum\": 6.000000000, \"max_input\": 1, \"max_rank\": 1, \"imbalance\": 1.500000}"));
	/* work is missing from rank 0: it counts 0 there */
	ck_assert_ptr_nonnull(strstr(
	    s,
	    "{\"name\": \"work\", \"mainline\": false, \"inputs_with\": 2, "
	    "\"calls\": {\"min\": 0, \"mean\": 4.000000, \"max\": 7, \"sum\": 12, "
	    "\"max_input\": 2, \"max_rank\": 2, \"imbalance\": 1.750000}, "
	    "\"self_s\": {\"min\": 0.000000000, \"mean\": 1.333333333, \"max\": 3.000000000, "
	    "\"sum\": 4.000000000, \"max_input\": 2, \"max_rank\": 2, \"imbalance\": 2.250000}"));
	/* arcs summed */
	ck_assert_ptr_nonnull(strstr(s,
				     "{\"caller\": \"main\", \"callee\": \"work\", \"calls\": 12, "
				     "\"time_s\": 4.000000000, \"self_s\": 4.000000000}"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": null, \"callee\": \"main\", \"calls\": 3, "));
	/* sorted by mean self time: solve (2), work (1.33), main (0.5) */
	ck_assert(before(s, "\"name\": \"solve\"", "\"name\": \"work\""));
	ck_assert(before(s, "\"name\": \"work\"", "\"name\": \"main\""));
	free(s);
	merge_free(m);
}
END_TEST

START_TEST(test_merge_folded_callgrind)
{
	struct merge *m = three_ranks();
	char *s = merged(m, FMT_FOLDED, SORT_TIME);

	ck_assert_str_eq(s, "main 1500000\nmain;solve 6000000\nmain;work 4000000\n");
	free(s);
	s = merged(m, FMT_CALLGRIND, SORT_NAME);
	ck_assert_ptr_nonnull(strstr(s, "summary: 11500000 75\n"));
	ck_assert_ptr_nonnull(strstr(s,
				     "fn=main\n3 1500000 3\ncfi=x.c\ncfn=solve\ncalls=60 3\n3 "
				     "6000000 60\ncfi=x.c\ncfn=work\ncalls=12 3\n3 4000000 12\n"));
	ck_assert_ptr_nonnull(strstr(s, "\ntotals: 11500000 75\n"));
	free(s);
	merge_free(m);
}
END_TEST

/*
 * Microseconds from the sums as a run's views take them, from whole
 * nanoseconds: 10.5 us + 2 us is 12.5 us, shown 13 (the sum as a double,
 * 1.2499999999999999e-05 s, rounded 12 before).
 */
START_TEST(test_merge_half_us)
{
	struct merge *m = merge_new();
	char *s;

	add(m, report("./p", 0, RT("main", "1", "0.0000105", "0.1", "true"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 0.1, "
		      "\"self_s\": 0.0000105}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 0.0000105}"));
	add(m, report("./p", 1, RT("main", "1", "0.000002", "0.1", "true"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 0.1, "
		      "\"self_s\": 0.000002}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 0.000002}"));
	s = merged(m, FMT_FOLDED, SORT_TIME);
	ck_assert_str_eq(s, "main 13\n");
	free(s);
	s = merged(m, FMT_CALLGRIND, SORT_TIME);
	ck_assert_ptr_nonnull(strstr(s, "summary: 13 2\n"));
	free(s);
	merge_free(m);
}
END_TEST

/* A routine an input listed but never called is in the merged callgrind file too. */
START_TEST(test_merge_uncalled)
{
	struct merge *m = merge_new();
	char *s;

	add(m, report("./p", -1,
		      RT("main", "1", "0.5", "0.5", "true") "," RT("never", "0", "0", "0", "false"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 0.5, "
		      "\"self_s\": 0.5}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 0.5}"));
	s = merged(m, FMT_CALLGRIND, SORT_TIME);
	ck_assert_ptr_nonnull(strstr(s, "\nfn=never\n3 0 0\n"));
	ck_assert_ptr_nonnull(strstr(s, "\nfn=main\n3 500000 1\n"));
	free(s);
	merge_free(m);
}
END_TEST

START_TEST(test_merge_table_sort)
{
	struct merge *m = three_ranks();
	char *s = merged(m, FMT_TABLE, SORT_CALLS);

	ck_assert_ptr_nonnull(strstr(s, "fortstat --merge: 3 inputs of ./p, cpu clock"));
	/* by calls: solve (60), work (12), main (3) */
	ck_assert(before(s, "  solve ", "  work "));
	ck_assert(before(s, "  work ", "* main "));
	ck_assert_ptr_nonnull(strstr(s, "\n  work                0           4.00            7     "
					"0.000000     1.333333     3.000000        2      2.25     "
					"4.000000\n"));
	free(s);
	s = merged(m, FMT_TABLE, SORT_NAME);
	ck_assert(before(s, "* main ", "  solve "));
	ck_assert(before(s, "  solve ", "  work "));
	free(s);
	merge_free(m);
}
END_TEST

START_TEST(test_merge_csv_svg)
{
	struct merge *m = three_ranks();
	char *s = merged(m, FMT_CSV, SORT_TIME), *svg = NULL;
	size_t len;
	FILE *f;

	ck_assert(
	    before(s, "routine,mainline,calls_min,calls_mean,calls_max,calls_sum,", "\nsolve,"));
	ck_assert_ptr_nonnull(strstr(s, "\nwork,0,0,4.000000,7,12,2,0.000000000,1.333333333,"
					"3.000000000,4.000000000,2,2.250000,"));
	free(s);
	f = open_memstream(&svg, &len);
	ck_assert_int_eq(merge_write_svg(m, f), 0);
	fclose(f);
	ck_assert(before(svg, "<svg ", "</svg>\n"));
	/* main is as wide as everything (11.5 s), solve 6 s of it */
	ck_assert_ptr_nonnull(strstr(svg, "<title>main (11500000 us)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>solve (6000000 us)</title>"));
	ck_assert_ptr_nonnull(strstr(svg, "<title>work (4000000 us)</title>"));
	free(svg);
	merge_free(m);
}
END_TEST

/*
 * A second input in another order: the first one's places are only hints
 * (at the second arc the same, at the fourth the same callee from another caller).
 */
START_TEST(test_merge_reordered)
{
	struct merge *m = merge_new();
	char *s;

	add(m, report("./p", 0,
		      RT("main", "1", "1.0", "4.0", "true") "," RT(
			  "a", "2", "1.0", "2.0", "false") "," RT("b", "3", "2.0", "2.0", "false"),
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 4, "
		      "\"self_s\": 1},"
		      "{\"caller\": \"main\", \"callee\": \"a\", \"calls\": 2, \"time_s\": 2, "
		      "\"self_s\": 1},"
		      "{\"caller\": \"main\", \"callee\": \"b\", \"calls\": 1, \"time_s\": 1, "
		      "\"self_s\": 1},"
		      "{\"caller\": \"a\", \"callee\": \"b\", \"calls\": 2, \"time_s\": 1, "
		      "\"self_s\": 1}",
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 1},"
		      "{\"frames\": [\"main\", \"a\"], \"calls\": 1, \"self_s\": 1},"
		      "{\"frames\": [\"main\", \"a\", \"b\"], \"calls\": 1, \"self_s\": 1},"
		      "{\"frames\": [\"main\", \"b\"], \"calls\": 1, \"self_s\": 1}"));
	add(m, report("./p", 1,
		      RT("b", "30", "20.0", "20.0",
			 "false") "," RT("a", "20", "10.0", "20.0",
					 "false") "," RT("main", "1", "10.0", "40.0", "true"),
		      "{\"caller\": \"a\", \"callee\": \"b\", \"calls\": 20, \"time_s\": 10, "
		      "\"self_s\": 10},"
		      "{\"caller\": \"main\", \"callee\": \"a\", \"calls\": 20, \"time_s\": 20, "
		      "\"self_s\": 10},"
		      "{\"caller\": null, \"callee\": \"a\", \"calls\": 1, \"time_s\": 1, "
		      "\"self_s\": 1},"
		      "{\"caller\": \"main\", \"callee\": \"b\", \"calls\": 10, \"time_s\": 10, "
		      "\"self_s\": 10},"
		      "{\"caller\": null, \"callee\": \"main\", \"calls\": 1, \"time_s\": 40, "
		      "\"self_s\": 10}",
		      "{\"frames\": [\"main\", \"b\"], \"calls\": 1, \"self_s\": 10},"
		      "{\"frames\": [\"main\", \"a\", \"b\"], \"calls\": 1, \"self_s\": 10},"
		      "{\"frames\": [\"main\"], \"calls\": 1, \"self_s\": 10},"
		      "{\"frames\": [\"main\", \"a\"], \"calls\": 1, \"self_s\": 10}"));
	s = merged(m, FMT_JSON, SORT_NAME);
	ck_assert_ptr_nonnull(strstr(s,
				     "{\"name\": \"b\", \"mainline\": false, \"inputs_with\": 2, "
				     "\"calls\": {\"min\": 3, \"mean\": 16.500000, \"max\": 30, "
				     "\"sum\": 33,"));
	ck_assert_ptr_nonnull(strstr(s,
				     "{\"name\": \"main\", \"mainline\": true, \"inputs_with\": 2, "
				     "\"calls\": {\"min\": 1, \"mean\": 1.000000, \"max\": 1, "
				     "\"sum\": 2,"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": null, \"callee\": \"main\", \"calls\": 2, "
					"\"time_s\": 44.000000000, \"self_s\": 11.000000000}"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": \"main\", \"callee\": \"a\", \"calls\": 22, "
					"\"time_s\": 22.000000000, \"self_s\": 11.000000000}"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": \"main\", \"callee\": \"b\", \"calls\": 11, "
					"\"time_s\": 11.000000000, \"self_s\": 11.000000000}"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": \"a\", \"callee\": \"b\", \"calls\": 22, "
					"\"time_s\": 11.000000000, \"self_s\": 11.000000000}"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": null, \"callee\": \"a\", \"calls\": 1, "
					"\"time_s\": 1.000000000, \"self_s\": 1.000000000}"));
	free(s);
	/* the contexts too: [main, a, b] is not taken for [main, b] */
	s = merged(m, FMT_FOLDED, SORT_NAME);
	ck_assert_str_eq(s, "main 11000000\nmain;a 11000000\nmain;a;b 11000000\nmain;b 11000000\n");
	free(s);
	merge_free(m);
}
END_TEST

#define ARC(caller, callee, calls)                                                                 \
	"{\"caller\": " caller ", \"callee\": \"" callee "\", \"calls\": " calls                   \
	", \"time_s\": " calls ", \"self_s\": 1}"

/* An arc missing from one input, one more in another: the places after it shift. */
START_TEST(test_merge_shifted)
{
	struct merge *m = merge_new();
	char *s;

	add(m, report("./p", 0, RT("main", "1", "1.0", "1.0", "true"),
		      ARC("null", "main", "1") "," ARC("\"main\"", "x", "2") "," ARC(
			  "\"main\"", "a", "3") "," ARC("\"main\"", "b", "4"),
		      NULL));
	add(m, report("./p", 1, RT("main", "1", "1.0", "1.0", "true"),
		      ARC("null", "main", "1") "," ARC("\"main\"", "a", "30") "," ARC("\"main\"",
										      "b", "40"),
		      NULL));
	add(m, report("./p", 2, RT("main", "1", "1.0", "1.0", "true"),
		      ARC("null", "main", "1") "," ARC("\"main\"", "a", "300") "," ARC(
			  "\"main\"", "y", "5") "," ARC("\"main\"", "b", "400"),
		      NULL));
	s = merged(m, FMT_JSON, SORT_NAME);
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": null, \"callee\": \"main\", \"calls\": 3,"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": \"main\", \"callee\": \"x\", \"calls\": 2,"));
	ck_assert_ptr_nonnull(
	    strstr(s, "{\"caller\": \"main\", \"callee\": \"a\", \"calls\": 333,"));
	ck_assert_ptr_nonnull(strstr(s, "{\"caller\": \"main\", \"callee\": \"y\", \"calls\": 5,"));
	ck_assert_ptr_nonnull(
	    strstr(s, "{\"caller\": \"main\", \"callee\": \"b\", \"calls\": 444,"));
	free(s);
	merge_free(m);
}
END_TEST

/* -f writes one report a process into one file: each is an input; a bad one spoils the file. */
START_TEST(test_merge_sections)
{
	struct merge *m = merge_new();
	char *a = report("./p [pid 10]", -1, RT("main", "1", "1.0", "1.0", "true"), "", "");
	char *b = report("./p [pid 11]", -1, RT("main", "1", "3.0", "3.0", "true"), "", "");
	char *both = malloc(strlen(a) + strlen(b) + 1), *s;

	strcpy(both, a);
	strcat(both, b);
	ck_assert_int_eq(merge_add_text(m, "f.json", both, strlen(both)), 0);
	ck_assert_uint_eq(merge_n_inputs(m), 2);
	/* a truncated third report: nothing of this text is taken */
	ck_assert_int_eq(merge_add_text(m, "g.json", both, strlen(both) - 5), -EINVAL);
	ck_assert_uint_eq(merge_n_inputs(m), 2);
	s = merged(m, FMT_TABLE, SORT_TIME);
	ck_assert_ptr_nonnull(strstr(s, "2 inputs of ./p,"));
	/* no ranks: the max is in input 1 */
	ck_assert_ptr_nonnull(strstr(s, "  INPUT: the input (0: the first file) of the max"));
	ck_assert_ptr_nonnull(strstr(s, "        1      1.50     4.000000\n"));
	free(s);
	merge_free(m);
	free(a);
	free(b);
	free(both);
}
END_TEST

/* -f now writes the reports that share a file as one array: each element is an input. */
START_TEST(test_merge_array)
{
	struct merge *m = merge_new();
	char *a = report("./p [pid 10]", -1, RT("main", "1", "1.0", "1.0", "true"), "", "");
	char *b = report("./p [pid 11]", -1, RT("main", "1", "3.0", "3.0", "true"), "", "");
	char *arr = malloc(strlen(a) + strlen(b) + 16), *s;

	sprintf(arr, "[\n%s,\n%s]\n", a, b);
	ck_assert_int_eq(merge_add_text(m, "f.json", arr, strlen(arr)), 0);
	ck_assert_uint_eq(merge_n_inputs(m), 2);
	ck_assert_int_eq(merge_add_text(m, "e.json", "[]", 2), -EINVAL);
	ck_assert_int_eq(merge_add_text(m, "n.json", "[1]", 3), -EINVAL);
	ck_assert_uint_eq(merge_n_inputs(m), 2);
	s = merged(m, FMT_JSON, SORT_TIME);
	ck_assert_ptr_nonnull(
	    strstr(s, "\"self_s\": {\"min\": 1.000000000, \"mean\": 2.000000000, "
		      "\"max\": 3.000000000, \"sum\": 4.000000000, \"max_input\": 1, "
		      "\"imbalance\": 1.500000}"));
	free(s);
	merge_free(m);
	free(a);
	free(b);
	free(arr);
}
END_TEST

START_TEST(test_merge_bad)
{
	static const char *bad[] = {
	    "",
	    "   ",
	    "[]",
	    "{\"a\": 1}",
	    "{\"merged\": true, \"program\": \"p\"}",
	    "{\"program\": \"p\", \"count_only\": false, \"calls_timed\": 0, \"routines\": [{}], "
	    "\"arcs\": []}",
	    "{\"program\": \"p\", \"count_only\": false, \"calls_timed\": 0, \"routines\": [], "
	    "\"arcs\": [{\"callee\": 3}]}",
	    "{\"program\": \"p\", \"count_only\": false, \"calls_timed\": -1, \"routines\": [], "
	    "\"arcs\": []}",
	    "{\"program\": \"p\", \"count_only\": false, \"calls_timed\": 0, \"routines\": [], "
	    "\"arcs\": [], \"stacks\": [{\"frames\": [], \"calls\": 1, \"self_s\": 0}]}",
	};
	struct merge *m = merge_new();

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_int_eq(merge_add_text(m, "bad", bad[i], strlen(bad[i])), -EINVAL);
	ck_assert_uint_eq(merge_n_inputs(m), 0);
	merge_free(m);
}
END_TEST

/* Every truncation and every one-byte change of a report: an error or a merge, never a crash. */
START_TEST(test_merge_mutations)
{
	char *text = report(
	    "./p", 1,
	    RT("main", "1", "0.25", "4.25", "true") "," RT("solve", "20", "3.0", "3.0", "false"),
	    "{\"caller\": \"main\", \"callee\": \"solve\", \"calls\": 20, \"time_s\": 3.0, "
	    "\"self_s\": 3.0}",
	    "{\"frames\": [\"main\", \"solve\"], \"calls\": 20, \"self_s\": 3.0}");
	size_t len = strlen(text), ok = 0;
	static const char subst[] = "\"{}[],:0-9e.\\ \x80\xff";
	FILE *devnull = fopen("/dev/null", "w");
	int saved = dup(2);

	/* the errors are one line each: not for the test's log */
	dup2(fileno(devnull), 2);
	for (size_t cut = 0; cut < len; cut++) {
		struct merge *m = merge_new();

		if (merge_add_text(m, "cut", text, cut) == 0)
			ok++;
		merge_free(m);
	}
	for (size_t i = 0; i < len; i++) {
		for (size_t k = 0; k < sizeof(subst) - 1; k++) {
			char *t = strdup(text);
			struct merge *m = merge_new();

			t[i] = subst[k];
			if (merge_add_text(m, "changed", t, len) == 0) {
				struct report_opts o = {.format = FMT_JSON};
				FILE *f = fopen("/dev/null", "w");

				ck_assert_int_eq(merge_write(m, f, &o), 0);
				fclose(f);
			}
			merge_free(m);
			free(t);
		}
	}
	dup2(saved, 2);
	close(saved);
	fclose(devnull);
	/* of the cuts, only the text less its final line break is a report */
	ck_assert_uint_eq(ok, 1);
	free(text);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("merge");
	TCase *tc = tcase_create("core");
	SRunner *sr;
	int failed;

	tcase_add_test(tc, test_json_values);
	tcase_add_test(tc, test_json_numbers);
	tcase_add_test(tc, test_json_errors);
	tcase_add_test(tc, test_json_cuts);
	tcase_add_test(tc, test_json_depth);
	tcase_add_test(tc, test_json_keep);
	tcase_add_test(tc, test_json_keep_errors);
	tcase_add_test(tc, test_merge_json);
	tcase_add_test(tc, test_merge_profile);
	tcase_add_test(tc, test_merge_folded_callgrind);
	tcase_add_test(tc, test_merge_half_us);
	tcase_add_test(tc, test_merge_uncalled);
	tcase_add_test(tc, test_merge_table_sort);
	tcase_add_test(tc, test_merge_csv_svg);
	tcase_add_test(tc, test_merge_reordered);
	tcase_add_test(tc, test_merge_shifted);
	tcase_add_test(tc, test_merge_sections);
	tcase_add_test(tc, test_merge_array);
	tcase_add_test(tc, test_merge_bad);
	tcase_add_test(tc, test_merge_mutations);
	suite_add_tcase(s, tc);
	sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? 1 : 0;
}
