/* SPDX-License-Identifier: GPL-2.0-or-later */
/* mergecmd.h - the command fortstat --merge (merge.h does the merging). */
#ifndef FORTSTAT_MERGECMD_H
#define FORTSTAT_MERGECMD_H

#include <stddef.h>

#include "fortstat/report.h"

/*
 * fortstat --merge FILE...: read every file, then write the report to
 * `output` (NULL: standard output) and the flame graph to `svg` (or NULL),
 * each built in memory first and put in place whole (a temporary file
 * renamed), so that a failure leaves nothing half-written. Returns 0, or
 * EXIT_FS_ERROR after one line saying why.
 */
int merge_command(char *const *files, size_t n, const struct report_opts *opts, const char *output,
		  const char *svg);

#endif
