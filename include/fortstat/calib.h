/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calib.h - calibration: the overhead a stop adds to the segment it ends,
 * on the entry side (f1, charged to the called routine) and on the return
 * side (f2, charged to the caller per call it makes), measured by timing a
 * known empty routine through the same tracer, clock and CPU placement.
 */
#ifndef FORTSTAT_CALIB_H
#define FORTSTAT_CALIB_H

#include <stddef.h>

struct options;

struct calib {
	double f1_ns;	  /* overhead per entry, charged to the callee */
	double f2_ns;	  /* overhead per call made, charged to the caller */
	double alt_f1_ns; /* the same on the other clock (wall if cpu was chosen) */
	double alt_f2_ns;
	size_t batches;	  /* batches measured */
	size_t calls;	  /* calls per batch */
	double seconds;	  /* wall time the calibration took */
};

/*
 * Measure f1 and f2 for options `o` (clock, placement), as the program to be
 * timed would see them: `parallel_runtime` is that program's (it decides
 * --pin=auto). Runs fortstat's own executable as the calibration child.
 * Returns 0, or a negative errno (then *out holds zeros).
 */
int calib_run(const struct options *o, int parallel_runtime, struct calib *out);

#endif
