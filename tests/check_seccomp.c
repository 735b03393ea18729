// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * check_seccomp.c - seccomp filters run on synthetic system calls: the
 * classic-BPF subset, arguments' words, the kernel's precedence between
 * filters, programs the kernel would not load; and a real filter read back
 * from a stopped child, whose verdict the kernel's own matches.
 */
#include <check.h>
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fortstat/seccomp.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define LD(off)                                                                                    \
	{                                                                                          \
		BPF_LD | BPF_W | BPF_ABS, 0, 0, (off)                                              \
	}
#define RET(v)                                                                                     \
	{                                                                                          \
		BPF_RET | BPF_K, 0, 0, (v)                                                         \
	}
#define JEQ(v, t, f)                                                                               \
	{                                                                                          \
		BPF_JMP | BPF_JEQ | BPF_K, (t), (f), (v)                                           \
	}
#define JSET(v, t, f)                                                                              \
	{                                                                                          \
		BPF_JMP | BPF_JSET | BPF_K, (t), (f), (v)                                          \
	}
#define ARG_LO(i) (offsetof(struct seccomp_data, args) + 8 * (i))
#define ARG_HI(i) (ARG_LO(i) + 4)

/* An allowlist as container runtimes write them: the architecture, then the numbers, else EPERM. */
static const struct scf_insn allowlist[] = {
    LD(offsetof(struct seccomp_data, arch)),
    JEQ(AUDIT_ARCH_X86_64, 1, 0),
    RET(SECCOMP_RET_KILL_PROCESS),
    LD(offsetof(struct seccomp_data, nr)),
    JEQ(SYS_mmap, 3, 0),
    JEQ(SYS_munmap, 2, 0),
    JEQ(SYS_read, 1, 0),
    RET(SECCOMP_RET_ERRNO | EPERM),
    RET(SECCOMP_RET_ALLOW),
};

/* mmap of shared memory kills (its flags' low word), of a 64-bit length >= 4 GiB traps. */
static const struct scf_insn by_args[] = {
    LD(offsetof(struct seccomp_data, nr)),
    JEQ(SYS_mmap, 0, 5),
    LD(ARG_LO(3)),
    JSET(MAP_SHARED, 0, 1),
    RET(SECCOMP_RET_KILL_PROCESS),
    LD(ARG_HI(1)),
    JEQ(0, 0, 1),
    RET(SECCOMP_RET_ALLOW),
    RET(SECCOMP_RET_TRAP),
};

static struct scf_call call(int nr, uint64_t a1, uint64_t a3)
{
	struct scf_call c = {.nr = nr, .arch = AUDIT_ARCH_X86_64, .ip = 0x401000};

	c.args[1] = a1;
	c.args[3] = a3;
	return c;
}

static uint32_t run(const struct scf_insn *p, size_t n, struct scf_call c)
{
	uint32_t r = 0x12345678;

	ck_assert_int_eq(scf_run(p, n, &c, &r), 0);
	return r;
}

START_TEST(test_allowlist)
{
	struct scf_call c = call(SYS_mmap, 4096, MAP_SHARED | MAP_ANONYMOUS);

	ck_assert_uint_eq(run(allowlist, N(allowlist), c), SECCOMP_RET_ALLOW);
	c.nr = SYS_munmap;
	ck_assert_uint_eq(run(allowlist, N(allowlist), c), SECCOMP_RET_ALLOW);
	c.nr = SYS_memfd_create;
	ck_assert_uint_eq(run(allowlist, N(allowlist), c), SECCOMP_RET_ERRNO | EPERM);
	c.nr = SYS_mmap;
	c.arch = AUDIT_ARCH_I386;
	ck_assert_uint_eq(run(allowlist, N(allowlist), c), SECCOMP_RET_KILL_PROCESS);
}
END_TEST

