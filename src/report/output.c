// SPDX-License-Identifier: GPL-2.0-or-later
/* output.c - where the reports go: stderr, -o FILE, or one file a process with %p. */
#include "fortstat/output.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fortstat/util.h"

bool output_fmt_has(const char *fmt, char conv)
{
	for (const char *p = fmt; p && *p; p++) {
		if (p[0] != '%' || !p[1])
			continue;
		if (p[1] == conv)
			return true;
		p++; /* %% and the others: two characters */
	}
	return false;
}

char *output_expand(const char *fmt, int rank, int pid, const char *host)
{
	char hbuf[HOST_NAME_MAX + 1];
	size_t cap = strlen(fmt) + 32, n = 0;
	char *s = xmalloc(cap);

	if (!host && output_fmt_has(fmt, 'h')) {
		if (gethostname(hbuf, sizeof(hbuf)) < 0)
			snprintf(hbuf, sizeof(hbuf), "localhost");
		hbuf[sizeof(hbuf) - 1] = '\0';
		host = hbuf;
	}
	for (const char *p = fmt; *p; p++) {
		const char *piece = NULL;
		char num[16], one[2] = {*p, '\0'};
		size_t len;

		if (p[0] == '%' && p[1] == 'p') {
			snprintf(num, sizeof(num), "%d", pid);
			piece = num;
		} else if (p[0] == '%' && p[1] == 'r') {
			snprintf(num, sizeof(num), "%d", rank);
			piece = num;
		} else if (p[0] == '%' && p[1] == 'h') {
			piece = host;
		} else if (p[0] == '%' && p[1] == '%') {
			piece = "%";
		}
		if (piece)
			p++;
		else
			piece = one;
		len = strlen(piece);
		while (n + len + 1 > cap)
			s = xrealloc(s, cap *= 2);
		memcpy(s + n, piece, len);
		n += len;
	}
	s[n] = '\0';
	return s;
}

int output_write_whole(FILE *out, const char *buf, size_t len)
{
	int fd;

	if (fflush(out) != 0)
		return -errno;
	fd = fileno(out);
	if (fd < 0)
		return -EBADF;
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

static bool per_process(const struct outputs *o)
{
	return o->pattern && output_fmt_has(o->pattern, 'p');
}

int output_check(const char *name)
{
	struct stat sb;
	char *real, *dir, *slash;
	int fd, err = 0;

	if (stat(name, &sb) == 0 && !S_ISREG(sb.st_mode)) {
		/* a device or a pipe is written in place: opened, not truncated */
		fd = open(name, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return errno == ENXIO ? 0 : -errno; /* a FIFO nobody reads yet */
		close(fd);
		return 0;
	}
	/* a new file will be made beside it (a link's target's) and renamed */
	real = realpath(name, NULL);
	dir = xstrdup(real ? real : name);
	slash = strrchr(dir, '/');
	if (!slash)
		strcpy(dir, ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	if (stat(dir, &sb) < 0)
		err = -errno;
	else if (!S_ISDIR(sb.st_mode))
		err = -ENOTDIR;
	else if (access(dir, W_OK | X_OK) < 0)
		/* a writable file in a directory that is not is written in place */
		err = access(name, W_OK) == 0 ? 0 : -errno;
	else if (stat(name, &sb) == 0 && S_ISDIR(sb.st_mode))
		err = -EISDIR;
	free(dir);
	free(real);
	return err;
}

bool output_is_terminal(const char *name)
{
	struct stat sb;
	bool tty;
	int fd;

	if (stat(name, &sb) < 0 || !S_ISCHR(sb.st_mode))
		return false;
	fd = open(name, O_WRONLY | O_NOCTTY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return false;
	tty = isatty(fd);
	close(fd);
	return tty;
}

int outputs_open(struct outputs *o, const char *pattern, int rank)
{
	char *name;
	int err;

	memset(o, 0, sizeof(*o));
	o->pattern = pattern;
	o->rank = rank;
	o->one = stderr;
	if (!pattern || per_process(o))
		return 0;
	/* the file is replaced whole at the end (output_replace): only checked now */
	o->one = NULL;
	name = output_expand(pattern, rank, getpid(), NULL);
	err = output_check(name);
	if (err < 0)
		fs_error("%s: cannot write the report: %s", name, strerror(-err));
	free(name);
	return err;
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
	FILE *f =
	    per_process(o) ? file_named(o, output_expand(o->pattern, o->rank, pid, NULL)) : o->one;

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

/* Write len bytes of buf to fd, whatever short writes and signals do: 0 or -errno. */
static int write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t w = write(fd, buf, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		buf += w;
		len -= (size_t)w;
	}
	return 0;
}

/*
 * A new file beside `path` holding buf, renamed over it: 0 or -errno. Its
 * mode: the old file's permissions, or 0666 less the umask for a new one
 * (as fopen would leave them).
 */
static int replace_file(const char *path, const char *buf, size_t len)
{
	char *tmp = xasprintf("%s.fortstat-XXXXXX", path);
	mode_t mask = umask(0), mode = 0666 & ~mask;
	struct stat sb;
	int fd, err;

	umask(mask);
	if (stat(path, &sb) == 0 && S_ISREG(sb.st_mode))
		mode = sb.st_mode & 0777;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		free(tmp);
		return err;
	}
	err = write_all(fd, buf, len);
	if (!err && fchmod(fd, mode) < 0)
		err = -errno;
	if (close(fd) < 0 && !err)
		err = -errno;
	if (!err && rename(tmp, path) < 0)
		err = -errno;
	if (err)
		unlink(tmp);
	free(tmp);
	return err;
}

int output_replace(const char *name, const char *buf, size_t len, bool *renamed)
{
	struct stat sb;
	char *real = NULL;
	int fd, err;

	*renamed = false;
	if (stat(name, &sb) < 0 || S_ISREG(sb.st_mode)) {
		/* the file a symbolic link names is replaced, not the link */
		real = realpath(name, NULL);
		err = replace_file(real ? real : name, buf, len);
		free(real);
		*renamed = !err;
		if (err != -EACCES && err != -EROFS)
			return err;
		/* no new file beside it, but the file itself is writable: in place */
		fd = open(name, O_WRONLY | O_TRUNC | O_CLOEXEC);
		if (fd < 0)
			return err;
		goto write;
	}
	/* a device or a pipe (-o /dev/stderr): the text goes there */
	fd = open(name, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
write:
	err = write_all(fd, buf, len);
	if (close(fd) < 0 && !err)
		err = -errno;
	return err;
}
