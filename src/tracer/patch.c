// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * patch.c - patching a process: scratch pages near its code, entry stubs or int3
 * patches with their displaced instructions, the entries written in batches.
 * Each entry stub is planned in patchplan.c (try_stub); resuming past a
 * patch is patches.c's (resume_patched).
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
#include "plancache.h"
#include "tracer.h"
#include "golang.h"
#include "memcall.h"
#include "patch.h"
#include "patch_int.h"
#include "patches.h"

/* Entries this close are written as one (write_entries): a page's worth. */
#define ENTRY_JOIN 4096

/*
 * Routines that read return addresses from the stack (C++ exceptions,
 * forced unwinding, backtraces). When a thread enters one, its original
 * return addresses are put back; they are rewritten again at its next stop
 * for the frames that survived.
 */
static bool is_unwinder_name(const char *s)
{
	static const char *const names[] = {
	    "__cxa_throw",
	    "__cxa_rethrow",
	    "_Unwind_RaiseException",
	    "_Unwind_Resume",
	    "_Unwind_Resume_or_Rethrow",
	    "_Unwind_ForcedUnwind",
	    "_Unwind_Backtrace",
	    "backtrace",
	    "__backtrace",
	    "pthread_exit",
	    "__pthread_unwind",
	    "__pthread_unwind_next",
	    "_ZSt17rethrow_exceptionNSt15__exception_ptr13exception_ptrE",
	};

	/* the first letters of them all: most names (cc1's 26,000 at each exec) end here */
	if (s[0] != '_' && s[0] != 'b' && s[0] != 'p')
		return false;
	if (s[0] == '_' && s[1] == 'Z' && (s[2] != 'S' || s[3] != 't'))
		return false;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(s, names[i]))
			return true;
	/* std::__throw_out_of_range and friends */
	return !strncmp(s, "_ZSt", 4) && strstr(s, "__throw_") != NULL;
}

/* Where a catch handler starts: the unwinding is over. */
static bool is_rehook_name(const char *s)
{
	return !strcmp(s, "__cxa_begin_catch");
}

static bool is_rehook(const struct routine *r)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (is_rehook_name(r->names[i]))
			return true;
	return false;
}

static bool is_unwinder(const struct routine *r)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (is_unwinder_name(r->names[i]))
			return true;
	return false;
}

/*
 * Map `size` bytes of scratch (read+exec) in the program within reach of
 * [lo, hi), by a system call run in thread tid (at RIP at the exec stop,
 * else in the program's first scratch page). Returns 0 and *base, or -errno.
 */
static int map_scratch(struct tracer *tr, pid_t tid, uint64_t lo, uint64_t hi, size_t size,
		       uint64_t *base, int *deferred)
{
	long args[6], ret;
	int err;

	err = find_gap(tid, lo, hi, size, base);
	if (err)
		return err;
	args[0] = (long)*base;
	args[1] = (long)size;
	args[2] = PROT_READ | PROT_EXEC;
	args[3] = MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE;
	args[4] = -1;
	args[5] = 0;
	if (tr->ps->scratch)
		err = inject_syscall_at(tid, tr->ps->memfd, tr->ps->scratch + SCRATCH_SYSCALL,
					SYS_mmap, args, &ret, deferred);
	else
		err = inject_syscall(tid, tr->ps->memfd, SYS_mmap, args, &ret);
	if (err)
		return err;
	if ((uint64_t)ret != *base)
		return ret < 0 && ret > -4096 ? (int)ret : -EEXIST;
	return 0;
}

/* Is routine r to be patched in this mode (timed, or hooked for the unwinder)? */
static bool patch_wanted(const struct tracer *tr, const struct routine *r, enum patch_mode mode,
			 bool *hook)
{
	*hook = !tr->o->count_only && (is_unwinder(r) || is_rehook(r));
	if (mode == PATCH_HOOKS)
		return *hook;
	if (mode == PATCH_LIB)
		*hook = *hook && (r->flags & RT_SELECTED);
	if (mode == PATCH_OWN && go_is_hook(tr->ps, (size_t)(r - tr->ps->st->r)))
		return true; /* Go's runtime.morestack and goexit1: hooked, not timed (golang.c) */
	return (r->flags & RT_SELECTED) || *hook;
}

