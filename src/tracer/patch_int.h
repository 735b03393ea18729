/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * patch_int.h - private to patch.c and patchplan.c: what patch_routines
 * (patch.c: scratch pages, slots, the int3 path, writing the entries) asks
 * of the planning of an entry stub (patchplan.c: what to read, the plan
 * cache, the patch's fields).
 */
#ifndef FORTSTAT_PATCH_INT_H
#define FORTSTAT_PATCH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plancache.h"
#include "tracer.h"

/*
 * The code being patched, read at once when a plan needs it (the first
 * plan not in the plan cache): each routine's planning reads its first
 * bytes, the padding before and after it, its neighbours. A page either
 * side when it reads; the routines' extent alone else. An image whose
 * plans all come from the cache reads none of it.
 */
struct code_window {
	int fd;
	uint64_t lo;
	size_t n;
	bool tried;
};

/*
 * The fast entry patch of routine r at `entry` (insn_plan_stub,
 * insn_plan_probe): a jmp to a stub. Fills p and the stub's bytes at
 * `slot_buf`. Returns NULL, or why the routine must take the plain int3
 * instead. With `im` (the plan cache's entry of the image's file, its
 * routines from table index i0), a plan made before from the same inputs
 * is taken from there; w is the code read when a plan is made.
 */
const char *try_stub(struct tracer *tr, const struct routine *r, uint64_t entry, struct patch *p,
		     uint8_t *slot_buf, struct pc_image *im, size_t i0, struct code_window *w);

#endif
