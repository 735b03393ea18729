// SPDX-License-Identifier: GPL-2.0-or-later
/* check_symtab.c - Check suite for the symtab module, on the ELF fixtures of fixtures/elf. */
#include "fortstat/names.h"
#include "fortstat/symtab.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#ifndef BUILDDIR
#error "BUILDDIR must name the build directory"
#endif

#if defined(__has_include) && !defined(FS_NO_DEMANGLER)
#if __has_include(<libiberty/demangle.h>)
#define HAVE_DEMANGLER 1
#endif
#endif

#define FIXTURE(name) BUILDDIR "/fixtures/elf/bin/" name

static void load_ok(const char *path, struct symtab *st)
{
	int rc = symtab_load(path, st);

	ck_assert_msg(rc == 0, "%s: %s (%d)", path, symtab_strerror(rc), rc);
	ck_assert_uint_gt(st->n, 0);
}

/* The routine one of whose symbol names is @name, or NULL. */
static const struct routine *by_name(const struct symtab *st, const char *name)
{
	size_t i, k;

	for (i = 0; i < st->n; i++)
		for (k = 0; k < st->r[i].n_names; k++)
			if (strcmp(st->r[i].names[k], name) == 0)
				return &st->r[i];
	return NULL;
}

static const struct routine *must(const struct symtab *st, const char *name)
{
	const struct routine *r = by_name(st, name);

	ck_assert_msg(r != NULL, "%s: no routine %s", st->path, name);
	return r;
}