/*
 * Write the entries of patches[p0..n_patches): the short entries' padding
 * first (a jmp rel8 must find its jmp rel32 there), then the jmps and int3s,
 * each pass gathered into a few writes (procmem.h's batch). Returns 0 or a
 * negative errno, said.
 */
static int write_entries(struct tracer *tr, size_t p0, const char *what)
{
	static const uint8_t int3 = 0xcc;
	struct mem_batch b = {0};
	uint64_t at = 0;
	int err;

	for (size_t j = p0; j < tr->ps->n_patches; j++) {
		const struct patch *p = &tr->ps->patches[j];

		if (p->stub && p->pad_addr)
			mem_batch_add(&b, p->pad_addr, p->pad_jmp, 5);
	}
	err = mem_batch_write(tr->ps->memfd, &b, ENTRY_JOIN, &at);
	for (size_t j = p0; !err && j < tr->ps->n_patches; j++) {
		const struct patch *p = &tr->ps->patches[j];

		if (p->stub)
			mem_batch_add(&b, p->jmp_addr, p->jmp, p->orig_len);
		else
			mem_batch_add(&b, p->trap, &int3, 1);
	}
	if (!err)
		err = mem_batch_write(tr->ps->memfd, &b, ENTRY_JOIN, &at);
	mem_batch_free(&b);
	if (err)
		fs_error("%s: cannot patch 0x%" PRIx64 ": %s", what, at, strerror(-err));
	return err;
}

/* One call of patch_routines: what its steps share. */
struct patching {
	struct tracer *tr;
	struct symtab *st;
	size_t from, to; /* the routines of st to patch */
	uint64_t bias;
	enum patch_mode mode;
	bool own; /* PATCH_OWN */
	const char *what;
	size_t n;	   /* routines to patch */
	uint64_t lo, hi;   /* their extent */
	uint64_t clo, chi; /* ... less the indirect functions' targets: the code read */
	size_t hdr;	   /* the first scratch page's header: return trap, trampoline */
	size_t go_room;	   /* Go's exit stubs, after the entry stubs */
	uint64_t base;	   /* the scratch pages: size bytes, their contents in buf */
	size_t size;
	uint8_t *buf;
	size_t k;      /* slots taken */
	size_t go_x;   /* Go exit stubs written */
	size_t n_trap; /* timed routines that trap at each call (with probes) */
	struct code_window w;
	struct pc_image *im;
};

/* The routines to patch, their count and extent in pg. Returns pg->n. */
static size_t patch_extent(struct patching *pg)
{
	const struct symtab *st = pg->st;
	const uint64_t bias = pg->bias;

	pg->lo = pg->clo = UINT64_MAX;
	pg->hi = pg->chi = 0;
	for (size_t i = pg->from; i < pg->to; i++) {
		bool hook;

		if (!patch_wanted(pg->tr, &st->r[i], pg->mode, &hook))
			continue;
		pg->n++;
		if (st->r[i].addr + bias < pg->lo)
			pg->lo = st->r[i].addr + bias;
		if (st->r[i].addr + st->r[i].size + bias > pg->hi)
			pg->hi = st->r[i].addr + st->r[i].size + bias;
		/*
		 * The copy of the code (below) spans the routines with symbols:
		 * an indirect function's target may lie in another mapping
		 * (glibc's time() in the vDSO, 145 MB after libc: a 145 MB
		 * read at every run with -l libc, 1.7 s on a loaded machine).
		 */
		if (!(st->r[i].flags & RT_IFUNC) && st->r[i].addr + bias < pg->clo)
			pg->clo = st->r[i].addr + bias;
		if (!(st->r[i].flags & RT_IFUNC) && st->r[i].addr + st->r[i].size + bias > pg->chi)
			pg->chi = st->r[i].addr + st->r[i].size + bias;
	}
	if (!pg->n) { /* a page for the return trap and injected code only */
		pg->lo = st->e_entry + bias;
		pg->hi = pg->lo + 1;
	}
	if (pg->clo >= pg->chi) { /* indirect functions' targets alone, or nothing */
		pg->clo = pg->lo;
		pg->chi = pg->hi;
	}
	return pg->n;
}

