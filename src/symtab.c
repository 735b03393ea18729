// SPDX-License-Identifier: GPL-2.0-or-later
/* symtab.c - the routine table of an executable: ELF symbols, aliases, DWARF names and lines. */
#include "fortstat/symtab.h"
#include "fortstat/names.h"
#include "fortstat/util.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	"_start", "_init", "_fini", "frame_dummy", "register_tm_clones",
	"deregister_tm_clones", "__do_global_dtors_aux", "__do_global_ctors_aux",
	"__libc_csu_init", "__libc_csu_fini", "_dl_relocate_static_pie",
	"__stack_chk_fail_local", "_dl_start", "_dl_start_user", NULL,
};

/* Routines that return twice: their return address must never be rewritten. */
static const char *const returns_twice_names[] = {
	"setjmp", "_setjmp", "__setjmp", "__sigsetjmp", "sigsetjmp",
	"__libc_sigsetjmp", "vfork", "__vfork", "__libc_vfork", "getcontext",
	"__getcontext", "savectx", NULL,
};

/* Routines that never return: entry-only timing. */
static const char *const noreturn_names[] = {
	"exit", "_exit", "_Exit", "quick_exit", "abort", "__libc_start_main",
	"__libc_start_call_main", "__stack_chk_fail", "__stack_chk_fail_local",
	"__assert_fail", "__assert_perror_fail", "__fortify_fail", "__chk_fail",
	"__libc_fatal", "pthread_exit", "__pthread_exit", "longjmp", "_longjmp",
	"siglongjmp", "__longjmp_chk", "__libc_longjmp", "__libc_siglongjmp",
	"err", "errx", "verr", "verrx",
	"_gfortran_stop_string", "_gfortran_error_stop_string",
	"_gfortran_stop_numeric", "_gfortran_error_stop_numeric",
	"_gfortran_runtime_error", "_gfortran_runtime_error_at",
	"_gfortran_os_error", "_gfortran_exit_i4", "_gfortran_exit_i8",
	"__cxa_throw", "__cxa_rethrow", "_Unwind_Resume", "__cxa_bad_cast",
	"__cxa_bad_typeid", "__cxa_throw_bad_array_new_length",
	"__cxa_pure_virtual", "__cxa_deleted_virtual", "_ZSt9terminatev", NULL,
};

static bool in_list(const char *const *list, const char *name)
{
	for (; *list; list++)
		if (strcmp(*list, name) == 0)
			return true;
	return false;
}

