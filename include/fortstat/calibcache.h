/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * calibcache.h - a calibration kept for the next runs. Calibrating costs a
 * run 0.2-0.5 s (six short traced runs of fortstat's own executable), more
 * than many programs take (sqlite3 on 20,000 inserts: 0.14 s). A
 * calibration is kept in $XDG_CACHE_HOME/fortstat/calibration (else
 * ~/.cache/fortstat/) and taken again only for the same options that
 * decide what a call costs, the same fortstat executable, the same boot,
 * CPU model and number of CPUs, and within FORTSTAT_CALIB_CACHE seconds
 * (default 120; 0: never kept nor taken). Not the load: a stop's cost
 * grows with it, but a run measures its stops itself and takes that
 * measure over the calibration's (calib_use_measured), and a probe's CPU
 * time hardly moves with it; the load average, a minute's mean, is no
 * steady key (on 2 CPUs it crosses any step now and then). One figure does
 * move with the load and is not measured in a run: the traps' residual
 * after each stop (u_callee_ns, u_caller_ns); a kept one carries the load
 * of its moment (roundleaf's leaf under a hog: 37 ns a call with a quiet
 * calibration kept, 9.6 with a fresh one), so on a machine whose load
 * changes FORTSTAT_CALIB_CACHE=0 gives --traps a calibration of its own
 * moment. The file is the
 * user's, read as untrusted input: a line that does not hold sane figures
 * is ignored.
 */
#ifndef FORTSTAT_CALIBCACHE_H
#define FORTSTAT_CALIBCACHE_H

#include "fortstat/calib.h"

struct trace_opts;

#define CALIB_CACHE_ENV "FORTSTAT_CALIB_CACHE"
#define CALIB_CACHE_AGE_S 120

/*
 * The calibration kept for options o and parallel_runtime into *out and
 * its age in seconds into *age_s. Returns 0, or -1 when none can be taken
 * (off, none kept, too old, another machine or load): then *out is untouched.
 */
int calib_cache_get(const struct trace_opts *o, int parallel_runtime, struct calib *out,
		    double *age_s);

/* Keep cal for options o (the file replaced whole; nothing said when it cannot be written). */
void calib_cache_put(const struct trace_opts *o, int parallel_runtime, const struct calib *cal);

/*
 * The pure parts, for the tests: a line of the file for key and time t,
 * and reading one back (0 with *cal, *key and *t filled; -1: not a sane line).
 */
char *calib_cache_line(uint64_t key, double t, const struct calib *cal);
int calib_cache_parse(const char *line, uint64_t *key, double *t, struct calib *cal);

#endif
