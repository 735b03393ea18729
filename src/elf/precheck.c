// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * precheck.c - refuse, in one line and before anything runs, a PROGRAM that
 * fortstat cannot time: a "#!" script (time its interpreter instead), a
 * setuid program that the kernel would run without its privileges under an
 * unprivileged tracer, a program that another tracer would own first. And
 * read what /proc/PID/status says of a CET user shadow stack.
 */
#include "fortstat/precheck.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fortstat/names.h"
#include "fortstat/procfs.h"
#include "fortstat/util.h"

#define SHEBANG_MAX 256 /* the kernel reads no more of a script (BINPRM_BUF_SIZE) */
#define CAP_PTRACE 19	/* CAP_SYS_PTRACE, without <linux/capability.h> */

/* ---- /proc/PID/status ---- */

bool precheck_status_has_cap(const char *status_text, int cap)
{
	const char *v = proc_field(status_text, "CapEff");
	char *end;
	unsigned long long caps;

	if (!v || cap < 0 || cap > 63)
		return false;
	errno = 0;
	caps = strtoull(v, &end, 16);
	if (errno || end == v)
		return false;
	return (caps >> cap) & 1;
}

pid_t precheck_status_tracer(const char *status_text)
{
	const char *v = proc_field(status_text, "TracerPid");

	return v ? (pid_t)atoi(v) : 0;
}

bool precheck_status_shstk(const char *status_text)
{
	const char *v = proc_field(status_text, "x86_Thread_features");

	while (v && *v && *v != '\n') {
		size_t len = strcspn(v, " \t\n");

		if (len == 5 && !strncmp(v, "shstk", 5))
			return true;
		v += len;
		v += strspn(v, " \t");
	}
	return false;
}

int precheck_thread_shstk(pid_t tid)
{
	int err;
	char *text = proc_read_all(tid, 0, "status", &err);
	bool on;

	if (!text)
		return err;
	on = precheck_status_shstk(text);
	free(text);
	return on;
}

pid_t precheck_tracer_pid(pid_t pid)
{
	int err;
	char *text = proc_read_all(pid, 0, "status", &err);
	pid_t tracer;

	if (!text)
		return err;
	tracer = precheck_status_tracer(text);
	free(text);
	return tracer;
}

void precheck_say_traced(const char *path, pid_t tracer)
{
	char comm[64] = "";

	proc_status(tracer, 0, "Name", comm, sizeof(comm));
	fs_error("%s: already traced by process %d (%s): cannot time it", path, (int)tracer,
		 comm[0] ? comm : "a debugger?");
}

/* ---- scripts ---- */

