// SPDX-License-Identifier: GPL-2.0-or-later
/* chrome.c - the timeline as Chrome trace-event JSON (Perfetto, chrome://tracing). */
#include "fortstat/chrome.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/map.h"
#include "fortstat/symtab.h"
#include "fortstat/timeline.h"
#include "fortstat/util.h"

/* A JSON string's text: quotes, backslashes and control bytes escaped, other bytes as they are. */
static void jtext(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(out, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(out, "\\u%04x", *p);
		else
			fputc(*p, out);
	}
}

static void jstr(FILE *out, const char *s)
{
	fputc('"', out);
	jtext(out, s);
	fputc('"', out);
}

/* ns as microseconds with three decimals (exact). */
static void usec(FILE *out, acct_time_t ns)
{
	fprintf(out, "%" PRIu64 ".%03u", ns / 1000, (unsigned)(ns % 1000));
}

/* The process of group g in procs, or NULL. */
static const struct chrome_proc *proc_of(const struct chrome_proc *procs, size_t n, uint32_t g)
{
	for (size_t i = 0; i < n; i++)
		if (procs[i].group == g)
			return &procs[i];
	return NULL;
}

/* The name of routine i of st, or NULL when there is none. */
static const char *routine_name(const struct symtab *st, uint32_t i)
{
	const struct routine *r;

	if (!st || i >= st->n)
		return NULL;
	r = &st->r[i];
	if (r->display && r->display[0])
		return r->display;
	return r->n_names && r->names[0] ? r->names[0] : "?";
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

/* One event's separator: none before the first. */
static void sep(FILE *out, bool *first)
{
	fputs(*first ? "\n" : ",\n", out);
	*first = false;
}

/*
 * "process_name" of pid: the paths of every image of procs with that pid
 * and calls in tl (has[i]), in order, " -> " between.
 */
static void name_process(FILE *out, const struct chrome_proc *procs, size_t n, const bool *has,
			 size_t i, bool *first)
{
	bool more = false;

	sep(out, first);
	fprintf(out,
		"{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":0,"
		"\"args\":{\"name\":\"",
		procs[i].pid);
	for (size_t j = i; j < n; j++) {
		if (!has[j] || procs[j].pid != procs[i].pid)
			continue;
		if (more)
			fputs(" -> ", out);
		more = true;
		jtext(out, procs[j].path ? procs[j].path : "?");
	}
	fputs("\"}}", out);
}

static void name_thread(FILE *out, const struct chrome_proc *p, int tid, bool *first)
{
	sep(out, first);
	fprintf(out,
		"{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,"
		"\"args\":{\"name\":",
		p->pid, tid);
	if (tid == p->pid) {
		jstr(out, base_name(p->path ? p->path : "?"));
	} else if (tid >= ACCT_GOROUTINE0) {
		/* counted from 1, as the other views */
		fprintf(out, "\"goroutine %d\"", tid - ACCT_GOROUTINE0 + 1);
	} else {
		fprintf(out, "\"thread %d\"", tid);
	}
	fputs("}}", out);
}

/*
 * One line built in memory: a call's event is written with one fwrite
 * (a million of them through fprintf cost seconds).
 */
struct line {
	char *s;
	size_t n, cap;
};

static void room(struct line *l, size_t more)
{
	if (l->n + more <= l->cap)
		return;
	l->cap = 2 * (l->n + more) + 64;
	l->s = xrealloc(l->s, l->cap);
}

static void put_str(struct line *l, const char *s, size_t len)
{
	room(l, len);
	memcpy(l->s + l->n, s, len);
	l->n += len;
}

#define PUT_LIT(l, lit) put_str(l, lit, sizeof(lit) - 1)

/* s as a JSON string's text (as jtext). */
static void put_jtext(struct line *l, const char *s)
{
	static const char hex[] = "0123456789abcdef";

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		room(l, 6);
		if (*p == '"' || *p == '\\') {
			l->s[l->n++] = '\\';
			l->s[l->n++] = (char)*p;
		} else if (*p < 0x20 || *p == 0x7f) {
			memcpy(l->s + l->n, "\\u00", 4);
			l->s[l->n + 4] = hex[*p >> 4];
			l->s[l->n + 5] = hex[*p & 15];
			l->n += 6;
		} else {
			l->s[l->n++] = (char)*p;
		}
	}
}

static void put_u64(struct line *l, uint64_t v)
{
	char tmp[20];
	size_t k = 0;

	do
		tmp[k++] = (char)('0' + v % 10);
	while (v /= 10);
	room(l, k);
	while (k)
		l->s[l->n++] = tmp[--k];
}

static void put_int(struct line *l, int v)
{
	if (v < 0)
		PUT_LIT(l, "-");
	put_u64(l, v < 0 ? -(uint64_t)v : (uint64_t)v);
}

