/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * merge.h - fortstat --merge: many JSON reports (the ranks of an MPI job,
 * the processes of -f, repeated runs) into one view. Per routine, matched by
 * name: calls, self and inclusive time as min, mean, max and sum over the
 * inputs, the input (rank) of the max and imbalance = max/mean; a routine
 * missing from an input counts 0 there. Arcs and calling contexts summed.
 * Memory grows with the routines, arcs and contexts, not with the inputs:
 * each input is read, folded in and freed (what stays of it: its file name,
 * and for each place of its lists what it had there, a hint for the next).
 */
#ifndef FORTSTAT_MERGE_H
#define FORTSTAT_MERGE_H

#include <stddef.h>
#include <stdio.h>

#include "fortstat/report.h"

struct merge;

/* An empty merge. Never NULL. */
struct merge *merge_new(void);
void merge_free(struct merge *m);

/*
 * Read the fortstat JSON report(s) in file `path` (a file written with -f
 * holds one a process: each is an input) and fold them in. Returns 0, or a
 * negative errno after one line on stderr naming the file and what is wrong
 * (not readable, a directory, empty, not JSON, truncated, not a fortstat
 * report, a merged report); m is then unchanged. A report of another
 * program than the first input's is merged by routine name after a warning.
 */
int merge_add_file(struct merge *m, const char *path);

/* As merge_add_file, from len bytes of text; `what` names them in messages. */
int merge_add_text(struct merge *m, const char *what, const char *text, size_t len);

/* How many inputs were folded in. */
size_t merge_n_inputs(const struct merge *m);

struct profile;

/*
 * The merge as a report model (profile.h): one section, the program's,
 * whose routines (those of every input, by name) carry their spread over
 * the inputs (profile_section.merged) and whose results (`all`) are the
 * sums: calls, self and inclusive time on the inputs' clock, arcs and
 * calling contexts; the inputs in profile.inputs. Never NULL: free it with
 * profile_free().
 */
struct profile *merge_profile(const struct merge *m);

/*
 * Write the merged report in opts->format to out: table (sorted by
 * opts->sort: mean self time, mean calls or name; opts->inclusive adds the
 * inclusive mean and max), CSV, JSON ("inputs": N, per routine "calls",
 * "self_s", "total_s" as {"min", "mean", "max", "sum", "max_input",
 * "imbalance"}), folded stacks, callgrind or pprof (from the sums: a
 * gzipped profile.proto, sample types calls and the reports' clock in
 * nanoseconds, one sample per summed context): report_write of the
 * merge's profile (merge_profile). Returns 0, -EINVAL without inputs, -ENODATA for folded stacks or
 * pprof when an input had no "stacks" (said in one line), or a write error's negative errno.
 */
int merge_write(const struct merge *m, FILE *out, const struct report_opts *opts);

/* An SVG flame graph of the summed calling contexts: as merge_write. */
int merge_write_svg(const struct merge *m, FILE *out);

#endif
