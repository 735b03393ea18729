// SPDX-License-Identifier: GPL-2.0-or-later
/* display.c - readable names of routines (demangled, Fortran) and the flags their names imply. */
#include "symtab_int.h"
#include "fortstat/util.h"

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * C++ names are demangled with libiberty's cplus_demangle when its header is
 * installed (Debian: libiberty-dev; link with -liberty). Without it, C++
 * display names are built from DWARF scopes (ns::Class::method), or stay
 * mangled when there is no DWARF. -DFS_NO_DEMANGLER forces the fallback.
 */
#if defined(__has_include) && !defined(FS_NO_DEMANGLER)
#if __has_include(<libiberty/demangle.h>)
#include <libiberty/demangle.h>
#define FS_HAVE_DEMANGLER 1
#endif
#endif

/* ---- name lists ---------------------------------------------------------- */

/* Toolchain and C-runtime glue that is not the program's own code. */
static const char *const helper_names[] = {
    "_start",
    "_init",
    "_fini",
    "frame_dummy",
    "register_tm_clones",
    "deregister_tm_clones",
    "__do_global_dtors_aux",
    "__do_global_ctors_aux",
    "__libc_csu_init",
    "__libc_csu_fini",
    "_dl_relocate_static_pie",
    "__stack_chk_fail_local",
    "_dl_start",
    "_dl_start_user",
    NULL,
};

/* Routines that return twice: their return address must never be rewritten. */
static const char *const returns_twice_names[] = {
    "setjmp",		"_setjmp", "__setjmp", "__sigsetjmp",  "sigsetjmp",
    "__libc_sigsetjmp", "vfork",   "__vfork",  "__libc_vfork", "getcontext",
    "__getcontext",	"savectx", NULL,
};

/* Routines that never return: entry-only timing. */
static const char *const noreturn_names[] = {
    "exit",
    "_exit",
    "_Exit",
    "quick_exit",
    "abort",
    "__libc_start_main",
    "__libc_start_call_main",
    "__stack_chk_fail",
    "__stack_chk_fail_local",
    "__assert_fail",
    "__assert_perror_fail",
    "__fortify_fail",
    "__chk_fail",
    "__libc_fatal",
    "pthread_exit",
    "__pthread_exit",
    "longjmp",
    "_longjmp",
    "siglongjmp",
    "__longjmp_chk",
    "__libc_longjmp",
    "__libc_siglongjmp",
    "err",
    "errx",
    "verr",
    "verrx",
    "_gfortran_stop_string",
    "_gfortran_error_stop_string",
    "_gfortran_stop_numeric",
    "_gfortran_error_stop_numeric",
    "_gfortran_runtime_error",
    "_gfortran_runtime_error_at",
    "_gfortran_os_error",
    "_gfortran_exit_i4",
    "_gfortran_exit_i8",
    "__cxa_throw",
    "__cxa_rethrow",
    "_Unwind_Resume",
    "__cxa_bad_cast",
    "__cxa_bad_typeid",
    "__cxa_throw_bad_array_new_length",
    "__cxa_pure_virtual",
    "__cxa_deleted_virtual",
    "_ZSt9terminatev",
    NULL,
};

static bool in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

/* ---- a string set (exports of the shared C libraries) --------------------- */

struct strset {
	char **slot;
	size_t cap; /* power of two */
	size_t n;
};

static size_t str_hash(const char *s)
{
	size_t h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	return h;
}

static bool strset_has(const struct strset *set, const char *s)
{
	size_t i;

	if (!set->cap)
		return false;
	for (i = str_hash(s) & (set->cap - 1); set->slot[i]; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slot[i], s) == 0)
			return true;
	return false;
}

static void strset_add(struct strset *set, const char *s)
{
	size_t i;

	if (2 * (set->n + 1) > set->cap) {
		struct strset big = {NULL, set->cap ? set->cap * 2 : 4096, 0};

		big.slot = xcalloc(big.cap, sizeof(*big.slot));
		for (i = 0; i < set->cap; i++) {
			if (set->slot[i]) {
				size_t j = str_hash(set->slot[i]) & (big.cap - 1);

				while (big.slot[j])
					j = (j + 1) & (big.cap - 1);
				big.slot[j] = set->slot[i];
				big.n++;
			}
		}
		free(set->slot);
		*set = big;
	}
	for (i = str_hash(s) & (set->cap - 1); set->slot[i]; i = (i + 1) & (set->cap - 1))
		if (strcmp(set->slot[i], s) == 0)
			return;
	set->slot[i] = xstrdup(s);
	set->n++;
}

