// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * modules.c - the images of a process: the executable at its exec stop, shared
 * libraries (-l) through the dynamic linker's rendezvous as they appear or go
 * (dlopen/dlclose), indirect functions, and the unwinder's library.
 */
#include <elf.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/clock.h"
#include "fortstat/inject.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/names.h"
#include "fortstat/precheck.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "fortstat/procfs.h"
#include "tracer.h"
#include "evpage.h"
#include "golang.h"
#include "modules.h"
#include "patch.h"
#include "patches.h"
#include "../probe/areas.h"

/* struct r_debug and struct link_map of glibc (the parts read). */
#define RDEBUG_MAP 8
#define RDEBUG_STATE 24
#define RT_CONSISTENT 0

/*
 * Follow the dynamic linker (for -l): a breakpoint on _dl_debug_state, which
 * it calls with r_debug.r_state RT_CONSISTENT after each change of the
 * library list (at start, dlopen, dlclose). Its body is a bare `ret`, which
 * the breakpoint emulates.
 */
void setup_rdebug(struct tracer *tr)
{
	struct symtab *st = tr->ps->st;
	uint64_t base, dbg, rdebug;
	uint8_t code[8];
	struct patch *p;
	size_t off = 0;
	static const uint8_t endbr64[4] = {0xf3, 0x0f, 0x1e, 0xfa}, int3 = 0xcc;

	if (auxv_get(tr->ps->leader, AT_BASE, &base) < 0 || !base ||
	    symtab_symbol(st->interp, "_dl_debug_state", &dbg) < 0 ||
	    symtab_symbol(st->interp, "_r_debug", &rdebug) < 0 ||
	    mem_read(tr->ps->memfd, dbg + base, code, sizeof(code)) < 0) {
		if (tr->o->n_libs)
			fs_warn("-l: cannot follow the dynamic linker %s: no library will be timed",
				st->interp);
		else
			fs_info(1, "cannot follow the dynamic linker %s", st->interp);
		return;
	}
	if (!memcmp(code, endbr64, sizeof(endbr64)))
		off = 4;
	if (code[off] != 0xc3) {
		if (tr->o->n_libs)
			fs_warn("-l: %s: _dl_debug_state is not a bare return: no library will be "
				"timed",
				st->interp);
		return;
	}
	p = patch_new(tr);
	p->trap = dbg + base + off;
	p->orig = 0xc3;
	p->routine = ACCT_NONE;
	p->rdebug = true;
	if (mem_write(tr->ps->memfd, p->trap, &int3, 1) < 0)
		return;
	u64map_put(&tr->ps->traps, p->trap, (uint32_t)tr->ps->n_patches);
	tr->ps->n_patches++;
	tr->ps->rdebug = rdebug + base;
	fs_info(2,
		"following the dynamic linker: r_debug at 0x%" PRIx64 ", breakpoint at 0x%" PRIx64,
		tr->ps->rdebug, dbg + base + off);
}

struct lm_entry {
	uint64_t l_addr, l_name, l_ld, l_next, l_prev;
};