static const char *base(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

static void assert_src(const struct routine *r, const char *file, int line)
{
	ck_assert_msg(r->file != NULL, "%s: no source file", r->names[0]);
	ck_assert_str_eq(base(r->file), file);
	ck_assert_int_eq(r->line, line);
}

static void parse_names(const char *s, struct names *nm)
{
	ck_assert_int_eq(names_parse(s, strlen(s), NULL, nm), 0);
}

/* Does the raw ELF symbol table of @path hold @name? (checks a fixture is meaningful) */
static bool elf_has_symbol(const char *path, const char *name)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	Elf *elf;
	int fd;

	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY);
	ck_assert_int_ge(fd, 0);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	ck_assert_ptr_nonnull(elf);
	while (!found && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		size_t i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		data = elf_getdata(scn, NULL);
		for (i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym sym;
			const char *s;

			if (!gelf_getsym(data, (int)i, &sym))
				continue;
			s = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (s && strcmp(s, name) == 0)
				found = true;
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

static const char *const good_fixtures[] = {
    "c_pie",   "c_nopie", "c_static", "c_static_nodebug", "c_stripped", "c_cold",
    "fortran", "cxx",	  NULL,
};

START_TEST(test_every_fixture_loads)
{
	size_t i, k;

	for (i = 0; good_fixtures[i]; i++) {
		char path[4096];
		struct symtab st;

		snprintf(path, sizeof(path), FIXTURE("%s"), good_fixtures[i]);
		load_ok(path, &st);
		ck_assert_str_eq(st.path, path);
		ck_assert_int_ge(symtab_mainline(&st), 0);
		ck_assert_str_eq(st.r[symtab_mainline(&st)].names[0], "main");
		for (k = 0; k < st.n; k++) {
			const struct routine *r = &st.r[k];

			ck_assert_uint_gt(r->size, 0);
			ck_assert_uint_ge(r->n_names, 1);
			ck_assert_ptr_nonnull(r->display);
			if (k)
				ck_assert_uint_gt(r->addr, st.r[k - 1].addr);
			/* Exactly one mainline. */
			if (k != (size_t)symtab_mainline(&st))
				ck_assert(!(r->flags & RT_MAINLINE));
		}
		symtab_free(&st);
		ck_assert_uint_eq(st.n, 0);
		symtab_free(&st); /* twice is harmless */
	}
}
END_TEST

START_TEST(test_kinds)
{
	struct symtab st;

	load_ok(FIXTURE("c_pie"), &st);
	ck_assert(st.pie && !st.is_static && st.has_symtab && st.has_dwarf);
	ck_assert_ptr_eq(symtab_find(&st, st.e_entry), must(&st, "_start"));
	symtab_free(&st);

	load_ok(FIXTURE("c_nopie"), &st);
	ck_assert(!st.pie && !st.is_static && st.has_symtab && st.has_dwarf);
	ck_assert_uint_ge(st.e_entry, 0x400000);
	ck_assert_ptr_eq(symtab_find(&st, st.e_entry), must(&st, "_start"));
	symtab_free(&st);

	load_ok(FIXTURE("c_static"), &st);
	ck_assert(!st.pie && st.is_static && st.has_symtab && st.has_dwarf);
	symtab_free(&st);

	load_ok(FIXTURE("c_static_nodebug"), &st);
	ck_assert(!st.pie && st.is_static && st.has_symtab && !st.has_dwarf);
	symtab_free(&st);
}
END_TEST

START_TEST(test_c_routines)
{
	const struct routine *r;
	struct symtab st;

	load_ok(FIXTURE("c_pie"), &st);
	assert_src(must(&st, "fs_alpha"), "prog.c", 10);
	assert_src(must(&st, "fs_beta"), "prog.c", 17);
	assert_src(must(&st, "fs_jumper"), "prog.c", 22);
	r = must(&st, "main");
	assert_src(r, "prog.c", 28);
	ck_assert(r->flags & RT_MAINLINE);
	ck_assert_ptr_eq(&st.r[symtab_mainline(&st)], r);
	ck_assert_str_eq(r->display, "main");
	ck_assert(must(&st, "_start")->flags & RT_HELPER);
	ck_assert(!(must(&st, "fs_beta")->flags & (RT_HELPER | RT_LIBRARY)));
	/* Dynamic executables hold no library code. */
	for (size_t i = 0; i < st.n; i++)
		ck_assert(!(st.r[i].flags & RT_LIBRARY));
	symtab_free(&st);
}
END_TEST

START_TEST(test_aliases_merged)
{
	const struct routine *r;
	struct symtab st;

	load_ok(FIXTURE("c_nopie"), &st);
	r = must(&st, "fs_alpha");
	ck_assert_ptr_eq(must(&st, "fs_alpha_alias"), r);
	ck_assert_uint_eq(r->n_names, 2);
	ck_assert_str_eq(r->names[0], "fs_alpha");
	ck_assert_str_eq(r->names[1], "fs_alpha_alias");
	ck_assert_str_eq(r->display, "fs_alpha");
	symtab_free(&st);

	load_ok(FIXTURE("cxx"), &st);
	r = must(&st, "_ZN6shapes6CircleC1Ed");
	ck_assert_ptr_eq(must(&st, "_ZN6shapes6CircleC2Ed"), r);
	ck_assert_uint_eq(r->n_names, 2);
	ck_assert_str_eq(r->names[0], "_ZN6shapes6CircleC1Ed");
	r = must(&st, "_ZN6shapes6CircleD1Ev");
	ck_assert_ptr_eq(must(&st, "_ZN6shapes6CircleD2Ev"), r);
	ck_assert_uint_eq(r->n_names, 2);
	symtab_free(&st);
}
END_TEST

START_TEST(test_cold_fragments_skipped)
{
	struct symtab st;
	size_t i, k;

	/* The fixture must really have a cold fragment. */
	ck_assert(elf_has_symbol(FIXTURE("c_cold"), "fs_hot.cold"));
	load_ok(FIXTURE("c_cold"), &st);
	assert_src(must(&st, "fs_hot"), "cold.c", 11);
	must(&st, "fs_report");
	for (i = 0; i < st.n; i++)
		for (k = 0; k < st.r[i].n_names; k++)
			ck_assert_ptr_null(strstr(st.r[i].names[k], ".cold"));
	symtab_free(&st);

	/* Static glibc has plenty of them too (e.g. _IO_fputs.cold). */
	load_ok(FIXTURE("c_static"), &st);
	for (i = 0; i < st.n; i++)
		for (k = 0; k < st.r[i].n_names; k++)
			ck_assert_ptr_null(strstr(st.r[i].names[k], ".cold"));
	symtab_free(&st);
}
END_TEST

START_TEST(test_stripped_uses_dynsym)
{
	struct symtab st;

	load_ok(FIXTURE("c_stripped"), &st);
	ck_assert(!st.has_symtab);
	ck_assert(!st.has_dwarf);
	ck_assert(st.pie);
	must(&st, "fs_exported_one");
	must(&st, "fs_exported_two");
	ck_assert(must(&st, "main")->flags & RT_MAINLINE);
	ck_assert_ptr_null(must(&st, "fs_exported_one")->file);
	symtab_free(&st);
}
END_TEST

START_TEST(test_fortran)
{
	const struct routine *r;
	struct symtab st;

	load_ok(FIXTURE("fortran"), &st);
	r = must(&st, "foo_");
	ck_assert_str_eq(r->display, "foo");
	assert_src(r, "fort.f90", 17);
	r = must(&st, "twice_");
	ck_assert_str_eq(r->display, "twice");
	assert_src(r, "fort.f90", 25);
	r = must(&st, "__mymod_MOD_bar");
	ck_assert_str_eq(r->display, "mymod::bar");
	assert_src(r, "fort.f90", 6);
	r = must(&st, "__mymod_MOD_baz");
	ck_assert_str_eq(r->display, "mymod::baz");
	assert_src(r, "fort.f90", 11);
	r = must(&st, "MAIN__");
	ck_assert_str_eq(r->display, "MAIN__");
	assert_src(r, "fort.f90", 31);
	ck_assert(!(r->flags & RT_MAINLINE));
	ck_assert(must(&st, "main")->flags & RT_MAINLINE);
	symtab_free(&st);
}
END_TEST

START_TEST(test_cxx_names)
{
	const struct routine *r;
	struct symtab st;

	load_ok(FIXTURE("cxx"), &st);
	r = must(&st, "_ZN6shapes6CircleC2Ed");
	assert_src(r, "cxx.cpp", 17);
	ck_assert_msg(strncmp(r->display, "shapes::Circle::Circle", 22) == 0, "%s", r->display);
	r = must(&st, "_ZN6shapes6CircleD2Ev");
	assert_src(r, "cxx.cpp", 22);
	ck_assert_msg(strncmp(r->display, "shapes::Circle::~Circle", 23) == 0, "%s", r->display);
	r = must(&st, "_ZNK6shapes6Circle4areaEv");
	assert_src(r, "cxx.cpp", 27);
	ck_assert_msg(strncmp(r->display, "shapes::Circle::area", 20) == 0, "%s", r->display);
	r = must(&st, "_ZN6shapes5twiceIiEET_S1_");
	assert_src(r, "cxx.cpp", 32);
	ck_assert_msg(strstr(r->display, "shapes::twice<int>") != NULL, "%s", r->display);
#ifdef HAVE_DEMANGLER
	ck_assert_str_eq(must(&st, "_ZN6shapes6CircleC1Ed")->display,
			 "shapes::Circle::Circle(double)");
	ck_assert_str_eq(must(&st, "_ZN6shapes6CircleD1Ev")->display, "shapes::Circle::~Circle()");
	ck_assert_str_eq(must(&st, "_ZNK6shapes6Circle4areaEv")->display,
			 "shapes::Circle::area() const");
#endif
	symtab_free(&st);
}
END_TEST

/* Default selection of a static executable: the program's own routines only. */
static void check_static_default(const char *path)
{
	static const char *const lib[] = {
	    "printf", "malloc", "free", "puts", "exit", "__libc_start_main", "abort", NULL};
	static const char *const own[] = {"fs_alpha", "fs_beta", "fs_jumper", "main", NULL};
	struct symtab st;
	size_t i, n;

	load_ok(path, &st);
	n = symtab_select(&st, NULL, NULL, false);
	for (i = 0; own[i]; i++)
		ck_assert_msg(must(&st, own[i])->flags & RT_SELECTED, "%s: %s", path, own[i]);
	for (i = 0; lib[i]; i++) {
		const struct routine *r = by_name(&st, lib[i]);

		if (!r)
			continue;
		ck_assert_msg(!(r->flags & RT_SELECTED), "%s: %s selected", path, lib[i]);
		ck_assert_msg(r->flags & RT_LIBRARY, "%s: %s not library", path, lib[i]);
	}
	must(&st, "printf");
	must(&st, "malloc");
	/* memcpy is an IFUNC in static glibc: its implementations are library code. */
	ck_assert_ptr_null(by_name(&st, "memcpy"));
	if (by_name(&st, "__memcpy_avx_unaligned_erms"))
		ck_assert(!(by_name(&st, "__memcpy_avx_unaligned_erms")->flags & RT_SELECTED));
	ck_assert_msg(n == 4, "%s: %zu selected", path, n);
	ck_assert_uint_gt(st.n_skipped_default, 100);
	ck_assert_uint_eq(st.n_skipped_default + n, st.n);
	ck_assert(must(&st, "exit")->flags & RT_NORETURN);
	ck_assert(must(&st, "abort")->flags & RT_NORETURN);
	symtab_free(&st);
}

START_TEST(test_static_debug_default)
{
	check_static_default(FIXTURE("c_static"));
}
END_TEST

START_TEST(test_static_nodebug_default)
{
	check_static_default(FIXTURE("c_static_nodebug"));
}
END_TEST

START_TEST(test_setjmp_never_selected)
{
	struct names nm;
	struct symtab st;
	size_t n;

	load_ok(FIXTURE("c_static"), &st);
	n = symtab_select(&st, NULL, NULL, true);
	ck_assert_uint_eq(n, st.n - 2);
	ck_assert(must(&st, "_setjmp")->flags & RT_RETURNS_TWICE);
	ck_assert(must(&st, "__sigsetjmp")->flags & RT_RETURNS_TWICE);
	ck_assert(!(must(&st, "_setjmp")->flags & RT_SELECTED));
	ck_assert(!(must(&st, "__sigsetjmp")->flags & RT_SELECTED));
	ck_assert(must(&st, "printf")->flags & RT_SELECTED);

	parse_names("*setjmp*\nfs_jumper\n", &nm);
	n = symtab_select(&st, &nm, NULL, false);
	ck_assert_uint_eq(n, 2); /* fs_jumper + main */
	ck_assert(!(must(&st, "_setjmp")->flags & RT_SELECTED));
	ck_assert(must(&st, "fs_jumper")->flags & RT_SELECTED);
	ck_assert_uint_eq(nm.v[0].matched, 2);
	names_free(&nm);
	symtab_free(&st);
}
END_TEST

START_TEST(test_errors)
{
	struct symtab st;
	int rc;

	ck_assert_int_eq(symtab_load(FIXTURE("text_file"), &st), SYMTAB_ENOTELF);
	ck_assert_uint_eq(st.n, 0);
	ck_assert_ptr_null(st.r);
	ck_assert_int_eq(symtab_load(FIXTURE("truncated"), &st), SYMTAB_ETRUNC);
	ck_assert_int_eq(symtab_load(FIXTURE("object.o"), &st), SYMTAB_ENOTEXEC);
	ck_assert_int_eq(symtab_load(FIXTURE("no-such-file"), &st), -ENOENT);
	ck_assert_int_eq(symtab_load(FIXTURE(""), &st), -EISDIR);
	ck_assert_int_eq(symtab_load("/dev/null", &st), SYMTAB_ENOTELF);
	if (access(FIXTURE("elf32"), F_OK) == 0)
		ck_assert_int_eq(symtab_load(FIXTURE("elf32"), &st), SYMTAB_ENOTX86_64);
	else
		fprintf(stderr, "check_symtab: no 32-bit fixture (gcc -m32 failed): skipped\n");

	ck_assert_str_eq(symtab_strerror(SYMTAB_ENOTELF), "not an ELF file");
	ck_assert_str_eq(symtab_strerror(SYMTAB_ENOTX86_64), "not an x86-64 ELF executable");
	for (rc = SYMTAB_EBADENTRY; rc <= SYMTAB_ENOTELF; rc++)
		ck_assert_uint_gt(strlen(symtab_strerror(rc)), 5);
	ck_assert_str_eq(symtab_strerror(-ENOENT), strerror(ENOENT));
}
END_TEST

/* ---- corrupted copies of a fixture, read as the kernel reads them ---- */

static unsigned char *img;
static size_t img_len;

/* Read fixture `name` into img. */
static void img_read(const char *name)
{
	char path[4096];
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s%s", FIXTURE(""), name);
	f = fopen(path, "rb");

	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	n = ftell(f);
	ck_assert_int_gt(n, 0);
	rewind(f);
	free(img);
	img = malloc((size_t)n);
	ck_assert_ptr_nonnull(img);
	ck_assert_uint_eq(fread(img, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	img_len = (size_t)n;
}

/* Write the first len bytes of img to a file and load it; returns symtab_load's result. */
static int img_load(size_t len, struct symtab *st)
{
	char path[] = "/tmp/check_symtab.XXXXXX";
	int fd = mkstemp(path), rc;

	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(write(fd, img, len), (ssize_t)len);
	close(fd);
	rc = symtab_load(path, st);
	unlink(path);
	return rc;
}

/* The program header of img with type `type` and flags including `flags`. */
static Elf64_Phdr *img_phdr(uint32_t type, uint32_t flags)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;

	for (int i = 0; i < eh->e_phnum; i++) {
		Elf64_Phdr *ph = (Elf64_Phdr *)(img + eh->e_phoff + (size_t)i * eh->e_phentsize);

		if (ph->p_type == type && (ph->p_flags & flags) == flags)
			return ph;
	}
	ck_abort_msg("no program header of type %u", type);
	return NULL;
}

/* Linux ignores EI_CLASS, EI_DATA and EI_VERSION of an x86-64 executable: so does fortstat. */
START_TEST(test_identification_as_kernel)
{
	static const int fields[] = {EI_CLASS, EI_DATA, EI_VERSION};
	struct symtab st;
	size_t n0;

	load_ok(FIXTURE("c_pie"), &st);
	n0 = st.n;
	symtab_free(&st);
	for (int i = 0; i < 3; i++) {
		img_read("c_pie");
		img[fields[i]] = 7;
		ck_assert_int_eq(img_load(img_len, &st), 0);
		ck_assert_uint_eq(st.n, n0);
		ck_assert_ptr_nonnull(by_name(&st, "main"));
		symtab_free(&st);
	}
	/* the magic with too little after it is a truncated ELF, not "not an ELF file" */
	img_read("c_pie");
	ck_assert_int_eq(img_load(63, &st), SYMTAB_ETRUNC);
	ck_assert_int_eq(img_load(5, &st), SYMTAB_ETRUNC);
	ck_assert_int_eq(img_load(3, &st), SYMTAB_ENOTELF);
	((Elf64_Ehdr *)img)->e_machine = EM_386;
	ck_assert_int_eq(img_load(img_len, &st), SYMTAB_ENOTX86_64);
}
END_TEST

/* Program headers the kernel would not map are refused, with their reason. */
START_TEST(test_corrupt_program_headers)
{
	struct symtab st;
	const char *names[] = {"c_pie", "c_nopie"};

	for (int k = 0; k < 2; k++) {
		Elf64_Phdr *ph;

		img_read(names[k]);
		ph = img_phdr(PT_LOAD, PF_X);
		ph->p_memsz |= 0xffull << 56; /* issue 16's byte flip, in the code segment */
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);

		img_read(names[k]);
		img_phdr(PT_LOAD, PF_X)->p_offset += 1; /* offset and address not congruent */
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);

		img_read(names[k]);
		ph = img_phdr(PT_LOAD, PF_X);
		ph->p_filesz = ph->p_memsz + 1;
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);

		img_read(names[k]);
		((Elf64_Ehdr *)img)->e_entry = img_phdr(PT_LOAD, PF_X)->p_vaddr - 1;
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADENTRY);

		img_read(names[k]);
		((Elf64_Ehdr *)img)->e_phoff = img_len; /* beyond the end, the file is whole */
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);
		/* what Linux refuses with ENOEXEC, said before running it */
		img_read(names[k]);
		((Elf64_Ehdr *)img)->e_phentsize = sizeof(Elf64_Phdr) - 1;
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);
		((Elf64_Ehdr *)img)->e_phentsize = sizeof(Elf64_Phdr);
		((Elf64_Ehdr *)img)->e_phnum = 0;
		ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);
		if (k == 0) {
			img_read(names[k]);
			ph = img_phdr(PT_INTERP, 0);
			img[ph->p_offset + ph->p_filesz - 1] = 'x'; /* not NUL-terminated */
			ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADPHDR);
		}
		/* cut short: truncated (the section headers at the end are gone too) */
		img_read(names[k]);
		ck_assert_int_eq(img_load(img_len / 2, &st), SYMTAB_ETRUNC);
	}
	ck_assert_str_eq(symtab_strerror(SYMTAB_EBADPHDR),
			 "corrupt program headers: the kernel cannot load it");
}
END_TEST

