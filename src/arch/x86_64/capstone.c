// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * capstone.c - the one capstone handle of the process and the
 * instruction-group test (capstone_int.h), below every file of
 * src/arch/x86_64/ that decodes with capstone.
 */
#include <capstone/capstone.h>

#include "capstone_int.h"
#include "fortstat/insn.h"

/*
 * One capstone handle for the whole process, opened on first use (x86-64,
 * AT&T syntax, detail on). The tracer is single-threaded, so no locking.
 */
static csh cs_handle;
static int cs_ready;

int x86_cs_get(csh *out)
{
	if (!cs_ready) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs_handle) != CS_ERR_OK)
			return -1;
		if (cs_option(cs_handle, CS_OPT_DETAIL, CS_OPT_ON) != CS_ERR_OK) {
			cs_close(&cs_handle);
			return -1;
		}
		/* Cosmetic only: the plan does not depend on the syntax. */
		cs_option(cs_handle, CS_OPT_SYNTAX, CS_OPT_SYNTAX_ATT);
		cs_ready = 1;
	}
	*out = cs_handle;
	return 0;
}

/*
 * Release the capstone handle. Safe to call more than once; insn_plan opens
 * a new handle if called again afterwards.
 */
void insn_cleanup(void)
{
	if (cs_ready) {
		cs_close(&cs_handle);
		cs_ready = 0;
	}
}

int x86_has_group(const cs_insn *in, uint8_t grp)
{
	const cs_detail *d = in->detail;

	for (unsigned i = 0; i < d->groups_count; i++)
		if (d->groups[i] == grp)
			return 1;
	return 0;
}
