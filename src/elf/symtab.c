// SPDX-License-Identifier: GPL-2.0-or-later
/* symtab.c - the routine table of an executable: loading it, queries, freeing it. */
#include "symtab_int.h"
#include "fortstat/names.h"
#include "fortstat/util.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/*
 * Has the file lost its end? Linkers put the section header table last: a
 * file that still holds all of it was not cut short, and a header that
 * points beyond its end is corrupt.
 */
static bool cut_short(const GElf_Ehdr *eh, uint64_t fsize)
{
	return eh->e_shoff && eh->e_shentsize == sizeof(Elf64_Shdr) &&
	       (eh->e_shoff > fsize ||
		(uint64_t)eh->e_shnum * eh->e_shentsize > fsize - eh->e_shoff);
}

/* Check that the program header table lies inside the file. Returns 0 or SYMTAB_E*. */
static int check_phdrs(Elf *elf, const GElf_Ehdr *eh, uint64_t fsize)
{
	size_t phnum;

	if (eh->e_phnum &&
	    (eh->e_phoff > fsize || (uint64_t)eh->e_phnum * eh->e_phentsize > fsize - eh->e_phoff))
		return cut_short(eh, fsize) ? SYMTAB_ETRUNC : SYMTAB_EBADPHDR;
	/* Linux's own rule (load_elf_phdrs): Elf64_Phdr entries, 1 to 4 KiB of them. */
	if (eh->e_phentsize != sizeof(Elf64_Phdr) || !eh->e_phnum ||
	    eh->e_phnum * sizeof(Elf64_Phdr) > 4096)
		return SYMTAB_EBADPHDR;
	if (elf_getphdrnum(elf, &phnum) != 0)
		return SYMTAB_EBADPHDR;
	return 0;
}

/*
 * Check that the section headers can be read: the kernel never reads them,
 * so a program whose section headers are corrupt still runs (and its
 * libraries can be timed), but its symbols cannot be found. Sections that
 * lie outside the file are left to their readers (libelf gives no data).
 * Returns 0 or SYMTAB_EBADSHDR.
 */
