/* SPDX-License-Identifier: GPL-2.0-or-later */
/* xml.h - private to src/report/: text in the SVG views (flame graphs, merged or not). */
#ifndef FORTSTAT_REPORT_XML_H
#define FORTSTAT_REPORT_XML_H

#include <stdio.h>

/* str escaped for XML character data and attribute values (control bytes as spaces). */
void xml_str(FILE *out, const char *str);

#endif