/* Section headers that cannot be read: no symbols, but what the image says is kept. */
START_TEST(test_corrupt_section_headers)
{
	struct symtab st;

	img_read("c_pie");
	((Elf64_Ehdr *)img)->e_shoff = (uint64_t)img_len + 4096;
	ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADSHDR);
	ck_assert_ptr_nonnull(st.path);
	ck_assert(!st.is_static);
	ck_assert_ptr_nonnull(st.interp);
	ck_assert_uint_eq(st.n, 0);
	symtab_free(&st);

	img_read("c_pie");
	((Elf64_Ehdr *)img)->e_shentsize = 65;
	ck_assert_int_eq(img_load(img_len, &st), SYMTAB_EBADSHDR);
	symtab_free(&st);
}
END_TEST

/* The .symtab entry of img named `name`, or NULL. */
static Elf64_Sym *img_sym(const char *name)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);

	for (int i = 0; i < eh->e_shnum; i++) {
		const char *str = (const char *)img + sh[sh[i].sh_link].sh_offset;

		if (sh[i].sh_type != SHT_SYMTAB)
			continue;
		for (size_t k = 0; k < sh[i].sh_size / sizeof(Elf64_Sym); k++) {
			Elf64_Sym *sym = (Elf64_Sym *)(img + sh[i].sh_offset) + k;

			if (!strcmp(str + sym->st_name, name))
				return sym;
		}
	}
	return NULL;
}

