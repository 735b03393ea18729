/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * patch.h - patching a process's routines (patch.c): the plan of each
 * entry, the scratch pages, the writes. The state they act on is
 * tracer.h's.
 */
#ifndef FORTSTAT_TRACER_PATCH_H
#define FORTSTAT_TRACER_PATCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct symtab;
struct tracer;

enum patch_mode {
	PATCH_OWN,   /* the program's own routines, its unwinder entries and PLT stubs */
	PATCH_LIB,   /* routines of a library appended to the table (-l) */
	PATCH_HOOKS, /* only the unwinder entries of a library (not timed) */
};

/*
 * Patch routines [from, to) of table `tab`, loaded at `bias`: plan each
 * entry, write the out-of-line slots to new scratch pages near them, then
 * the int3s. The program itself (PATCH_OWN) also gets its PLT stubs into
 * the unwinder hooked, and a scratch page even with nothing to patch when
 * the dynamic linker is followed. Routines that cannot be patched lose
 * RT_SELECTED. Runs in the stopped thread tid. Returns 0 or -errno (said).
 */
int patch_routines(struct tracer *tr, pid_t tid, struct symtab *tab, size_t from, size_t to,
		   uint64_t bias, enum patch_mode mode, int *deferred);

#endif
