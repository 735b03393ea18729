// SPDX-License-Identifier: GPL-2.0-or-later
/* clockkind.c - the clocks' names. */
#include "fortstat/clockkind.h"

const char *clock_name(enum clock_kind c)
{
	return c == CLOCK_KIND_WALL ? "wall" : "cpu";
}
