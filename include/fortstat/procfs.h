/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * procfs.h - the one reader of /proc: a process's or thread's files
 * (status, comm, stat...), the file it runs (exe) and its mappings (maps).
 * Every caller above names what it wants; none builds a /proc path or
 * parses a status line of its own. The process files of /proc/PID/mem and
 * auxv stay with procmem.h (the tracee's memory). Nothing here keeps state.
 *
 * Addressing: pid > 0 and tid 0 is /proc/PID/FILE; pid > 0 and tid > 0 is
 * /proc/PID/task/TID/FILE; pid 0 is the calling thread (/proc/thread-self).
 */
#ifndef FORTSTAT_PROCFS_H
#define FORTSTAT_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The path of FILE of pid/tid (see above) into buf. */
void proc_path(char *buf, size_t size, pid_t pid, pid_t tid, const char *file);

/*
 * The whole of FILE of pid/tid, NUL-terminated, in a malloc'ed string (any
 * length); NULL with *err set to -errno when it cannot be read.
 */
char *proc_read_all(pid_t pid, pid_t tid, const char *file, int *err);

/*
 * The start of status field KEY's value ("Name", "Tgid", "SigPnd"...) in
 * the text of a status file (after "KEY:" and blanks; it runs to the
 * line's end), or NULL when the text has no such field.
 */
const char *proc_field(const char *status_text, const char *key);

/*
 * Status field KEY of pid/tid, its line's value without the newline, into
 * buf ("" when there is none). Returns 0, -ENOENT when the file has no
 * such field, or -errno when the file cannot be read.
 */
int proc_status(pid_t pid, pid_t tid, const char *key, char *buf, size_t size);

/* The same as a number in base 10 or 16; `dflt` when it cannot be read. */
long long proc_status_num(pid_t pid, pid_t tid, const char *key, int base, long long dflt);

/* The path of the file process pid runs (/proc/PID/exe): its length, or -errno. */
ssize_t proc_exe(pid_t pid, char *buf, size_t size);

/* One line of /proc/PID/maps. */
struct proc_map {
	uint64_t lo, hi;  /* [lo, hi) */
	uint64_t off;	  /* file offset of lo */
	char perm[5];	  /* "r-xp" */
	const char *path; /* "" when anonymous; valid during the call only */
};

/*
 * Call fn for each mapping of process pid in address order, until fn
 * returns non-zero. Returns fn's non-zero value, 0 at the end, or -errno
 * when the file cannot be opened. Lines of any length are read whole.
 */
int proc_maps_each(pid_t pid, int (*fn)(const struct proc_map *m, void *arg), void *arg);

/*
 * The name by which process pid opens fortstat's descriptor fd
 * (/proc/FORTSTAT/fd/FD) into buf; 0 when that name, looked up from pid's
 * root through its own mounts, is fd's very file, else -EXDEV (a process
 * in other pid or mount namespaces, a sandbox, a chroot: the name would
 * open another process's descriptor, or nothing) or -errno.
 */
int proc_fd_name_for(pid_t pid, int fd, char *buf, size_t size);

#endif