START_TEST(test_args)
{
	ck_assert_uint_eq(
	    run(by_args, N(by_args), call(SYS_mmap, 4096, MAP_PRIVATE | MAP_ANONYMOUS)),
	    SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(
	    run(by_args, N(by_args), call(SYS_mmap, 4096, MAP_SHARED | MAP_ANONYMOUS)),
	    SECCOMP_RET_KILL_PROCESS);
	/* the high word of the flags is not the low one's */
	ck_assert_uint_eq(
	    run(by_args, N(by_args), call(SYS_mmap, 4096, (uint64_t)MAP_SHARED << 32)),
	    SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(run(by_args, N(by_args), call(SYS_mmap, 1ull << 32, MAP_PRIVATE)),
			  SECCOMP_RET_TRAP);
	ck_assert_uint_eq(run(by_args, N(by_args), call(SYS_munmap, 1ull << 32, MAP_SHARED)),
			  SECCOMP_RET_ALLOW);
}
END_TEST

/* Scratch memory, X, arithmetic: nr * 4 + 1, stored and reloaded, compared through X. */
START_TEST(test_alu)
{
	const struct scf_insn p[] = {
	    LD(offsetof(struct seccomp_data, nr)),
	    {BPF_ALU | BPF_MUL | BPF_K, 0, 0, 4},
	    {BPF_ALU | BPF_ADD | BPF_K, 0, 0, 1},
	    {BPF_ST, 0, 0, 3},
	    {BPF_LDX | BPF_IMM, 0, 0, 4 * SYS_mmap + 1},
	    {BPF_LD | BPF_MEM, 0, 0, 3},
	    {BPF_JMP | BPF_JEQ | BPF_X, 0, 1, 0},
	    RET(SECCOMP_RET_ALLOW),
	    {BPF_ALU | BPF_RSH | BPF_K, 0, 0, 1},
	    {BPF_MISC | BPF_TAX, 0, 0, 0},
	    {BPF_LD | BPF_IMM, 0, 0, SECCOMP_RET_ERRNO},
	    {BPF_ALU | BPF_OR | BPF_X, 0, 0, 0},
	    {BPF_RET | BPF_A, 0, 0, 0},
	};

	ck_assert_uint_eq(run(p, N(p), call(SYS_mmap, 0, 0)), SECCOMP_RET_ALLOW);
	ck_assert_uint_eq(run(p, N(p), call(SYS_write, 0, 0)),
			  SECCOMP_RET_ERRNO | ((4 * SYS_write + 1) >> 1));
}
END_TEST

/* A division by an X of 0 ends the program with 0: KILL_THREAD. */
START_TEST(test_div0)
{
	const struct scf_insn p[] = {
	    {BPF_LD | BPF_IMM, 0, 0, 7},
	    {BPF_LDX | BPF_IMM, 0, 0, 0},
	    {BPF_ALU | BPF_DIV | BPF_X, 0, 0, 0},
	    RET(SECCOMP_RET_ALLOW),
	};

	ck_assert_uint_eq(run(p, N(p), call(SYS_read, 0, 0)), SECCOMP_RET_KILL_THREAD);
	ck_assert_int_eq(scf_effect(run(p, N(p), call(SYS_read, 0, 0))), SCF_HARMS);
}
END_TEST

/* What the kernel would not load is refused, never run past its end. */
START_TEST(test_malformed)
{
	const struct scf_insn past[] = {JEQ(0, 1, 0), RET(SECCOMP_RET_ALLOW)};
	const struct scf_insn ja[] = {{BPF_JMP | BPF_JA, 0, 0, 1}, RET(SECCOMP_RET_ALLOW)};
	const struct scf_insn far[] = {LD(64), RET(SECCOMP_RET_ALLOW)};
	const struct scf_insn odd[] = {LD(2), RET(SECCOMP_RET_ALLOW)};
	const struct scf_insn mod[] = {{BPF_ALU | BPF_MOD | BPF_K, 0, 0, 3},
				       RET(SECCOMP_RET_ALLOW)};
	const struct scf_insn ind[] = {{BPF_LD | BPF_W | BPF_IND, 0, 0, 0}, RET(SECCOMP_RET_ALLOW)};
	const struct scf_insn noret[] = {LD(0)};
	const struct scf_insn mem[] = {{BPF_ST, 0, 0, 16}, RET(SECCOMP_RET_ALLOW)};
	struct scf_call c = call(SYS_read, 0, 0);
	uint32_t r;

	ck_assert_int_eq(scf_run(past, N(past), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(ja, N(ja), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(far, N(far), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(odd, N(odd), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(mod, N(mod), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(ind, N(ind), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(noret, N(noret), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(mem, N(mem), &c, &r), -EINVAL);
	ck_assert_int_eq(scf_run(past, 0, &c, &r), -EINVAL);
}
END_TEST

/* Between filters the kernel acts on the highest precedence, whatever the order. */
START_TEST(test_combine)
{
	static const uint32_t order[] = {
	    SECCOMP_RET_KILL_PROCESS,  SECCOMP_RET_KILL_THREAD, SECCOMP_RET_TRAP | 1,
	    SECCOMP_RET_ERRNO | EPERM, SECCOMP_RET_USER_NOTIF,	SECCOMP_RET_TRACE,
	    SECCOMP_RET_LOG,	       SECCOMP_RET_ALLOW,
	};

	for (size_t i = 0; i < N(order); i++)
		for (size_t j = 0; j < N(order); j++) {
			uint32_t want = order[i < j ? i : j];

			ck_assert_uint_eq(scf_combine(order[i], order[j]), want);
		}
	/* a tie keeps the first: its data */
	ck_assert_uint_eq(scf_combine(SECCOMP_RET_ERRNO | 1, SECCOMP_RET_ERRNO | 2),
			  SECCOMP_RET_ERRNO | 1);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_LOG), SCF_RUNS);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_ALLOW), SCF_RUNS);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_ERRNO | EPERM), SCF_REFUSED);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_TRACE), SCF_REFUSED);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_USER_NOTIF), SCF_ASKS);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_TRAP), SCF_HARMS);
	ck_assert_int_eq(scf_effect(SECCOMP_RET_KILL_PROCESS), SCF_HARMS);
	ck_assert_int_eq(scf_effect(0x00010000),
			 SCF_HARMS); /* an action the kernel does not know */
}
END_TEST

