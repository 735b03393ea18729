// SPDX-License-Identifier: GPL-2.0-or-later
/* mergecmd.c - the command fortstat --merge FILE...: read, build, then write whole. */
#include "fortstat/mergecmd.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/merge.h"
#include "fortstat/output.h"
#include "fortstat/profile.h"
#include "fortstat/util.h"

/* buf, whole, to path (a file replaced whole: output_replace) or to standard output. */
static int put_whole(const char *path, const char *buf, size_t len)
{
	bool renamed;

	if (!path)
		return output_write_whole(stdout, buf, len);
	return output_replace(path, buf, len, &renamed);
}

int merge_command(char *const *files, size_t n, const struct report_opts *opts, const char *output,
		  const char *svg)
{
	struct merge *m;
	struct profile *p = NULL;
	char *rep = NULL, *pic = NULL;
	size_t rep_len = 0, pic_len = 0;
	FILE *f;
	int err = 0, rc = EXIT_FS_ERROR;

	if (!n) {
		fs_error("--merge: no files given (fortstat --merge FILE...)");
		return EXIT_FS_ERROR;
	}
	m = merge_new();
	for (size_t i = 0; i < n; i++)
		if (merge_add_file(m, files[i]) < 0)
			goto out;
	/* the report model, as a run's: the merge's own state is no longer needed */
	p = merge_profile(m);
	merge_free(m);
	m = NULL;
	f = open_memstream(&rep, &rep_len);
	if (!f || (err = report_write(f, p, 0, opts)) < 0) {
		if (f)
			fclose(f);
		if (err != -ENODATA)
			fs_error("--merge: cannot build the report: %s",
				 strerror(f ? -err : errno));
		goto out;
	}
	fclose(f);
	if (svg) {
		f = open_memstream(&pic, &pic_len);
		if (!f || (err = report_write_svg(f, p, 0, opts)) < 0) {
			if (f)
				fclose(f);
			if (err != -ENODATA)
				fs_error("--merge: cannot build the flame graph: %s",
					 strerror(f ? -err : errno));
			goto out;
		}
		fclose(f);
	}
	/* Both are built: now they go out. */
	err = put_whole(output, rep, rep_len);
	if (err) {
		fs_error("%s: cannot write the report: %s", output ? output : "stdout",
			 strerror(-err));
		goto out;
	}
	if (svg && (err = put_whole(svg, pic, pic_len)) < 0) {
		fs_error("%s: cannot write the flame graph: %s", svg, strerror(-err));
		goto out;
	}
	rc = 0;
out:
	free(rep);
	free(pic);
	merge_free(m);
	profile_free(p);
	return rc;
}
