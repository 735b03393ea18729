/* SPDX-License-Identifier: GPL-2.0-or-later */
/* util.h - allocation that dies in one place, and fortstat's message helpers. */
#ifndef FORTSTAT_UTIL_H
#define FORTSTAT_UTIL_H

#include <stddef.h>
#include <stdarg.h>

/* Exit codes of fortstat's own (as env(1) and time(1)). */
enum {
	EXIT_FS_ERROR = 125,	/* fortstat's own error */
	EXIT_FS_CANNOT = 126,	/* PROGRAM found but cannot be timed */
	EXIT_FS_NOTFOUND = 127, /* PROGRAM not found */
};

/* Verbosity: 0 quiet (errors and warnings only), 1 for -v, 2 for -vv. */
extern int fs_verbose;

/* Called before each message is written, when set (the status line erases itself). */
extern void (*fs_before_message)(void);

/* Allocation: never return NULL; on failure print one line and exit 125. */
void *xmalloc(size_t n);
void *xcalloc(size_t n, size_t size);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);
/* asprintf that dies on failure; returns a malloc'ed string. */
char *xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* "fortstat: error: ..." on stderr. Never exits. */
void fs_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "fortstat: warning: ..." on stderr. */
void fs_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "fortstat: ..." on stderr when fs_verbose >= level. */
void fs_info(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
