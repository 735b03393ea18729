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
#include <stdint.h>

struct trace_opts;

struct calib {
	double f1_ns;	  /* overhead per entry, charged to the callee */
	double f2_ns;	  /* overhead per call made, charged to the caller */
	double alt_f1_ns; /* the same on the other clock (wall if cpu was chosen) */
	double alt_f2_ns;
	/*
	 * How far one batch's f1 and f2 scatter (acct_spread over the batches),
	 * on each clock: how well a call's cost is known, for the uncertainty
	 * of the corrected times. Where the run's measure replaced f1 and f2
	 * (calib_use_measured), the spread of what it leaves out (resid).
	 */
	double df1_ns;
	double df2_ns;
	double alt_df1_ns;
	double alt_df2_ns;
	double dresid_ns; /* the spread of resid_ns over the batches */
	double alt_dresid_ns;
	/*
	 * What a stop cost a segment of the calibration, measured as in the
	 * program's run (trace_result.seg_*), and what f1 and f2 hold beyond
	 * it (resid: the stub's own instructions, disturbed caches; a few ns).
	 * A run that measures its stops takes f1 = f2 = its measure + resid.
	 * seg 0: not measured.
	 */
	double seg_ns;
	double alt_seg_ns;
	double resid_ns;
	double alt_resid_ns;
	/*
	 * In-process probes: what a call through the count path (a throttled
	 * routine's) costs its caller, on each clock (0: not measured).
	 */
	double count_ns;
	double alt_count_ns;
	/*
	 * In-process probes: f1, f2 and the count path's cost again, the calls
	 * going round 64 routines in a random order (the flat loop's are the
	 * best case: one stub, every branch predicted), on each clock (0: not
	 * measured). The run weighs the two by how many routines its calls go
	 * round (trace.h, probe_round_*).
	 */
	double round_f1_ns;
	double round_f2_ns;
	double alt_round_f1_ns;
	double alt_round_f2_ns;
	double round_count_ns;
	double alt_round_count_ns;
	/*
	 * With stops measured (the traps): the stubs' own time inside a
	 * measured segment, the empty routine's (u_callee) and the driver's
	 * less its loop (u_caller), TSC to TSC: what a run's measured stop
	 * leaves in the routine's or the caller's time (trace_opts.seg_resid_ns).
	 */
	double u_callee_ns;
	double u_caller_ns;
	size_t batches; /* batches measured */
	size_t calls;	/* calls per batch */
	double seconds; /* wall time the calibration took */
};

/*
 * The figures of each calibration batch, f[k][batch] for k: f1, f2, the
 * other clock's f1, f2, a segment's stops, the other clock's, the count
 * path, the other clock's; the round calls' f1, f2, the other clock's f1,
 * f2, their count path, the other clock's (ns).
 */
#define CALIB_MAX_BATCHES 9
#define CALIB_FIGURES                                                                              \
	16 /* ... and the stubs' own time a segment: f[14] the routine's, f[15] the caller's */

/*
 * From b batches' figures (f left as it is), *out's medians, spreads and
 * resid (per batch: the mean of f1 and f2 less the same batch's stops; the
 * median of those) and batches; the rest of *out is not touched.
 */
void calib_summarise(const double f[CALIB_FIGURES][CALIB_MAX_BATCHES], size_t b, struct calib *out);

/*
 * Measure f1 and f2 for options `o` (clock, placement), as the program to be
 * timed would see them: `parallel_runtime` is that program's (it decides
 * --pin=auto). Runs fortstat's own executable as the calibration child.
 * Returns 0, or a negative errno (then *out holds zeros).
 */
int calib_run(const struct trace_opts *o, int parallel_runtime, struct calib *out);

/*
 * The calibration predicts what a stop costs; a run that measured its
 * stops (trace_result.seg_*: n segments, cpu_ns and wall_ns each) knows
 * better. Stops cost a few per cent more or less from one start of
 * fortstat to the next (the machine drifts; a fresh calibration child is
 * not the program), so the run's measure, plus what the calibration found
 * it leaves out (resid), replaces f1 and f2 on each clock that has both.
 * One figure for both: segments after entries and after returns cost the
 * same within 1 %, and each segment of a routine's time carries one of f1,
 * f2. `wall`: the chosen clock is the wall clock. Only with at least
 * CALIB_SEG_MIN segments; returns 1 when the chosen clock's were replaced.
 * The spreads go with them: df1 = df2 = dresid on each clock replaced.
 */
#define CALIB_SEG_MIN 1000
int calib_use_measured(struct calib *cal, int wall, uint64_t n, double cpu_ns, double wall_ns);

#endif
