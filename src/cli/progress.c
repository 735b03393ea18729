// SPDX-License-Identifier: GPL-2.0-or-later
/* progress.c - the status line on standard error while the program runs. */
#include "fortstat/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#include "fortstat/util.h"

#define ERASE "\r\033[K" /* to the line's start, erase to its end */
#define SAVE "\0337"	 /* DECSC: the cursor's place and attributes */
#define RESTORE "\0338"	 /* DECRC */

/*
 * Into a file or a pipe the status line is drawn in place on the current
 * line (INLINE). On a terminal, whose cursor the program shares, it lives
 * on the terminal's last row, outside the scrolling region (DECSTBM) that
 * the program's output scrolls in (ROW): the program's lines can never
 * land on it, and it is never left inside them.
 */
static enum { UNDECIDED, INLINE, ROW } mode;
static bool shown;	    /* a status line is on the screen */
static unsigned short rows; /* ROW: the terminal's rows when its region was set, 0: none */

static void put(const char *s, size_t n)
{
	while (n) {
		ssize_t w = write(STDERR_FILENO, s, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		s += w;
		n -= (size_t)w;
	}
}

static const char *plural(uint64_t n)
{
	return n == 1 ? "" : "s";
}

size_t progress_format(char *buf, size_t size, const struct trace_progress *pg)
{
	uint64_t t = pg->elapsed_s > 0 ? (uint64_t)pg->elapsed_s : 0;
	char clock[32];
	int n;

	if (t >= 3600)
		snprintf(clock, sizeof(clock), "%" PRIu64 ":%02u:%02u", t / 3600,
			 (unsigned)(t / 60 % 60), (unsigned)(t % 60));
	else
		snprintf(clock, sizeof(clock), "%u:%02u", (unsigned)(t / 60), (unsigned)(t % 60));
	n = snprintf(buf, size,
		     "fortstat: %s, %" PRIu64 " call%s, %zu/%zu routines, %zu thread%s, "
		     "%zu process%s",
		     clock, pg->calls, plural(pg->calls), pg->routines_called, pg->routines_timed,
		     pg->threads, plural(pg->threads), pg->processes,
		     pg->processes == 1 ? "" : "es");
	if (n < 0)
		n = 0;
	return (size_t)n < size ? (size_t)n : size ? size - 1 : 0;
}

static void draw_inline(const struct trace_progress *pg)
{
	char line[256];
	struct winsize ws;
	size_t n, room = sizeof(line) - (sizeof(ERASE) - 1);

	/* Narrower than the terminal: a wrapped line could not be erased. */
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 && ws.ws_col < room)
		room = ws.ws_col; /* ws_col - 1 characters and the NUL */
	memcpy(line, ERASE, sizeof(ERASE) - 1);
	n = sizeof(ERASE) - 1;
	n += progress_format(line + n, room, pg);
	put(line, n);
	shown = true;
	fs_before_message = progress_erase;
}

/*
 * ROW: give the scrolling region back to the whole terminal and blank the
 * last row, the cursor left where the program's output had it (one write).
 */
static void row_release(void)
{
	char buf[64];
	int n = snprintf(buf, sizeof(buf), SAVE "\033[r\033[%u;1H\033[K" RESTORE, rows);

	put(buf, (size_t)n);
	rows = 0;
	shown = false;
}

/*
 * ROW: whether the status row may be drawn now: not on a terminal without
 * cursor addressing (TERM unset or dumb) or of fewer than 3 rows, and not
 * while the terminal is out of line mode, canonical input and echo (the
 * shell starts commands in it; an editor, a pager, a full-screen program
 * leave it at once: the screen, its regions and its last row are theirs;
 * a password prompt).
 */
static bool row_allowed(const struct winsize *ws)
{
	const char *term = getenv("TERM");
	struct termios now;

	if (!term || !*term || !strcmp(term, "dumb") || ws->ws_row < 3 || ws->ws_col < 2)
		return false;
	if (tcgetattr(STDERR_FILENO, &now) < 0)
		return false;
	return (now.c_lflag & (ICANON | ECHO)) == (ICANON | ECHO);
}

static void draw_row(const struct trace_progress *pg)
{
	char buf[384];
	struct winsize ws;
	size_t n = 0, room;

	/* In the background (the shell's terminal): nothing drawn, the row kept. */
	if (tcgetpgrp(STDERR_FILENO) != getpgrp())
		return;
	if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) < 0 || !row_allowed(&ws)) {
		/* The program's now: its screen is left as it is. */
		rows = 0;
		shown = false;
		return;
	}
	if (rows != ws.ws_row) {
		/*
		 * The region, rows 1 to ws_row - 1 (a resized terminal resets
		 * it): an index (IND: down one row, the screen scrolled when
		 * on the last; the column kept) frees the last row, and the
		 * cursor goes back up to the row it was on, which the index
		 * may have scrolled up by one. DECSTBM homes the cursor:
		 * saved and restored around it.
		 */
		n = (size_t)snprintf(buf, sizeof(buf), "\033D" SAVE "\033[1;%ur" RESTORE "\033[A",
				     (unsigned)ws.ws_row - 1);
		rows = ws.ws_row;
	}
	/* The last row, erased and written without its last column (no wrap), attributes plain. */
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, SAVE "\033[%u;1H\033[m\033[K", rows);
	room = sizeof(buf) - n - (sizeof(RESTORE) - 1);
	if (ws.ws_col < room)
		room = ws.ws_col; /* ws_col - 1 characters and the NUL */
	n += progress_format(buf + n, room, pg);
	memcpy(buf + n, RESTORE, sizeof(RESTORE) - 1);
	n += sizeof(RESTORE) - 1;
	put(buf, n); /* one write: the program's writes come before it or after it */
	shown = true;
}

void progress_draw(const struct trace_progress *pg)
{
	if (mode == UNDECIDED) {
		mode = INLINE;
		if (isatty(STDERR_FILENO)) {
			mode = ROW;
			/* fortstat's exit() on a fatal error gives the row back too */
			atexit(progress_erase);
		}
	}
	if (mode == ROW)
		draw_row(pg);
	else
		draw_inline(pg);
}

void progress_erase(void)
{
	if (!shown)
		return;
	fflush(stderr);
	if (mode == ROW) {
		row_release();
		return;
	}
	put(ERASE, sizeof(ERASE) - 1);
	shown = false;
}