/*
 * Map the scratch pages near the code (pg->base, size) and lay out in
 * pg->buf what the program's first holds: the return trap, the probes'
 * trampoline. Returns 0 or -errno (said).
 */
static int scratch_pages(struct patching *pg, pid_t tid, int *deferred)
{
	struct tracer *tr = pg->tr;
	int err;

	/* Go's in-process exit stubs after the entry stubs (golang.c) */
	pg->go_room = pg->own ? go_exit_room(tr) : 0;
	pg->size = (pg->hdr + pg->n * INSN_STUB_SIZE + pg->go_room + 4095) & ~(size_t)4095;
	if (pg->own && tr->ps->page_addr)
		pg->size += RSITE_MAX * INSN_RSITE_SIZE;
	err = map_scratch(tr, tid, pg->lo, pg->hi, pg->size, &pg->base, deferred);
	if (err) {
		if (err == -ENOSPC)
			fs_error("%s: no free address range within 2 GiB of its code", pg->what);
		else
			fs_error("%s: cannot map scratch pages in the program: %s", pg->what,
				 strerror(-err));
		return err;
	}
	pg->buf = xmalloc(pg->size);
	memset(pg->buf, 0xcc, pg->size);
	if (pg->own) {
		tr->ps->scratch = pg->base;
		tr->ps->retrap = pg->base;
		tr->ps->retrap_trap = pg->base + insn_return_trap(tr->ps->page_addr, pg->buf) - 1;
		if (tr->ps->page_addr)
			tr->ps->rsites = pg->base + pg->size - RSITE_MAX * INSN_RSITE_SIZE;
		if (tr->ps->probes) {
			unsigned full;

			tr->ps->probe_tramp = pg->base + SCRATCH_HDR;
			insn_probe_trampoline(tr->ps->retrap, pg->buf + SCRATCH_HDR, &full);
			tr->ps->probe_full = tr->ps->probe_tramp + full;
		}
	}
	fs_info(2, "%s: scratch pages at 0x%" PRIx64 " (%zu bytes)", pg->what, pg->base, pg->size);
	return 0;
}

/* Routine i took its stub (patch p, the last): said, and Go's exits after it. */
static void stub_patched(struct patching *pg, size_t i, const struct patch *p, const char *name)
{
	struct tracer *tr = pg->tr;
	const size_t exits = pg->hdr + pg->n * INSN_STUB_SIZE + pg->go_x * INSN_GO_EXIT_SIZE;

	if (p->pad_addr)
		fs_info(2,
			"patch %s at 0x%" PRIx64 ": jmp to a stub through padding at "
			"0x%" PRIx64 " (%u bytes moved)",
			name, p->jmp_addr, p->pad_addr, p->orig_len);
	else
		fs_info(2, "patch %s at 0x%" PRIx64 ": jmp to a stub (%u bytes moved%s)", name,
			p->jmp_addr, p->orig_len, p->call_ret ? ", a call emulated" : "");
	tr->ps->n_patches++;
	pg->k++;
	if (pg->own && tr->ps->go)
		pg->go_x +=
		    go_add_probe_exits(tr, i, tr->ps->n_patches - 1, pg->bias, pg->base + exits,
				       pg->buf + exits, pg->go_room - pg->go_x * INSN_GO_EXIT_SIZE);
}

/*
 * Routine i at `entry` takes the int3 (patch p) since its stub was refused
 * for `why`: its first instruction planned (insn_plan) to run out of line
 * or be emulated, or the routine left alone (RT_SELECTED cleared).
 */