static bool starts_with(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && strcmp(s + n - m, suffix) == 0;
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
		struct strset big = { NULL, set->cap ? set->cap * 2 : 4096, 0 };

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

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
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
		"libc.so.6", "libm.so.6", "libgfortran.so.5", "libstdc++.so.6",
		"libgcc_s.so.1", "libquadmath.so.0", NULL,
	};
	static const char *const dirs[] = {
		"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64",
		"/usr/lib64", NULL,
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

/* ---- raw symbols ---------------------------------------------------------- */

struct rawsym {
	uint64_t addr;
	uint64_t size;
	const char *name; /* in the ELF string table */
	const char *file; /* STT_FILE in force for a local symbol, else NULL */
	unsigned char bind;
};

static int bind_rank(unsigned char bind)
{
	switch (bind) {
	case STB_GLOBAL:
	case STB_GNU_UNIQUE:
		return 0;
	case STB_WEAK:
		return 1;
	default:
		return 2;
	}
}

/* Sort by address, then the preferred primary name first. */
static int rawsym_cmp(const void *pa, const void *pb)
{
	const struct rawsym *a = pa, *b = pb;
	size_t la, lb;
	int ua, ub;

	if (a->addr != b->addr)
		return a->addr < b->addr ? -1 : 1;
	/* A name not starting with '_' reads best: `puts` over `_IO_puts`. */
	ua = a->name[0] == '_';
	ub = b->name[0] == '_';
	if (ua != ub)
		return ua - ub;
	if (bind_rank(a->bind) != bind_rank(b->bind))
		return bind_rank(a->bind) - bind_rank(b->bind);
	la = strlen(a->name);
	lb = strlen(b->name);
	if (la != lb)
		return la < lb ? -1 : 1;
	return strcmp(a->name, b->name);
}

static int u64_cmp(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	return a < b ? -1 : a > b;
}

/* ---- DWARF ---------------------------------------------------------------- */

struct dw_def {
	uint64_t addr;	 /* low_pc (or the start of one of its ranges) */
	Dwarf_Off off;	 /* the DIE of the definition */
	int lang;	 /* DW_LANG_* of its CU */
	char *file;	 /* owned */
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

struct dwinfo {
	struct dw_def *def;
	size_t n_def, cap_def;
	struct dw_decl *decl;
	size_t n_decl, cap_decl;
	struct dw_cu *cu;
	size_t n_cu, cap_cu;
};

#define GROW(arr, n, cap)                                                   \
	do {                                                                \
		if ((n) == (cap)) {                                         \
			(cap) = (cap) ? (cap) * 2 : 64;                     \
			(arr) = xrealloc((arr), (cap) * sizeof(*(arr)));    \
		}                                                           \
	} while (0)

static bool is_fortran(int lang)
{
	switch (lang) {
	case DW_LANG_Fortran77:
	case DW_LANG_Fortran90:
	case DW_LANG_Fortran95:
	case DW_LANG_Fortran03:
	case DW_LANG_Fortran08:
		return true;
	default:
		return false;
	}
}

static void dw_add_def(struct dwinfo *dw, uint64_t addr, Dwarf_Die *die, int lang)
{
	struct dw_def *d;
	const char *file;
	int line = 0;

	GROW(dw->def, dw->n_def, dw->cap_def);
	d = &dw->def[dw->n_def++];
	d->addr = addr;
	d->off = dwarf_dieoffset(die);
	d->lang = lang;
	file = dwarf_decl_file(die);
	d->file = file ? xstrdup(file) : NULL;
	if (dwarf_decl_line(die, &line) != 0)
		line = 0;
	d->line = line;
	d->qualname = NULL;
}

static void dw_walk(struct dwinfo *dw, Dwarf_Die *parent, const char *prefix, int lang, int depth)
{
	Dwarf_Die child;

	if (depth > 32 || dwarf_child(parent, &child) != 0)
		return;
	do {
		int tag = dwarf_tag(&child);
		const char *name = dwarf_diename(&child);
		char *inner;

		switch (tag) {
		case DW_TAG_subprogram: {
			Dwarf_Addr lo, base, start, end;
			ptrdiff_t off;

			if (name) {
				GROW(dw->decl, dw->n_decl, dw->cap_decl);
				dw->decl[dw->n_decl].off = dwarf_dieoffset(&child);
				dw->decl[dw->n_decl].qualname = xasprintf("%s%s", prefix, name);
				dw->n_decl++;
			}
			if (dwarf_lowpc(&child, &lo) == 0) {
				dw_add_def(dw, lo, &child, lang);
			} else {
				/* Hot/cold split functions carry DW_AT_ranges. */
				off = 0;
				while ((off = dwarf_ranges(&child, off, &base, &start, &end)) > 0)
					dw_add_def(dw, start, &child, lang);
			}
			/* Nested procedures (Fortran `contains`, GNU C). */
			inner = xasprintf("%s%s::", prefix, name ? name : "");
			dw_walk(dw, &child, inner, lang, depth + 1);
			free(inner);
			break;
		}
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			inner = xasprintf("%s%s::", prefix, name ? name : "(anonymous namespace)");
			dw_walk(dw, &child, inner, lang, depth + 1);
			free(inner);
			break;
		default:
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

static int dw_def_cmp(const void *pa, const void *pb)
{
	const struct dw_def *a = pa, *b = pb;

	return a->addr < b->addr ? -1 : a->addr > b->addr;
}

static int dw_decl_cmp(const void *pa, const void *pb)
{
	const struct dw_decl *a = pa, *b = pb;

	return a->off < b->off ? -1 : a->off > b->off;
}

/* Follow DW_AT_specification / DW_AT_abstract_origin to the declaration. */
static void dw_resolve_name(Dwarf *dbg, struct dwinfo *dw, struct dw_def *d)
{
	Dwarf_Die die, ref;
	struct dw_decl key, *hit;
	const char *name;
	int i;

	if (!dwarf_offdie(dbg, d->off, &die))
		return;
	for (i = 0; i < 8; i++) {
		Dwarf_Attribute a;

		if (!dwarf_attr(&die, DW_AT_specification, &a) &&
		    !dwarf_attr(&die, DW_AT_abstract_origin, &a))
			break;
		if (!dwarf_formref_die(&a, &ref))
			break;
		die = ref;
	}
	key.off = dwarf_dieoffset(&die);
	hit = bsearch(&key, dw->decl, dw->n_decl, sizeof(*dw->decl), dw_decl_cmp);
	if (hit) {
		d->qualname = xstrdup(hit->qualname);
		return;
	}
	name = dwarf_diename(&die);
	if (name)
		d->qualname = xstrdup(name);
}

/* Read the DWARF of @elf into @dw. Returns true if there is any. */
static bool dw_read(Elf *elf, struct dwinfo *dw)
{
	Dwarf *dbg = dwarf_begin_elf(elf, DWARF_C_READ, NULL);
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	size_t i, j;
	bool any = false;

	if (!dbg)
		return false;
	while (dwarf_get_units(dbg, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0) {
		Dwarf_Addr base, start, end;
		ptrdiff_t off = 0;
		int lang, tag = dwarf_tag(&cudie);

		if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit)
			continue;
		any = true;
		lang = dwarf_srclang(&cudie);
		while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
			GROW(dw->cu, dw->n_cu, dw->cap_cu);
			dw->cu[dw->n_cu].lo = start;
			dw->cu[dw->n_cu].hi = end;
			dw->cu[dw->n_cu].lang = lang;
			dw->n_cu++;
		}
		dw_walk(dw, &cudie, "", lang, 0);
	}
	qsort(dw->decl, dw->n_decl, sizeof(*dw->decl), dw_decl_cmp);
	for (i = 0; i < dw->n_def; i++)
		dw_resolve_name(dbg, dw, &dw->def[i]);
	qsort(dw->def, dw->n_def, sizeof(*dw->def), dw_def_cmp);
	/* Keep the first definition at each address. */
	for (i = j = 0; i < dw->n_def; i++) {
		if (j && dw->def[j - 1].addr == dw->def[i].addr) {
			free(dw->def[i].file);
			free(dw->def[i].qualname);
			continue;
		}
		dw->def[j++] = dw->def[i];
	}
	dw->n_def = j;
	dwarf_end(dbg);
	return any;
}

static const struct dw_def *dw_find(const struct dwinfo *dw, uint64_t addr)
{
	struct dw_def key = { .addr = addr };

	return bsearch(&key, dw->def, dw->n_def, sizeof(*dw->def), dw_def_cmp);
}

/* Does @addr lie in a compile unit written in a language other than assembler? */
static bool dw_in_compiled_cu(const struct dwinfo *dw, uint64_t addr)
{
	size_t i;

	for (i = 0; i < dw->n_cu; i++)
		if (addr >= dw->cu[i].lo && addr < dw->cu[i].hi &&
		    dw->cu[i].lang != DW_LANG_Mips_Assembler)
			return true;
	return false;
}

static void dw_free(struct dwinfo *dw)
{
	size_t i;

	for (i = 0; i < dw->n_def; i++) {
		free(dw->def[i].file);
		free(dw->def[i].qualname);
	}
	for (i = 0; i < dw->n_decl; i++)
		free(dw->decl[i].qualname);
	free(dw->def);
	free(dw->decl);
	free(dw->cu);
	memset(dw, 0, sizeof(*dw));
}

/* ---- display names and flags --------------------------------------------- */

static char *make_display(const char *name, const struct dw_def *def)
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
	if (strcmp(name, "MAIN__") == 0)
		return xstrdup(name);
	/* gfortran module procedure: __mod_MOD_proc -> mod::proc */
	mod = strstr(name, "_MOD_");
	if (starts_with(name, "__") && mod && mod > name + 2 && mod[5])
		return xasprintf("%.*s::%s", (int)(mod - name - 2), name + 2, mod + 5);
	/* gfortran external procedure: foo_ -> foo (only where DWARF says Fortran). */
	if (def && is_fortran(def->lang) && ends_with(name, "_") && strlen(name) > 1)
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

static bool is_returns_twice_name(const char *s)
{
	return in_list(returns_twice_names, s);
}

static bool is_noreturn_name(const char *s)
{
	return in_list(noreturn_names, s);
}

static bool is_main_name(const char *s)
{
	return strcmp(s, "main") == 0;
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
		return !dw_find(dw, r->addr) && !dw_in_compiled_cu(dw, r->addr);
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

/* ---- loading -------------------------------------------------------------- */

/* Check that every header and section lies inside the file. */
static int check_layout(Elf *elf, const GElf_Ehdr *eh, uint64_t fsize)
{
	Elf_Scn *scn = NULL;
	size_t shnum, shstrndx, phnum;

	if (eh->e_phnum && eh->e_phoff + (uint64_t)eh->e_phnum * eh->e_phentsize > fsize)
		return SYMTAB_ETRUNC;
	if (eh->e_shoff + (uint64_t)eh->e_shnum * eh->e_shentsize > fsize)
		return SYMTAB_ETRUNC;
	if (elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0 ||
	    elf_getphdrnum(elf, &phnum) != 0)
		return SYMTAB_ETRUNC;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return SYMTAB_ETRUNC;
		if (sh.sh_type != SHT_NOBITS && sh.sh_offset + sh.sh_size > fsize)
			return SYMTAB_ETRUNC;
	}
	return 0;
}

/*
 * Collect STT_FUNC symbols with a size, in an executable section, from the
 * symbol table section @scn into @raw; the addresses of STT_GNU_IFUNC
 * symbols go to @ifunc. Returns 0 or SYMTAB_ETRUNC.
 */
/* Symbol versions of .dynsym: to name symbols of a non-default version. */
struct verinfo {
	Elf_Data *versym; /* .gnu.version */
	Elf_Data *verdef; /* .gnu.version_d */
	size_t verdef_str;
	size_t n_verdef;
};

static void verinfo_init(Elf *elf, struct verinfo *vi)
{
	Elf_Scn *scn = NULL;

	memset(vi, 0, sizeof(*vi));
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_GNU_versym) {
			vi->versym = elf_getdata(scn, NULL);
		} else if (sh.sh_type == SHT_GNU_verdef) {
			vi->verdef = elf_getdata(scn, NULL);
			vi->verdef_str = sh.sh_link;
			vi->n_verdef = sh.sh_info;
		}
	}
}

/* The version of symbol i when it is hidden (`exp@GLIBC_2.2.5`), else NULL. */
static const char *hidden_version(Elf *elf, const struct verinfo *vi, size_t i)
{
	GElf_Versym vs;
	size_t off = 0;

	if (!vi->versym || !vi->verdef || !gelf_getversym(vi->versym, (int)i, &vs) ||
	    !(vs & 0x8000))
		return NULL;
	for (size_t k = 0; k < vi->n_verdef; k++) {
		GElf_Verdef vd;
		GElf_Verdaux va;

		if (!gelf_getverdef(vi->verdef, (int)off, &vd))
			break;
		if (vd.vd_ndx == (vs & 0x7fff) &&
		    gelf_getverdaux(vi->verdef, (int)(off + vd.vd_aux), &va))
			return elf_strptr(elf, vi->verdef_str, va.vda_name);
		if (!vd.vd_next)
			break;
		off += vd.vd_next;
	}
	return NULL;
}

struct strlist {
	char **v;
	size_t n, cap;
};

static const char *strlist_keep(struct strlist *l, char *s)
{
	GROW(l->v, l->n, l->cap);
	l->v[l->n++] = s;
	return s;
}

static void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

static int read_symbols(Elf *elf, Elf_Scn *scn, struct rawsym **raw, size_t *n_raw,
			uint64_t **ifunc, size_t *n_ifunc, struct symtab *st, struct strlist *own)
{
	size_t cap = 0, cap_if = 0, cap_ifn = 0, i, n, shnum;
	const char *file = NULL;
	struct verinfo vi;
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize || elf_getshdrnum(elf, &shnum) != 0)
		return SYMTAB_ETRUNC;
	data = elf_getdata(scn, NULL);
	if (!data)
		return SYMTAB_ETRUNC;
	memset(&vi, 0, sizeof(vi));
	if (sh.sh_type == SHT_DYNSYM)
		verinfo_init(elf, &vi);
	n = sh.sh_size / sh.sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			return SYMTAB_ETRUNC;
		type = GELF_ST_TYPE(sym.st_info);
		name = elf_strptr(elf, sh.sh_link, sym.st_name);
		if (type == STT_FILE) {
			file = name;
			continue;
		}
		if (name && *name && sym.st_shndx != SHN_UNDEF &&
		    (type == STT_FUNC || type == STT_GNU_IFUNC)) {
			const char *ver = hidden_version(elf, &vi, i);

			const char *dflt = strstr(name, "@@");

			if (ver)
				name = strlist_keep(own, xasprintf("%s@%s", name, ver));
			else if (dflt) /* .symtab spells the default version out: fs_old@@FS_2.0 */
				name = strlist_keep(own, xasprintf("%.*s", (int)(dflt - name), name));
		}
		if (type == STT_GNU_IFUNC) {
			GROW(*ifunc, *n_ifunc, cap_if);
			(*ifunc)[(*n_ifunc)++] = sym.st_value;
			if (name && *name && sym.st_shndx != SHN_UNDEF) {
				GROW(st->ifuncs, st->n_ifuncs, cap_ifn);
				st->ifuncs[st->n_ifuncs].resolver = sym.st_value;
				st->ifuncs[st->n_ifuncs].name = xstrdup(name);
				st->n_ifuncs++;
			}
			continue;
		}
		if (type != STT_FUNC || sym.st_size == 0 || !name || !*name)
			continue;
		if (sym.st_shndx == SHN_UNDEF || sym.st_shndx >= SHN_LORESERVE ||
		    sym.st_shndx >= shnum)
			continue;
		tscn = elf_getscn(elf, sym.st_shndx);
		if (!tscn || !gelf_getshdr(tscn, &tsh) || !(tsh.sh_flags & SHF_EXECINSTR))
			continue;
		/* GCC's hot/cold split fragments are entered by a jump: never routines. */
		if (strstr(name, ".cold"))
			continue;
		GROW(*raw, *n_raw, cap);
		(*raw)[*n_raw].addr = sym.st_value;
		(*raw)[*n_raw].size = sym.st_size;
		(*raw)[*n_raw].name = name;
		(*raw)[*n_raw].bind = GELF_ST_BIND(sym.st_info);
		(*raw)[*n_raw].file = GELF_ST_BIND(sym.st_info) == STB_LOCAL ? file : NULL;
		(*n_raw)++;
	}
	return 0;
}