/* Read a NUL-terminated string of the program into buf (truncated). */
static int read_cstr(int fd, uint64_t addr, char *buf, size_t size)
{
	size_t got = 0;

	while (got + 1 < size) {
		size_t chunk = 64 - (addr + got) % 64; /* never past a page end */
		if (chunk > size - 1 - got)
			chunk = size - 1 - got;
		if (mem_read(fd, addr + got, buf + got, chunk) < 0)
			return -EIO;
		for (size_t i = got; i < got + chunk; i++)
			if (!buf[i])
				return 0;
		got += chunk;
	}
	buf[got] = '\0';
	return 0;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Which -l patterns match a library known by these names? Marks them hit. */
static bool lib_wanted(struct tracer *tr, const char *const *mod_names)
{
	bool any = false;

	for (size_t k = 0; k < tr->o->n_libs; k++) {
		const char *pat = tr->o->libs[k];

		for (size_t i = 0; mod_names[i]; i++) {
			if (names_lib_match(pat, strlen(pat), mod_names[i])) {
				tr->lib_hit[k] = true;
				any = true;
				break;
			}
		}
	}
	return any;
}

#define VDSO_MAX (1u << 20) /* bytes of a vDSO read at most */

/*
 * The size of the vDSO's function at `target`, by the vDSO's own symbols
 * (an indirect function of libc may resolve there: time, gettimeofday);
 * 0 when target is not in the vDSO or no function starts there. The vDSO
 * is read once a call of resolve_ifuncs (*img, *base, *len).
 */
static uint64_t vdso_func_size(struct tracer *tr, uint64_t target, uint8_t **img, uint64_t *base,
			       size_t *len)
{
	if (!*base) {
		uint64_t end;

		if (auxv_get(tr->ps->leader, AT_SYSINFO_EHDR, base) || !*base)
			*base = 1; /* none: asked once */
		end = *base > 1 ? maps_end(tr->ps->leader, *base, 0) : 0;
		if (end > *base && end - *base <= VDSO_MAX) {
			*len = (size_t)(end - *base);
			*img = xmalloc(*len);
			if (mem_read(tr->ps->memfd, *base, *img, *len)) {
				free(*img);
				*img = NULL;
			}
		}
	}
	if (!*img || target < *base || target - *base >= *len)
		return 0;
	return symtab_image_func_size(*img, *len, target - *base);
}

/*
 * Find what an indirect function of a library resolves to, by calling its
 * resolver in the program (after relocation, as the dynamic linker did),
 * and add the target to the library's table under the function's name. A
 * target in the vDSO takes the size of the vDSO's function (RT_SIZED): the
 * stub's planner reads that much of it, not the rest of the vDSO (its data
 * after the code: "routine not fully decodable", glibc's time()).
 */
static void resolve_ifuncs(struct tracer *tr, struct tthread *th, struct symtab *lib, uint64_t bias)
{
	uint64_t hwcap = 0, vdso = 0;
	uint8_t *vimg = NULL;
	size_t vlen = 0;

	auxv_get(tr->ps->leader, AT_HWCAP, &hwcap);
	for (size_t i = 0; i < lib->n_ifuncs; i++) {
		uint64_t target, vsize;
		struct routine *r;
		int err =
		    inject_call(th->tid, tr->ps->memfd, lib->ifuncs[i].resolver + bias,
				tr->ps->scratch + SCRATCH_CALLRET, hwcap, &target, &th->defer_sig);

		if (err || target < bias) {
			fs_info(1, "not timing %s: its resolver %s", lib->ifuncs[i].name,
				err ? strerror(-err) : "returned nothing usable");
			continue;
		}
		fs_info(2, "%s resolves to 0x%" PRIx64, lib->ifuncs[i].name, target);
		r = symtab_add_routine(lib, target - bias, 32, lib->ifuncs[i].name);
		vsize = vdso_func_size(tr, target, &vimg, &vdso, &vlen);
		if (vsize && r->addr == target - bias) {
			r->size = vsize;
			r->flags |= RT_SIZED;
		}
	}
	free(vimg);
}

/* A library appeared: read it, choose its routines, patch them. */
static void module_load(struct tracer *tr, struct tthread *th, struct tmodule *m)
{
	struct symtab lib;
	size_t n_sel;
	int err;

	if (!m->have_routines) {
		const char *mod_names[5];

		err = symtab_load(m->real, &lib);
		if (err) {
			symtab_free(&lib); /* a stripped one holds the image's facts */
			fs_warn("-l: %s: %s", m->path, symtab_strerror(err));
			m->matched = false;
			return;
		}
		free(m->name);
		m->name = xstrdup(lib.soname ? lib.soname : base_name(m->path));
		mod_names[0] = m->name;
		mod_names[1] = m->path;
		mod_names[2] = m->real;
		mod_names[3] = NULL;
		resolve_ifuncs(tr, th, &lib, m->bias);
		n_sel = symtab_select_module(&lib, tr->names, tr->exclude, mod_names);
		if (tr->o->alloc)
			symtab_select_alloc(&lib);
		m->first = symtab_append(tr->ps->st, &lib, m->name);
		m->n = tr->ps->st->n - m->first;
		m->have_routines = true;
		books_grow(tr->ps->books, tr->ps->st->n);
		fs_info(1, "%s: %zu routines to time", m->name, n_sel);
	}
	m->p0 = tr->ps->n_patches;
	if (m->n)
		patch_routines(tr, th->tid, tr->ps->st, m->first, m->first + m->n, m->bias,
			       PATCH_LIB, &th->defer_sig);
	m->np = tr->ps->n_patches - m->p0;
	fs_info(1, "%s loaded at 0x%" PRIx64 ": %zu routines patched", m->name, m->bias, m->np);
}

/*
 * The unwinder's library appeared (libgcc_s: C++ exceptions, backtrace,
 * thread cancellation, from wherever they start): hook its entries so that
 * it finds the original return addresses on the stack.
 */
static void module_hook(struct tracer *tr, struct tthread *th, struct tmodule *m)
{
	struct symtab lib;

	m->p0 = tr->ps->n_patches;
	m->np = 0;
	if (tr->o->count_only)
		return;
	if (symtab_load(m->real, &lib) != 0) {
		symtab_free(&lib); /* a stripped one holds the image's facts */
		return;
	}
	patch_routines(tr, th->tid, &lib, 0, lib.n, m->bias, PATCH_HOOKS, &th->defer_sig);
	/* Its code's extent: a routine it calls back (a personality routine) is seen by its return
	 * address. */
	tr->ps->unw_lo = UINT64_MAX;
	tr->ps->unw_hi = 0;
	for (size_t i = 0; i < lib.n; i++) {
		if (lib.r[i].addr + m->bias < tr->ps->unw_lo)
			tr->ps->unw_lo = lib.r[i].addr + m->bias;
		if (lib.r[i].addr + lib.r[i].size + m->bias > tr->ps->unw_hi)
			tr->ps->unw_hi = lib.r[i].addr + lib.r[i].size + m->bias;
	}
	if (!lib.n)
		tr->ps->unw_lo = 0;
	symtab_free(&lib);
	m->np = tr->ps->n_patches - m->p0;
	fs_info(1, "%s loaded at 0x%" PRIx64 ": %zu unwinder entries hooked", m->path, m->bias,
		m->np);
}

/* A library went away (dlclose): its patches went with it. Counts are kept. */
static void module_unload(struct tracer *tr, struct tmodule *m)
{
	if (m->unwinder)
		tr->ps->unw_lo = tr->ps->unw_hi = 0;
	for (size_t j = m->p0; j < m->p0 + m->np; j++) {
		tr->ps->patches[j].dead = true;
		probe_hot_set(tr->ps, j);
	}
	m->np = 0;
	m->loaded = false;
	/* Return sites cached in its code may become another library's. */
	u64map_free(&tr->ps->retsite);
	if (m->matched)
		fs_info(1, "%s unloaded", m->name);
}

/* The link_map entry (lm, l_addr, l_name) is in the list: make sure we know it. */
static void module_seen(struct tracer *tr, struct tthread *th, uint64_t lm, uint64_t bias,
			const char *path)
{
	char real[PATH_MAX];
	const char *mod_names[4];
	struct tmodule *m = NULL;

	for (size_t i = 0; i < tr->ps->n_mods; i++) {
		if (tr->ps->mods[i].loaded && tr->ps->mods[i].lm == lm &&
		    tr->ps->mods[i].bias == bias) {
			tr->ps->mods[i].seen = true;
			return;
		}
	}
	if (!realpath(path, real))
		snprintf(real, sizeof(real), "%s", path);
	for (size_t i = 0; i < tr->ps->n_mods && !m; i++)
		if (!tr->ps->mods[i].loaded && !strcmp(tr->ps->mods[i].real, real))
			m = &tr->ps->mods[i];
	if (!m) {
		tr->ps->mods = xrealloc(tr->ps->mods, (tr->ps->n_mods + 1) * sizeof(*tr->ps->mods));
		m = &tr->ps->mods[tr->ps->n_mods++];
		memset(m, 0, sizeof(*m));
		m->path = xstrdup(path);
		m->real = xstrdup(real);
		m->name = xstrdup(base_name(path));
		mod_names[0] = m->path;
		mod_names[1] = m->real;
		mod_names[2] = NULL;
		/*
		 * The dynamic linker itself is never patched (it runs our
		 * breakpoint); the unwinder's library only gets its entries
		 * hooked, never timed.
		 */
		m->unwinder = !strncmp(base_name(real), "libgcc_s", 8) ||
			      !strncmp(base_name(real), "libunwind", 9);
		m->matched = strcmp(base_name(real), base_name(tr->ps->st->interp)) != 0 &&
			     strncmp(base_name(real), "ld-linux", 8) != 0 &&
			     lib_wanted(tr, mod_names);
		if (m->matched && m->unwinder) {
			fs_warn(
			    "-l: %s is the unwinder's library: its entries are hooked, not timed",
			    base_name(real));
			m->matched = false;
		}
	}
	m->lm = lm;
	m->bias = bias;
	m->loaded = m->seen = true;
	if (m->matched)
		module_load(tr, th, m);
	else if (m->unwinder)
		module_hook(tr, th, m);
}

/*
 * The file of a link-map entry whose name is not an absolute path
 * (dlopen("./libplug.so"), a library found through LD_LIBRARY_PATH=.): the
 * file mapped at its load address with offset 0, as /proc/PID/maps names
 * it (the loader's current directory may have changed since). Returns 0
 * with path filled, or -1 (the program itself, the vDSO: no file of its own).
 */
struct file_at {
	uint64_t l_addr;
	char *path;
	size_t size;
};

static int file_mapped_at(const struct proc_map *m, void *arg)
{
	const struct file_at *w = arg;

	if (m->lo != w->l_addr || m->off != 0 || m->path[0] != '/')
		return 0;
	snprintf(w->path, w->size, "%s", m->path);
	return 1;
}

static int module_file(pid_t pid, uint64_t l_addr, char *path, size_t size)
{
	struct file_at w = {l_addr, path, size};

	return proc_maps_each(pid, file_mapped_at, &w) == 1 ? 0 : -1;
}

/* The dynamic linker's list is consistent again: compare it with ours. */
static void modules_sync(struct tracer *tr, struct tthread *th)
{
	uint64_t lm = 0;
	size_t guard = 0;

	for (size_t i = 0; i < tr->ps->n_mods; i++)
		tr->ps->mods[i].seen = false;
	mem_read(tr->ps->memfd, tr->ps->rdebug + RDEBUG_MAP, &lm, sizeof(lm));
	for (; lm && guard < 100000; guard++) {
		struct lm_entry e;
		char path[PATH_MAX];

		if (mem_read(tr->ps->memfd, lm, &e, sizeof(e)) < 0)
			break;
		/* The program itself and the vDSO have no file of their own here. */
		if (e.l_name && read_cstr(tr->ps->memfd, e.l_name, path, sizeof(path)) == 0 &&
		    path[0] &&
		    (path[0] == '/' ||
		     module_file(tr->ps->leader, e.l_addr, path, sizeof(path)) == 0))
			module_seen(tr, th, lm, e.l_addr, path);
		lm = e.l_next;
	}
	for (size_t i = 0; i < tr->ps->n_mods; i++)
		if (tr->ps->mods[i].loaded && !tr->ps->mods[i].seen)
			module_unload(tr, &tr->ps->mods[i]);
}

/* The thread stopped on _dl_debug_state: look at the libraries, then return. */
void handle_rdebug(struct tracer *tr, struct tthread *th)
{
	int32_t state = -1;

	if (mem_read(tr->ps->memfd, tr->ps->rdebug + RDEBUG_STATE, &state, sizeof(state)) == 0 &&
	    state == RT_CONSISTENT)
		modules_sync(tr, th);
	/* Emulate its `ret` (injected calls above restored every register). */
	arch_emulate_ret(th->tid, tr->ps->memfd);
}

void modules_attach(struct tracer *tr, struct tthread *th)
{
	int32_t state = -1;

	if (!tr->ps->rdebug)
		return;
	if (mem_read(tr->ps->memfd, tr->ps->rdebug + RDEBUG_STATE, &state, sizeof(state)) == 0 &&
	    state == RT_CONSISTENT)
		modules_sync(tr, th);
	else
		fs_info(1, "the dynamic linker is changing its list: libraries patched at its end");
}

int setup_image(struct tracer *tr)
{
	struct symtab *st = tr->ps->st;
	size_t n = 0;
	int err;

	map_event_page(tr);
	probe_prepare(tr, tr->ps->leader);

	if (st->pie) {
		uint64_t entry;
		err = auxv_get(tr->ps->leader, AT_ENTRY, &entry);
		if (err) {
			fs_error("%s: cannot read the load address: %s", st->path, strerror(-err));
			return err;
		}
		tr->ps->bias = entry - st->e_entry;
	}
	for (size_t i = 0; i < st->n; i++)
		n += (st->r[i].flags & RT_SELECTED) != 0;
	fs_info(1, "load bias 0x%" PRIx64 ", %zu routines to patch", tr->ps->bias, n);
	if (tr->o->n_libs && (st->is_static || !st->interp))
		fs_warn("-l: %s is statically linked: its library routines are its own (see --all)",
			st->path);
	/*
	 * Libraries are followed for -l, and to hook the unwinder of
	 * libgcc_s wherever it is reached from (a C++ exception thrown inside
	 * libstdc++, backtrace(), pthread_exit): it must read the original
	 * return addresses. Count-only rewrites none.
	 */
	tr->ps->follow_dl = !st->is_static && st->interp && (tr->o->n_libs || !tr->o->count_only);
	err = go_setup(tr);
	if (err)
		return err;
	err = patch_routines(tr, tr->ps->leader, st, 0, st->n, tr->ps->bias, PATCH_OWN, NULL);
	if (err)
		return err;
	if (tr->ps->follow_dl)
		setup_rdebug(tr);
	/*
	 * A launched process that takes the traps after all (its GS base in
	 * use, no steady TSC), or a Go program (its runtime's hooks are
	 * int3s: it stops at each goroutine switch), dies with fortstat, as
	 * with --traps: its int3s would kill it at its next timed call.
	 */
	if (tr->o->probes && (!tr->ps->probes || tr->ps->go) && !tr->o->pid)
		ptrace(PTRACE_SETOPTIONS, tr->ps->leader, 0, TRACE_PTRACE_OPTS | PTRACE_O_EXITKILL);
	return 0;
}
