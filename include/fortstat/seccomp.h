/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * seccomp.h - what a process's seccomp filters do with a system call that
 * fortstat would make it run: the filters read from the kernel
 * (PTRACE_SECCOMP_GET_FILTER) and run on the call by a classic-BPF
 * interpreter of the seccomp subset (pure). src/tracer/seccomp.c.
 */
#ifndef FORTSTAT_SECCOMP_H
#define FORTSTAT_SECCOMP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* One instruction of a classic BPF program, laid out as struct sock_filter. */
struct scf_insn {
	uint16_t code;
	uint8_t jt, jf;
	uint32_t k;
};

/* A system call as a filter sees it (struct seccomp_data's fields). */
struct scf_call {
	int32_t nr;
	uint32_t arch; /* AUDIT_ARCH_X86_64 for fortstat's calls */
	uint64_t ip;   /* the address after its syscall instruction */
	uint64_t args[6];
};

/* The filters of a process, the one installed first first (as the kernel numbers them). */
struct scf_filters {
	size_t n;
	struct scf_insn **prog;
	size_t *len;
};

/* What a filter's return value does to the call. */
enum scf_effect {
	SCF_RUNS,    /* ALLOW, LOG */
	SCF_REFUSED, /* ERRNO; TRACE (ENOSYS: fortstat asks for no seccomp stops) */
	SCF_ASKS,    /* USER_NOTIF: a supervisor process decides */
	SCF_HARMS,   /* TRAP (SIGSYS), KILL_THREAD, KILL_PROCESS, any unknown action */
};

/*
 * Run one filter (n instructions) on call c as the kernel would. Returns 0
 * and the filter's return value in *ret, or -EINVAL for a program the
 * kernel refuses to load (an instruction outside the seccomp subset, a
 * load outside struct seccomp_data, a jump past the end, a path without a
 * return, more than 4096 instructions).
 */
int scf_run(const struct scf_insn *prog, size_t n, const struct scf_call *c, uint32_t *ret);

/*
 * Of two filters' return values, the one the kernel acts on: the action
 * of the highest precedence (KILL_PROCESS first, ALLOW last); `a` on a tie.
 */
uint32_t scf_combine(uint32_t a, uint32_t b);

/*
 * Every filter of fs run on c and combined as the kernel does (from the
 * last installed: on a tie its value). Returns 0 and *ret, or -EINVAL as
 * scf_run.
 */
int scf_eval(const struct scf_filters *fs, const struct scf_call *c, uint32_t *ret);

/* What return value `ret` does to the call. */
enum scf_effect scf_effect(uint32_t ret);

/*
 * What return value `ret` does, in words for a message ("allows it",
 * "answers EPERM", "kills the process", ...), written into buf.
 */
const char *scf_says(uint32_t ret, char *buf, size_t size);

/*
 * Read the filters of process pid, a thread of which (tid) fortstat holds
 * in a ptrace stop. Returns 0 and *fs (free it with scf_free), or -errno:
 * -EACCES when fortstat may not read them (it lacks CAP_SYS_ADMIN, or runs
 * under a seccomp filter itself), -EINVAL when the kernel cannot (no
 * CONFIG_CHECKPOINT_RESTORE), -ESRCH when the thread has gone.
 */
int scf_read(pid_t tid, struct scf_filters *fs);

/* Free what scf_read allocated; fs is left empty. */
void scf_free(struct scf_filters *fs);

#endif