/* Merge the sorted raw symbols into routines with names, display, file, line, flags. */
static void build_routines(struct symtab *st, struct rawsym *raw, size_t n_raw,
			   const uint64_t *ifunc, size_t n_ifunc, const struct dwinfo *dw)
{
	size_t i = 0, cap = 0;
	bool have_main = false;

	while (i < n_raw) {
		size_t j = i, k;
		struct routine *r;
		const struct dw_def *def;

		while (j < n_raw && raw[j].addr == raw[i].addr)
			j++;
		/* An IFUNC resolver shares its address with the IFUNC symbol. */
		if (bsearch(&raw[i].addr, ifunc, n_ifunc, sizeof(*ifunc), u64_cmp)) {
			i = j;
			continue;
		}
		GROW(st->r, st->n, cap);
		r = &st->r[st->n++];
		memset(r, 0, sizeof(*r));
		r->addr = raw[i].addr;
		r->names = xmalloc((j - i) * sizeof(*r->names));
		for (k = i; k < j; k++) {
			size_t m;
			bool dup = false;

			if (raw[k].size > r->size)
				r->size = raw[k].size;
			for (m = 0; m < r->n_names; m++)
				dup = dup || strcmp(r->names[m], raw[k].name) == 0;
			if (!dup)
				r->names[r->n_names++] = xstrdup(raw[k].name);
		}
		def = dw_find(dw, r->addr);
		r->display = make_display(r->names[0], def);
		if (def && def->file)
			r->file = xstrdup(def->file);
		r->line = def ? def->line : 0;

		if (!have_main && any_name(r, is_main_name)) {
			r->flags |= RT_MAINLINE;
			have_main = true;
		}
		if (any_name(r, is_helper_name))
			r->flags |= RT_HELPER;
		if (any_name(r, is_returns_twice_name))
			r->flags |= RT_RETURNS_TWICE;
		if (any_name(r, is_noreturn_name))
			r->flags |= RT_NORETURN;
		if (st->is_static && !(r->flags & RT_MAINLINE) &&
		    is_library(r, &raw[i], j - i, dw, st->has_dwarf))
			r->flags |= RT_LIBRARY;
		i = j;
	}
}

