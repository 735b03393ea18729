/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * output.h - where the reports go: stderr, the file of -o, or with "%p" in
 * its name one file a process (an image that exec'ed on appends to its
 * process's file).
 */
#ifndef FORTSTAT_OUTPUT_H
#define FORTSTAT_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct outputs {
	const char *pattern; /* -o FILE, or NULL: stderr */
	FILE *one;	     /* stderr without -o (NULL with -o: its files are replaced whole) */
	FILE **f;	     /* with %p: the files opened so far, and their names */
	char **name;
	size_t n;
	FILE *prev; /* where the last report went (NULL: none yet) */
};

/*
 * `fmt` with each %p replaced by pid, %r by the MPI rank (0 outside a job),
 * %h by the host name and each %% by % (rank_expand); other characters as
 * they are. Malloc'ed.
 */
char *output_expand(const char *fmt, int pid);

/*
 * Whether a report can be written to `name` later without touching it now:
 * a regular file (or one to be made) needs its directory writable, as
 * output_replace makes a new file there (or the file itself writable); a
 * device or a pipe is opened for writing and closed. Returns 0 or a negative errno.
 */
int output_check(const char *name);

/* Whether `name` is a terminal (a binary report must not go there). */
bool output_is_terminal(const char *name);

/*
 * Get ready to write reports to `pattern` (NULL: stderr). A name without
 * %p is expanded (%r, %h) and checked (output_check) at once, never
 * truncated: the reports replace it whole at the end (output_replace), so a
 * fortstat killed meanwhile leaves the previous report there. Returns 0, or
 * a negative errno after saying which file could not be written.
 */
int outputs_open(struct outputs *o, const char *pattern);

/*
 * The stream for the report of process pid, opened on first use with %p.
 * *again is set when the previous report went to the same stream (then a
 * blank line may separate them). Returns NULL after saying why the file
 * could not be opened.
 */
FILE *outputs_for(struct outputs *o, int pid, bool *again);

/*
 * Make the file `name` hold exactly buf[0..len) so that a reader sees either
 * the old text or the new one, never a mix: a new file beside it (the old
 * file's permissions, or 0666 less the umask), renamed over it (*renamed set); a symbolic link's
 * target is replaced. A name that is not a regular file (a terminal, a
 * pipe) gets the text written to it, and so does a writable file in a
 * directory where no new file can be made. Returns 0 or a negative errno.
 */
int output_replace(const char *name, const char *buf, size_t len, bool *renamed);

/*
 * Close every file (never stderr). Returns 0, or the negative errno of the
 * first that failed, after saying which.
 */
int outputs_close(struct outputs *o);

#endif
