/* SPDX-License-Identifier: GPL-2.0-or-later */
/* names.h - names files (-n, -x): one name a line, blanks removed, # comments, globs. */
#ifndef FORTSTAT_NAMES_H
#define FORTSTAT_NAMES_H

#include <stdbool.h>
#include <stddef.h>

struct names_entry {
	char *pattern;	/* the line with every blank removed; may hold glob characters */
	int line;	/* 1-based line in the file */
	bool is_glob;	/* contains *, ? or [ */
	size_t matched; /* routines this pattern matched (set by names_match) */
};

struct names {
	char *path; /* file it was read from (owned) */
	struct names_entry *v;
	size_t n;
};

/* Returned by names_load besides negative errnos. */
enum {
	NAMES_ENOTTEXT = -1100, /* a NUL byte or a control character: not a names file */
};

/*
 * Read a names file. Rules (FORTSTAT's card rule and ours): every blank
 * (space, tab, CR) anywhere in a line is removed; a '#' starts a comment to
 * the end of the line; lines empty after that are ignored; the rest is a
 * name or an fnmatch(3) glob. Returns 0, a negative errno when the file
 * cannot be read, or NAMES_ENOTTEXT when it holds a NUL byte or a control
 * character other than blanks and newlines (an executable given by
 * mistake); the names struct is then empty. An empty file (no names)
 * loads: out->n is 0, for the caller to warn about.
 */
int names_load(const char *path, struct names *out);

/* A one-line reason for a names_load error (static string). */
const char *names_strerror(int err);

/* Whether len bytes of buf are text by names_load's rule. */
bool names_is_text(const char *buf, size_t len);

/* Parse names from a buffer, as names_load does for a file (path may be NULL). */
int names_parse(const char *buf, size_t len, const char *path, struct names *out);

/*
 * Does any pattern match this name? Each matching entry's `matched` count is
 * incremented. Returns true on a match.
 */
bool names_match(struct names *nm, const char *name);

/* Like names_match but without counting. */
bool names_test(const struct names *nm, const char *name);

/*
 * A pattern qualified by a library, `LIB:NAME` (not a C++ `::`): returns
 * the offset of NAME in `pattern`, or 0 when it is not qualified.
 */
size_t names_qualifier(const char *pattern);

/*
 * Does library pattern `pattern` (its first `len` bytes) match library
 * `name` (soname, file name or path)? Without glob characters, `libm`
 * matches libm.so.6 and libm-2.36.so but not libmvec.so.1; with '/', the
 * whole path is matched, else its last component.
 */
bool names_lib_match(const char *pattern, size_t len, const char *name);

/*
 * The libraries to suggest with -l for a program without symbols of its
 * own that needs `needed` (its DT_NEEDED names, as "libsqlite3.so.0"): its
 * own libraries first, in its order, then the C library; never the system's
 * others (libm, libpthread, libdl, librt, libutil, libgcc_s, libstdc++,
 * the dynamic linker), nor one that a pattern of `libs` (the -l given)
 * matches. Each is the name before ".so" ("libsqlite3"), malloc'ed, at
 * most `max` into `out`; returns how many. With no DT_NEEDED known, the C
 * library alone (when no -l matches it).
 */
size_t names_suggest_libs(char *const *needed, size_t n_needed, const char *const *libs,
			  size_t n_libs, char **out, size_t max);

/*
 * "e.g. fortstat -l FIRST PROGRAM (its other libraries: B, C)" for the
 * suggestions of names_suggest_libs (n >= 1), after the -l already given
 * (libs, n_libs: "fortstat -l GIVEN -l FIRST PROGRAM"); with pid > 0
 * "fortstat -p PID -l FIRST"; the parenthesis only with more than one.
 * Malloc'ed.
 */
char *names_lib_example(char *const *sugg, size_t n, const char *const *libs, size_t n_libs,
			int pid, const char *program);

/*
 * `s` made safe to print on a terminal, malloc'ed: printable ASCII as it
 * is, a backslash doubled, every other byte (control characters, bytes of
 * 0x80 and above) as \xNN.
 */
char *names_escape(const char *s);

void names_free(struct names *nm);

#endif
