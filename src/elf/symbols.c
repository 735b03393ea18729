// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * symbols.c - the function symbols of an ELF symbol table: versions, IFUNCs,
 * one value by name, one function's size in an image read from memory.
 */
#include "symtab_int.h"
#include "fortstat/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

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
int rawsym_cmp(const void *pa, const void *pb)
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

/* See symtab_int.h. */
size_t section_entries(Elf_Scn *scn, const GElf_Shdr *sh, size_t entsize, Elf_Data **data)
{
	Elf_Data *d;

	*data = NULL;
	if (sh->sh_type == SHT_NOBITS || sh->sh_entsize != entsize || !entsize)
		return 0;
	d = elf_getdata(scn, NULL);
	if (!d || (!d->d_buf && d->d_size))
		return 0;
	*data = d;
	return (d->d_size < sh->sh_size ? d->d_size : sh->sh_size) / entsize;
}

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

static const char *strlist_keep(struct strlist *l, char *s)
{
	GROW(l->v, l->n, l->cap);
	l->v[l->n++] = s;
	return s;
}

void strlist_free(struct strlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

/* Does [addr, addr + size) lie in one executable PT_LOAD segment (or are there none)? */
static bool in_code(Elf *elf, uint64_t addr, uint64_t size)
{
	size_t phnum, n_load = 0;

	if (elf_getphdrnum(elf, &phnum) != 0)
		return true;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		n_load++;
		if ((ph.p_flags & PF_X) && addr >= ph.p_vaddr && addr - ph.p_vaddr < ph.p_memsz &&
		    size <= ph.p_memsz - (addr - ph.p_vaddr))
			return true;
	}
	return n_load == 0;
}

/* See symtab_int.h. */
int symbols_read(Elf *elf, Elf_Scn *scn, struct rawsym **raw, size_t *n_raw, uint64_t **ifunc,
		 size_t *n_ifunc, struct symtab *st, struct strlist *own)
{
	size_t cap = 0, cap_if = 0, cap_ifn = 0, i, n, shnum, n_outside = 0;
	const char *file = NULL;
	struct verinfo vi;
	GElf_Shdr sh;
	Elf_Data *data;

	if (!gelf_getshdr(scn, &sh) || elf_getshdrnum(elf, &shnum) != 0)
		return SYMTAB_EBADSHDR;
	n = section_entries(scn, &sh, sizeof(Elf64_Sym), &data);
	if (!data)
		return SYMTAB_EBADSHDR;
	memset(&vi, 0, sizeof(vi));
	if (sh.sh_type == SHT_DYNSYM)
		verinfo_init(elf, &vi);
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Shdr tsh;
		Elf_Scn *tscn;
		const char *name;
		int type;

		if (!gelf_getsym(data, (int)i, &sym))
			return SYMTAB_EBADSHDR;
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
				name =
				    strlist_keep(own, xasprintf("%.*s", (int)(dflt - name), name));
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
		/*
		 * A routine lies in code the kernel maps: a corrupt symbol
		 * value would put an int3 into data, or ask for a scratch
		 * page near an address where there is no code.
		 */
		if (!in_code(elf, sym.st_value, sym.st_size)) {
			n_outside++;
			continue;
		}
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
	if (n_outside)
		fs_info(1, "%s: %zu function symbols outside its code segments (corrupt?): ignored",
			st->path, n_outside);
	return 0;
}

/* What find_sym looks for: a defined symbol named `name`, or a function starting at `value`. */
struct sym_want {
	const char *name;
	uint64_t value, max_size;
};

static bool sym_wanted(Elf *elf, const GElf_Shdr *sh, const GElf_Sym *sym, const struct sym_want *w)
{
	const char *s;

	if (sym->st_shndx == SHN_UNDEF)
		return false;
	if (!w->name)
		return GELF_ST_TYPE(sym->st_info) == STT_FUNC && sym->st_value == w->value &&
		       sym->st_size && sym->st_size <= w->max_size;
	s = elf_strptr(elf, sh->sh_link, sym->st_name);
	return s && !strcmp(s, w->name);
}

/*
 * The first symbol of elf's .dynsym, then its .symtab, that w wants: 0 and
 * *out, or -ENOENT. Each table counted by section_entries.
 */
static int find_sym(Elf *elf, const struct sym_want *w, GElf_Sym *out)
{
	for (int pass = 0; elf && pass < 2; pass++) {
		Elf_Scn *scn = NULL;

		while ((scn = elf_nextscn(elf, scn)) != NULL) {
			GElf_Shdr sh;
			Elf_Data *d;
			size_t n;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_SYMTAB : SHT_DYNSYM))
				continue;
			n = section_entries(scn, &sh, sizeof(Elf64_Sym), &d);
			for (size_t i = 1; i < n; i++)
				if (gelf_getsym(d, (int)i, out) && sym_wanted(elf, &sh, out, w))
					return 0;
		}
	}
	return -ENOENT;
}

int symtab_symbol(const char *path, const char *name, uint64_t *value)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;
	GElf_Sym sym;
	Elf *elf;

	if (fd < 0)
		return -errno;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	rc = find_sym(elf, &(struct sym_want){.name = name}, &sym);
	if (!rc)
		*value = sym.st_value;
	if (elf)
		elf_end(elf);
	close(fd);
	return rc;
}

uint64_t symtab_image_func_size(const void *image, size_t len, uint64_t off)
{
	uint64_t size = 0;
	GElf_Ehdr eh;
	GElf_Sym sym;
	size_t nph = 0;
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_memory((char *)image, len);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    elf_getphdrnum(elf, &nph) != 0)
		goto out;
	/* its own addresses: those of its first PT_LOAD, which maps it from offset p_offset */
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD && ph.p_offset <= off) {
			struct sym_want w = {.value = off - ph.p_offset + ph.p_vaddr,
					     .max_size = len - off};

			if (off < len && !find_sym(elf, &w, &sym))
				size = sym.st_size;
			break;
		}
	}
out:
	if (elf)
		elf_end(elf);
	return size;
}
