// SPDX-License-Identifier: GPL-2.0-or-later
/* trust.c - when a report cannot be trusted (trust.h): the warning line and its way forward. */
#include "fortstat/trust.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/names.h"
#include "fortstat/util.h"

#define MAX_SUGGEST 8

/* s, then sep and more appended (s freed; more may be NULL: s unchanged). */
static char *join(char *s, const char *sep, const char *more)
{
	char *t;

	if (!more)
		return s;
	if (!s)
		return xstrdup(more);
	t = xasprintf("%s%s%s", s, sep, more);
	free(s);
	return t;
}

/* The program's name for people: its label without a " [pid N]" (malloc'ed, escaped). */
static char *program_name(const struct trust_facts *f)
{
	const char *p = f->program ? f->program : "PROGRAM";
	const char *cut = strstr(p, " [pid ");
	char *name = cut ? xasprintf("%.*s", (int)(cut - p), p) : xstrdup(p);
	char *esc = names_escape(name);

	free(name);
	return esc;
}

/* The way forward for a stripped program: -l with its own libraries, malloc'ed. */
static char *stripped_hint(const struct trust_facts *f)
{
	char *sugg[MAX_SUGGEST], *prog = program_name(f), *eg, *s, *plain;
	const char *arg = f->program ? f->program : "PROGRAM", *cut = strstr(arg, " [pid ");
	size_t n;

	n = names_suggest_libs(f->needed, f->n_needed, f->libs, f->n_libs, sugg, MAX_SUGGEST);
	if (!n) {
		s = xasprintf("%s has no symbol table of its own (stripped) and -l times every "
			      "library it names: its own code can be timed only in a build with "
			      "symbols",
			      prog);
		free(prog);
		return s;
	}
	plain = cut ? xasprintf("%.*s", (int)(cut - arg), arg) : xstrdup(arg);
	eg = names_lib_example(sugg, n, f->libs, f->n_libs, f->pid, plain);
	s = xasprintf("%s has no symbol table of its own (stripped): time its libraries' "
		      "routines with -l, %s",
		      prog, eg);
	for (size_t i = 0; i < n; i++)
		free(sugg[i]);
	free(eg);
	free(plain);
	free(prog);
	return s;
}

/*
 * The way forward when the program started processes that were not
 * followed (without -f): -f, with the -l given, malloc'ed.
 */
static char *follow_hint(const struct trust_facts *f)
{
	char *prog = program_name(f), *cmd = xstrdup("fortstat -f"), *s;

	for (size_t i = 0; f->libs && i < f->n_libs; i++) {
		char *lib = names_escape(f->libs[i] ? f->libs[i] : ""), *t;

		t = xasprintf("%s -l %s", cmd, lib);
		free(lib);
		free(cmd);
		cmd = t;
	}
	s = xasprintf("it started %" PRIu64 " process%s that fortstat did not follow (%s time "
		      "is in no report): -f follows them, e.g. %s %s",
		      f->not_followed, f->not_followed > 1 ? "es" : "",
		      f->not_followed > 1 ? "their" : "its", cmd, prog);
	free(cmd);
	free(prog);
	return s;
}

/* The way forward when the overhead removed is larger than what is left. */
static char *overhead_hint(const struct trust_facts *f)
{
	if (!f->probes)
		return xstrdup("every call is a ptrace stop with the traps: time fewer, longer "
			       "routines (-x the most called), or time with the in-process probes "
			       "(the default mechanism)");
	if (f->trap_calls && f->trap_cost_s * 2 > f->overhead_s)
		return xasprintf("%" PRIu64 " calls went through the traps (their routines' "
				 "entries took no probe; fortstat -vv names them): exclude those "
				 "routines with -x",
				 f->trap_calls);
	return xstrdup("the routines are too short for the probes' own cost: exclude the most "
		       "called with -x, or count them only with --throttle");
}

void trust_judge(const struct trust_facts *f, struct trust *t)
{
	bool has_time = f->timed && f->total_s > 0 && isfinite(f->total_s);
	char *what = NULL, *how = NULL;

	memset(t, 0, sizeof(*t));
	t->overhead_pct = has_time ? 100.0 * f->overhead_s / f->total_s : NAN;
	t->unaccounted_pct = has_time ? 100.0 * f->unaccounted_s / f->total_s : NAN;
	t->overhead_high =
	    has_time && f->correct && f->overhead_s > f->total_s && f->overhead_s >= TRUST_MIN_S;
	t->unaccounted_high = has_time && f->unaccounted_s * 2 > f->total_s &&
			      (f->stripped || f->unaccounted_s >= TRUST_MIN_S);
	t->nothing_counted = !f->timed && !f->calls && f->stripped;
	if (t->overhead_high) {
		char *s = xasprintf("the overhead removed is %.0f %% of the program's time (its "
				    "times are small differences of large estimates)",
				    t->overhead_pct);

		what = join(what, "; ", s);
		free(s);
		s = overhead_hint(f);
		how = join(how, "; ", s);
		free(s);
	}
	if (t->unaccounted_high || t->nothing_counted) {
		char *s = t->nothing_counted
			      ? xstrdup("no call of a timed routine was counted")
			      : xasprintf("%.1f %% of the program's time is unaccounted (outside "
					  "every timed routine)",
					  t->unaccounted_pct);

		what = join(what, "; ", s);
		free(s);
		if (f->not_followed && f->pid <= 0) { /* first: it may be most of the work */
			s = follow_hint(f);
			how = join(how, "; ", s);
			free(s);
		}
		if (f->stripped)
			s = stripped_hint(f);
		else if (f->pid > 0)
			s = xstrdup("the calls its threads were in at the attach are not timed "
				    "(active at attach), nor code outside every timed routine: -l "
				    "times a library's routines");
		else
			s = xstrdup("it ran before main, after it, or in threads that call no "
				    "timed routine: -l times a library's routines, --all the "
				    "start-up's");
		how = join(how, "; ", s);
		free(s);
	}
	if (what) {
		t->warning = xasprintf("%s: %s", what, how);
		free(what);
		free(how);
	}
}

void trust_free(struct trust *t)
{
	free(t->warning);
	t->warning = NULL;
}
