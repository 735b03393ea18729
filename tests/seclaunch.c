// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * seclaunch.c PROFILE PROGRAM ARGS... - for tests/e2e/probes/seccomp.sh:
 * run PROGRAM under a seccomp filter as containers and services get them
 * (libseccomp), set before the exec:
 *   docker   an allowlist like Docker's default profile: what programs
 *            commonly call (memfd_create among them), anything else EPERM
 *   service  like systemd's SystemCallFilter=@system-service ~@ipc: a
 *            smaller allowlist without memfd_create, anything else kills
 *            the process
 *   noshm    service, and mmap of shared memory kills the process too
 *   noexec   service, and mmap of anonymous executable memory (code made
 *            at run time) is refused (EPERM)
 *   allow    a filter that allows everything
 * Exits 125 when the filter cannot be set. `seclaunch strict` runs no
 * program: it enters seccomp's strict mode (read, write, exit and sigreturn
 * only), says "ready", calls step() as fast as it can until SIGUSR1, then
 * says "ok" and exits 0 (any other system call kills it).
 */
#include <errno.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* What most programs call, the C library's start and threads included: both allowlists. */
static const char common[] =
    "access arch_prctl brk clock_getres clock_gettime clock_nanosleep clone clone3 close dup "
    "dup2 dup3 epoll_create1 epoll_ctl epoll_pwait epoll_wait eventfd2 execve exit exit_group "
    "faccessat faccessat2 fcntl fstat fstatfs fsync ftruncate futex getcwd getdents64 getegid "
    "geteuid getgid getitimer getpgrp getpid getppid getrandom getrlimit getrusage gettid "
    "gettimeofday getuid ioctl kill lseek lstat madvise mprotect mremap munmap nanosleep "
    "newfstatat open openat pipe2 poll ppoll prctl pread64 prlimit64 pselect6 pwrite64 read "
    "readlink readlinkat readv rseq rt_sigaction rt_sigpending rt_sigprocmask rt_sigreturn "
    "rt_sigsuspend rt_sigtimedwait sched_getaffinity sched_yield select set_robust_list "
    "set_tid_address setitimer sigaltstack stat statx sysinfo tgkill tkill umask uname unlink "
    "unlinkat wait4 waitid write writev";

/* Docker's default has these too (and much else: sockets, files, IPC). */
static const char docker_more[] =
    "memfd_create accept4 bind connect listen recvfrom recvmsg sendmsg sendto setsockopt "
    "shutdown socket socketpair pipe mkdir rename shmat shmdt shmget timerfd_create "
    "timerfd_settime signalfd4";

/* Allow each system call named in `names` (blank-separated). Returns 0 or -1. */
static int allow(scmp_filter_ctx ctx, const char *names)
{
	char name[64];

	for (const char *p = names; *p;) {
		size_t n = strcspn(p, " ");

		if (n && n < sizeof(name)) {
			int nr;

			memcpy(name, p, n);
			name[n] = '\0';
			nr = seccomp_syscall_resolve_name(name);
			/* __NR_SCMP_ERROR: not on this architecture */
			if (nr != __NR_SCMP_ERROR &&
			    seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0) < 0)
				return -1;
		}
		p += n + (p[n] == ' ');
	}
	return 0;
}

static scmp_filter_ctx make(const char *profile)
{
	bool docker = !strcmp(profile, "docker");
	scmp_filter_ctx ctx;
	int nr = SCMP_SYS(mmap), bad = 0;

	if (!strcmp(profile, "allow"))
		return seccomp_init(SCMP_ACT_ALLOW);
	if (!docker && strcmp(profile, "service") && strcmp(profile, "noshm") &&
	    strcmp(profile, "noexec"))
		return NULL;
	ctx = seccomp_init(docker ? SCMP_ACT_ERRNO(EPERM) : SCMP_ACT_KILL_PROCESS);
	if (!ctx)
		return NULL;
	/* mmap's own rules (the default kills what they do not allow) */
	if (!strcmp(profile, "noshm"))
		bad |= seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_SHARED, 0)) < 0;
	if (!strcmp(profile, "noexec"))
		bad |= seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 2,
					SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, PROT_EXEC),
					SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, MAP_ANONYMOUS)) <
			   0 ||
		       seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A2(SCMP_CMP_MASKED_EQ, PROT_EXEC, 0)) < 0 ||
		       seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 1,
					SCMP_A3(SCMP_CMP_MASKED_EQ, MAP_ANONYMOUS, 0)) < 0;
	/* mmap for all but those two: their own rules above */
	if (!bad && (docker || !strcmp(profile, "service")))
		bad |= allow(ctx, "mmap") < 0;
	if (!bad)
		bad |= allow(ctx, common) < 0;
	if (!bad && docker)
		bad |= allow(ctx, docker_more) < 0;
	if (bad) {
		seccomp_release(ctx);
		return NULL;
	}
	return ctx;
}

static volatile sig_atomic_t stop;

static void on_usr1(int sig)
{
	(void)sig;
	stop = 1;
}

__attribute__((noinline, noipa)) static long step(long x)
{
	return x * 3 + 1;
}

/* Strict mode: only read, write, exit and sigreturn from here on. */
static int strict(void)
{
	struct sigaction sa = {.sa_handler = on_usr1};
	long s = 0;

	sigaction(SIGUSR1, &sa, NULL);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT, 0, 0, 0) < 0)
		return 125;
	if (write(1, "ready\n", 6) != 6)
		syscall(SYS_exit, 1);
	while (!stop)
		s += step(s);
	if (write(1, "ok\n", 3) != 3)
		syscall(SYS_exit, 1);
	syscall(SYS_exit, 0); /* exit_group is not allowed */
	return 0;
}

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;

	if (argc == 2 && !strcmp(argv[1], "strict"))
		return strict();
	if (argc < 3) {
		fprintf(stderr, "usage: seclaunch docker|service|noshm|noexec|allow PROGRAM "
				"ARGS...\n       seclaunch strict\n");
		return 125;
	}
	ctx = make(argv[1]);
	if (!ctx) {
		fprintf(stderr, "seclaunch: no such profile, or its rules failed: %s\n", argv[1]);
		return 125;
	}
	/* seccomp_load sets no_new_privs first (SCMP_FLTATR_CTL_NNP, the default) */
	if (seccomp_load(ctx) < 0) {
		fprintf(stderr, "seclaunch: the filter cannot be set\n");
		seccomp_release(ctx);
		return 125;
	}
	seccomp_release(ctx);
	execv(argv[2], argv + 2);
	fprintf(stderr, "seclaunch: %s: %s\n", argv[2], strerror(errno));
	return 127;
}
