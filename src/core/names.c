// SPDX-License-Identifier: GPL-2.0-or-later
/* names.c - names files (-n, -x): one name a line, blanks removed, # comments, globs. */
#include "fortstat/names.h"
#include "fortstat/util.h"

#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

/* FORTSTAT's card rule: these characters never belong to a name. */
static bool is_blank_char(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v';
}

static bool has_glob_char(const char *s)
{
	return strpbrk(s, "*?[") != NULL;
}

/* Append one pattern (taken over: @pat is owned by @nm afterwards). */
static void names_add(struct names *nm, size_t *cap, char *pat, int line)
{
	struct names_entry *e;

	if (nm->n == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		nm->v = xrealloc(nm->v, *cap * sizeof(*nm->v));
	}
	e = &nm->v[nm->n++];
	e->pattern = pat;
	e->line = line;
	e->is_glob = has_glob_char(pat);
	e->matched = 0;
}

/*
 * Parse @len bytes of @buf. A line ends at '\n' (or at the end of the buffer);
 * its content ends earlier at a '#' or a NUL byte. Never fails: returns 0.
 * @out is overwritten, not freed: call names_free() on a previous result first.
 */
int names_parse(const char *buf, size_t len, const char *path, struct names *out)
{
	size_t cap = 0, i = 0;
	int line = 0;

	memset(out, 0, sizeof(*out));
	if (path)
		out->path = xstrdup(path);

	while (i < len) {
		size_t start = i, end, k, m = 0;
		char *pat;

		line++;
		while (i < len && buf[i] != '\n')
			i++;
		end = i;
		if (i < len)
			i++; /* skip the newline */

		pat = xmalloc(end - start + 1);
		for (k = start; k < end; k++) {
			char c = buf[k];

			if (c == '#' || c == '\0')
				break;
			if (!is_blank_char(c))
				pat[m++] = c;
		}
		pat[m] = '\0';
		if (m == 0) {
			free(pat);
			continue;
		}
		names_add(out, &cap, pat, line);
	}
	return 0;
}

/* Read a whole file descriptor into a malloc'ed buffer. Returns 0 or -errno. */
static int read_all(int fd, char **bufp, size_t *lenp)
{
	size_t cap = 4096, len = 0;
	char *buf = xmalloc(cap);

	for (;;) {
		ssize_t r;

		if (len == cap) {
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		r = read(fd, buf + len, cap - len);
		if (r < 0) {
			int err = errno;

			if (err == EINTR)
				continue;
			free(buf);
			return -err;
		}
		if (r == 0)
			break;
		len += (size_t)r;
	}
	*bufp = buf;
	*lenp = len;
	return 0;
}

/* See names.h. */
bool names_is_text(const char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];

		if ((c < 0x20 && !is_blank_char((char)c) && c != '\n') || c == 0x7f)
			return false;
	}
	return true;
}

/* See names.h. */
const char *names_strerror(int err)
{
	if (err == NAMES_ENOTTEXT)
		return "not a text file";
	return err < 0 ? strerror(-err) : "unknown error";
}

int names_load(const char *path, struct names *out)
{
	struct stat st;
	char *buf = NULL;
	size_t len = 0;
	int fd, r;

	memset(out, 0, sizeof(*out));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		r = -errno;
		close(fd);
		return r;
	}
	if (S_ISDIR(st.st_mode)) {
		close(fd);
		return -EISDIR;
	}
	r = read_all(fd, &buf, &len);
	close(fd);
	if (r < 0)
		return r;
	if (!names_is_text(buf, len)) {
		free(buf);
		return NAMES_ENOTTEXT;
	}
	r = names_parse(buf, len, path, out);
	free(buf);
	return r;
}

static bool entry_matches(const struct names_entry *e, const char *name)
{
	if (e->is_glob)
		return fnmatch(e->pattern, name, 0) == 0;
	return strcmp(e->pattern, name) == 0;
}

/* A NULL @nm (no names file given) matches nothing. */
bool names_match(struct names *nm, const char *name)
{
	bool any = false;
	size_t i;

	if (!nm || !name)
		return false;
	for (i = 0; i < nm->n; i++) {
		if (entry_matches(&nm->v[i], name)) {
			nm->v[i].matched++;
			any = true;
		}
	}
	return any;
}

/* A NULL @nm (no names file given) matches nothing. */
bool names_test(const struct names *nm, const char *name)
{
	size_t i;

	if (!nm || !name)
		return false;
	for (i = 0; i < nm->n; i++)
		if (entry_matches(&nm->v[i], name))
			return true;
	return false;
}

/*
 * LIB:NAME -> the offset of NAME (after the ':'), or 0 when the pattern is
 * not qualified. A ':' of a C++ or Fortran scope (`::`) never qualifies.
 */
size_t names_qualifier(const char *pattern)
{
	for (size_t i = 1; pattern[i]; i++) {
		if (pattern[i] != ':')
			continue;
		if (pattern[i + 1] == ':') {
			i++;
			continue;
		}
		return pattern[i + 1] ? i + 1 : 0;
	}
	return 0;
}