/* Add the defined function names of a shared library's .dynsym. */
static void strset_add_exports(struct strset *set, const char *path)
{
	Elf_Scn *scn = NULL;
	Elf *elf;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	while (elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i, n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM)
			continue;
		n = section_entries(scn, &sh, sizeof(Elf64_Sym), &data);
		for (i = 1; i < n; i++) {
			GElf_Sym sym;
			const char *name;
			int type;

			if (!gelf_getsym(data, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
				continue;
			type = GELF_ST_TYPE(sym.st_info);
			if (type != STT_FUNC && type != STT_GNU_IFUNC)
				continue;
			name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (name && *name)
				strset_add(set, name);
		}
	}
	elf_end(elf);
	close(fd);
}

/*
 * Function names exported by the installed shared C, math, Fortran and C++
 * runtime libraries. Read once and kept for the life of the process.
 */
static const struct strset *shared_exports(void)
{
	static const char *const libs[] = {
	    "libc.so.6",	"libm.so.6", "libgfortran.so.5", "libstdc++.so.6", "libgcc_s.so.1",
	    "libquadmath.so.0", NULL,
	};
	static const char *const dirs[] = {
	    "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/usr/lib64", NULL,
	};
	static struct strset set;
	static bool done;
	size_t i, j;

	if (done)
		return &set;
	done = true;
	for (i = 0; libs[i]; i++) {
		for (j = 0; dirs[j]; j++) {
			char *p = xasprintf("%s/%s", dirs[j], libs[i]);
			bool ok = access(p, R_OK) == 0;

			if (ok)
				strset_add_exports(&set, p);
			free(p);
			if (ok)
				break;
		}
	}
	return &set;
}

/* ---- display names and flags --------------------------------------------- */

char *display_make(const char *name, const struct dw_def *def)
{
	const char *mod;

	if (starts_with(name, "_Z")) {
#ifdef FS_HAVE_DEMANGLER
		char *dm = cplus_demangle(name, DMGL_PARAMS | DMGL_ANSI);

		if (dm) {
			char *s = xstrdup(dm);

			free(dm);
			return s;
		}
#endif
		if (def && def->qualname)
			return xstrdup(def->qualname);
		return xstrdup(name);
	}
#ifdef FS_HAVE_DEMANGLER
	/* Rust's v0 mangling (-C symbol-mangling-version=v0); legacy is _ZN...E above. */
	if (starts_with(name, "_R")) {
		char *dm = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);

		if (dm) {
			char *s = xstrdup(dm);

			free(dm);
			return s;
		}
	}
#endif
	if (strcmp(name, "MAIN__") == 0)
		return xstrdup(name);
	/* gfortran module procedure: __mod_MOD_proc -> mod::proc */
	mod = strstr(name, "_MOD_");
	if (starts_with(name, "__") && mod && mod > name + 2 && mod[5])
		return xasprintf("%.*s::%s", (int)(mod - name - 2), name + 2, mod + 5);
	/* gfortran external procedure: foo_ -> foo (only where DWARF says Fortran). */
	if (def && dwinfo_is_fortran(def->lang) && ends_with(name, "_") && strlen(name) > 1)
		return xasprintf("%.*s", (int)strlen(name) - 1, name);
	return xstrdup(name);
}

static bool any_name(const struct routine *r, bool (*pred)(const char *))
{
	size_t i;

	for (i = 0; i < r->n_names; i++)
		if (pred(r->names[i]))
			return true;
	return false;
}

static bool is_helper_name(const char *s)
{
	return in_list(helper_names, s) || starts_with(s, "__x86.get_pc_thunk.");
}

bool display_is_returns_twice(const char *s)
{
	return in_list(returns_twice_names, s);
}

bool display_is_noreturn(const char *s)
{
	return in_list(noreturn_names, s);
}

/* The mainline: C's `main`, or Go's `main.main` (no C `main` there without cgo). */
static bool is_main_name(const char *s)
{
	return strcmp(s, "main") == 0 || strcmp(s, "main.main") == 0;
}

/* Names a compiler gives to a program's own code even though they start with '_'. */
static bool is_own_underscore_name(const char *s)
{
	return starts_with(s, "_Z") || strstr(s, "_MOD_") || strcmp(s, "MAIN__") == 0 ||
	       starts_with(s, "_GLOBAL__");
}

/*
 * Is this routine of a static executable linked in from a library?
 *
 * With DWARF: the program's own routines are those DWARF describes, or that
 * lie in a compile unit not written in assembler. Debian's static libraries
 * (libc.a, libm.a, libgcc.a, ...) carry no DWARF, so everything else is
 * library code. (Own objects built without -g are then taken as library.)
 *
 * Without DWARF, a routine is library code when
 *  - one of its names is a function exported by the installed shared libc,
 *    libm, libgfortran, libstdc++ or libgcc_s; or
 *  - its primary name starts with '_' (reserved for the implementation),
 *    except C++ mangled names, gfortran's module procedures and MAIN__,
 *    and static initialisers (_GLOBAL__sub_I_*); or
 *  - it is a local symbol whose STT_FILE ends in ".o": glibc and libgcc
 *    record the object name there, compilers record the source file name.
 */
static bool is_library(const struct routine *r, const struct rawsym *first, size_t n_raw,
		       const struct dwinfo *dw, bool has_dwarf)
{
	const struct strset *exp;
	size_t i;

	if (has_dwarf)
		return !dwinfo_find(dw, r->addr) && !dwinfo_in_compiled_cu(dw, r->addr);
	exp = shared_exports();
	for (i = 0; i < r->n_names; i++)
		if (strset_has(exp, r->names[i]))
			return true;
	if (r->names[0][0] == '_' && !is_own_underscore_name(r->names[0]))
		return true;
	for (i = 0; i < n_raw; i++)
		if (first[i].bind == STB_LOCAL && first[i].file && ends_with(first[i].file, ".o"))
			return true;
	return false;
}

/* See symtab_int.h. */
void display_classify(struct routine *r, const struct symtab *st, const struct rawsym *raw,
		      size_t n_raw, const struct dwinfo *dw, bool *have_main)
{
	if (!*have_main && any_name(r, is_main_name)) {
		r->flags |= RT_MAINLINE;
		*have_main = true;
	}
	if (any_name(r, is_helper_name))
		r->flags |= RT_HELPER;
	if (any_name(r, display_is_returns_twice))
		r->flags |= RT_RETURNS_TWICE;
	if (any_name(r, display_is_noreturn))
		r->flags |= RT_NORETURN;
	if (st->is_static && !(r->flags & RT_MAINLINE) &&
	    is_library(r, raw, n_raw, dw, st->has_dwarf))
		r->flags |= RT_LIBRARY;
}
