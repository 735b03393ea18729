/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * trust.h - when a report cannot be trusted, and the way forward: the
 * overhead removed larger than the program's time that is left, or most of
 * the program's time outside every timed routine (a stripped program: its
 * own code has no symbols). Pure: numbers and names in, one line out.
 */
#ifndef FORTSTAT_TRUST_H
#define FORTSTAT_TRUST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Below this much overhead removed, or unaccounted time in a program with
 * symbols of its own, a run is not warned about: the start-up of a short
 * run (the dynamic linker's, the C library's) is most of a millisecond's
 * program, and a few hundred stops cost more than it; neither misleads
 * anyone about a program worth profiling.
 */
#define TRUST_MIN_S 0.010

/* What one report says of its run (one section, on the clock shown). */
struct trust_facts {
	bool timed;	       /* times were kept (not -c) */
	bool correct;	       /* the overhead was removed (not --no-correct) */
	bool probes;	       /* the mechanism: in-process probes (false: the traps) */
	double total_s;	       /* the program's time shown (net of the overhead removed) */
	double unaccounted_s;  /* of it, the time outside every timed routine */
	double overhead_s;     /* the overhead removed (only estimated with --no-correct) */
	uint64_t calls;	       /* calls timed (counted with -c) */
	uint64_t trap_calls;   /* ... whose entries were ptrace stops */
	double trap_cost_s;    /* what those calls' stops cost */
	uint64_t not_followed; /* processes it started that were not followed (no -f) */
	bool stripped;	       /* the program has no symbol table of its own */
	const char *program;   /* the program as the hint's command names it */
	int pid;	       /* -p: the process attached to (0: launched) */
	char *const *needed;   /* its DT_NEEDED names (may be NULL) */
	size_t n_needed;
	const char *const *libs; /* the -l patterns given (may be NULL) */
	size_t n_libs;
};

/* The verdict. */
struct trust {
	double overhead_pct;	/* overhead_s as a percentage of total_s; NAN: no time */
	double unaccounted_pct; /* unaccounted_s as a percentage of total_s; NAN: no time */
	bool overhead_high;	/* the overhead removed is above 100 % of the program's time */
	bool unaccounted_high;	/* more than half of the program's time is unaccounted */
	bool nothing_counted;	/* -c: no call of a timed routine, and the program is stripped */
	char *warning;		/* the line to say after "fortstat: warning: ", or NULL */
};

/*
 * Judge facts f into *t (trust_free frees). Warned about, in one line with
 * the way forward: (a) the overhead removed above 100 % of the program's
 * time (timed, corrected runs; exactly 100 % is not), when it is at least
 * TRUST_MIN_S; (b) the unaccounted time above 50 % of it (exactly half is
 * not), when it is at least TRUST_MIN_S or the program is stripped; (c) with -c, a
 * stripped program none of whose timed routines was called. For a stripped
 * program the way forward is -l with its own libraries (DT_NEEDED, not the
 * system's), then the C library, leaving out those -l matches already.
 */
void trust_judge(const struct trust_facts *f, struct trust *t);
void trust_free(struct trust *t);

#endif