/*
 * Fill @st from the executable at @path (see symtab.h). On failure @st is
 * left empty and a negative errno or SYMTAB_E* is returned; nothing is printed.
 */
/*
 * Does the executable use a parallel runtime that sizes its thread pool from
 * the CPU affinity mask (OpenMP, TBB)? Looks at DT_NEEDED and at the names
 * of every symbol, defined or not, in .dynsym and .symtab.
 */
static bool uses_parallel_runtime(Elf *elf)
{
	static const char *const libs[] = {
		"libgomp", "libomp", "libiomp", "libtbb",
	};
	static const char *const syms[] = { "GOMP_", "__kmpc_", "omp_get_", "_ZN3tbb" };
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize)
			continue;
		data = elf_getdata(scn, NULL);
		if (!data)
			continue;
		n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			const char *name = NULL;

			if (sh.sh_type == SHT_DYNAMIC) {
				GElf_Dyn dyn;
				if (gelf_getdyn(data, (int)i, &dyn) && dyn.d_tag == DT_NEEDED)
					name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val);
				for (size_t k = 0; name && k < sizeof(libs) / sizeof(libs[0]); k++)
					if (starts_with(name, libs[k]))
						return true;
			} else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM) {
				GElf_Sym sym;
				if (gelf_getsym(data, (int)i, &sym))
					name = elf_strptr(elf, sh.sh_link, sym.st_name);
				for (size_t k = 0; name && k < sizeof(syms) / sizeof(syms[0]); k++)
					if (starts_with(name, syms[k]))
						return true;
			}
		}
	}
	return false;
}