/* A function symbol outside the code segments is no routine (it was patched into data). */
START_TEST(test_symbol_outside_code)
{
	const char *names[] = {"c_pie", "c_nopie"};
	struct symtab st;
	uint64_t values[3];
	size_t n0;

	for (int k = 0; k < 2; k++) {
		img_read(names[k]);
		ck_assert_int_eq(img_load(img_len, &st), 0);
		n0 = st.n;
		ck_assert_ptr_nonnull(by_name(&st, "fs_jumper"));
		symtab_free(&st);
		ck_assert_ptr_nonnull(img_sym("fs_jumper"));
		values[0] = 0x10;	       /* the ELF header: mapped, not code */
		values[1] = 0x7fff00000000ull; /* nothing near (the scratch page had no room) */
		values[2] = img_sym("fs_jumper")->st_value + 0x100000; /* past the code */
		for (int v = 0; v < 3; v++) {
			img_read(names[k]);
			img_sym("fs_jumper")->st_value = values[v];
			ck_assert_int_eq(img_load(img_len, &st), 0);
			ck_assert_uint_eq(st.n, n0 - 1);
			ck_assert_ptr_null(by_name(&st, "fs_jumper"));
			ck_assert_ptr_nonnull(by_name(&st, "main"));
			symtab_free(&st);
		}
	}
}
END_TEST

/* The section header of img whose type is `type`, or NULL. */
static Elf64_Shdr *img_shdr(uint32_t type)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + eh->e_shoff);

	for (int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == type)
			return &sh[i];
	return NULL;
}

/*
 * A table's count is what the file holds, never sh_size / sh_entsize: a
 * section without data in the file (.bss, SHT_NOBITS) whose header says
 * entries of a byte and 2^62 bytes was walked entry by entry (a hang: the
 * test case's timeout fails it).
 */
START_TEST(test_nobits_counts_nothing)
{
	struct symtab st;
	Elf64_Shdr *bss;
	size_t n0;

	img_read("c_pie");
	ck_assert_int_eq(img_load(img_len, &st), 0);
	n0 = st.n;
	symtab_free(&st);
	bss = img_shdr(SHT_NOBITS);
	ck_assert_ptr_nonnull(bss);
	bss->sh_entsize = 1;
	bss->sh_size = 1ull << 62;
	ck_assert_int_eq(img_load(img_len, &st), 0);
	ck_assert_uint_eq(st.n, n0);
	ck_assert_ptr_nonnull(by_name(&st, "main"));
	symtab_free(&st);
}
END_TEST

/*
 * A symbol table whose sh_entsize is not an Elf64_Sym's is corrupt: with
 * twice the size it was read half (the first half of the symbols, silently).
 */
