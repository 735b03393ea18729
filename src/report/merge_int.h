/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * merge_int.h - the state of fortstat --merge while merge.c checks and
 * folds the reports in (its views are written from the report model it
 * then fills, merge_profile). Private to src/report/.
 */
#ifndef FORTSTAT_MERGE_INT_H
#define FORTSTAT_MERGE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>

#include "fortstat/clockkind.h"
#include "fortstat/jsonin.h"
#include "fortstat/map.h"
#include "fortstat/merge.h"
#include "view.h" /* hash_bytes */

#define NONE UINT32_MAX
#define MERGE_MAX_FILE ((off_t)1 << 32) /* a report larger than 4 GiB is not one */

/* One quantity over the inputs (a routine missing from an input is 0 there). */
struct mstat {
	double min, max, sum; /* over the inputs that have the routine */
	uint32_t imax;	      /* input of the max */
	uint32_t seen;	      /* inputs that have the routine */
	double cur;	      /* the current input's value (duplicate names add up) */
};

struct mroutine {
	char *name;
	char *file; /* source file of the first input that knew it, or NULL */
	int line;
	bool mainline;
	struct mstat calls, self, total;
	uint32_t touched; /* last input that had it, + 1 (0: none yet) */
};

struct marc {
	uint32_t caller, callee; /* routine indices; caller NONE: the root */
	uint64_t calls;
	double time_s, self_s;
};

struct mnode {
	uint32_t parent, routine; /* NONE for the root (node 0) */
	uint64_t calls;
	double self_s;
};

/* A routine's name and its length. */
struct mrname {
	const char *name;
	uint32_t len;
};

/* A cell of the name table: the hash, length and index at hand, the text one load away. */
struct mname {
	uint64_t hash;
	const char *name;  /* the routine's name, NULL: a free cell */
	uint32_t len, idx; /* its length, the routine's index */
};

/* A frame of the last calling context folded in: its name (in the input's text) and node. */
struct mframe {
	const char *name;
	uint32_t len, node;
};

struct minput {
	char *file;
	int rank; /* -1: not a rank */
};

struct merge {
	struct minput *in;
	size_t n_in;
	char *program; /* the first input's, " [pid N]" cut off */
	char *clock;
	bool count_only, mixed_count;
	bool no_stacks; /* an input had no "stacks" */
	struct mroutine *r;
	size_t n_r, cap_r;
	struct mrname *rn;   /* the routines' names, compact: checking a hint touches little */
	struct mname *names; /* the routines by name: open addressing, at most half full */
	size_t cap_names;    /* cells: a power of two, or 0 */
	struct marc *arcs;
	size_t n_arcs, cap_arcs;
	struct u64map arc_at; /* caller+1 << 32 | callee+1 -> arc index */
	struct mnode *nodes;
	size_t n_nodes;
	struct u64map child_at;			/* parent+1 << 32 | routine+1 -> node index */
	uint32_t *rt_hint, *arc_hint, *st_hint; /* what the last input had at each place */
	size_t n_rt_hint, n_arc_hint, n_st_hint;
	struct mframe *path; /* the last context of the current input */
	size_t n_path, cap_path;
	uint32_t *touched; /* routines of the current input */
	size_t n_touched;
	struct json_doc spare; /* the last text's document: its nodes are reused */
};

#endif
