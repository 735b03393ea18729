/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * patches.h - a process's patch records and the marks fortstat leaves in
 * the program (patches.c), below every mechanism. The state they act on is
 * tracer.h's.
 */
#ifndef FORTSTAT_TRACER_PATCHES_H
#define FORTSTAT_TRACER_PATCHES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fortstat/arch.h"

struct patch;
struct pstate;
struct tracer;

/* A new record at the end of the current process's patches (zeroed; n_patches not counted). */
struct patch *patch_new(struct tracer *tr);

/* Resume past patch p's displaced instruction; `regs` complete unless rip_only (-c). */
int resume_patched(struct tracer *tr, pid_t tid, arch_regs *regs, const struct patch *p,
		   bool rip_only);

/* Is ret the return address of a call that a live stub of ps emulates? */
bool patch_call_site(const struct pstate *ps, uint64_t ret);

/* Undo every live patch of the current process in the forked copy behind fd. */
void patch_undo_all(struct tracer *tr, int fd);

/* Is v what fortstat writes over return addresses (the return trap, a site's trap)? */
bool is_hooked(const struct pstate *ps, uint64_t v);

/* Is pc the int3 of a return site's trap? */
bool is_rsite_trap(const struct pstate *ps, uint64_t pc);

#endif
