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
	int rank;   /* the MPI rank for %r (0 outside a job) */
};

/*
 * A report file name: `fmt` with each %r replaced by rank (the MPI rank, 0
 * outside a job), %p by pid, %h by host (NULL: gethostname(), "localhost"
 * when that fails) and each %% by %; any other % is kept as it is.
 * Returns a malloc'ed string (never NULL).
 */
char *output_expand(const char *fmt, int rank, int pid, const char *host);

/* True when fmt holds the conversion %conv ("%%conv" is a %% and a letter: no). */
bool output_fmt_has(const char *fmt, char conv);

/*
 * Write len bytes of buf to out at once: out is flushed, then the bytes go
 * with write(2) on its descriptor, repeated only for what a short write left
 * (a terminal or pipe takes a report of up to PIPE_BUF in one piece, a file
 * with O_APPEND any size): the ranks of an MPI job that share a terminal
 * never interleave. Returns 0 or a negative errno.
 */
int output_write_whole(FILE *out, const char *buf, size_t len);

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
 * Get ready to write reports to `pattern` (NULL: stderr), %r standing for
 * `rank` in its names (output_expand). A name without
 * %p is expanded (%r, %h) and checked (output_check) at once, never
 * truncated: the reports replace it whole at the end (output_replace), so a
 * fortstat killed meanwhile leaves the previous report there. Returns 0, or
 * a negative errno after saying which file could not be written.
 */
int outputs_open(struct outputs *o, const char *pattern, int rank);

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
