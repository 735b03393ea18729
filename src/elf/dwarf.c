// SPDX-License-Identifier: GPL-2.0-or-later
/* dwarf.c - source names, files and lines of routines from DWARF (libdw). */
#include "symtab_int.h"
#include "fortstat/util.h"

#include <dwarf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fortstat/lines.h"

bool dwinfo_is_fortran(int lang)
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

/* See symtab_int.h. */
bool dwinfo_read(Elf *elf, struct dwinfo *dw)
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

const struct dw_def *dwinfo_find(const struct dwinfo *dw, uint64_t addr)
{
	struct dw_def key = {.addr = addr};

	return bsearch(&key, dw->def, dw->n_def, sizeof(*dw->def), dw_def_cmp);
}

/* See symtab_int.h. */
bool dwinfo_in_compiled_cu(const struct dwinfo *dw, uint64_t addr)
{
	size_t i;

	for (i = 0; i < dw->n_cu; i++)
		if (addr >= dw->cu[i].lo && addr < dw->cu[i].hi &&
		    dw->cu[i].lang != DW_LANG_Mips_Assembler)
			return true;
	return false;
}

void dwinfo_free(struct dwinfo *dw)
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

/*
 * Every row of every line program of the compilation units, into lt: the
 * address, the line (0 at a sequence's end: no line follows until the next
 * sequence) and the file. Rows as libdw gives them (the DWARF is the
 * file's: libdw bounds what it reads).
 */
static void lines_of_cu(Dwarf_Die *cudie, struct line_table *lt)
{
	Dwarf_Lines *lines;
	size_t n;

	if (dwarf_getsrclines(cudie, &lines, &n) != 0)
		return;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		Dwarf_Addr addr;
		int line = 0;
		bool end = false;
		const char *file;

		if (!l || dwarf_lineaddr(l, &addr) != 0)
			continue;
		dwarf_lineendsequence(l, &end);
		if (!end && dwarf_lineno(l, &line) != 0)
			line = 0;
		file = end ? NULL : dwarf_linesrc(l, NULL, NULL);
		if (end || line <= 0 || !file)
			line_table_add(lt, addr, 0, 0);
		else
			line_table_add(lt, addr, (uint32_t)line, line_table_file(lt, file));
	}
}

/* See symtab.h. */
int symtab_line_table(const char *path, struct line_table *lt)
{
	Dwarf_CU *cu = NULL;
	Dwarf_Die cudie;
	uint8_t unit_type;
	Dwarf *dbg;
	Elf *elf;
	int fd;

	memset(lt, 0, sizeof(*lt));
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	dbg = elf ? dwarf_begin_elf(elf, DWARF_C_READ, NULL) : NULL;
	while (dbg && dwarf_get_units(dbg, cu, &cu, NULL, &unit_type, &cudie, NULL) == 0)
		if (dwarf_tag(&cudie) == DW_TAG_compile_unit)
			lines_of_cu(&cudie, lt);
	if (dbg)
		dwarf_end(dbg);
	if (elf)
		elf_end(elf);
	close(fd);
	line_table_sort(lt);
	return lt->n ? 0 : -ENOENT;
}