static int check_shdrs(Elf *elf, const GElf_Ehdr *eh, uint64_t fsize)
{
	Elf_Scn *scn = NULL;
	size_t shnum, shstrndx;

	if (eh->e_shoff > fsize || (uint64_t)eh->e_shnum * eh->e_shentsize > fsize - eh->e_shoff)
		return SYMTAB_EBADSHDR;
	if (elf_getshdrnum(elf, &shnum) != 0 || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return SYMTAB_EBADSHDR;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return SYMTAB_EBADSHDR;
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
 * Check what the ELF header says: an x86-64 executable or shared object
 * whose program headers lie inside the file. Returns 0 or SYMTAB_E*.
 */
static int check_header(Elf *elf, uint64_t fsize, GElf_Ehdr *eh)
{
	if (!elf || elf_kind(elf) != ELF_K_ELF)
		return SYMTAB_ENOTELF;
	if (!elf_getident(elf, NULL) || !gelf_getehdr(elf, eh))
		return SYMTAB_ETRUNC;
	if (eh->e_machine != EM_X86_64)
		return SYMTAB_ENOTX86_64;
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return SYMTAB_ENOTEXEC;
	return check_phdrs(elf, eh, fsize);
}

/*
 * Map the file at fd privately and make its identification read as the
 * kernel reads it. Linux checks only the magic, e_type and e_machine of an
 * executable: a file whose EI_CLASS, EI_DATA or EI_VERSION says something
 * else still runs as 64-bit little-endian when e_machine is EM_X86_64, so
 * the private copy says so too (libelf would not read it). Returns the
 * image (*len bytes, munmap it), or NULL with *rc set.
 */
static unsigned char *map_image(int fd, const char *path, size_t *len, int *rc)
{
	struct stat sb;
	unsigned char *b;

	if (fstat(fd, &sb) < 0) {
		*rc = -errno;
		return NULL;
	}
	if (S_ISDIR(sb.st_mode)) {
		*rc = -EISDIR;
		return NULL;
	}
	*len = (size_t)sb.st_size;
	if (*len < SELFMAG) {
		*rc = SYMTAB_ENOTELF;
		return NULL;
	}
	b = mmap(NULL, *len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (b == MAP_FAILED) {
		*rc = errno == ENODEV || errno == EACCES ? SYMTAB_ENOTELF : -errno;
		return NULL;
	}
	*rc = 0;
	if (memcmp(b, ELFMAG, SELFMAG) != 0)
		*rc = SYMTAB_ENOTELF;
	else if (*len < sizeof(Elf64_Ehdr))
		*rc = SYMTAB_ETRUNC;
	else if (b[18] != (EM_X86_64 & 0xff) || b[19] != EM_X86_64 >> 8)
		*rc = SYMTAB_ENOTX86_64; /* e_machine, read little-endian as the kernel reads it */
	if (!*rc && (b[EI_CLASS] != ELFCLASS64 || b[EI_DATA] != ELFDATA2LSB ||
		     b[EI_VERSION] != EV_CURRENT)) {
		fs_info(1,
			"%s: ELF class %u, data %u, version %u in its identification: read as "
			"64-bit little-endian, version 1, as the kernel does",
			path, b[EI_CLASS], b[EI_DATA], b[EI_VERSION]);
		b[EI_CLASS] = ELFCLASS64;
		b[EI_DATA] = ELFDATA2LSB;
		b[EI_VERSION] = EV_CURRENT;
	}
	if (*rc) {
		munmap(b, *len);
		return NULL;
	}
	return b;
}

/*
 * Would the kernel map this loadable segment? Linux kills the program
 * during execve (SIGSEGV) when a PT_LOAD segment's file offset and address
 * differ modulo the page size, its file size exceeds its memory size, or it
 * reaches beyond the user address space.
 */
static bool load_ok(const GElf_Phdr *ph)
{
	const uint64_t task_size = 0x7ffffffff000ull, page = 4096;

	if (ph->p_filesz && (ph->p_offset - ph->p_vaddr) % page)
		return false;
	return ph->p_filesz <= ph->p_memsz && ph->p_memsz <= task_size &&
	       ph->p_vaddr <= task_size - ph->p_memsz;
}

/*
 * Read the program headers: static or not, and the interpreter, which must
 * exist; the entry point (when there is one: not in most shared libraries)
 * must lie in an executable segment, and every loadable segment inside the
 * file. Returns 0, SYMTAB_ETRUNC, SYMTAB_EBADPHDR, SYMTAB_EBADENTRY or
 * SYMTAB_ENOINTERP.
 */
static int read_phdrs(Elf *elf, const GElf_Ehdr *eh, struct symtab *st)
{
	size_t i, phnum, fsize = 0;
	bool entry_ok = false;

	st->is_static = true;
	elf_rawfile(elf, &fsize);
	if (elf_getphdrnum(elf, &phnum) != 0)
		return SYMTAB_EBADPHDR;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph))
			return SYMTAB_EBADPHDR;
		if (ph.p_type == PT_LOAD &&
		    (ph.p_offset > fsize || ph.p_filesz > fsize - ph.p_offset))
			return cut_short(eh, fsize) ? SYMTAB_ETRUNC : SYMTAB_EBADPHDR;
		if (ph.p_type == PT_LOAD && !load_ok(&ph)) {
			fs_info(1,
				"%s: program header %zu: PT_LOAD at %#" PRIx64 ", %#" PRIx64
				" bytes from offset %#" PRIx64 " (%#" PRIx64 " in the file)",
				st->path, i, (uint64_t)ph.p_vaddr, (uint64_t)ph.p_memsz,
				(uint64_t)ph.p_offset, (uint64_t)ph.p_filesz);
			return SYMTAB_EBADPHDR;
		}
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) && st->e_entry >= ph.p_vaddr &&
		    st->e_entry - ph.p_vaddr < ph.p_memsz)
			entry_ok = true;
		if (ph.p_type == PT_INTERP) {
			size_t len;
			const char *ip = elf_rawfile(elf, &len);

			st->is_static = false;
			/* Linux: a NUL-terminated path of 2 to PATH_MAX bytes, in the file. */
			if (!ip || ph.p_offset >= len || ph.p_filesz < 2 || ph.p_filesz > 4096 ||
			    ph.p_filesz > len - ph.p_offset || ip[ph.p_offset + ph.p_filesz - 1])
				return SYMTAB_EBADPHDR;
			if (!st->interp)
				st->interp = xasprintf("%.*s", (int)ph.p_filesz, ip + ph.p_offset);
		}
	}
	if (st->e_entry && !entry_ok)
		return SYMTAB_EBADENTRY;
	if (st->interp && access(st->interp, F_OK) != 0)
		return SYMTAB_ENOINTERP;
	return 0;
}

