// SPDX-License-Identifier: GPL-2.0-or-later
/* dynamic.c - what the dynamic section and the PLT say: SONAME, parallel runtimes, PLT stubs. */
#include "symtab_int.h"
#include "fortstat/util.h"

#include <stdlib.h>

/*
 * Does the executable use a parallel runtime that sizes its thread pool from
 * the CPU affinity mask (OpenMP, TBB, Go's GOMAXPROCS)? Looks at DT_NEEDED,
 * at the names of every symbol, defined or not, in .dynsym and .symtab, and
 * for Go's .go.buildinfo section (kept by strip).
 */
bool dynamic_parallel_runtime(Elf *elf)
{
	static const char *const libs[] = {
	    "libgomp",
	    "libomp",
	    "libiomp",
	    "libtbb",
	};
	static const char *const syms[] = {"GOMP_", "__kmpc_", "omp_get_", "_ZN3tbb"};
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool names = elf_getshdrstrndx(elf, &shstrndx) == 0;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *data;
		const char *sname;
		size_t n;

		if (!gelf_getshdr(scn, &sh))
			continue;
		sname = names ? elf_strptr(elf, shstrndx, sh.sh_name) : NULL;
		if (sname && !strcmp(sname, ".go.buildinfo"))
			return true;
		if (sh.sh_type == SHT_DYNAMIC)
			n = section_entries(scn, &sh, sizeof(Elf64_Dyn), &data);
		else if (sh.sh_type == SHT_SYMTAB || sh.sh_type == SHT_DYNSYM)
			n = section_entries(scn, &sh, sizeof(Elf64_Sym), &data);
		else
			continue;
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

/* A relocation of .rela.plt: the GOT slot it fills, and its index in the table. */
struct plt_rel {
	uint64_t got;
	size_t i;
};

static int plt_rel_cmp(const void *pa, const void *pb)
{
	const struct plt_rel *a = pa, *b = pb;

	if (a->got != b->got)
		return a->got < b->got ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

/* The first relocation of rel[0..n) (sorted) that fills slot got, or NULL. */
static const struct plt_rel *plt_rel_find(const struct plt_rel *rel, size_t n, uint64_t got)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (rel[mid].got < got)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && rel[lo].got == got ? &rel[lo] : NULL;
}

/*
 * Read the PLT: for each stub in .plt and .plt.sec, find its `jmp
 * *disp(%rip)` (after an optional endbr64 and bnd prefix) and name it by the
 * .rela.plt entry whose GOT slot it jumps through. The relocations are
 * sorted once by slot: both tables' sizes come from the file, and a stub
 * each against every relocation would take their product.
 */
void dynamic_read_plt(Elf *elf, struct symtab *st)
{
	Elf_Scn *scn = NULL, *rela = NULL;
	size_t shstrndx, cap = 0, nrel;
	GElf_Shdr rsh;
	Elf_Data *rdata, *symdata;
	Elf_Scn *symscn;
	GElf_Shdr symsh;
	struct plt_rel *rel;

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
	if (!rela || !gelf_getshdr(rela, &rsh))
		return;
	nrel = section_entries(rela, &rsh, sizeof(Elf64_Rela), &rdata);
	symscn = elf_getscn(elf, rsh.sh_link);
	if (!nrel || !symscn || !gelf_getshdr(symscn, &symsh) ||
	    !section_entries(symscn, &symsh, sizeof(Elf64_Sym), &symdata))
		return;
	rel = xmalloc(nrel * sizeof(*rel));
	for (size_t i = 0; i < nrel; i++) {
		GElf_Rela r;

		rel[i].got = gelf_getrela(rdata, (int)i, &r) ? r.r_offset : 0;
		rel[i].i = i;
	}
	qsort(rel, nrel, sizeof(*rel), plt_rel_cmp);
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
			const struct plt_rel *pr;
			size_t k = 0;
			int32_t disp;
			uint64_t jmp, got;
			GElf_Rela r;
			GElf_Sym sym;
			const char *sname;

			if (b[0] == 0xf3 && b[1] == 0x0f && b[2] == 0x1e && b[3] == 0xfa)
				k = 4;
			jmp = sh.sh_addr + off + k; /* the jmp starts here, bnd prefix included */
			if (b[k] == 0xf2)
				k++;
			if (b[k] != 0xff || b[k + 1] != 0x25)
				continue;
			memcpy(&disp, b + k + 2, sizeof(disp));
			got = sh.sh_addr + off + k + 6 + (uint64_t)(int64_t)disp;
			pr = plt_rel_find(rel, nrel, got);
			if (!pr || !gelf_getrela(rdata, (int)pr->i, &r) ||
			    !gelf_getsym(symdata, (int)GELF_R_SYM(r.r_info), &sym))
				continue;
			sname = elf_strptr(elf, symsh.sh_link, sym.st_name);
			if (!sname || !*sname)
				continue;
			if (st->n_plt == cap) {
				cap = cap ? cap * 2 : 32;
				st->plt = xrealloc(st->plt, cap * sizeof(*st->plt));
			}
			st->plt[st->n_plt].jmp = jmp;
			st->plt[st->n_plt].got = got;
			st->plt[st->n_plt].name = xstrdup(sname);
			st->n_plt++;
		}
	}
	free(rel);
}

/* DT_NEEDED: the libraries the file names, in its order, into st->needed. */
void dynamic_read_needed(Elf *elf, struct symtab *st)
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
			if (dyn.d_tag != DT_NEEDED ||
			    (name = elf_strptr(elf, sh.sh_link, dyn.d_un.d_val)) == NULL)
				continue;
			st->needed = xrealloc(st->needed, (st->n_needed + 1) * sizeof(*st->needed));
			st->needed[st->n_needed++] = xstrdup(name);
		}
		return; /* one dynamic section */
	}
}

/* DT_SONAME of a shared library, malloc'ed, or NULL. */
char *dynamic_soname(Elf *elf)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		Elf_Data *d;
		size_t n;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
			continue;
		n = section_entries(scn, &sh, sizeof(Elf64_Dyn), &d);
		for (size_t i = 0; i < n; i++) {
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