START_TEST(test_symtab_entsize)
{
	struct symtab st;

	for (uint64_t e = 0; e <= 2 * sizeof(Elf64_Sym); e += sizeof(Elf64_Sym) / 2) {
		if (e == sizeof(Elf64_Sym))
			continue;
		img_read("c_pie");
		img_shdr(SHT_SYMTAB)->sh_entsize = e;
		ck_assert_msg(img_load(img_len, &st) == SYMTAB_EBADSHDR, "sh_entsize %llu",
			      (unsigned long long)e);
		ck_assert_uint_eq(st.n, 0);
		symtab_free(&st);
	}
}
END_TEST

/* An interpreter that does not exist: said by name, before anything runs. */
START_TEST(test_missing_interpreter)
{
	Elf64_Phdr *ph;
	struct symtab st;

	img_read("c_pie");
	ph = img_phdr(PT_INTERP, 0);
	ck_assert_uint_gt(ph->p_filesz, 8);
	memcpy(img + ph->p_offset, "/nonexistent/ld.so", 19);
	ph->p_filesz = 19;
	ck_assert_int_eq(img_load(img_len, &st), SYMTAB_ENOINTERP);
	ck_assert_str_eq(st.interp, "/nonexistent/ld.so");
	symtab_free(&st);
	free(img);
	img = NULL;
}
END_TEST

START_TEST(test_select_names_and_globs)
{
	struct names nm;
	struct symtab st;
	size_t n;

	load_ok(FIXTURE("c_pie"), &st);
	parse_names("fs_a*\nfs_beta  # comment\nnothing_here\n_start\n", &nm);
	n = symtab_select(&st, &nm, NULL, false);
	ck_assert_uint_eq(n, 4);
	ck_assert(must(&st, "fs_alpha")->flags & RT_SELECTED);
	ck_assert(must(&st, "fs_beta")->flags & RT_SELECTED);
	ck_assert(must(&st, "main")->flags & RT_SELECTED);
	/* A names file decides, even for helpers. */
	ck_assert(must(&st, "_start")->flags & RT_SELECTED);
	ck_assert(!(must(&st, "fs_jumper")->flags & RT_SELECTED));
	/* fs_alpha and fs_alpha_alias are one routine: counted once. */
	ck_assert_uint_eq(nm.v[0].matched, 1);
	ck_assert_uint_eq(nm.v[1].matched, 1);
	ck_assert_uint_eq(nm.v[2].matched, 0);
	ck_assert_uint_eq(nm.v[3].matched, 1);
	names_free(&nm);

	/* An alias name selects the routine too. */
	parse_names("fs_alpha_alias\n", &nm);
	ck_assert_uint_eq(symtab_select(&st, &nm, NULL, false), 2);
	ck_assert(must(&st, "fs_alpha")->flags & RT_SELECTED);
	ck_assert(!(must(&st, "fs_beta")->flags & RT_SELECTED));
	names_free(&nm);
	symtab_free(&st);
}
END_TEST

START_TEST(test_select_exclude)
{
	struct names nm, ex;
	struct symtab st;

	load_ok(FIXTURE("c_pie"), &st);
	ck_assert_uint_eq(symtab_select(&st, NULL, NULL, false), 4);
	ck_assert_uint_eq(st.n_skipped_default, 1); /* _start */
	ck_assert_uint_eq(symtab_select(&st, NULL, NULL, true), 5);
	ck_assert_uint_eq(st.n_skipped_default, 0);

	parse_names("fs_b?ta\n", &ex);
	ck_assert_uint_eq(symtab_select(&st, NULL, &ex, false), 3);
	ck_assert(!(must(&st, "fs_beta")->flags & RT_SELECTED));
	ck_assert_uint_eq(ex.v[0].matched, 1);
	names_free(&ex);

	/* Exclude wins over names, and may drop the mainline. */
	parse_names("fs_*\n", &nm);
	parse_names("fs_alpha\nmain\n", &ex);
	ck_assert_uint_eq(symtab_select(&st, &nm, &ex, false), 2);
	ck_assert(!(must(&st, "fs_alpha")->flags & RT_SELECTED));
	ck_assert(!(must(&st, "main")->flags & RT_SELECTED));
	ck_assert(must(&st, "fs_beta")->flags & RT_SELECTED);
	ck_assert(must(&st, "fs_jumper")->flags & RT_SELECTED);
	names_free(&nm);
	names_free(&ex);
	symtab_free(&st);
}
END_TEST

START_TEST(test_select_source_names)
{
	struct names nm;
	struct symtab st;

	load_ok(FIXTURE("fortran"), &st);
	parse_names("mymod::bar\nfoo_\ntwice\n", &nm);
	ck_assert_uint_eq(symtab_select(&st, &nm, NULL, false), 4);
	ck_assert(must(&st, "__mymod_MOD_bar")->flags & RT_SELECTED);
	ck_assert(must(&st, "foo_")->flags & RT_SELECTED);
	ck_assert(must(&st, "twice_")->flags & RT_SELECTED);
	ck_assert(!(must(&st, "__mymod_MOD_baz")->flags & RT_SELECTED));
	ck_assert(!(must(&st, "MAIN__")->flags & RT_SELECTED));
	names_free(&nm);
	parse_names("__mymod_MOD_*\n", &nm);
	ck_assert_uint_eq(symtab_select(&st, &nm, NULL, false), 3);
	ck_assert_uint_eq(nm.v[0].matched, 2);
	names_free(&nm);
	symtab_free(&st);

	load_ok(FIXTURE("cxx"), &st);
	parse_names("_ZN6shapes6CircleC2Ed\nshapes::Circle::area*\n", &nm);
	ck_assert_uint_eq(symtab_select(&st, &nm, NULL, false), 3);
	ck_assert(must(&st, "_ZN6shapes6CircleC1Ed")->flags & RT_SELECTED);
	ck_assert(must(&st, "_ZNK6shapes6Circle4areaEv")->flags & RT_SELECTED);
	ck_assert(!(must(&st, "_ZN6shapes6CircleD1Ev")->flags & RT_SELECTED));
	names_free(&nm);
#ifdef HAVE_DEMANGLER
	/* Names files lose their blanks: "area() const" is written "area()const". */
	parse_names("shapes::Circle::area() const\nshapes::Circle::~Circle()\n", &nm);
	ck_assert_uint_eq(symtab_select(&st, &nm, NULL, false), 3);
	ck_assert(must(&st, "_ZNK6shapes6Circle4areaEv")->flags & RT_SELECTED);
	ck_assert(must(&st, "_ZN6shapes6CircleD1Ev")->flags & RT_SELECTED);
	names_free(&nm);
#endif
	symtab_free(&st);
}
END_TEST