/*
 * Read the PLT: for each stub in .plt and .plt.sec, find its `jmp
 * *disp(%rip)` (after an optional endbr64 and bnd prefix) and name it by the
 * .rela.plt entry whose GOT slot it jumps through.
 */
static void read_plt(Elf *elf, struct symtab *st)
{
	Elf_Scn *scn = NULL, *rela = NULL;
	size_t shstrndx, cap = 0;
	GElf_Shdr rsh;
	Elf_Data *rdata, *symdata;
	Elf_Scn *symscn;
	GElf_Shdr symsh;

	if (elf_getshdrstrndx(elf, &shstrndx) != 0)
		return;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			return;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && sh.sh_type == SHT_RELA && !strcmp(name, ".rela.plt"))
			rela = scn;
	}
	if (!rela || !gelf_getshdr(rela, &rsh) || !(rdata = elf_getdata(rela, NULL)))
		return;
	symscn = elf_getscn(elf, rsh.sh_link);
	if (!symscn || !gelf_getshdr(symscn, &symsh) || !(symdata = elf_getdata(symscn, NULL)))
		return;
	scn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		const char *name;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || (strcmp(name, ".plt") && strcmp(name, ".plt.sec")))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			continue;
		for (size_t off = 0; off + 16 <= d->d_size; off += 16) {
			const uint8_t *b = (const uint8_t *)d->d_buf + off;
			size_t k = 0, nrel = rsh.sh_entsize ? rsh.sh_size / rsh.sh_entsize : 0;
			int32_t disp;
			uint64_t jmp, got;

			if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
				k = 4;
			jmp = sh.sh_addr + off + k; /* the jmp starts here, bnd prefix included */
			if (b[k] == 0xf2)
				k++;
			if (b[k] != 0xff || b[k + 1] != 0x25)
				continue;
			memcpy(&disp, b + k + 2, sizeof(disp));
			got = sh.sh_addr + off + k + 6 + (uint64_t)(int64_t)disp;
			for (size_t i = 0; i < nrel; i++) {
				GElf_Rela r;
				GElf_Sym sym;
				const char *sname;

				if (!gelf_getrela(rdata, (int)i, &r) || r.r_offset != got)
					continue;
				if (!gelf_getsym(symdata, (int)GELF_R_SYM(r.r_info), &sym))
					break;
				sname = elf_strptr(elf, symsh.sh_link, sym.st_name);
				if (!sname || !*sname)
					break;
				if (st->n_plt == cap) {
					cap = cap ? cap * 2 : 32;
					st->plt = xrealloc(st->plt, cap * sizeof(*st->plt));
				}
				st->plt[st->n_plt].jmp = jmp;
				st->plt[st->n_plt].got = got;
				st->plt[st->n_plt].name = xstrdup(sname);
				st->n_plt++;
				break;
			}
		}
	}
}

