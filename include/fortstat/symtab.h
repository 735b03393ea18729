/* SPDX-License-Identifier: GPL-2.0-or-later */
/* symtab.h - the routine table of an executable: ELF symbols, aliases, DWARF names and lines. */
#ifndef FORTSTAT_SYMTAB_H
#define FORTSTAT_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct names;
struct line_table;

/* Flags of a routine. */
enum {
	RT_MAINLINE = 1u << 0,	    /* the mainline: `main` */
	RT_HELPER = 1u << 1,	    /* toolchain / C-runtime helper (_start, frame_dummy, ...) */
	RT_LIBRARY = 1u << 2,	    /* linked in from a library (static executables) */
	RT_RETURNS_TWICE = 1u << 3, /* setjmp family, vfork, getcontext: never selected */
	RT_NORETURN = 1u << 4,	    /* exit, abort, __libc_start_main, ...: never rewrite return */
	RT_SELECTED = 1u << 5,	    /* chosen for timing by symtab_select */
	RT_IFUNC = 1u << 6,	    /* the target of an indirect function, named after it */
	RT_COUNTED = 1u << 7,	    /* probes: counted, not timed, from the start (calibration) */
	RT_ALLOC = 1u << 8,	    /* --alloc: an allocator (alloc.h), patched but never a row */
	RT_SIZED = 1u << 9,	    /* an RT_IFUNC target whose size is known (a vDSO symbol's) */
};

struct routine {
	uint64_t addr; /* st_value: link-time address (add the load bias for PIE) */
	uint64_t size; /* st_size */
	char **names;  /* every symbol name at this address, primary first (owned) */
	size_t n_names;
	char *display;	/* readable name: demangled C++, Fortran `foo`, `m::p`, `MAIN__` (owned) */
	char *file;	/* source file from DWARF, or NULL */
	int line;	/* source line from DWARF, or 0 */
	unsigned flags; /* RT_* */
	const char *module;    /* shared library it came from (-l), NULL for the program's own */
	uint64_t throttled_at; /* --throttle: its calls when it stopped being timed (0: never) */
	bool calls_lower;      /* ... and counted (its entry's int3 removed): calls a lower bound */
	bool throttle_carried; /* -f: counted from its first call, throttled in an earlier
				* exec of its file (throttled_at 0) */
};

/* A GNU indirect function (STT_GNU_IFUNC): its resolver picks the routine at run time. */
struct ifunc_sym {
	uint64_t resolver; /* link-time address of the resolver */
	char *name;	   /* the symbol's name (owned) */
};

/* A PLT stub of the executable: `name@plt` jumps through the GOT slot `got`. */
struct plt_stub {
	uint64_t jmp; /* link-time address of the stub's `jmp *got(%rip)` */
	uint64_t got; /* link-time address of its GOT slot */
	char *name;   /* the symbol it reaches (owned) */
};

struct symtab {
	char *path;	   /* file read (owned) */
	struct routine *r; /* sorted by addr, no two with the same addr */
	size_t n;
	uint64_t e_entry; /* ELF header entry point (link-time) */
	bool pie;	  /* ET_DYN: loaded at a bias */
	bool is_static;	  /* no PT_INTERP */
	bool has_symtab;  /* names came from .symtab (false: .dynsym only) */
	bool has_dwarf;
	bool parallel_runtime; /* uses OpenMP, TBB or Go (they size thread pools from the CPU mask)
				*/
	size_t
	    n_skipped_default; /* routines the default selection left out (set by symtab_select) */
	struct plt_stub *plt;  /* PLT stubs, from .plt/.plt.sec and .rela.plt */
	size_t n_plt;
	char *interp;  /* PT_INTERP: the dynamic linker's path, or NULL */
	char *soname;  /* DT_SONAME, or NULL */
	char **needed; /* DT_NEEDED: the libraries it names, in its order (owned) */
	size_t n_needed;
	struct ifunc_sym *ifuncs; /* indirect functions (not routines until resolved) */
	size_t n_ifuncs;
	size_t n_own;	/* r[0..n_own) are the file's own, sorted by addr; the
			 * rest were appended from libraries (symtab_append) */
	char **modules; /* names of the libraries appended (owned) */
	size_t n_modules;
};

/* Errors returned by symtab_load besides negative errnos. */
enum {
	SYMTAB_ENOTELF = -1000,	   /* not an ELF file */
	SYMTAB_ENOTX86_64 = -1001, /* an ELF, but not 64-bit x86-64 */
	SYMTAB_ETRUNC = -1002,	   /* ELF truncated or malformed */
	SYMTAB_ENOSYMS = -1003,	   /* no function symbols at all */
	SYMTAB_ENOTEXEC = -1004,   /* ELF, but not an executable (ET_REL, core...) */
	SYMTAB_EBADPHDR = -1005,   /* program headers the kernel cannot load */
	SYMTAB_EBADSHDR = -1006,   /* section headers that cannot be read (no symbols then) */
	SYMTAB_ENOINTERP = -1007,  /* its ELF interpreter (PT_INTERP) does not exist */
	SYMTAB_EBADENTRY = -1008,  /* its entry point lies in no executable segment */
};