/* PLT stubs are named by .rela.plt; a static executable has none. */
START_TEST(test_plt)
{
	struct symtab st;
	bool seen = false;

	load_ok(FIXTURE("c_pie"), &st);
	ck_assert_uint_gt(st.n_plt, 0);
	for (size_t i = 0; i < st.n_plt; i++) {
		ck_assert_ptr_nonnull(st.plt[i].name);
		/* the GOT slot lies after the stub, in the data segment */
		ck_assert_uint_gt(st.plt[i].got, st.plt[i].jmp);
		if (!strcmp(st.plt[i].name, "printf"))
			seen = true;
	}
	ck_assert_msg(seen, "no printf@plt in c_pie");
	symtab_free(&st);
	load_ok(FIXTURE("c_static"), &st);
	for (size_t i = 0; i < st.n_plt; i++)
		ck_assert_str_ne(st.plt[i].name, "printf");
	symtab_free(&st);
}
END_TEST

START_TEST(test_find)
{
	const struct routine *a, *b, *last;
	struct symtab st;
	size_t i;

	load_ok(FIXTURE("c_pie"), &st);
	a = must(&st, "fs_alpha");
	b = must(&st, "fs_beta");
	ck_assert_ptr_eq(symtab_find(&st, a->addr), a);
	ck_assert_ptr_eq(symtab_find(&st, a->addr + a->size - 1), a);
	ck_assert_ptr_eq(symtab_find(&st, b->addr + 1), b);
	ck_assert_ptr_null(symtab_find(&st, 0));
	ck_assert_ptr_null(symtab_find(&st, st.r[0].addr - 1));
	last = &st.r[st.n - 1];
	ck_assert_ptr_eq(symtab_find(&st, last->addr + last->size - 1), last);
	ck_assert_ptr_null(symtab_find(&st, last->addr + last->size));
	ck_assert_ptr_null(symtab_find(&st, UINT64_MAX));
	/* Just past _start lies padding and crt code of no routine. */
	a = must(&st, "_start");
	ck_assert_ptr_null(symtab_find(&st, a->addr + a->size));
	symtab_free(&st);

	load_ok(FIXTURE("c_static"), &st);
	for (i = 0; i < st.n; i++) {
		ck_assert_ptr_eq(symtab_find(&st, st.r[i].addr), &st.r[i]);
		/* The last byte is this routine's unless the next one overlaps it. */
		ck_assert(symtab_find(&st, st.r[i].addr + st.r[i].size - 1) == &st.r[i] ||
			  (i + 1 < st.n && st.r[i + 1].addr < st.r[i].addr + st.r[i].size));
	}
	symtab_free(&st);
}
END_TEST

/* ---- shared libraries (-l) ---- */

START_TEST(test_shlib_dynsym)
{
	struct symtab st;
	const struct routine *r1, *r2;
	size_t k;
	uint64_t v;

	/* Stripped: .dynsym only. The old version of fs_old is named with it. */
	load_ok(FIXTURE("libfs_stripped.so"), &st);
	ck_assert(!st.has_symtab);
	ck_assert_str_eq(st.soname, "libfs.so.1");
	ck_assert_ptr_null(st.interp);
	r1 = must(&st, "fs_old@FS_1.0");
	r2 = must(&st, "fs_old");
	ck_assert(r1 != r2);
	ck_assert_uint_lt(r1->addr, r2->addr);
	must(&st, "fs_lib_work");
	/* The indirect function is no routine, but is known with its resolver. */
	ck_assert_ptr_null(by_name(&st, "fs_pick"));
	ck_assert_uint_eq(st.n_ifuncs, 1);
	ck_assert_str_eq(st.ifuncs[0].name, "fs_pick");
	ck_assert_int_eq(symtab_symbol(FIXTURE("libfs.so"), "fs_pick_resolver", &v), 0);
	ck_assert_uint_eq(st.ifuncs[0].resolver, v);
	ck_assert_int_eq(symtab_symbol(FIXTURE("libfs.so"), "no_such_symbol", &v), -ENOENT);
	ck_assert_int_lt(symtab_symbol(FIXTURE("no_such_file"), "fs_pick", &v), 0);

	/* Its target gets the function's name; an alias goes after the shorter name. */
	ck_assert_int_eq(symtab_symbol(FIXTURE("libfs.so"), "fs_pick_fast", &v), 0);
	k = st.n;
	symtab_add_routine(&st, v, 32, "fs_pick_longer_alias");
	symtab_add_routine(&st, v, 32, "fs_pick");
	symtab_add_routine(&st, v, 32, "fs_pick");
	ck_assert_uint_eq(st.n, k + 1);
	r1 = must(&st, "fs_pick");
	ck_assert_str_eq(r1->names[0], "fs_pick");
	ck_assert_str_eq(r1->display, "fs_pick");
	ck_assert_uint_eq(r1->n_names, 2);
	ck_assert(r1->flags & RT_IFUNC);
	for (k = 1; k < st.n; k++)
		ck_assert_uint_lt(st.r[k - 1].addr, st.r[k].addr);
	symtab_free(&st);
}
END_TEST

