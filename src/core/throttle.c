// SPDX-License-Identifier: GPL-2.0-or-later
/* throttle.c - TAU's throttle rule (throttle.h). */
#include "fortstat/throttle.h"

bool throttle_due(uint64_t calls, uint64_t self_ns, uint64_t min_calls, double max_ns)
{
	if (!min_calls || calls < min_calls)
		return false;
	return (double)self_ns < max_ns * (double)calls;
}

bool throttle_due_trap(uint64_t calls, uint64_t self_ns, uint64_t min_calls, double max_ns,
		       double stop_ns)
{
	if (!(max_ns > 0))
		return false;
	return throttle_due(calls, self_ns, min_calls, max_ns + (stop_ns > 0 ? 2 * stop_ns : 0));
}