/* ns as microseconds with three decimals (exact), as usec. */
static void put_usec(struct line *l, acct_time_t ns)
{
	unsigned f = (unsigned)(ns % 1000);

	put_u64(l, ns / 1000);
	room(l, 4);
	l->s[l->n++] = '.';
	l->s[l->n++] = (char)('0' + f / 100);
	l->s[l->n++] = (char)('0' + f / 10 % 10);
	l->s[l->n++] = (char)('0' + f % 10);
}

static void call_event(FILE *out, struct line *l, const struct chrome_proc *p,
		       const struct tl_event *e, const char *name, bool *first)
{
	l->n = 0;
	if (*first)
		PUT_LIT(l, "\n{\"ph\":\"X\",\"name\":\"");
	else
		PUT_LIT(l, ",\n{\"ph\":\"X\",\"name\":\"");
	*first = false;
	put_jtext(l, name);
	PUT_LIT(l, "\",\"ts\":");
	put_usec(l, e->t0);
	PUT_LIT(l, ",\"dur\":");
	put_usec(l, e->t1 - e->t0);
	PUT_LIT(l, ",\"pid\":");
	put_int(l, p->pid);
	PUT_LIT(l, ",\"tid\":");
	put_int(l, e->tid);
	if (e->incomplete)
		PUT_LIT(l, ",\"args\":{\"incomplete\":true}");
	PUT_LIT(l, "}");
	fwrite(l->s, 1, l->n, out);
}

int chrome_write(FILE *out, struct timeline *tl, const struct chrome_proc *procs, size_t n_procs)
{
	bool *has = xcalloc(n_procs ? n_procs : 1, sizeof(*has));
	bool first = true;
	const struct chrome_proc *p = NULL;
	int last_tid = 0;
	uint32_t last_group = UINT32_MAX;
	size_t written = 0;
	struct line l = {0};
	struct u64map threads = {0}; /* (pid, tid) + 1 of the threads named */

	timeline_sort(tl);
	for (size_t k = 0; k < tl->n; k++) /* by group: one look-up a group */
		if (!k || tl->v[k].group != tl->v[k - 1].group)
			for (size_t i = 0; i < n_procs; i++)
				if (procs[i].group == tl->v[k].group)
					has[i] = true;
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", out);
	for (size_t i = 0; i < n_procs; i++) {
		bool named = false;

		for (size_t j = 0; j < i; j++)
			named |= has[j] && procs[j].pid == procs[i].pid;
		if (has[i] && !named)
			name_process(out, procs, n_procs, has, i, &first);
	}
	for (size_t k = 0; k < tl->n; k++) {
		const struct tl_event *e = &tl->v[k];
		const char *name;

		if (e->group != last_group) {
			p = proc_of(procs, n_procs, e->group);
			last_group = e->group;
			last_tid = e->tid - 1; /* a new track */
		}
		if (!p || !(name = routine_name(p->st, e->routine)))
			continue;
		if (e->tid != last_tid) {
			/* once a thread: an image exec'ed goes on in its process's tracks */
			uint64_t key = ((uint64_t)(uint32_t)p->pid << 32 | (uint32_t)e->tid) + 1, v;

			if (!u64map_get(&threads, key, &v)) {
				name_thread(out, p, e->tid, &first);
				u64map_put(&threads, key, 1);
			}
			last_tid = e->tid;
		}
		call_event(out, &l, p, e, name, &first);
		written++;
	}
	if (timeline_full(tl)) {
		sep(out, &first);
		fputs("{\"ph\":\"i\",\"s\":\"g\",\"name\":\"fortstat: timeline full\",\"ts\":",
		      out);
		usec(out, tl->full_at);
		fprintf(out, ",\"pid\":%d,\"tid\":0,\"args\":{\"calls_left_out\":%" PRIu64 "}}",
			n_procs ? procs[0].pid : 0, tl->late_calls);
	}
	fprintf(out, "\n],\"otherData\":{\"tool\":\"fortstat\",\"clock\":\"CLOCK_MONOTONIC\","
		     "\"min_us\":");
	usec(out, tl->min_ns);
	fprintf(out,
		",\"max_calls\":%zu,\"calls\":%zu,\"short_calls\":%" PRIu64
		",\"calls_left_out\":%" PRIu64 ",\"note\":",
		tl->max_events, written, tl->short_calls, tl->late_calls);
	if (timeline_full(tl))
		fprintf(out,
			"\"the bound of %zu calls was reached: the %" PRIu64
			" calls that ended later are left out\"",
			tl->max_events, tl->late_calls);
	else
		fputs("null", out);
	fputs("}}\n", out);
	free(l.s);
	free(has);
	u64map_free(&threads);
	return ferror(out) ? -EIO : 0;
}
