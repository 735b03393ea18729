/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * throttle.h - TAU's throttle rule (--throttle=CALLS,USEC): when a routine
 * that is called often and costs little a call stops being timed. Pure:
 * the counts and times come from the books; the tracer acts on the answer
 * (a probe's stub flag set, a trap-path int3 removed).
 */
#ifndef FORTSTAT_THROTTLE_H
#define FORTSTAT_THROTTLE_H

#include <stdbool.h>
#include <stdint.h>

/*
 * Is a routine called `calls` times so far, with `self_ns` ns of net self
 * time (CPU) in them, due to be throttled? Yes when throttling is on
 * (`min_calls` > 0; 0 is --no-throttle), it has been called at least
 * min_calls times, and its mean self time is under `max_ns` a call:
 * self_ns < max_ns * calls, in double arithmetic (a routine whose time
 * is not known, self_ns 0 as with -c, is due on its count alone; with
 * max_ns 0 or below, or not a number, none is).
 */
bool throttle_due(uint64_t calls, uint64_t self_ns, uint64_t min_calls, double max_ns);

/*
 * The same for a routine on the trap path: each of its calls stopped, and
 * its net self time is its measure less stop_ns a call (the stop's cost,
 * an estimate: NaN or below 0, none), as uncertain as that cost; its mean
 * may miss max_ns by twice the estimate (a CPU hog on every CPU: a stop
 * calibrated at 5.8 us, the net mean of a 20 ns leaf on the trap path read
 * 6-8 us; glibc's memset never throttled, bc 160 times as slow). With
 * max_ns 0 or below, or not a number, none is due.
 */
bool throttle_due_trap(uint64_t calls, uint64_t self_ns, uint64_t min_calls, double max_ns,
		       double stop_ns);

#endif
