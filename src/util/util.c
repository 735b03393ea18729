// SPDX-License-Identifier: GPL-2.0-or-later
/* util.c - allocation that dies in one place, and the message helpers. */
#include "fortstat/util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int fs_verbose;
void (*fs_before_message)(void);

static void oom(void)
{
	fputs("fortstat: error: out of memory\n", stderr);
	exit(125);
}

void *xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom();
	return p;
}

void *xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom();
	return p;
}

void *xrealloc(void *p, size_t n)
{
	p = realloc(p, n ? n : 1);
	if (!p)
		oom();
	return p;
}

char *xstrdup(const char *s)
{
	char *p = strdup(s);
	if (!p)
		oom();
	return p;
}

char *xasprintf(const char *fmt, ...)
{
	va_list ap;
	char *s;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (r < 0)
		oom();
	return s;
}

static void vmsg(const char *kind, const char *fmt, va_list ap)
{
	/* One buffered write so that lines from fortstat never interleave. */
	char buf[2048];
	int n = snprintf(buf, sizeof(buf), "fortstat: %s", kind);
	if (n < 0)
		return;
	vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
	if (fs_before_message)
		fs_before_message();
	fprintf(stderr, "%s\n", buf);
}

void fs_error(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("error: ", fmt, ap);
	va_end(ap);
}

void fs_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void fs_info(int level, const char *fmt, ...)
{
	va_list ap;
	if (fs_verbose < level)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}
