/* SPDX-License-Identifier: GPL-2.0-or-later */
/* symtab_int.h - what the modules of the ELF reader (src/elf/) share; not a public contract. */
#ifndef FORTSTAT_ELF_SYMTAB_INT_H
#define FORTSTAT_ELF_SYMTAB_INT_H

#include "fortstat/symtab.h"

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Grow array `arr` of `n` used and `cap` allocated elements so that one more fits. */
#define GROW(arr, n, cap)                                                                          \
	do {                                                                                       \
		if ((n) == (cap)) {                                                                \
			(cap) = (cap) ? (cap)*2 : 64;                                              \
			(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));                           \
		}                                                                                  \
	} while (0)

static inline bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static inline bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* qsort/bsearch comparison of two uint64_t. */
static inline int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* ---- symbols.c: the raw symbols of one symbol table ---- */

/*
 * The table of `entsize`-byte entries (the ELF type's size: Elf64_Sym,
 * Elf64_Dyn, Elf64_Rela, ...) that section `scn` (header *sh) holds: its
 * data in *data, and how many entries, as many as libelf read from the file
 * and no more. 0 entries and *data NULL when the section has no data in
 * the file (SHT_NOBITS: its sh_size is a size in memory, read from nowhere,
 * up to 2^64), when its data cannot be read, or when its sh_entsize says
 * another size. Every loop over a table of the file and every allocation
 * for one takes its count from here, never from sh_size / sh_entsize.
 */
size_t section_entries(Elf_Scn *scn, const GElf_Shdr *sh, size_t entsize, Elf_Data **data);

/* A function symbol as read, before aliases are merged into routines. */
struct rawsym {
	uint64_t addr;
	uint64_t size;
	const char *name; /* in the ELF string table, or in the strlist of names made up */
	const char *file; /* STT_FILE in force for a local symbol, else NULL */
	unsigned char bind;
};

/* Sort by address, then the preferred primary name first. */
int rawsym_cmp(const void *pa, const void *pb);

/* Strings made while reading (versioned names), owned until the table is built. */
struct strlist {
	char **v;
	size_t n, cap;
};

void strlist_free(struct strlist *l);

/*
 * Collect STT_FUNC symbols with a size, in an executable section, from the
 * symbol table section `scn` into *raw (malloc'ed, *n_raw of them); the
 * addresses of STT_GNU_IFUNC symbols go to *ifunc and the named ones to
 * st->ifuncs. Names that had to be made up are kept in `own`.
 * Returns 0 or SYMTAB_EBADSHDR (the table cannot be read).
 */
int symbols_read(Elf *elf, Elf_Scn *scn, struct rawsym **raw, size_t *n_raw, uint64_t **ifunc,
		 size_t *n_ifunc, struct symtab *st, struct strlist *own);

/* ---- dwarf.c: source names, files and lines ---- */

struct dw_def {
	uint64_t addr; /* low_pc (or the start of one of its ranges) */
	Dwarf_Off off; /* the DIE of the definition */
	int lang;      /* DW_LANG_* of its CU */
	char *file;    /* owned */
	int line;
	char *qualname; /* owned; scope-qualified source name, set after the walk */
};

struct dw_decl {
	Dwarf_Off off;
	char *qualname; /* owned */
};

struct dw_cu {
	uint64_t lo, hi;
	int lang;
};

/* The definitions of an ELF's DWARF, sorted by address, one per address. */
struct dwinfo {
	struct dw_def *def;
	size_t n_def, cap_def;
	struct dw_decl *decl;
	size_t n_decl, cap_decl;
	struct dw_cu *cu;
	size_t n_cu, cap_cu;
};

/* Read the DWARF of `elf` into `dw` (zeroed). Returns true if there is any. */
bool dwinfo_read(Elf *elf, struct dwinfo *dw);

/* The definition that starts at `addr`, or NULL. */
const struct dw_def *dwinfo_find(const struct dwinfo *dw, uint64_t addr);

/* Does `addr` lie in a compile unit written in a language other than assembler? */
bool dwinfo_in_compiled_cu(const struct dwinfo *dw, uint64_t addr);

/* Whether DW_LANG_* `lang` is a Fortran. */
bool dwinfo_is_fortran(int lang);

/* Free what `dw` owns and leave it empty. */
void dwinfo_free(struct dwinfo *dw);

/* ---- display.c: display names and the flags names imply ---- */

/*
 * The readable name of symbol `name` (malloc'ed): demangled C++, Fortran
 * `foo` for `foo_` where DWARF `def` (may be NULL) says Fortran, `m::p` for
 * gfortran's `__m_MOD_p`, else the name itself.
 */
char *display_make(const char *name, const struct dw_def *def);

/* Names of routines that return twice (setjmp, vfork, ...). */
bool display_is_returns_twice(const char *name);

/* Names of routines that never return (exit, abort, __cxa_throw, ...). */
bool display_is_noreturn(const char *name);

/*
 * Set r->flags from its names: RT_MAINLINE (the first `main`, *have_main
 * says whether one was seen), RT_HELPER, RT_RETURNS_TWICE, RT_NORETURN, and
 * RT_LIBRARY in a static executable (from DWARF `dw`, or from the raw
 * symbols raw[0..n_raw) the routine was built from).
 */
void display_classify(struct routine *r, const struct symtab *st, const struct rawsym *raw,
		      size_t n_raw, const struct dwinfo *dw, bool *have_main);

/* ---- dynamic.c: the dynamic section and the PLT ---- */

/* Does the ELF use a runtime that sizes thread pools from the CPU mask (OpenMP, TBB)? */
bool dynamic_parallel_runtime(Elf *elf);

/* Read the PLT stubs of .plt and .plt.sec, named by .rela.plt, into st->plt. */
void dynamic_read_plt(Elf *elf, struct symtab *st);

/* DT_SONAME, malloc'ed, or NULL. */
char *dynamic_soname(Elf *elf);

/* DT_NEEDED's names, in the file's order, into st->needed (n_needed). */
void dynamic_read_needed(Elf *elf, struct symtab *st);

#endif