/*
 * Read the routines of the executable at `path`: STT_FUNC symbols with a
 * non-zero size inside an executable section, from .symtab, else .dynsym.
 * Aliases are merged; `*.cold` fragments and STT_GNU_IFUNC symbols never
 * become routines. Names, files and lines come
 * from DWARF where present. Returns 0, a negative errno, or SYMTAB_E*.
 * The file is read as the kernel reads it: the ELF magic, e_machine
 * EM_X86_64 and e_type decide, whatever EI_CLASS, EI_DATA and EI_VERSION
 * say; loadable segments that the kernel would refuse to map are refused.
 * With SYMTAB_ENOSYMS (a stripped executable), SYMTAB_EBADSHDR (section
 * headers that cannot be read: no symbols) or SYMTAB_ENOINTERP *st still
 * holds what the image says of itself (path, interpreter, static or
 * not) and no routine: free it with symtab_free as after a success. After
 * any other error there is nothing to free.
 */
int symtab_load(const char *path, struct symtab *st);

/* A one-line reason for a symtab_load error (static string). */
const char *symtab_strerror(int err);

/*
 * Say in one line (fs_error) why the executable at `path` cannot be timed
 * after symtab_load returned `err`, naming the way in where there is one:
 * -l for a stripped dynamic executable, the missing interpreter's name.
 * `st` is what symtab_load left (may be NULL).
 */
void symtab_say_error(const char *path, const struct symtab *st, int err);

/*
 * Choose the routines to time, setting RT_SELECTED:
 *   default: the program's own routines (not RT_HELPER, not RT_LIBRARY);
 *   all: also helpers and library routines;
 *   names (may be NULL): only routines one of whose names or display name matches;
 *   exclude (may be NULL): never these;
 * the mainline always (unless excluded explicitly), RT_RETURNS_TWICE never.
 * Matching counts are recorded in the names entries. Returns the number selected.
 */
size_t symtab_select(struct symtab *st, struct names *names, struct names *exclude, bool all);

/*
 * For a shared library's table: add `name` as a routine at link-time address
 * `addr` (an indirect function's target), or as one more name of the routine
 * already there. Keeps the table sorted. Returns the routine.
 */
struct routine *symtab_add_routine(struct symtab *st, uint64_t addr, uint64_t size,
				   const char *name);

/*
 * --alloc: mark the allocators of st (malloc, free, operator new...: any
 * name alloc_fn_of knows) RT_ALLOC | RT_SELECTED, whatever -n and -x said:
 * they are patched to see their calls, and are not timed routines (their
 * time is their callers'). Returns how many.
 */
size_t symtab_select_alloc(struct symtab *st);

/*
 * Choose the routines of a shared library to time (RT_SELECTED): without
 * names, every routine that is not a runtime helper; with names, those
 * matched by a plain pattern or by a `LIB:NAME` pattern whose LIB matches one
 * of `mod_names` (NULL-terminated: soname, file names). Exclusions apply the
 * same way. Returns the number selected.
 */
size_t symtab_select_module(struct symtab *st, struct names *names, struct names *exclude,
			    const char *const *mod_names);

/*
 * Move the RT_SELECTED routines of library table `lib` to the end of `st`,
 * named `module` (their display becomes "module:name"); `lib` is freed.
 * Returns the index in st of the first one moved.
 */
size_t symtab_append(struct symtab *st, struct symtab *lib, const char *module);

/* Value of symbol `name` (.dynsym, then .symtab) of the ELF file at path: 0 or -errno/-ENOENT. */
int symtab_symbol(const char *path, const char *name, uint64_t *value);

/*
 * The size of the function (STT_FUNC, .dynsym then .symtab) that starts
 * `off` bytes into the ELF image image[0..len) read from a process's memory
 * (the vDSO, where an indirect function of libc may resolve: time); 0 when
 * none starts there or its size runs past the image. The image is
 * untrusted: libelf reads within it alone, every table counted by its
 * entries read.
 */
uint64_t symtab_image_func_size(const void *image, size_t len, uint64_t off);

/* The program's own routine containing `addr` (link-time), or NULL. O(log n). */
const struct routine *symtab_find(const struct symtab *st, uint64_t addr);

/*
 * The line table of the ELF file at `path` (DWARF .debug_line, libdw):
 * every row of every compilation unit, sorted (lines.h). Returns 0, or
 * -ENOENT when it has none, or -errno (lt is empty then, nothing to free).
 */
int symtab_line_table(const char *path, struct line_table *lt);

/* Index of the mainline routine, or -1. */
long symtab_mainline(const struct symtab *st);

/*
 * Copy table src into *dst (overwritten): every routine, name, PLT stub,
 * indirect function and string its own, so that either may be changed or
 * freed without the other (the table of a file exec'ed again under -f,
 * read once: plancache.c).
 */
void symtab_dup(const struct symtab *src, struct symtab *dst);

/*
 * Keep the routines that map keeps (map[i]: routine i's new index, in
 * order; UINT32_MAX: dropped, its names freed), n_new of them: a process
 * of -f that ended keeps the routines its books used (books_compact).
 * n_own becomes how many of the file's own are kept.
 */
void symtab_compact(struct symtab *st, const uint32_t *map, size_t n_new);

void symtab_free(struct symtab *st);

#endif