/* DT_SONAME of a shared library, malloc'ed, or NULL. */
static char *read_soname(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC || !sh.sh_entsize)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Dyn dyn;
			const char *name;

			if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
				break;
			if (dyn.d_tag == DT_SONAME &&
			    (name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)) != NULL)
				return xstrdup(name);
		}
	}
	return NULL;
}

int symtab_load(const char *path, struct symtab *st)
{
	static bool elf_ready;
	struct rawsym *raw = NULL;
	uint64_t *ifunc = NULL;
	struct strlist own = { 0 };
	size_t n_raw = 0, n_ifunc = 0, i, phnum;
	struct dwinfo dw;
	Elf_Scn *scn = NULL, *symscn = NULL, *dynscn = NULL;
	struct stat sb;
	GElf_Ehdr eh;
	const char *ident;
	Elf *elf = NULL;
	int fd, rc = 0;

	memset(st, 0, sizeof(*st));
	memset(&dw, 0, sizeof(dw));
	if (!elf_ready) {
		if (elf_version(EV_CURRENT) == EV_NONE)
			return SYMTAB_ENOTELF;
		elf_ready = true;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &sb) < 0) {
		rc = -errno;
		goto out;
	}
	if (S_ISDIR(sb.st_mode)) {
		rc = -EISDIR;
		goto out;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		rc = SYMTAB_ENOTELF;
		goto out;
	}
	ident = elf_getident(elf, NULL);
	if (!ident) {
		rc = SYMTAB_ETRUNC;
		goto out;
	}
	if (ident[EI_CLASS] != ELFCLASS64) {
		rc = SYMTAB_ENOTX86_64;
		goto out;
	}
	if (!gelf_getehdr(elf, &eh)) {
		rc = SYMTAB_ETRUNC;
		goto out;
	}
	if (eh.e_machine != EM_X86_64) {
		rc = SYMTAB_ENOTX86_64;
		goto out;
	}
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) {
		rc = SYMTAB_ENOTEXEC;
		goto out;
	}
	rc = check_layout(elf, &eh, (uint64_t)sb.st_size);
	if (rc)
		goto out;

	st->path = xstrdup(path);
	st->e_entry = eh.e_entry;
	st->pie = eh.e_type == ET_DYN;
	st->is_static = true;
	if (elf_getphdrnum(elf, &phnum) != 0) {
		rc = SYMTAB_ETRUNC;
		goto out;
	}
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph)) {
			rc = SYMTAB_ETRUNC;
			goto out;
		}
		if (ph.p_type == PT_INTERP) {
			size_t len;
			const char *ip = elf_rawfile(elf, &len);

			st->is_static = false;
			if (ip && ph.p_offset < len && ph.p_filesz && ph.p_filesz <= len - ph.p_offset &&
			    !st->interp)
				st->interp = xasprintf("%.*s", (int)ph.p_filesz, ip + ph.p_offset);
		}
	}
	st->soname = read_soname(elf);

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh)) {
			rc = SYMTAB_ETRUNC;
			goto out;
		}
		if (sh.sh_type == SHT_SYMTAB && !symscn)
			symscn = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynscn)
			dynscn = scn;
	}
	st->has_symtab = symscn != NULL;
	if (!symscn)
		symscn = dynscn;
	if (!symscn) {
		rc = SYMTAB_ENOSYMS;
		goto out;
	}
	rc = read_symbols(elf, symscn, &raw, &n_raw, &ifunc, &n_ifunc, st, &own);
	if (rc)
		goto out;
	if (!n_raw) {
		rc = SYMTAB_ENOSYMS;
		goto out;
	}
	qsort(raw, n_raw, sizeof(*raw), rawsym_cmp);
	qsort(ifunc, n_ifunc, sizeof(*ifunc), u64_cmp);

	st->has_dwarf = dw_read(elf, &dw);
	st->parallel_runtime = uses_parallel_runtime(elf);
	read_plt(elf, st);
	build_routines(st, raw, n_raw, ifunc, n_ifunc, &dw);
	st->n_own = st->n;
	if (!st->n)
		rc = SYMTAB_ENOSYMS;
	fs_info(2, "%s: %zu routines from %s%s%s", path, st->n,
		st->has_symtab ? ".symtab" : ".dynsym", st->has_dwarf ? " with DWARF" : "",
		st->is_static ? " (static)" : "");
out:
	dw_free(&dw);
	strlist_free(&own);
	free(raw);
	free(ifunc);
	if (elf)
		elf_end(elf);
	close(fd);
	if (rc && rc != SYMTAB_ENOSYMS)
		symtab_free(st);
	return rc;
}