static void trap_patch(struct patching *pg, size_t i, struct patch *p, uint64_t entry, bool hook,
		       const char *name, const char *why)
{
	struct tracer *tr = pg->tr;
	struct routine *r = &pg->st->r[i];
	uint8_t code[32];
	size_t len = r->size < sizeof(code) ? (size_t)r->size : sizeof(code);
	int err;

	err = mem_read(tr->ps->memfd, entry, code, len);
	if (!err)
		insn_plan(code, len, entry, p->slot, &p->plan);
	if (err || p->plan.kind == INSN_REFUSE) {
		fs_info(1, "not %s %s: %s", hook ? "hooking" : "timing", name,
			err ? "its code cannot be read" : p->plan.reason);
		if (r->flags & RT_SELECTED)
			tr->n_refused++;
		r->flags &= ~(unsigned)RT_SELECTED;
		return;
	}
	p->trap = p->plan.addr;
	p->unhook = hook && is_unwinder(r);
	p->rehook = hook && !p->unhook;
	p->routine = pg->mode != PATCH_HOOKS && (r->flags & RT_SELECTED) ? (uint32_t)i : ACCT_NONE;
	p->noreturn = (r->flags & RT_NORETURN) != 0;
	p->alloc = p->routine != ACCT_NONE ? (uint8_t)memcall_fn(tr, r) : 0;
	p->go_hook = pg->own && go_is_hook(tr->ps, i);
	p->orig = code[p->plan.addr - entry];
	if (p->plan.kind == INSN_XOL)
		memcpy(pg->buf + pg->hdr + pg->k * INSN_STUB_SIZE, p->plan.slot, p->plan.slot_len);
	fs_info(2, "patch %s at 0x%" PRIx64 ": %s (%s)", name, p->trap, p->plan.text,
		p->plan.kind == INSN_XOL ? "out of line" : "emulated");
	/* with probes, each timed routine that stops at every call, and why */
	if (tr->ps->probes && p->routine != ACCT_NONE) {
		fs_info(1, "%s: a trap at each call (%s)", name, why);
		pg->n_trap++;
	}
	tr->ps->n_patches++;
	pg->k++;
	if (pg->own && tr->ps->go && p->routine != ACCT_NONE && !tr->o->count_only)
		go_add_exits(tr, i, pg->bias); /* p is stale from here */
}

/* Routine i, if it is to be patched: its stub, else its int3. */
static void patch_one(struct patching *pg, size_t i)
{
	struct tracer *tr = pg->tr;
	struct routine *r = &pg->st->r[i];
	uint64_t entry = r->addr + pg->bias;
	const char *name = r->display ? r->display : r->names[0], *why;
	struct patch *p;
	bool hook;

	if (!patch_wanted(tr, r, pg->mode, &hook))
		return;
	p = patch_new(tr);
	p->slot = pg->base + pg->hdr + pg->k * INSN_STUB_SIZE;
	why = hook ? "the unwinder: return addresses are put back at each call"
		   : try_stub(tr, r, entry, p, pg->buf + pg->hdr + pg->k * INSN_STUB_SIZE, pg->im,
			      pg->own ? 0 : pg->from, &pg->w);
	if (!why)
		stub_patched(pg, i, p, name);
	else
		trap_patch(pg, i, p, entry, hook, name, why);
}

/* What the plan cache's image im did in this patching, said. */
static void plancache_said(const char *what, const struct pc_image *im)
{
	if (im && im->checked)
		fs_info(
		    1,
		    "%s: %zu plans from the plan cache, checked against a fresh plan: %zu differ",
		    what, im->hits, im->differ);
	else if (im && im->hits)
		fs_info(1, "%s: %zu plans from the plan cache, %zu made", what, im->hits, im->made);
	if (im && im->moved)
		fs_info(1, "%s: %zu plans from the plan cache moved to this exec's addresses", what,
			im->moved);
	if (im && im->far)
		fs_info(1, "%s: %zu plans in the plan cache could not be moved here: made again",
			what, im->far);
	if (im && im->carried)
		fs_info(1, "%s: %zu routine%s throttled, as in %zu earlier exec%s of this file",
			what, im->carried, im->carried == 1 ? " starts" : "s start", im->uses - 1,
			im->uses > 2 ? "s" : "");
	if (im && im->differ)
		fs_warn("%s: %zu plans from the plan cache differ from a fresh plan", what,
			im->differ);
}

