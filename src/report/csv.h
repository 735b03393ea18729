/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * csv.h - private to src/report/: CSV quoting, for the CSV views (csv.c)
 * of a run and of a merge.
 */
#ifndef FORTSTAT_REPORT_CSV_H
#define FORTSTAT_REPORT_CSV_H

#include <stdio.h>

/* One CSV field (NULL: empty), quoted when it holds a comma, quote or line break. */
void csv_field(FILE *out, const char *s);

#endif