/* ---- queries -------------------------------------------------------------- */

/* A static one-line reason for a symtab_load() error (negative errnos too). */
const char *symtab_strerror(int err)
{
	switch (err) {
	case 0:
		return "success";
	case SYMTAB_ENOTELF:
		return "not an ELF file";
	case SYMTAB_ENOTX86_64:
		return "not an x86-64 ELF executable";
	case SYMTAB_ETRUNC:
		return "truncated or malformed ELF file";
	case SYMTAB_ENOSYMS:
		return "no function symbols (stripped?)";
	case SYMTAB_ENOTEXEC:
		return "not an executable (object file or core dump?)";
	default:
		return err < 0 ? strerror(-err) : "unknown error";
	}
}

/*
 * Does a pattern of @nm match one of the routine's names, its display name,
 * or the display name without blanks (names files lose their blanks)?
 * Each matching entry is counted once per routine.
 */
static bool match_routine_in(struct names *nm, const struct routine *r,
			     const char *const *mod_names);

static bool match_routine(struct names *nm, const struct routine *r)
{
	return match_routine_in(nm, r, NULL);
}

/* Does LIB (the first len bytes of a LIB:NAME pattern) match one of mod_names? */
static bool lib_matches(const char *pattern, size_t len, const char *const *mod_names)
{
	for (size_t i = 0; mod_names && mod_names[i]; i++)
		if (names_lib_match(pattern, len, mod_names[i]))
			return true;
	return false;
}

/*
 * As match_routine, for a routine of the library known as mod_names (NULL
 * for the program): a LIB:NAME pattern matches only there.
 */
static bool match_routine_in(struct names *nm, const struct routine *r,
			     const char *const *mod_names)
{
	char *squeezed, *q;
	const char *p;
	bool any = false;
	size_t e, i;

	if (!nm || !nm->n)
		return false;
	squeezed = xmalloc(strlen(r->display) + 1);
	for (p = r->display, q = squeezed; *p; p++)
		if (*p != ' ' && *p != '\t')
			*q++ = *p;
	*q = '\0';
	for (e = 0; e < nm->n; e++) {
		struct names one = { .path = nm->path, .v = &nm->v[e], .n = 1 };
		size_t qual = names_qualifier(nm->v[e].pattern);
		struct names_entry unq;
		bool hit;

		if (qual) {
			if (!lib_matches(nm->v[e].pattern, qual - 1, mod_names))
				continue;
			unq = nm->v[e];
			unq.pattern += qual;
			unq.is_glob = strpbrk(unq.pattern, "*?[") != NULL;
			one.v = &unq;
		}
		hit = names_test(&one, r->display) || names_test(&one, squeezed);

		for (i = 0; !hit && i < r->n_names; i++)
			hit = names_test(&one, r->names[i]);
		if (hit) {
			nm->v[e].matched++;
			any = true;
		}
	}
	free(squeezed);
	return any;
}

/*
 * Set RT_SELECTED on the routines to time (rules in symtab.h) and return how
 * many. A routine matches when a pattern matches any symbol name, the display
 * name, or the display name without blanks. Counts the default-skipped ones
 * in st->n_skipped_default and says so at -v.
 */
size_t symtab_select(struct symtab *st, struct names *names, struct names *exclude, bool all)
{
	size_t i, n_sel = 0, n_helper = 0, n_library = 0;

	st->n_skipped_default = 0;
	for (i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];
		bool excluded = match_routine(exclude, r);
		bool sel;

		r->flags &= ~RT_SELECTED;
		if (names)
			sel = match_routine(names, r) || (r->flags & RT_MAINLINE);
		else if (all || (r->flags & RT_MAINLINE))
			sel = true;
		else if (r->flags & (RT_HELPER | RT_LIBRARY)) {
			sel = false;
			st->n_skipped_default++;
			if (r->flags & RT_HELPER)
				n_helper++;
			else
				n_library++;
		} else
			sel = true;
		if (excluded || (r->flags & RT_RETURNS_TWICE))
			sel = false;
		if (sel) {
			r->flags |= RT_SELECTED;
			n_sel++;
		}
	}
	if (st->n_skipped_default)
		fs_info(1, "%zu routines not timed by default: %zu C-runtime helpers, %zu library routines",
			st->n_skipped_default, n_helper, n_library);
	return n_sel;
}

size_t symtab_select_module(struct symtab *st, struct names *names, struct names *exclude,
			    const char *const *mod_names)
{
	size_t n_sel = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];
		bool sel;

		/* In a library, main (if any) is not the mainline and nothing is "library". */
		r->flags &= ~(unsigned)(RT_SELECTED | RT_MAINLINE | RT_LIBRARY);
		if (names)
			sel = match_routine_in(names, r, mod_names);
		else
			sel = !(r->flags & RT_HELPER);
		if ((exclude && match_routine_in(exclude, r, mod_names)) ||
		    (r->flags & RT_RETURNS_TWICE))
			sel = false;
		if (sel) {
			r->flags |= RT_SELECTED;
			n_sel++;
		}
	}
	return n_sel;
}

