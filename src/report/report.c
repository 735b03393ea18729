// SPDX-License-Identifier: GPL-2.0-or-later
/* report.c - the views' entry points (report.h): a section of a profile to the writer of a format.
 */
#include <errno.h>
#include <string.h>

#include "fortstat/profile.h"
#include "fortstat/report.h"
#include "fortstat/util.h"
#include "view.h"

/* Flush out and say how writing went: 0 or a negative errno. */
static int flushed(FILE *out)
{
	errno = 0;
	if (fflush(out) != 0 || ferror(out))
		return errno ? -errno : -EIO;
	return 0;
}

/* Section sec of a run's profile (or a merge's sums) in opts->format. */
static int write_section(FILE *out, const struct profile *p, size_t sec,
			 const struct report_opts *opts)
{
	struct report rp;

	if (opts->format == FMT_PPROF) /* binary, and one profile for several sections */
		return report_write_pprof(out, p, &sec, 1, opts);
	report_build(&rp, p, &p->sections[sec], &p->sections[sec].all, opts);
	switch (opts->format) {
	case FMT_CSV:
		write_csv(out, &rp);
		break;
	case FMT_JSON:
		write_json(out, &rp);
		break;
	case FMT_FOLDED:
		write_folded(out, &rp);
		break;
	case FMT_CALLGRIND:
		write_callgrind(out, &rp);
		break;
	case FMT_TABLE:
	default:
		write_table(out, &rp);
		break;
	}
	report_free(&rp);
	return flushed(out);
}

/*
 * A merge's view (profile.inputs): its own table, CSV and JSON of each
 * routine's spread over the inputs; the other views are a run's, of the
 * sums on the inputs' clock.
 */
static int write_merged(FILE *out, const struct profile *p, const struct report_opts *opts)
{
	struct report_opts o = *opts;
	struct mview m;

	mview_of(&m, p);
	o.clock = m.c;
	o.threads = false;
	o.zeros = true; /* every routine an input listed, called or not */
	switch (o.format) {
	case FMT_CSV:
		write_merged_csv(&m, out, &o);
		break;
	case FMT_JSON:
		write_merged_json(&m, out, &o);
		break;
	case FMT_TABLE:
		write_merged_table(&m, out, &o);
		break;
	default:
		if (m.no_stacks && (o.format == FMT_FOLDED || o.format == FMT_PPROF)) {
			fs_error("%s: an input has no \"stacks\" (a report of an older fortstat)",
				 o.format == FMT_FOLDED ? "folded stacks" : "pprof");
			return -ENODATA;
		}
		return write_section(out, p, 0, &o);
	}
	return flushed(out);
}

/* A merge's profile: one section, each routine's spread beside the sums. */
static bool is_merged(const struct profile *p)
{
	return p->n_inputs && p->n_sections == 1 && p->sections[0].merged;
}

int report_write(FILE *out, const struct profile *p, size_t sec, const struct report_opts *opts)
{
	if (!out || !p || !opts || sec >= p->n_sections || (p->n_inputs && !is_merged(p)))
		return -EINVAL;
	if (p->n_inputs)
		return write_merged(out, p, opts);
	return write_section(out, p, sec, opts);
}

int report_write_svg(FILE *out, const struct profile *p, size_t sec, const struct report_opts *opts)
{
	struct report rp;

	if (!out || !p || !opts || sec >= p->n_sections || (p->n_inputs && !is_merged(p)))
		return -EINVAL;
	if (p->n_inputs) {
		struct mview m;

		mview_of(&m, p);
		return write_merged_svg(&m, out);
	}
	report_build(&rp, p, &p->sections[sec], &p->sections[sec].all, opts);
	write_svg(out, &rp);
	report_free(&rp);
	return flushed(out);
}

/* "table", "csv", "json", "folded", "callgrind" or "pprof" into *f: 0, or -1 (untouched). */
int report_parse_format(const char *s, enum report_format *f)
{
	if (!s)
		return -1;
	if (!strcmp(s, "table"))
		*f = FMT_TABLE;
	else if (!strcmp(s, "csv"))
		*f = FMT_CSV;
	else if (!strcmp(s, "json"))
		*f = FMT_JSON;
	else if (!strcmp(s, "folded"))
		*f = FMT_FOLDED;
	else if (!strcmp(s, "callgrind"))
		*f = FMT_CALLGRIND;
	else if (!strcmp(s, "pprof"))
		*f = FMT_PPROF;
	else
		return -1;
	return 0;
}

/* "time", "calls", "name" or "wait" into *s_out: 0, or -1 (untouched) for anything else. */
int report_parse_sort(const char *s, enum report_sort *s_out)
{
	if (!s)
		return -1;
	if (!strcmp(s, "time"))
		*s_out = SORT_TIME;
	else if (!strcmp(s, "calls"))
		*s_out = SORT_CALLS;
	else if (!strcmp(s, "name"))
		*s_out = SORT_NAME;
	else if (!strcmp(s, "wait"))
		*s_out = SORT_WAIT;
	else
		return -1;
	return 0;
}
