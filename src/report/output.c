// SPDX-License-Identifier: GPL-2.0-or-later
/* output.c - where the reports go: stderr, -o FILE, or one file a process with %p. */
#include "fortstat/output.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/util.h"

char *output_expand(const char *fmt, int pid)
{
	size_t cap = strlen(fmt) + 32, n = 0;
	char *s = xmalloc(cap);

	for (const char *p = fmt; *p; p++) {
		if (n + 16 >= cap)
			s = xrealloc(s, cap *= 2);
		if (p[0] == '%' && p[1] == 'p') {
			n += (size_t)snprintf(s + n, cap - n, "%d", pid);
			p++;
		} else if (p[0] == '%' && p[1] == '%') {
			s[n++] = '%';
			p++;
		} else {
			s[n++] = *p;
		}
	}
	s[n] = '\0';
	return s;
}

static bool per_process(const struct outputs *o)
{
	return o->pattern && strstr(o->pattern, "%p");
}

int outputs_open(struct outputs *o, const char *pattern)
{
	memset(o, 0, sizeof(*o));
	o->pattern = pattern;
	o->one = stderr;
	if (!pattern || per_process(o))
		return 0;
	o->one = fopen(pattern, "we");
	if (!o->one) {
		int err = -errno;

		fs_error("%s: cannot write the report: %s", pattern, strerror(-err));
		o->one = stderr;
		return err;
	}
	return 0;
}

/* The file named `name` (taken), opened for reports unless it is already. */
static FILE *file_named(struct outputs *o, char *name)
{
	FILE *f;

	for (size_t i = 0; i < o->n; i++) {
		if (!strcmp(o->name[i], name)) {
			free(name);
			return o->f[i];
		}
	}
	f = fopen(name, "we");
	if (!f) {
		fs_error("%s: cannot write the report: %s", name, strerror(errno));
		free(name);
		return NULL;
	}
	o->f = xrealloc(o->f, (o->n + 1) * sizeof(*o->f));
	o->name = xrealloc(o->name, (o->n + 1) * sizeof(*o->name));
	o->f[o->n] = f;
	o->name[o->n++] = name;
	return f;
}

FILE *outputs_for(struct outputs *o, int pid, bool *again)
{
	FILE *f = per_process(o) ? file_named(o, output_expand(o->pattern, pid)) : o->one;

	*again = f && f == o->prev;
	if (f)
		o->prev = f;
	return f;
}

int outputs_close(struct outputs *o)
{
	int rc = 0;

	if (o->one && o->one != stderr && fclose(o->one) != 0) {
		rc = -errno;
		fs_error("%s: cannot write the report: %s", o->pattern, strerror(-rc));
	}
	o->one = NULL;
	for (size_t i = 0; i < o->n; i++) {
		if (fclose(o->f[i]) != 0) {
			int err = -errno;

			fs_error("%s: cannot write the report: %s", o->name[i], strerror(-err));
			if (!rc)
				rc = err;
		}
		free(o->name[i]);
	}
	free(o->f);
	free(o->name);
	o->f = NULL;
	o->name = NULL;
	o->n = 0;
	return rc;
}
