// SPDX-License-Identifier: GPL-2.0-or-later
/* progress.c - the status line on standard error while the program runs. */
#include "fortstat/progress.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "fortstat/util.h"

#define ERASE "\r\033[K" /* to the line's start, erase to its end */

static bool shown; /* a status line is on the screen */

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

void progress_draw(const struct trace_progress *pg)
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

void progress_erase(void)
{
	if (!shown)
		return;
	fflush(stderr);
	put(ERASE, sizeof(ERASE) - 1);
	shown = false;
}
