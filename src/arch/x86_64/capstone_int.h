/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * capstone_int.h - private to src/arch/x86_64/: the one capstone handle
 * (x86-64, detail on; opened on first use, closed by insn_cleanup) and the
 * instruction-group test that the planning files (insn_int.h) and scan.c
 * share.
 */
#ifndef FORTSTAT_X86_CAPSTONE_INT_H
#define FORTSTAT_X86_CAPSTONE_INT_H

#include <capstone/capstone.h>
#include <stdint.h>

/* The process's capstone handle into *out: 0, or -1 when capstone cannot open. */
int x86_cs_get(csh *out);
/* Does instruction in belong to capstone group grp? */
int x86_has_group(const cs_insn *in, uint8_t grp);

#endif