/* Calls through the executable's PLT into the unwinder (dynamic C++): hooked. */
static void hook_plt(struct tracer *tr, const struct symtab *st, uint64_t bias)
{
	for (size_t j = 0; !tr->o->count_only && j < st->n_plt; j++) {
		struct patch *p;

		if (!is_unwinder_name(st->plt[j].name) && !is_rehook_name(st->plt[j].name))
			continue;
		p = patch_new(tr);
		p->trap = st->plt[j].jmp + bias;
		p->got = st->plt[j].got + bias;
		p->unhook = is_unwinder_name(st->plt[j].name);
		p->rehook = !p->unhook;
		p->routine = ACCT_NONE;
		if (mem_read(tr->ps->memfd, p->trap, &p->orig, 1) < 0)
			continue;
		fs_info(2, "hook %s@plt at 0x%" PRIx64, st->plt[j].name, p->trap);
		tr->ps->n_patches++;
	}
}

/* Patch routines [from, to) of `tab` (patch.h): the steps above, in turn. */
int patch_routines(struct tracer *tr, pid_t tid, struct symtab *tab, size_t from, size_t to,
		   uint64_t bias, enum patch_mode mode, int *deferred)
{
	struct patching pg = {
	    .tr = tr,
	    .st = tab,
	    .from = from,
	    .to = to,
	    .bias = bias,
	    .mode = mode,
	    .own = mode == PATCH_OWN,
	};
	size_t p0 = tr->ps->n_patches;
	int err;

	if (pg.own) /* the file's entry in the plan cache, if any, is set below */
		tr->ps->pc_own = NULL;
	pg.what = pg.own ? tab->path : mode == PATCH_LIB ? tab->r[from].module : tab->path;
	/* The program's first scratch page: its header, then the probes' trampoline. */
	pg.hdr = pg.own ? SCRATCH_HDR + (tr->ps->probes ? INSN_PROBE_TRAMP_SIZE : 0) : 0;
	if (!patch_extent(&pg) && !(pg.own && tr->ps->follow_dl))
		return 0;
	err = scratch_pages(&pg, tid, deferred);
	if (err)
		return err;
	/* the code read at once when a plan is made (window_open) */
	pg.w.fd = tr->ps->memfd;
	pg.w.lo = pg.clo;
	pg.w.n = (size_t)(pg.chi - pg.clo);
	/*
	 * The program's own routines, a library's: their plans may have been
	 * made at an earlier exec (of another program, for a library).
	 */
	if (pg.own && tab->n_own == tab->n) {
		pg.im = plancache_image(tr, tr->ps->leader, tab->n);
		/*
		 * Its stubs' throttles go to the file's entry, and those of its
		 * earlier execs are taken (plan_take): not Go's (go_throttled),
		 * nor with --throttle=0 or FORTSTAT_THROTTLE_CARRY=0.
		 */
		tr->ps->pc_own =
		    tr->ps->probes && !tr->ps->go && tr->o->throttle_calls && plancache_carry_on()
			? pg.im
			: NULL;
	} else if (mode == PATCH_LIB && tab == tr->ps->st && pg.n)
		pg.im = plancache_image_at(tr, tr->ps->leader, pg.clo, to - from);
	for (size_t i = from; i < to; i++)
		patch_one(&pg, i);
	mem_cache_end();
	plancache_said(pg.what, pg.im);
	if (pg.own)
		hook_plt(tr, tab, bias);
	if (pg.n_trap)
		fs_info(1, "%s: %zu timed routine%s a trap at each call", pg.what, pg.n_trap,
			pg.n_trap == 1 ? " takes" : "s take");
	err = pg.own ? plancache_write_scratch(tr, pg.im, tid, pg.base, pg.buf, pg.size)
		     : mem_write(tr->ps->memfd, pg.base, pg.buf, pg.size);
	free(pg.buf);
	if (err) {
		fs_error("%s: cannot write scratch pages: %s", pg.what, strerror(-err));
		return err;
	}
	err = write_entries(tr, p0, pg.what);
	for (size_t j = p0; !err && j < tr->ps->n_patches; j++)
		u64map_put(&tr->ps->traps, tr->ps->patches[j].trap, (uint32_t)j);
	return err;
}
