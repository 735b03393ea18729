// SPDX-License-Identifier: GPL-2.0-or-later
/* symtab.c - the routine table of an executable: loading it, queries, freeing it. */
#include "symtab_int.h"
#include "fortstat/util.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

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
		def = dwinfo_find(dw, r->addr);
		r->display = display_make(r->names[0], def);
		if (def && def->file)
			r->file = xstrdup(def->file);
		r->line = def ? def->line : 0;
		display_classify(r, st, &raw[i], j - i, dw, &have_main);
		i = j;
	}
}

/*
 * Check what the ELF header says: a 64-bit x86-64 executable or shared
 * object whose headers and sections lie inside the file. Returns 0 or SYMTAB_E*.
 */
static int check_header(Elf *elf, uint64_t fsize, GElf_Ehdr *eh)
{
	const char *ident;

	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return SYMTAB_ENOTELF;
	ident = elf_getident(elf, NULL);
	if (!ident)
		return SYMTAB_ETRUNC;
	if (ident[EI_CLASS] != ELFCLASS64)
		return SYMTAB_ENOTX86_64;
	if (!gelf_getehdr(elf, eh))
		return SYMTAB_ETRUNC;
	if (eh->e_machine != EM_X86_64)
		return SYMTAB_ENOTX86_64;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return SYMTAB_ENOTEXEC;
	return check_layout(elf, eh, fsize);
}

/* Read the program headers: static or not, and the interpreter. Returns 0 or SYMTAB_ETRUNC. */
static int read_phdrs(Elf *elf, struct symtab *st)
{
	size_t i, phnum;

	st->is_static = true;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return SYMTAB_ETRUNC;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return SYMTAB_ETRUNC;
		if (ph.p_type == PT_INTERP) {
			size_t len;
			const char *ip = elf_rawfile(elf, &len);

			st->is_static = false;
			if (ip && ph.p_offset < len && ph.p_filesz && ph.p_filesz <= len - ph.p_offset &&
			    !st->interp)
				st->interp = xasprintf("%.*s", (int)ph.p_filesz, ip + ph.p_offset);
		}
	}
	return 0;
}

/* The symbol table to read: .symtab, else .dynsym, else NULL. Returns 0 or SYMTAB_ETRUNC. */
static int find_symbols(Elf *elf, struct symtab *st, Elf_Scn **symscn)
{
	Elf_Scn *scn = NULL, *dynscn = NULL;

	*symscn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return SYMTAB_ETRUNC;
		if (sh.sh_type == SHT_SYMTAB && !*symscn)
			*symscn = scn;
		else if (sh.sh_type == SHT_DYNSYM && !dynscn)
			dynscn = scn;
	}
	st->has_symtab = *symscn != NULL;
	if (!*symscn)
		*symscn = dynscn;
	return 0;
}

/* Read the routines of an ELF whose header was checked into st. Returns 0 or SYMTAB_E*. */
static int read_routines(Elf *elf, struct symtab *st)
{
	struct rawsym *raw = NULL;
	uint64_t *ifunc = NULL;
	struct strlist own = { 0 };
	size_t n_raw = 0, n_ifunc = 0;
	struct dwinfo dw;
	Elf_Scn *symscn;
	int rc;

	memset(&dw, 0, sizeof(dw));
	rc = find_symbols(elf, st, &symscn);
	if (rc)
		return rc;
	if (!symscn)
		return SYMTAB_ENOSYMS;
	rc = symbols_read(elf, symscn, &raw, &n_raw, &ifunc, &n_ifunc, st, &own);
	if (!rc && !n_raw)
		rc = SYMTAB_ENOSYMS;
	if (!rc) {
		qsort(raw, n_raw, sizeof(*raw), rawsym_cmp);
		qsort(ifunc, n_ifunc, sizeof(*ifunc), u64_cmp);
		st->has_dwarf = dwinfo_read(elf, &dw);
		st->parallel_runtime = dynamic_parallel_runtime(elf);
		dynamic_read_plt(elf, st);
		build_routines(st, raw, n_raw, ifunc, n_ifunc, &dw);
		st->n_own = st->n;
		if (!st->n)
			rc = SYMTAB_ENOSYMS;
		fs_info(2, "%s: %zu routines from %s%s%s", st->path, st->n,
			st->has_symtab ? ".symtab" : ".dynsym", st->has_dwarf ? " with DWARF" : "",
			st->is_static ? " (static)" : "");
	}
	dwinfo_free(&dw);
	strlist_free(&own);
	free(raw);
	free(ifunc);
	return rc;
}

/*
 * Fill @st from the executable at @path (see symtab.h). On failure @st is
 * left empty and a negative errno or SYMTAB_E* is returned; nothing is printed.
 */
int symtab_load(const char *path, struct symtab *st)
{
	static bool elf_ready;
	struct stat sb;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	int fd, rc = 0;

	memset(st, 0, sizeof(*st));
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
	rc = check_header(elf, (uint64_t)sb.st_size, &eh);
	if (rc)
		goto out;
	st->path = xstrdup(path);
	st->e_entry = eh.e_entry;
	st->pie = eh.e_type == ET_DYN;
	rc = read_phdrs(elf, st);
	if (rc)
		goto out;
	st->soname = dynamic_soname(elf);
	rc = read_routines(elf, st);
out:
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