/*
 * Does the library pattern (the first `len` bytes of `pattern`) match the
 * library `name` (a soname, a file name or a path)? A pattern with a '/' is
 * matched against the whole path, others against its last component. A
 * pattern without glob characters matches that name and its versions:
 * `libm` matches libm.so.6 but not libmvec.so.1.
 */
bool names_lib_match(const char *pattern, size_t len, const char *name)
{
	char pat[512];
	const char *subject = name, *slash;
	size_t n;

	if (!name || !len || len >= sizeof(pat))
		return false;
	memcpy(pat, pattern, len);
	pat[len] = '\0';
	if (!memchr(pat, '/', len)) {
		slash = strrchr(name, '/');
		subject = slash ? slash + 1 : name;
	}
	if (strpbrk(pat, "*?["))
		return fnmatch(pat, subject, 0) == 0;
	n = strlen(pat);
	return strncmp(subject, pat, n) == 0 &&
	       (subject[n] == '\0' || subject[n] == '.' || subject[n] == '-');
}

/* Is DT_NEEDED name `lib` one of the system's libraries that a hint skips (libc aside)? */
static bool system_lib(const char *lib)
{
	static const char *const sys[] = {
	    "libm",	"libpthread", "libdl",	  "librt",	     "libutil",
	    "libgcc_s", "libstdc++",  "ld-linux", "ld-linux-x86-64", "libresolv"};

	for (size_t k = 0; k < sizeof(sys) / sizeof(sys[0]); k++)
		if (names_lib_match(sys[k], strlen(sys[k]), lib))
			return true;
	return strncmp(lib, "ld-", 3) == 0;
}

/* Does one of the -l patterns match library `lib`? */
static bool lib_given(const char *lib, const char *const *libs, size_t n_libs)
{
	for (size_t k = 0; k < n_libs; k++)
		if (libs[k] && names_lib_match(libs[k], strlen(libs[k]), lib))
			return true;
	return false;
}

/* See names.h. */
size_t names_suggest_libs(char *const *needed, size_t n_needed, const char *const *libs,
			  size_t n_libs, char **out, size_t max)
{
	bool libc = n_needed == 0;
	size_t n = 0;

	for (size_t i = 0; i < n_needed && n < max; i++) {
		const char *lib = needed[i], *so;

		if (!lib || !*lib)
			continue;
		if (names_lib_match("libc", 4, lib)) {
			libc = true;
			continue;
		}
		if (system_lib(lib) || lib_given(lib, libs, n_libs))
			continue;
		so = strstr(lib, ".so");
		out[n++] = so && so > lib ? xasprintf("%.*s", (int)(so - lib), lib) : xstrdup(lib);
	}
	if (libc && n < max && !lib_given("libc.so.6", libs, n_libs))
		out[n++] = xstrdup("libc");
	return n;
}

/* See names.h. */
char *names_lib_example(char *const *sugg, size_t n, const char *const *libs, size_t n_libs,
			int pid, const char *program)
{
	char *first = names_escape(sugg[0]), *s, *prog = NULL;

	s = pid > 0 ? xasprintf("e.g. fortstat -p %d", pid) : xstrdup("e.g. fortstat");
	for (size_t i = 0; i < n_libs; i++) {
		char *lib = names_escape(libs[i] ? libs[i] : ""), *t;

		t = xasprintf("%s -l %s", s, lib);
		free(lib);
		free(s);
		s = t;
	}
	if (pid > 0) {
		char *t = xasprintf("%s -l %s", s, first);

		free(s);
		s = t;
	} else {
		char *t;

		prog = names_escape(program ? program : "PROGRAM");
		t = xasprintf("%s -l %s %s", s, first, prog);
		free(s);
		s = t;
	}
	free(first);
	free(prog);
	for (size_t i = 1; i < n; i++) {
		char *lib = names_escape(sugg[i]);
		char *t = xasprintf("%s%s%s", s, i == 1 ? " (its other libraries: " : ", ", lib);

		free(lib);
		free(s);
		s = t;
	}
	if (n > 1) {
		char *t = xasprintf("%s)", s);

		free(s);
		s = t;
	}
	return s;
}

/* See names.h. */
char *names_escape(const char *s)
{
	char *out = xmalloc(4 * strlen(s) + 1), *q = out;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '\\') {
			*q++ = '\\';
			*q++ = '\\';
		} else if (*p >= 0x20 && *p < 0x7f) {
			*q++ = (char)*p;
		} else {
			q += sprintf(q, "\\x%02x", *p);
		}
	}
	*q = '\0';
	return out;
}

/* Free what @nm owns and leave it empty; NULL is accepted. */
void names_free(struct names *nm)
{
	size_t i;

	if (!nm)
		return;
	for (i = 0; i < nm->n; i++)
		free(nm->v[i].pattern);
	free(nm->v);
	free(nm->path);
	memset(nm, 0, sizeof(*nm));
}