START_TEST(test_shlib_select_append)
{
	const char *mods[] = {"libfs.so.1", "/some/where/libfs.so", NULL};
	struct symtab st, lib;
	struct names nm, ex;
	size_t n_own, first;
	const struct routine *r;

	load_ok(FIXTURE("libfs.so"), &lib);
	ck_assert(lib.has_symtab);
	/* The local routine is found through .symtab. */
	must(&lib, "fs_local");

	/* Qualified names match only in the library they name. */
	parse_names("libfs:fs_local\nlibother:fs_lib_work\nfs_old\n", &nm);
	parse_names("libfs.so*:fs_old\n", &ex);
	ck_assert_uint_eq(symtab_select_module(&lib, &nm, &ex, mods), 1);
	ck_assert(must(&lib, "fs_local")->flags & RT_SELECTED);
	ck_assert(!(must(&lib, "fs_lib_work")->flags & RT_SELECTED));
	ck_assert(!(must(&lib, "fs_old")->flags & RT_SELECTED));
	ck_assert_uint_eq(nm.v[0].matched, 1);
	ck_assert_uint_eq(nm.v[1].matched, 0);
	ck_assert_uint_ge(nm.v[2].matched, 1);
	ck_assert_uint_ge(ex.v[0].matched, 1);
	names_free(&nm);
	names_free(&ex);
	/* Without names: everything but the runtime helpers. */
	ck_assert_uint_eq(symtab_select_module(&lib, NULL, NULL, mods),
			  lib.n - (by_name(&lib, "_init") != NULL) -
			      (by_name(&lib, "_fini") != NULL) -
			      (by_name(&lib, "frame_dummy") != NULL) -
			      (by_name(&lib, "register_tm_clones") != NULL) -
			      (by_name(&lib, "deregister_tm_clones") != NULL) -
			      (by_name(&lib, "__do_global_dtors_aux") != NULL));

	/* Appended after the program's routines, named after the library. */
	load_ok(FIXTURE("c_pie"), &st);
	n_own = st.n;
	parse_names("fs_lib_work\n", &nm);
	ck_assert_uint_eq(symtab_select_module(&lib, &nm, NULL, mods), 1);
	names_free(&nm);
	first = symtab_append(&st, &lib, "libfs.so.1");
	ck_assert_uint_eq(first, n_own);
	ck_assert_uint_eq(st.n, n_own + 1);
	ck_assert_uint_eq(st.n_own, n_own);
	r = &st.r[first];
	ck_assert_str_eq(r->display, "libfs.so.1:fs_lib_work");
	ck_assert_str_eq(r->names[0], "fs_lib_work");
	ck_assert_str_eq(r->module, "libfs.so.1");
	ck_assert(r->flags & RT_SELECTED);
	/* symtab_find looks at the program's own routines only */
	ck_assert(symtab_find(&st, r->addr) == NULL || symtab_find(&st, r->addr) < r);
	ck_assert_ptr_null(st.r[0].module);
	symtab_free(&st);
}
END_TEST

/*
 * symtab_dup (the table of a file exec'ed again, plancache.c): every field
 * equal, every string and array the copy's own (the original freed first,
 * its memory overwritten), a library's routines naming the copy's module.
 */
START_TEST(test_dup)
{
	const char *mods[] = {"libfs.so.1", NULL};
	struct symtab *st = calloc(1, sizeof(*st)), lib, cp;
	struct symtab *ref = calloc(1, sizeof(*ref));
	size_t first;

	ck_assert_ptr_nonnull(st);
	ck_assert_ptr_nonnull(ref);
	load_ok(FIXTURE("cxx"), st);
	load_ok(FIXTURE("cxx"), ref);
	load_ok(FIXTURE("libfs.so"), &lib);
	symtab_select_module(&lib, NULL, NULL, mods);
	first = symtab_append(st, &lib, "libfs.so.1");
	ck_assert_uint_gt(st->n, first);
	symtab_dup(st, &cp);
	/* the original gone, and its memory scribbled over */
	for (size_t i = 0; i < st->n; i++) {
		for (size_t k = 0; k < st->r[i].n_names; k++)
			memset(st->r[i].names[k], 'x', strlen(st->r[i].names[k]));
		if (st->r[i].display)
			memset(st->r[i].display, 'x', strlen(st->r[i].display));
	}
	memset(st->path, 'x', strlen(st->path));
	memset(st->modules[0], 'x', strlen(st->modules[0]));
	symtab_free(st);
	free(st);

	ck_assert_uint_eq(cp.n_own, ref->n);
	ck_assert_uint_eq(cp.n, ref->n + (cp.n - first));
	ck_assert_str_eq(cp.path, ref->path);
	ck_assert_uint_eq(cp.e_entry, ref->e_entry);
	ck_assert_int_eq(cp.pie, ref->pie);
	ck_assert_int_eq(cp.has_symtab, ref->has_symtab);
	ck_assert_int_eq(cp.has_dwarf, ref->has_dwarf);
	ck_assert_uint_eq(cp.n_plt, ref->n_plt);
	for (size_t j = 0; j < cp.n_plt; j++) {
		ck_assert_str_eq(cp.plt[j].name, ref->plt[j].name);
		ck_assert_uint_eq(cp.plt[j].jmp, ref->plt[j].jmp);
		ck_assert_uint_eq(cp.plt[j].got, ref->plt[j].got);
	}
	ck_assert_uint_eq(cp.n_needed, ref->n_needed);
	for (size_t j = 0; j < cp.n_needed; j++)
		ck_assert_str_eq(cp.needed[j], ref->needed[j]);
	if (ref->interp)
		ck_assert_str_eq(cp.interp, ref->interp);
	for (size_t i = 0; i < ref->n; i++) {
		const struct routine *a = &cp.r[i], *b = &ref->r[i];

		ck_assert_uint_eq(a->addr, b->addr);
		ck_assert_uint_eq(a->size, b->size);
		ck_assert_uint_eq(a->flags, b->flags);
		ck_assert_uint_eq(a->n_names, b->n_names);
		for (size_t k = 0; k < a->n_names; k++)
			ck_assert_str_eq(a->names[k], b->names[k]);
		ck_assert_str_eq(a->display, b->display);
		ck_assert_int_eq(a->line, b->line);
		ck_assert((a->file == NULL) == (b->file == NULL));
		if (a->file)
			ck_assert_str_eq(a->file, b->file);
		ck_assert_ptr_null(a->module);
	}
	ck_assert_uint_eq(cp.n_modules, 1);
	ck_assert_str_eq(cp.modules[0], "libfs.so.1");
	for (size_t i = first; i < cp.n; i++) {
		ck_assert_ptr_eq(cp.r[i].module, cp.modules[0]);
		ck_assert(!strncmp(cp.r[i].display, "libfs.so.1:", 11));
	}
	symtab_free(&cp);
	symtab_free(ref);
	free(ref);
}
END_TEST

/* The value of symbol `name` in the ELF image image[0..len) (its .dynsym), or 0. */
static uint64_t vdso_sym(void *image, size_t len, const char *name)
{
	Elf *elf = elf_memory(image, len);
	Elf_Scn *scn = NULL;
	uint64_t v = 0;

	while (elf && !v && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d = elf_getdata(scn, NULL);
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !d)
			continue;
		for (int i = 1; gelf_getsym(d, i, &sym); i++) {
			const char *s = elf_strptr(elf, sh.sh_link, sym.st_name);

			if (s && !strcmp(s, name))
				v = sym.st_value;
		}
	}
	if (elf)
		elf_end(elf);
	return v;
}