bool precheck_shebang(const char *head, size_t n, char **interp, char **arg)
{
	const char *p = head + 2, *end, *q;

	*interp = *arg = NULL;
	if (n < 2 || head[0] != '#' || head[1] != '!')
		return false;
	end = memchr(head, '\n', n);
	if (!end)
		end = head + n;
	/* The kernel stops at a NUL too. */
	q = memchr(head, '\0', (size_t)(end - head));
	if (q)
		end = q;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	for (q = p; q < end && *q != ' ' && *q != '\t'; q++)
		;
	*interp = xasprintf("%.*s", (int)(q - p), p);
	p = q;
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	while (end > p && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		end--;
	if (end > p)
		*arg = xasprintf("%.*s", (int)(end - p), p);
	return true;
}

/* Is `name` (a file name, no directory) a command shell? */
static bool is_shell(const char *name)
{
	static const char *const shells[] = {
	    "sh", "bash", "dash", "ash", "zsh", "ksh", "mksh", "csh", "tcsh", "fish", "busybox",
	};

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (!strcmp(name, shells[i]))
			return true;
	return false;
}

/* EXIT_FS_CANNOT after one line when `path` is a "#!" script, else 0. */
static int check_script(const char *path)
{
	char head[SHEBANG_MAX], *interp, *arg, *what, *cmd, *esc_path, *esc_what;
	const char *base;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0; /* symtab_load will say why */
	do
		n = read(fd, head, sizeof(head));
	while (n < 0 && errno == EINTR);
	close(fd);
	if (n < 2 || !precheck_shebang(head, (size_t)n, &interp, &arg))
		return 0;
	if (!interp[0]) {
		fs_error("%s: a script without an interpreter; fortstat times ELF executables",
			 path);
		free(interp);
		free(arg);
		return EXIT_FS_CANNOT;
	}
	what = arg ? xasprintf("%s %s", interp, arg) : xstrdup(interp);
	/* `#!/usr/bin/env NAME`: timing env would time env; time NAME. */
	base = strrchr(interp, '/');
	base = base ? base + 1 : interp;
	if (!strcmp(base, "env") && arg && arg[0] != '-' && !strpbrk(arg, " \t=")) {
		cmd = names_escape(arg);
		base = arg;
	} else {
		cmd = names_escape(what);
	}
	esc_path = names_escape(path);
	esc_what = names_escape(what);
	if (is_shell(base))
		/*
		 * Timing the shell times the shell, not the script: a wrapper
		 * or a shim (pyenv) runs its program by exec, which -f follows.
		 */
		fs_error("%s: a shell script (%s); fortstat times ELF executables: to time the "
			 "programs it runs, try 'fortstat -f %s' (-f runs %s on it)",
			 esc_path, esc_what, esc_path, cmd);
	else
		fs_error(
		    "%s: a script for %s; fortstat times ELF executables: try 'fortstat %s %s'",
		    esc_path, esc_what, cmd, esc_path);
	free(esc_path);
	free(esc_what);
	free(cmd);
	free(what);
	free(interp);
	free(arg);
	return EXIT_FS_CANNOT;
}

/* ---- setuid and setgid ---- */

static bool in_our_groups(gid_t gid)
{
	gid_t *v;
	int n;
	bool found = false;

	if (gid == getegid())
		return true;
	n = getgroups(0, NULL);
	if (n <= 0)
		return false;
	v = xcalloc((size_t)n, sizeof(*v));
	n = getgroups(n, v);
	for (int i = 0; i < n && !found; i++)
		found = v[i] == gid;
	free(v);
	return found;
}

/*
 * Under a tracer without CAP_SYS_PTRACE, the kernel runs a setuid program
 * with the caller's identity: it would run, but not as itself. Refuse.
 */
static int check_setuid(const char *path, const char *self_status)
{
	struct stat sb;
	struct statvfs vfs;
	bool suid, sgid;

	if (stat(path, &sb) < 0)
		return 0;
	suid = (sb.st_mode & S_ISUID) && sb.st_uid != geteuid();
	/* S_ISGID without group execute marks mandatory locking, not setgid. */
	sgid =
	    (sb.st_mode & (S_ISGID | S_IXGRP)) == (S_ISGID | S_IXGRP) && !in_our_groups(sb.st_gid);
	if (!suid && !sgid)
		return 0;
	/* On a nosuid file system the bits change nothing. */
	if (statvfs(path, &vfs) == 0 && (vfs.f_flag & ST_NOSUID))
		return 0;
	if (self_status ? precheck_status_has_cap(self_status, CAP_PTRACE) : geteuid() == 0)
		return 0;
	fs_error("%s: %s program: cannot be traced without privileges (run fortstat as root or "
		 "time a copy without the %s bit)",
		 path, suid ? "setuid" : "setgid", suid ? "setuid" : "setgid");
	return EXIT_FS_CANNOT;
}

/* ---- another tracer ---- */

/*
 * fortstat is itself traced: a tracer that follows forks (strace -f, gdb
 * with follow-fork) owns every child of fortstat before fortstat can seize
 * it. Find out with a child that only waits to be killed.
 */
static int check_tracer(const char *path, const char *self_status)
{
	pid_t pid, tracer = 0;
	int status;

	if (!self_status || precheck_status_tracer(self_status) <= 0)
		return 0;
	pid = fork();
	if (pid < 0)
		return 0; /* trace_run will fail to fork too, and say so */
	if (pid == 0) {
		for (;;)
			pause();
		_exit(0);
	}
	if (ptrace(PTRACE_SEIZE, pid, 0, 0) < 0 && errno == EPERM)
		tracer = precheck_tracer_pid(pid);
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	if (tracer <= 0)
		return 0;
	precheck_say_traced(path, tracer);
	return EXIT_FS_CANNOT;
}

int precheck_program(const char *path)
{
	int err, rc;
	char *self = proc_read_all(0, 0, "status", &err);

	rc = check_script(path);
	if (!rc)
		rc = check_setuid(path, self);
	if (!rc)
		rc = check_tracer(path, self);
	free(self);
	return rc;
}