/* The symbol table to read: .symtab, else .dynsym, else NULL. Returns 0 or SYMTAB_EBADSHDR. */
static int find_symbols(Elf *elf, struct symtab *st, Elf_Scn **symscn)
{
	Elf_Scn *scn = NULL, *dynscn = NULL;

	*symscn = NULL;
	while ((scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return SYMTAB_EBADSHDR;
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

/*
 * Read the routines of an ELF whose header was checked (eh, fsize bytes)
 * into st. Returns 0, SYMTAB_ENOSYMS or SYMTAB_EBADSHDR.
 */
static int read_routines(Elf *elf, const GElf_Ehdr *eh, uint64_t fsize, struct symtab *st)
{
	struct rawsym *raw = NULL;
	uint64_t *ifunc = NULL;
	struct strlist own = {0};
	size_t n_raw = 0, n_ifunc = 0;
	struct dwinfo dw;
	Elf_Scn *symscn;
	int rc;

	memset(&dw, 0, sizeof(dw));
	rc = check_shdrs(elf, eh, fsize);
	if (rc)
		return rc;
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
	unsigned char *image;
	size_t len = 0;
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
	image = map_image(fd, path, &len, &rc);
	close(fd);
	if (!image)
		return rc;
	elf = elf_memory((char *)image, len);
	rc = check_header(elf, (uint64_t)len, &eh);
	if (rc)
		goto out;
	st->path = xstrdup(path);
	st->e_entry = eh.e_entry;
	st->pie = eh.e_type == ET_DYN;
	rc = read_phdrs(elf, &eh, st);
	if (rc)
		goto out;
	st->soname = dynamic_soname(elf);
	dynamic_read_needed(elf, st);
	rc = read_routines(elf, &eh, (uint64_t)len, st);
out:
	if (elf)
		elf_end(elf);
	munmap(image, len);
	if (rc && rc != SYMTAB_ENOSYMS && rc != SYMTAB_EBADSHDR && rc != SYMTAB_ENOINTERP)
		symtab_free(st);
	return rc;
}

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
		return "truncated ELF file (shorter than its headers say)";
	case SYMTAB_ENOSYMS:
		return "no function symbols (stripped?)";
	case SYMTAB_ENOTEXEC:
		return "not an executable (object file or core dump?)";
	case SYMTAB_EBADPHDR:
		return "corrupt program headers: the kernel cannot load it";
	case SYMTAB_EBADSHDR:
		return "corrupt section headers: its symbols cannot be read";
	case SYMTAB_ENOINTERP:
		return "its ELF interpreter (PT_INTERP) does not exist";
	case SYMTAB_EBADENTRY:
		return "corrupt ELF headers: its entry point lies in no executable segment";
	default:
		return err < 0 ? strerror(-err) : "unknown error";
	}
}

/* See symtab.h. */
void symtab_say_error(const char *path, const struct symtab *st, int err)
{
	char *p = names_escape(path), *interp;

	if (err == SYMTAB_ENOSYMS && st && !st->is_static) {
		char *sugg[8], *eg;
		size_t n = names_suggest_libs(st->needed, st->n_needed, NULL, 0, sugg, 8);

		eg = n ? names_lib_example(sugg, n, NULL, 0, 0, path)
		       : xstrdup("e.g. fortstat -l libc");
		fs_error("%s: no function symbols (stripped?): time its libraries' routines with "
			 "-l, %s",
			 p, eg);
		free(eg);
		for (size_t i = 0; i < n; i++)
			free(sugg[i]);
	} else if (err == SYMTAB_ENOSYMS && st) {
		fs_error(
		    "%s: no function symbols (stripped?), and statically linked: nothing in it "
		    "can be timed",
		    p);
	} else if (err == SYMTAB_EBADSHDR && st && !st->is_static) {
		fs_error("%s: %s (its libraries' routines can be timed with -l)", p,
			 symtab_strerror(err));
	} else if (err == SYMTAB_ENOINTERP && st && st->interp) {
		interp = names_escape(st->interp);
		fs_error("%s: its ELF interpreter %s (PT_INTERP) does not exist", p, interp);
		free(interp);
	} else {
		fs_error("%s: %s", p, symtab_strerror(err));
	}
	free(p);
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

static char *dup_or_null(const char *s)
{
	return s ? xstrdup(s) : NULL;
}

static char **dup_strv(char *const *v, size_t n)
{
	char **c = n ? xmalloc(n * sizeof(*c)) : NULL;

	for (size_t i = 0; i < n; i++)
		c[i] = dup_or_null(v[i]);
	return c;
}

/* See symtab.h: a deep copy, every string and array the copy's own. */
void symtab_dup(const struct symtab *src, struct symtab *dst)
{
	*dst = *src;
	dst->path = dup_or_null(src->path);
	dst->interp = dup_or_null(src->interp);
	dst->soname = dup_or_null(src->soname);
	dst->needed = dup_strv(src->needed, src->n_needed);
	dst->modules = dup_strv(src->modules, src->n_modules);
	dst->r = src->n ? xmalloc(src->n * sizeof(*dst->r)) : NULL;
	for (size_t i = 0; i < src->n; i++) {
		struct routine *r = &dst->r[i];

		*r = src->r[i];
		r->names = dup_strv(src->r[i].names, src->r[i].n_names);
		r->display = dup_or_null(src->r[i].display);
		r->file = dup_or_null(src->r[i].file);
		for (size_t k = 0; r->module && k < src->n_modules; k++)
			if (src->r[i].module == src->modules[k])
				r->module = dst->modules[k]; /* the copy's own name */
	}
	dst->plt = src->n_plt ? xmalloc(src->n_plt * sizeof(*dst->plt)) : NULL;
	for (size_t i = 0; i < src->n_plt; i++) {
		dst->plt[i] = src->plt[i];
		dst->plt[i].name = dup_or_null(src->plt[i].name);
	}
	dst->ifuncs = src->n_ifuncs ? xmalloc(src->n_ifuncs * sizeof(*dst->ifuncs)) : NULL;
	for (size_t i = 0; i < src->n_ifuncs; i++) {
		dst->ifuncs[i] = src->ifuncs[i];
		dst->ifuncs[i].name = dup_or_null(src->ifuncs[i].name);
	}
}

/* The parts of routine r that it owns, freed. */
static void routine_free(struct routine *r)
{
	for (size_t k = 0; k < r->n_names; k++)
		free(r->names[k]);
	free(r->names);
	free(r->display);
	free(r->file);
}

void symtab_compact(struct symtab *st, const uint32_t *map, size_t n_new)
{
	struct routine *nr = xcalloc(n_new ? n_new : 1, sizeof(*nr));
	size_t own = 0;

	for (size_t i = 0; i < st->n; i++) {
		if (map[i] == UINT32_MAX || map[i] >= n_new) {
			routine_free(&st->r[i]);
			continue;
		}
		nr[map[i]] = st->r[i];
		own += i < st->n_own;
	}
	free(st->r);
	st->r = nr;
	st->n = n_new;
	st->n_own = own;
}

/* Free what @st owns and leave it empty; NULL and a second call are harmless. */
void symtab_free(struct symtab *st)
{
	size_t i;

	if (!st)
		return;
	for (i = 0; i < st->n; i++)
		routine_free(&st->r[i]);
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
	for (i = 0; i < st->n_needed; i++)
		free(st->needed[i]);
	free(st->needed);
	memset(st, 0, sizeof(*st));
}
