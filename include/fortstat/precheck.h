/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * precheck.h - what can be known before PROGRAM runs: a "#!" script, a
 * setuid program that cannot be traced without privileges, fortstat's
 * children already traced by another tracer, a CET user shadow stack.
 */
#ifndef FORTSTAT_PRECHECK_H
#define FORTSTAT_PRECHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/*
 * Refuse a PROGRAM (found at `path`) that fortstat cannot time: a script, a
 * setuid or setgid program when fortstat lacks CAP_SYS_PTRACE, or any
 * program when another tracer follows fortstat's children. Returns 0 to go
 * on, or EXIT_FS_CANNOT after printing one line.
 */
int precheck_program(const char *path);

/*
 * Parse the first `n` bytes of a file as the kernel parses a "#!" line.
 * Returns false when they do not start with "#!". Otherwise true, with
 * *interp the interpreter ("" when there is none) and *arg its optional
 * argument (the rest of the line, or NULL), both malloc'ed.
 */
bool precheck_shebang(const char *head, size_t n, char **interp, char **arg);

/* (A status file's fields are read with procfs.h's proc_field.) */

/* Whether the CapEff line of status text holds capability `cap` (0..63). */
bool precheck_status_has_cap(const char *status_text, int cap);

/* The TracerPid of status text: 0 when untraced or when the line is missing. */
pid_t precheck_status_tracer(const char *status_text);

/* Whether the "x86_Thread_features:" line of status text lists "shstk". */
bool precheck_status_shstk(const char *status_text);

/*
 * Whether thread `tid` (0: the calling thread) runs with a CET user shadow
 * stack: 1 enabled, 0 not, or a negative errno when /proc/TID/status
 * cannot be read.
 */
int precheck_thread_shstk(pid_t tid);

/* The tracer of process `pid` (0: none), or a negative errno. */
pid_t precheck_tracer_pid(pid_t pid);

/* Say in one line that `path` cannot be timed: `tracer` already traces it. */
void precheck_say_traced(const char *path, pid_t tracer);

#endif