void symtab_add_routine(struct symtab *st, uint64_t addr, uint64_t size, const char *name)
{
	size_t lo = 0, hi = st->n;
	struct routine *r;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->r[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->n && st->r[lo].addr == addr) {
		r = &st->r[lo];
		for (size_t k = 0; k < r->n_names; k++)
			if (!strcmp(r->names[k], name))
				return;
		r->names = xrealloc(r->names, (r->n_names + 1) * sizeof(*r->names));
		/*
		 * The indirect function's public name goes first: it is what
		 * callers call. Among several (sin, sinf32x, sinf64) the shortest.
		 */
		if ((r->flags & RT_IFUNC) && strlen(name) >= strlen(r->names[0])) {
			r->names[r->n_names++] = xstrdup(name);
			return;
		}
		memmove(r->names + 1, r->names, r->n_names * sizeof(*r->names));
		r->names[0] = xstrdup(name);
		r->n_names++;
		r->flags |= RT_IFUNC;
		free(r->display);
		r->display = make_display(name, NULL);
		return;
	}
	st->r = xrealloc(st->r, (st->n + 1) * sizeof(*st->r));
	memmove(&st->r[lo + 1], &st->r[lo], (st->n - lo) * sizeof(*st->r));
	st->n++;
	st->n_own = st->n;
	r = &st->r[lo];
	memset(r, 0, sizeof(*r));
	r->addr = addr;
	r->size = size;
	r->names = xmalloc(sizeof(*r->names));
	r->names[0] = xstrdup(name);
	r->n_names = 1;
	r->display = make_display(name, NULL);
	r->flags |= RT_IFUNC;
	if (is_noreturn_name(name))
		r->flags |= RT_NORETURN;
	if (is_returns_twice_name(name))
		r->flags |= RT_RETURNS_TWICE;
}

size_t symtab_append(struct symtab *st, struct symtab *lib, const char *module)
{
	size_t first = st->n, k = 0;
	char *mod;

	st->modules = xrealloc(st->modules, (st->n_modules + 1) * sizeof(*st->modules));
	mod = xstrdup(module);
	st->modules[st->n_modules++] = mod;
	for (size_t i = 0; i < lib->n; i++)
		k += (lib->r[i].flags & RT_SELECTED) != 0;
	st->r = xrealloc(st->r, (st->n + k + 1) * sizeof(*st->r));
	for (size_t i = 0; i < lib->n; i++) {
		struct routine *r = &lib->r[i];
		char *display;

		if (!(r->flags & RT_SELECTED))
			continue;
		display = xasprintf("%s:%s", mod, r->display ? r->display : r->names[0]);
		free(r->display);
		r->display = display;
		r->module = mod;
		st->r[st->n++] = *r;
		memset(r, 0, sizeof(*r)); /* moved */
	}
	symtab_free(lib);
	return first;
}

int symtab_symbol(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -ENOENT;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	for (int pass = 0; elf && pass < 2 && rc; pass++) {
		Elf_Scn *scn = NULL;

		while (rc && (scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) || !sh.sh_entsize ||
			    sh.sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			d = elf_getdata(scn, NULL);
			for (size_t i = 1; d && i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym sym;
				const char *s;

				if (!gelf_getsym(d, (int)i, &sym) || sym.st_shndx == SHN_UNDEF)
					continue;
				s = elf_strptr(elf, sh.sh_link, sym.st_name);
				if (s && !strcmp(s, name)) {
					*value = sym.st_value;
					rc = 0;
					break;
				}
			}
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

/* The routine whose [addr, addr + size) holds @addr (link-time), or NULL. */
const struct routine *symtab_find(const struct symtab *st, uint64_t addr)
{
	size_t lo = 0, hi = st->n_own;

	/* The last routine starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->r[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return NULL;
	if (addr - st->r[lo - 1].addr < st->r[lo - 1].size)
		return &st->r[lo - 1];
	return NULL;
}

/* Index of the RT_MAINLINE routine, or -1 (e.g. a stripped binary without `main`). */
long symtab_mainline(const struct symtab *st)
{
	size_t i;

	for (i = 0; i < st->n; i++)
		if (st->r[i].flags & RT_MAINLINE)
			return (long)i;
	return -1;
}

/* Free what @st owns and leave it empty; NULL and a second call are harmless. */
void symtab_free(struct symtab *st)
{
	size_t i, k;

	if (!st)
		return;
	for (i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];

		for (k = 0; k < r->n_names; k++)
			free(r->names[k]);
		free(r->names);
		free(r->display);
		free(r->file);
	}
	free(st->r);
	free(st->path);
	for (i = 0; i < st->n_plt; i++)
		free(st->plt[i].name);
	free(st->plt);
	for (i = 0; i < st->n_ifuncs; i++)
		free(st->ifuncs[i].name);
	free(st->ifuncs);
	for (i = 0; i < st->n_modules; i++)
		free(st->modules[i]);
	free(st->modules);
	free(st->interp);
	free(st->soname);
	memset(st, 0, sizeof(*st));
}