START_TEST(test_says)
{
	char buf[64];

	ck_assert_str_eq(scf_says(SECCOMP_RET_ERRNO | EPERM, buf, sizeof(buf)),
			 "refuses it (EPERM)");
	ck_assert_str_eq(scf_says(SECCOMP_RET_KILL_PROCESS, buf, sizeof(buf)), "kills the process");
	ck_assert_str_eq(scf_says(SECCOMP_RET_KILL_THREAD, buf, sizeof(buf)), "kills the thread");
	ck_assert_str_eq(scf_says(SECCOMP_RET_TRAP, buf, sizeof(buf)), "sends it SIGSYS");
	ck_assert_str_eq(scf_says(SECCOMP_RET_ALLOW, buf, sizeof(buf)), "allows it");
}
END_TEST

/*
 * Two filters installed by a child (one answers getppid with error 42,
 * the other refuses mmap of shared memory), read back while it is stopped:
 * the interpreter's verdicts are the kernel's on the child's own calls.
 */
START_TEST(test_read_real)
{
	static const struct sock_filter errno42[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getppid, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 42),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	static const struct sock_filter shared[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_mmap, 0, 3),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, ARG_LO(3)),
	    BPF_JUMP(BPF_JMP | BPF_JSET | BPF_K, MAP_SHARED, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog f1 = {N(errno42), (struct sock_filter *)errno42};
	struct sock_fprog f2 = {N(shared), (struct sock_filter *)shared};
	struct scf_filters fs;
	struct scf_call c = call(SYS_getppid, 0, 0);
	uint32_t r;
	int status, err;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		void *m;

		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0 || prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f1) ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &f2))
			_exit(99);
		raise(SIGSTOP);
		if (syscall(SYS_getppid) != -1 || errno != 42)
			_exit(1);
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
		if (m != MAP_FAILED || errno != EACCES)
			_exit(2);
		m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		_exit(m == MAP_FAILED ? 3 : 0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFSTOPPED(status) && WSTOPSIG(status) == SIGSTOP);
	err = scf_read(pid, &fs);
	if (err == -EACCES || err == -EINVAL) { /* not root, or no CONFIG_CHECKPOINT_RESTORE */
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return;
	}
	ck_assert_int_eq(err, 0);
	ck_assert_uint_eq(fs.n, 2);
	ck_assert_uint_eq(fs.len[0], N(errno42)); /* the one installed first first */
	ck_assert_uint_eq(fs.len[1], N(shared));
	ck_assert_int_eq(scf_eval(&fs, &c, &r), 0);
	ck_assert_uint_eq(r, SECCOMP_RET_ERRNO | 42);
	c = call(SYS_mmap, 4096, MAP_SHARED | MAP_ANONYMOUS);
	ck_assert_int_eq(scf_eval(&fs, &c, &r), 0);
	ck_assert_uint_eq(r, SECCOMP_RET_ERRNO | EACCES);
	c = call(SYS_mmap, 4096, MAP_PRIVATE | MAP_ANONYMOUS);
	ck_assert_int_eq(scf_eval(&fs, &c, &r), 0);
	ck_assert_uint_eq(r, SECCOMP_RET_ALLOW);
	scf_free(&fs);
	ck_assert_uint_eq(fs.n, 0);
	ptrace(PTRACE_CONT, pid, 0, 0);
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert(WIFEXITED(status));
	ck_assert_int_eq(WEXITSTATUS(status), 0);
}
END_TEST

/* A process without a filter has none to read. */
START_TEST(test_read_none)
{
	struct scf_filters fs;
	int status;
	pid_t pid = fork();

	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, 0, 0) < 0)
			_exit(99);
		raise(SIGSTOP);
		_exit(0);
	}
	ck_assert_int_eq(waitpid(pid, &status, 0), pid);
	ck_assert_int_lt(scf_read(pid, &fs), 0);
	ck_assert_uint_eq(fs.n, 0);
	ptrace(PTRACE_CONT, pid, 0, 0);
	waitpid(pid, &status, 0);
}
END_TEST

static Suite *seccomp_suite(void)
{
	Suite *s = suite_create("seccomp");
	TCase *tc = tcase_create("bpf");
	TCase *real = tcase_create("real");

	tcase_add_test(tc, test_allowlist);
	tcase_add_test(tc, test_args);
	tcase_add_test(tc, test_alu);
	tcase_add_test(tc, test_div0);
	tcase_add_test(tc, test_malformed);
	tcase_add_test(tc, test_combine);
	tcase_add_test(tc, test_says);
	suite_add_tcase(s, tc);
	tcase_add_test(real, test_read_real);
	tcase_add_test(real, test_read_none);
	suite_add_tcase(s, real);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(seccomp_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