/*
 * A function's size in an ELF image read from memory (the vDSO's, where
 * glibc's time() resolves): each of libfs_stripped.so's routines as its
 * file says, nothing where no function starts; a cut or a scribbled copy
 * is read within its bytes (0 or a size that fits); and the test's own
 * vDSO, whose time is a function of its own.
 */
START_TEST(test_image_func_size)
{
	struct symtab st;
	unsigned char *image;
	long len;
	FILE *f;

	load_ok(FIXTURE("libfs_stripped.so"), &st);
	f = fopen(FIXTURE("libfs_stripped.so"), "rb");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, 0, SEEK_END), 0);
	len = ftell(f);
	ck_assert_int_gt(len, 0);
	rewind(f);
	image = malloc((size_t)len);
	ck_assert_uint_eq(fread(image, 1, (size_t)len, f), (size_t)len);
	fclose(f);
	ck_assert_uint_gt(st.n, 2);
	for (size_t i = 0; i < st.n; i++) /* its first PT_LOAD maps offset 0 at 0 */
		ck_assert_uint_eq(symtab_image_func_size(image, (size_t)len, st.r[i].addr),
				  st.r[i].size);
	ck_assert_uint_eq(symtab_image_func_size(image, (size_t)len, st.r[0].addr + 1), 0);
	ck_assert_uint_eq(symtab_image_func_size(image, (size_t)len, (uint64_t)len + 4096), 0);
	for (long cut = 0; cut < len; cut += len / 61 + 1) {
		uint64_t z = symtab_image_func_size(image, (size_t)cut, st.r[0].addr);

		ck_assert(z == 0 || (z == st.r[0].size && st.r[0].addr + z <= (uint64_t)cut));
	}
	for (long at = 0; at < len; at += 7) {
		unsigned char keep = image[at];
		uint64_t z;

		image[at] ^= 0xa5;
		z = symtab_image_func_size(image, (size_t)len, st.r[1].addr);
		ck_assert(z <= (uint64_t)len - st.r[1].addr);
		image[at] = keep;
	}
	free(image);
	symtab_free(&st);

	{
		uint64_t base = getauxval(AT_SYSINFO_EHDR), lo, hi, z = 0;
		char line[512];

		f = base ? fopen("/proc/self/maps", "r") : NULL;
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) == 2 && lo == base) {
				/* __vdso_time: its offset by the vDSO's own symbols */
				z = symtab_image_func_size(
				    (void *)(uintptr_t)base, (size_t)(hi - lo),
				    vdso_sym((void *)(uintptr_t)base, (size_t)(hi - lo),
					     "__vdso_time"));
				ck_assert_uint_gt(z, 0);
				ck_assert_uint_lt(z, hi - lo);
			}
		if (f)
			fclose(f);
	}
}
END_TEST

/*
 * A table kept small (an ended process of -f): the routines a map keeps,
 * in order, with their names; n_own counts the file's own kept.
 */
START_TEST(test_compact)
{
	struct symtab st, ref;
	uint32_t *map;
	size_t k = 0, own = 0;

	load_ok(FIXTURE("libfs_stripped.so"), &st);
	load_ok(FIXTURE("libfs_stripped.so"), &ref);
	ck_assert_uint_ge(st.n, 3);
	st.n_own = st.n - 1; /* as if the last were appended from a library */
	map = malloc(st.n * sizeof(*map));
	for (size_t i = 0; i < st.n; i++) {
		map[i] = i % 2 ? (uint32_t)k++ : UINT32_MAX;
		own += i % 2 && i < st.n - 1;
	}
	symtab_compact(&st, map, k);
	ck_assert_uint_eq(st.n, k);
	ck_assert_uint_eq(st.n_own, own);
	for (size_t i = 0; i < ref.n; i++)
		if (map[i] != UINT32_MAX) {
			ck_assert_uint_eq(st.r[map[i]].addr, ref.r[i].addr);
			ck_assert_str_eq(st.r[map[i]].names[0], ref.r[i].names[0]);
			ck_assert_str_eq(st.r[map[i]].display, ref.r[i].display);
		}
	free(map);
	symtab_free(&st);
	symtab_free(&ref);
}
END_TEST

static Suite *symtab_suite(void)
{
	Suite *s = suite_create("symtab");
	TCase *load = tcase_create("load");
	TCase *sel = tcase_create("select");
	TCase *find = tcase_create("find");
	TCase *bounds = tcase_create("bounds");

	tcase_set_timeout(load, 30);
	tcase_set_timeout(sel, 30);
	tcase_add_test(load, test_every_fixture_loads);
	tcase_add_test(load, test_kinds);
	tcase_add_test(load, test_c_routines);
	tcase_add_test(load, test_aliases_merged);
	tcase_add_test(load, test_cold_fragments_skipped);
	tcase_add_test(load, test_stripped_uses_dynsym);
	tcase_add_test(load, test_fortran);
	tcase_add_test(load, test_cxx_names);
	tcase_add_test(load, test_errors);
	tcase_add_test(load, test_identification_as_kernel);
	tcase_add_test(load, test_corrupt_program_headers);
	tcase_add_test(load, test_corrupt_section_headers);
	tcase_add_test(load, test_missing_interpreter);
	tcase_add_test(load, test_symbol_outside_code);
	suite_add_tcase(s, load);

	tcase_add_test(sel, test_static_debug_default);
	tcase_add_test(sel, test_static_nodebug_default);
	tcase_add_test(sel, test_setjmp_never_selected);
	tcase_add_test(sel, test_select_names_and_globs);
	tcase_add_test(sel, test_select_exclude);
	tcase_add_test(sel, test_select_source_names);
	tcase_add_test(sel, test_dup);
	tcase_add_test(sel, test_compact);
	suite_add_tcase(s, sel);

	/* hangs fail here, within seconds, rather than at the suite's timeout */
	tcase_set_timeout(bounds, 10);
	tcase_add_test(bounds, test_nobits_counts_nothing);
	tcase_add_test(bounds, test_symtab_entsize);
	tcase_add_test(bounds, test_image_func_size);
	suite_add_tcase(s, bounds);

	tcase_add_test(find, test_find);
	tcase_add_test(find, test_plt);
	tcase_add_test(find, test_shlib_dynsym);
	tcase_add_test(find, test_shlib_select_append);
	suite_add_tcase(s, find);
	return s;
}

int main(void)
{
	SRunner *sr = srunner_create(symtab_suite());
	int failed;

	srunner_run_all(sr, CK_NORMAL);
	failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
