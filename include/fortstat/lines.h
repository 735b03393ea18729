/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * lines.h - where inside a routine (--sample, --lines): the kernel's samples
 * of the program's instruction pointer attributed to the timed routine whose
 * extent holds them and to a source line, pure (no ptrace, no ELF: the
 * tracer and the report hand in addresses, extents and a line table;
 * tests/check_lines feeds synthetic ones).
 *
 * The rule (FORTSTAT's folding, as far as an instruction pointer can say
 * it): a sample whose address lies in a timed routine's extent [lo, hi) is
 * that routine's, at the line the line table gives its address; any other
 * (untimed code: the C library, a routine not timed, fortstat's stubs) is
 * "outside" and divides nothing. A routine's lines are thus the lines of
 * its own code: the time it spends in untimed code it calls (which
 * FORTSTAT's rule folds into its self time) is not among them, and the
 * report says how many samples were outside.
 */
#ifndef FORTSTAT_LINES_H
#define FORTSTAT_LINES_H

#include <stddef.h>
#include <stdint.h>

/* A timed routine's code: [lo, hi), routine `routine` (an index of its symbol table). */
struct lines_extent {
	uint64_t lo, hi;
	uint32_t routine;
};

/*
 * A row of a line table: the code from addr up to the next row's addr is
 * source line `line` of file files[file]; line 0: no line (the end of a
 * sequence, a gap between compilation units).
 */
struct line_entry {
	uint64_t addr;
	uint32_t line;
	uint32_t file;
};

/* The line table of one image (owned). */
struct line_table {
	struct line_entry *e; /* sorted by addr */
	size_t n, cap;
	char **files; /* file names (owned) */
	size_t n_files, cap_files;
};

/* The offset of a hit in the untimed code its routine called (folded into it). */
#define LINES_CALLEES 0xffffffffu

/*
 * n samples at offset `off` of routine `routine`'s code (as the tracer
 * keeps them), or in untimed code it called (off LINES_CALLEES).
 */
struct lines_hit {
	uint32_t routine;
	uint64_t off;
	uint64_t n;
};

/* n samples at address addr (one image's addresses, as its extents and line table). */
struct lines_sample {
	uint64_t addr;
	uint64_t n;
};

/* Samples of one routine at one source line (line 0, file UINT32_MAX: not known). */
struct lines_count {
	uint32_t routine;
	uint32_t file; /* index in the line table's files, UINT32_MAX: none */
	uint32_t line;
	uint64_t n;
};

/*
 * Sort extents x[0..n) by lo (qsort) so that lines_extent_find can search
 * them. Overlapping extents are allowed: the one found is the one with the
 * greatest lo at or below the address, then checked against its hi.
 */
void lines_extents_sort(struct lines_extent *x, size_t n);

/* The index in x (sorted) of the extent holding addr, or -1. O(log n). */
long lines_extent_find(const struct lines_extent *x, size_t n, uint64_t addr);

/* Sort a line table's rows by address (stable on equal addresses: the last one wins). */
void line_table_sort(struct line_table *lt);

/* The row covering addr (its line may be 0), or NULL: before the first row. O(log n). */
const struct line_entry *line_table_find(const struct line_table *lt, uint64_t addr);

/* Add a row; file is an index given by line_table_file. */
void line_table_add(struct line_table *lt, uint64_t addr, uint32_t line, uint32_t file);

/* The index of file name `name` in lt's files, added when new (copied). O(files). */
uint32_t line_table_file(struct line_table *lt, const char *name);

void line_table_free(struct line_table *lt);

/*
 * Attribute samples s[0..ns) by the rule above: each to the extent of x
 * (sorted, nx) holding its address and to the line lt (may be NULL: no
 * lines) gives it. Returns the counts, one per (routine, file, line),
 * sorted by routine, then most samples first, then by line (malloc'ed,
 * *n_out of them; NULL when none); *outside (may be NULL) gets the
 * samples no extent holds.
 */
struct lines_count *lines_attribute(const struct lines_sample *s, size_t ns,
				    const struct lines_extent *x, size_t nx,
				    const struct line_table *lt, size_t *n_out, uint64_t *outside);

#endif
