/* SPDX-License-Identifier: GPL-2.0-or-later */
/* procfs.c - the one reader of /proc (see procfs.h). */
#include "fortstat/procfs.h"
#include "fortstat/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void proc_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *file)
{
	if (pid <= 0)
		snprintf(buf, size, "/proc/thread-self/%s", file);
	else if (tid > 0)
		snprintf(buf, size, "/proc/%d/task/%d/%s", (int)pid, (int)tid, file);
	else
		snprintf(buf, size, "/proc/%d/%s", (int)pid, file);
}

char *proc_read_all(pid_t pid, pid_t tid, const char *file, int *err)
{
	char path[96];
	size_t n = 0, cap = 4096;
	char *buf;
	ssize_t r = 0;
	int fd;

	proc_path(path, sizeof(path), pid, tid, file);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	buf = xmalloc(cap);
	for (;;) {
		if (n + 1 >= cap)
			buf = xrealloc(buf, cap *= 2);
		r = read(fd, buf + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		n += (size_t)r;
	}
	if (r < 0) {
		*err = -errno;
		close(fd);
		free(buf);
		return NULL;
	}
	close(fd);
	buf[n] = '\0';
	*err = 0;
	return buf;
}

const char *proc_field(const char *status_text, const char *key)
{
	size_t len = strlen(key);
	const char *line = status_text;

	while (line && *line) {
		if (!strncmp(line, key, len) && line[len] == ':') {
			line += len + 1;
			return line + strspn(line, " \t");
		}
		line = strchr(line, '\n');
		if (line)
			line++;
	}
	return NULL;
}

int proc_status(pid_t pid, pid_t tid, const char *key, char *buf, size_t size)
{
	int err;
	char *text = proc_read_all(pid, tid, "status", &err);
	const char *v;

	if (size)
		buf[0] = '\0';
	if (!text)
		return err;
	v = proc_field(text, key);
	if (v && size)
		snprintf(buf, size, "%.*s", (int)strcspn(v, "\n"), v);
	free(text);
	return v ? 0 : -ENOENT;
}

long long proc_status_num(pid_t pid, pid_t tid, const char *key, int base, long long dflt)
{
	char v[64], *end;
	long long n;

	if (proc_status(pid, tid, key, v, sizeof(v)) < 0)
		return dflt;
	errno = 0;
	n = (long long)strtoull(v, &end, base);
	return errno || end == v ? dflt : n;
}

ssize_t proc_exe(pid_t pid, char *buf, size_t size)
{
	char link[48];
	ssize_t len;

	if (!size)
		return -EINVAL;
	buf[0] = '\0';
	proc_path(link, sizeof(link), pid, 0, "exe");
	len = readlink(link, buf, size - 1);
	if (len < 0)
		return -errno;
	buf[len] = '\0';
	return len;
}

int proc_maps_each(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg)
{
	char path[48], *line = NULL;
	size_t cap = 0;
	int rc = 0;
	FILE *f;

	proc_path(path, sizeof(path), pid, 0, "maps");
	f = fopen(path, "re");
	if (!f)
		return -errno;
	while (!rc && getline(&line, &cap, f) > 0) {
		struct proc_map m = {.path = ""};
		int name_at = 0;

		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %4s %" SCNx64 " %*s %*u %n", &m.lo, &m.hi,
			   m.perm, &m.off, &name_at) < 4)
			continue;
		if (name_at) {
			line[strcspn(line, "\n")] = '\0';
			m.path = line + name_at;
		}
		rc = fn(&m, arg);
	}
	free(line);
	fclose(f);
	return rc;
}

int proc_fd_name_for(pid_t pid, int fd, char *buf, size_t size)
{
	char there[128];
	struct stat mine, theirs;

	snprintf(buf, size, "/proc/%d/fd/%d", (int)getpid(), fd);
	/* /proc/PID/root: pid's root, and below it pid's mounts (its /proc's pid namespace) */
	snprintf(there, sizeof(there), "/proc/%d/root%s", (int)pid, buf);
	if (fstat(fd, &mine) < 0)
		return -errno;
	if (stat(there, &theirs) < 0)
		return errno == EACCES || errno == EPERM ? -errno : -EXDEV;
	return mine.st_dev == theirs.st_dev && mine.st_ino == theirs.st_ino ? 0 : -EXDEV;
}
