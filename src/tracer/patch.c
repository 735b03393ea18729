// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * patch.c - patching a process: scratch pages near its code, entry stubs or int3
 * patches with their displaced instructions, and resuming past them.
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
#include "patches.h"
#include "../probe/areas.h"

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

/*
 * The routine before r in the program's own table and the bytes after it
 * up to r's entry, which belong to no routine: where a short entry may put
 * its jmp rel32 (insn_gap). Only with a full symbol table (.symtab: local
 * routines too) and a neighbour within 4 KiB: its place in gap (addr,
 * len, code_len), left 0 when there is none. gap_before reads the bytes.
 */
static void gap_place(struct tracer *tr, const struct routine *r, uint64_t entry,
		      struct insn_gap *gap)
{
	const struct symtab *st = tr->ps->st;
	size_t i = (size_t)(r - st->r);
	const struct routine *q;

	if (!st->has_symtab || i == 0 || i >= st->n_own)
		return;
	q = &st->r[i - 1];
	if (!q->size || q->addr + q->size + 5 > r->addr || r->addr - q->addr > 4096)
		return;
	gap->addr = q->addr + (entry - r->addr);
	gap->len = (size_t)(r->addr - q->addr);
	gap->code_len = (size_t)q->size;
}

/* The bytes of the gap gap_place found (free them), or NULL: none, or unreadable. */
static uint8_t *gap_before(struct tracer *tr, struct insn_gap *gap)
{
	uint8_t *b;

	if (!gap->len)
		return NULL;
	b = xmalloc(gap->len);
	if (mem_read(tr->ps->memfd, gap->addr, b, gap->len) < 0) {
		free(b);
		return NULL;
	}
	gap->bytes = b;
	return b;
}

/*
 * A test hook, not an option: FORTSTAT_TRAP_ROUTINES=NAME,NAME... keeps
 * those routines (any of their symbol names) off the stubs, as if none
 * fitted them: their entries get the int3 of the trap path
 * (tests/e2e/trapthrottle.sh).
 */
static bool forced_trap(const struct routine *r)
{
	static const char *list;
	static bool read;

	if (!read) {
		list = getenv("FORTSTAT_TRAP_ROUTINES");
		read = true;
	}

	for (size_t k = 0; list && *list && k < r->n_names; k++) {
		size_t n = strlen(r->names[k]);

		for (const char *s = list; (s = strstr(s, r->names[k])); s += n)
			if ((s == list || s[-1] == ',') && (s[n] == ',' || !s[n]))
				return true;
	}
	return false;
}

/* Are st->r[j] and r routines of one image (the program's own, or one library's)? */
static bool same_image(const struct symtab *st, size_t j, const struct routine *r)
{
	return st->r[j].module == r->module && (r->module || j < st->n_own);
}

/*
 * The routine starts around r in its image's table, within `near` bytes
 * below it: *prev the one before r, *lo the lowest (r's own when none);
 * *next the first above r and *far the first at least `near` bytes above
 * it (0: none).
 */
static void neighbours(const struct symtab *st, const struct routine *r, uint64_t near,
		       uint64_t *prev, uint64_t *lo, uint64_t *next, uint64_t *far)
{
	size_t i = (size_t)(r - st->r);

	*prev = *lo = r->addr;
	*next = *far = 0;
	for (size_t j = i; j-- > 0 && same_image(st, j, r) && st->r[j].addr + near >= r->addr;) {
		if (*prev == r->addr)
			*prev = st->r[j].addr;
		*lo = st->r[j].addr;
	}
	for (size_t j = i + 1; j < st->n && same_image(st, j, r); j++) {
		if (!*next)
			*next = st->r[j].addr;
		if (st->r[j].addr >= r->addr + near) {
			*far = st->r[j].addr;
			break;
		}
	}
}

#define PREV_NEAR 1024	       /* the routine before one walked if it starts this close */
#define IFUNC_NEAR 4096	       /* bytes around an indirect function's target walked for branches */
#define IFUNC_WALK 8192	       /* ... and after it at most (beyond: the file's AVX-512 variants) */
#define ROUTINE_MAX (1u << 20) /* bytes of a routine walked at most */

/*
 * What to read of r at `entry` for the planner: *len bytes of it, and in
 * gap what surrounds it. The routine before it, if it starts PREV_NEAR
 * bytes before at most (IFUNC_NEAR in an image known by its .dynsym
 * alone, where unnamed routines lie between), is walked for branches into
 * its first bytes (hand-written code enters a routine past its first
 * instruction: glibc's mempcpy, 8 bytes, jumps into memmove). An indirect
 * function's target has no symbol (size unknown): it runs up to a routine
 * known IFUNC_NEAR bytes after it (else the next one, else the end of its
 * mapping: the vDSO's, the last of a library), IFUNC_WALK bytes at most
 * (beyond lie the other variants of its file, whose AVX-512 instructions
 * capstone 4 may not decode), and the code IFUNC_NEAR bytes before it is
 * walked too. A routine shorter than a jmp takes up to 16 bytes after it
 * (gap->tail, padding if the planner finds so). Returns NULL or why it
 * cannot be planned.
 */
static const char *stub_extent(struct tracer *tr, const struct routine *r, uint64_t entry,
			       size_t *len, struct insn_gap *gap)
{
	uint64_t prev, lo, next, far;

	neighbours(tr->ps->st, r, IFUNC_NEAR, &prev, &lo, &next, &far);
	*len = (size_t)r->size;
	/* with .dynsym alone, routines unknown lie between those known (glibc's variants) */
	if (r->addr - prev <= (!r->module && tr->ps->st->has_symtab ? PREV_NEAR : IFUNC_NEAR)) {
		gap->near_addr = prev + (entry - r->addr);
		gap->near_len = (size_t)(r->addr - prev);
	}
	if (r->flags & RT_IFUNC) {
		/* up to a routine known, else the end of its code's mapping */
		uint64_t hi = far ? far : next;

		if (!hi) {
			hi = maps_end(tr->ps->leader, entry, 1);
			hi = hi > entry ? r->addr + (hi - entry) : 0;
		}
		if (!hi)
			return "an indirect function's target outside the code mapped";
		if (hi - r->addr > IFUNC_WALK) /* cut there: a guess, as the rest */
			hi = r->addr + IFUNC_WALK;
		*len = (size_t)(hi - r->addr);
		gap->open_end = true;
		gap->near_addr = lo + (entry - r->addr);
		gap->near_len = (size_t)(r->addr - lo);
	} else if (r->size < 9) { /* shorter than a jmp, perhaps after an endbr64 */
		uint64_t end = r->addr + r->size;

		gap->tail = 16;
		if (next && next < end + 16) /* up to the next routine (none if it overlaps) */
			gap->tail = next > end ? (size_t)(next - end) : 0;
		*len += gap->tail;
	}
	if (*len > ROUTINE_MAX)
		return "routine longer than 1 MiB";
	return NULL;
}

/*
 * The code being patched, read at once when a plan needs it (the first
 * plan not in the plan cache): each routine's planning reads its first
 * bytes, the padding before and after it, its neighbours. A page either
 * side when it reads; the routines' extent alone else. An image whose
 * plans all come from the cache reads none of it.
 */
struct code_window {
	int fd;
	uint64_t lo;
	size_t n;
	bool tried;
};

static void window_open(struct code_window *w)
{
	if (w->tried)
		return;
	w->tried = true;
	if (!mem_cache_begin(w->fd, w->lo - 4096, w->n + 8192))
		mem_cache_begin(w->fd, w->lo, w->n);
}

/*
 * Plan an entry stub from its code, as read now, into *out: the planner's
 * rc (2: the code cannot be read, 3: the padding it chose), the stub, the bytes it covers and its
 * padding's. *whole_read: every read gave all it was asked for, so that the
 * same file at the same addresses gives the same plan (the plan cache may
 * keep it).
 */
static void plan_fresh(struct tracer *tr, uint64_t entry, size_t len, struct insn_gap gap,
		       const struct insn_place *at, uint32_t patch, enum insn_probe_mode mode,
		       struct code_window *w, struct pc_plan *out, bool *whole_read)
{
	uint8_t *code, *gap_bytes, *near = NULL;

	window_open(w);
	memset(out, 0, sizeof(*out));
	*whole_read = true;
	code = xmalloc(len);
	if (gap.near_len) {
		near = xmalloc(gap.near_len);
		gap.near = near;
		if (mem_read(tr->ps->memfd, gap.near_addr, near, gap.near_len) < 0) {
			gap.near_len = 0;
			*whole_read = false;
		}
	}
	gap_bytes = gap_before(tr, &gap);
	if (gap.len && !gap_bytes)
		*whole_read = false;
	out->rc = 0;
	if (mem_read(tr->ps->memfd, entry, code, len) < 0) {
		/* the padding after a tiny routine may end its mapping */
		*whole_read = false;
		len -= gap.tail;
		gap.tail = 0;
		if (mem_read(tr->ps->memfd, entry, code, len) < 0)
			out->rc = 2;
	}
	out->at = *at;
	if (!out->rc)
		out->rc = tr->ps->probes
			      ? insn_plan_probe(code, len, entry, at->stub, at->tramp, at->retrap,
						patch, mode, &gap, &out->stub)
			      : insn_plan_stub(code, len, entry, at->stub, at->retrap, at->page,
					       patch + 1, &gap, &out->stub);
	if (out->rc < 0)
		*whole_read = false;
	if (!out->rc && out->stub.len <= sizeof(out->orig))
		memcpy(out->orig, code + (out->stub.addr - entry), out->stub.len);
	if (!out->rc && out->stub.pad_addr &&
	    mem_read(tr->ps->memfd, out->stub.pad_addr, out->pad_orig, 5) < 0) {
		out->rc = 3; /* its padding cannot be read */
		*whole_read = false;
	}
	free(near);
	free(gap_bytes);
	free(code);
}

/*
 * The fast entry patch (insn_plan_stub, insn_plan_probe): a jmp to a stub.
 * Fills p and the stub's bytes at `slot_buf`. Returns NULL, or why the
 * routine must take the plain int3 instead (FORTSTAT_NO_STUBS=1 turns the
 * stubs off: bench/overhead compares both). With `im` (the plan cache's
 * entry of the image's file), a plan made before from the same inputs is
 * taken from there.
 */
static const char *try_stub(struct tracer *tr, const struct routine *r, uint64_t entry,
			    struct patch *p, uint8_t *slot_buf, struct pc_image *im, size_t i0,
			    struct code_window *w)
{
	static int off = -1;
	const struct insn_stub *stub;
	struct insn_gap gap = {0};
	const struct pc_plan *hit = NULL, *pl;
	struct pc_plan fresh, moved;
	struct insn_place at;
	struct pc_key key;
	enum insn_probe_mode mode;
	const char *why;
	size_t len;
	bool whole_read = false, throttled = false;

	if (off < 0)
		off = getenv("FORTSTAT_NO_STUBS") && *getenv("FORTSTAT_NO_STUBS") != '0';
	if (off)
		return "FORTSTAT_NO_STUBS is set";
	/* Go: no hook; its exits need jmps of their own, else it traps (golang.c). */
	if (tr->ps->go && (why = go_stub_refused(tr, r)))
		return why;
	/*
	 * One that never returns is never hooked: with probes, an entry-only
	 * stub (insn_plan_probe); the classic stubs' hook path has no such variant.
	 */
	if (!tr->o->count_only && (r->flags & RT_NORETURN) && !tr->ps->probes)
		return "it never returns: its entry alone is timed";
	if (!(r->flags & RT_SELECTED))
		return "not timed";
	if (forced_trap(r))
		return "FORTSTAT_TRAP_ROUTINES names it (a test hook)";
	if (tr->ps->probes && !memcall_probe_ok(r))
		return "its block is written in memory: read at its return's trap (--alloc)";
	why = stub_extent(tr, r, entry, &len, &gap);
	if (why)
		return why;
	gap_place(tr, r, entry, &gap);
	mode = tr->o->count_only	  ? INSN_PROBE_COUNT
	       : memcall_fn(tr, r)	  ? INSN_PROBE_ALLOC
	       : tr->ps->go		  ? INSN_PROBE_GO
	       : (r->flags & RT_NORETURN) ? INSN_PROBE_ENTRY
					  : INSN_PROBE_TIMED;
	/* the addresses the plan is for: the image's bias, the stub, what it jumps to */
	at = (struct insn_place){
	    .bias = entry - r->addr,
	    .stub = p->slot,
	    .retrap = tr->ps->probes || !tr->o->count_only ? tr->ps->retrap : 0,
	    .tramp = tr->ps->probes ? tr->ps->probe_tramp : 0,
	    .page = tr->ps->probes ? 0 : tr->ps->page_addr,
	    .patch = (uint32_t)(p - tr->ps->patches),
	};
	/*
	 * Every other input of the planning but the file's bytes, its
	 * addresses the image's own (less the bias): a plan made at an earlier
	 * exec of a PIE, loaded elsewhere, is moved to this one's (insn_stub_move).
	 */
	key = (struct pc_key){
	    {r->addr, r->size, r->flags & (RT_IFUNC | RT_NORETURN), len,
	     gap.near_len ? gap.near_addr - at.bias : 0, gap.near_len, gap.tail, gap.open_end,
	     gap.len ? gap.addr - at.bias : 0, gap.len, gap.code_len,
	     (uint64_t)mode | (uint64_t)tr->ps->probes << 8 | (uint64_t)tr->o->count_only << 9 |
		 (uint64_t)(at.retrap != 0) << 10 | (uint64_t)(at.tramp != 0) << 11 |
		 (uint64_t)(at.page != 0) << 12}};
	/* a Go program's plans meet its exits', -p's the threads' places: never kept */
	if (tr->ps->go || tr->n_avoid)
		im = NULL;
	if (im)
		hit = plancache_get(im, (size_t)(r - tr->ps->st->r) - i0, &key);
	if (hit) {
		int mv = plancache_move(im, hit, &at, &moved);

		/* out of reach from here, or refused where it was: planned again */
		if (mv < 0) {
			im->far++;
			hit = NULL;
		} else if (mv > 0) {
			hit = &moved;
		}
	}
	if (!hit || plancache_mode() == PC_CHECK)
		plan_fresh(tr, entry, len, gap, &at, at.patch, mode, w, &fresh, &whole_read);
	pl = &fresh;
	if (hit && plancache_mode() == PC_CHECK) {
		im->checked++;
		if (!plancache_same(hit, &fresh))
			im->differ++;
	} else if (hit) {
		pl = hit;
	} else if (im && whole_read) {
		plancache_put(im, (size_t)(r - tr->ps->st->r) - i0, &key, &fresh);
	}
	if (im)
		*(hit ? &im->hits : &im->made) += 1;
	stub = &pl->stub;
	why = pl->rc == 2   ? "its code cannot be read"
	      : pl->rc < 0  ? "capstone failed"
	      : pl->rc == 1 ? (stub->reason ? stub->reason : "no stub")
	      : tr->ps->go
		  ? go_stub_clash(tr, r, stub->addr, stub->len, stub->whole, stub->pad_addr)
		  : NULL;
	if (why)
		return why;
	for (size_t i = 0; i < tr->n_avoid; i++) {
		/*
		 * -p: a thread stopped inside the bytes the jmp covers would
		 * resume mid-jmp (inside a routine moved whole, it could loop
		 * back into them); one in the padding would run the jmp there.
		 */
		uint64_t pc = tr->avoid_pc[i];

		if ((pc > stub->addr &&
		     pc < stub->addr + (stub->whole ? stub->whole : stub->len)) ||
		    (stub->pad_addr && pc >= stub->pad_addr && pc < stub->pad_addr + 5))
			return "a thread is inside its first bytes";
	}
	if (stub->whole)
		fs_info(2, "%s: moved whole into its stub (%u bytes)",
			r->display ? r->display : r->names[0], stub->whole);
	if (pl->rc == 3)
		return "its padding cannot be read";
	p->stub = true;
	p->jmp_addr = stub->addr;
	p->orig_len = stub->len;
	memcpy(p->orig_bytes, pl->orig, stub->len);
	if (stub->pad_addr)
		memcpy(p->pad_orig, pl->pad_orig, 5);
	memcpy(p->jmp, stub->jmp, stub->len);
	p->pad_addr = stub->pad_addr;
	memcpy(p->pad_jmp, stub->pad, 5);
	p->plain_off = stub->plain_off;
	p->trap = p->slot + stub->trap_off;
	if (stub->full_off)
		u64map_put(&tr->ps->pfull, p->slot + stub->full_off, 1);
	p->throttle = stub->throttle_off ? p->slot + stub->throttle_off : 0;
	if (p->throttle && (r->flags & RT_COUNTED)) /* throttled from its first call */
		throttled = true;
	p->call_ret = stub->call_ret;
	if (stub->call_ret)
		u64map_put(&tr->ps->callret, stub->call_ret, (uint64_t)(p - tr->ps->patches) + 1);
	p->routine = (uint32_t)(r - tr->ps->st->r);
	p->noreturn = (r->flags & RT_NORETURN) != 0; /* its stub hooks nothing */
	p->alloc = (uint8_t)memcall_fn(tr, r);
	p->orig = 0xcc;
	memcpy(slot_buf, stub->code, stub->code_len);
	if (throttled) {
		slot_buf[stub->throttle_off] = 1;
		p->throttled = true;
		probe_hot_set(tr->ps, (size_t)(p - tr->ps->patches));
		probe_throttled(tr, (size_t)(p - tr->ps->patches));
	}
	return NULL;
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
 * Patch routines [from, to) of table `tab`, loaded at `bias`: plan each
 * entry, write the out-of-line slots to new scratch pages near them, then
 * the int3s. The program itself (PATCH_OWN) also gets its PLT stubs into
 * the unwinder hooked, and a scratch page even with nothing to patch when
 * the dynamic linker is followed. Routines that cannot be patched lose
 * RT_SELECTED. Runs in the stopped thread tid. Returns 0 or -errno (said).
 */
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

int patch_routines(struct tracer *tr, pid_t tid, struct symtab *tab, size_t from, size_t to,
		   uint64_t bias, enum patch_mode mode, int *deferred)
{
	struct symtab *st = tab;
	bool own = mode == PATCH_OWN;
	const char *what = own ? st->path : mode == PATCH_LIB ? st->r[from].module : st->path;
	uint64_t lo = UINT64_MAX, hi = 0, base, clo = UINT64_MAX, chi = 0;
	size_t n = 0, size, k = 0, p0 = tr->ps->n_patches, n_trap = 0, go_x = 0, go_room;
	/* The program's first scratch page: its header, then the probes' trampoline. */
	size_t hdr = own ? SCRATCH_HDR + (tr->ps->probes ? INSN_PROBE_TRAMP_SIZE : 0) : 0;
	struct code_window w = {0};
	struct pc_image *im = NULL;
	uint8_t *buf;
	int err;

	for (size_t i = from; i < to; i++) {
		bool hook;

		if (!patch_wanted(tr, &st->r[i], mode, &hook))
			continue;
		n++;
		if (st->r[i].addr + bias < lo)
			lo = st->r[i].addr + bias;
		if (st->r[i].addr + st->r[i].size + bias > hi)
			hi = st->r[i].addr + st->r[i].size + bias;
		/*
		 * The copy of the code (below) spans the routines with symbols:
		 * an indirect function's target may lie in another mapping
		 * (glibc's time() in the vDSO, 145 MB after libc: a 145 MB
		 * read at every run with -l libc, 1.7 s on a loaded machine).
		 */
		if (!(st->r[i].flags & RT_IFUNC) && st->r[i].addr + bias < clo)
			clo = st->r[i].addr + bias;
		if (!(st->r[i].flags & RT_IFUNC) && st->r[i].addr + st->r[i].size + bias > chi)
			chi = st->r[i].addr + st->r[i].size + bias;
	}
	if (!n && !(own && tr->ps->follow_dl))
		return 0;
	if (!n) { /* a page for the return trap and injected code only */
		lo = st->e_entry + bias;
		hi = lo + 1;
	}
	if (clo >= chi) { /* indirect functions' targets alone, or nothing */
		clo = lo;
		chi = hi;
	}
	/* Go's in-process exit stubs after the entry stubs (golang.c) */
	go_room = own ? go_exit_room(tr) : 0;
	size = (hdr + n * INSN_STUB_SIZE + go_room + 4095) & ~(size_t)4095;
	if (own && tr->ps->page_addr)
		size += RSITE_MAX * INSN_RSITE_SIZE;
	err = map_scratch(tr, tid, lo, hi, size, &base, deferred);
	if (err) {
		if (err == -ENOSPC)
			fs_error("%s: no free address range within 2 GiB of its code", what);
		else
			fs_error("%s: cannot map scratch pages in the program: %s", what,
				 strerror(-err));
		return err;
	}
	buf = xmalloc(size);
	memset(buf, 0xcc, size);
	if (own) {
		tr->ps->scratch = base;
		tr->ps->retrap = base;
		tr->ps->retrap_trap = base + insn_return_trap(tr->ps->page_addr, buf) - 1;
		if (tr->ps->page_addr)
			tr->ps->rsites = base + size - RSITE_MAX * INSN_RSITE_SIZE;
		if (tr->ps->probes) {
			unsigned full;

			tr->ps->probe_tramp = base + SCRATCH_HDR;
			insn_probe_trampoline(tr->ps->retrap, buf + SCRATCH_HDR, &full);
			tr->ps->probe_full = tr->ps->probe_tramp + full;
		}
	}
	fs_info(2, "%s: scratch pages at 0x%" PRIx64 " (%zu bytes)", what, base, size);

	/* the code read at once when a plan is made (window_open) */
	w.fd = tr->ps->memfd;
	w.lo = clo;
	w.n = (size_t)(chi - clo);
	/*
	 * The program's own routines, a library's: their plans may have been
	 * made at an earlier exec (of another program, for a library).
	 */
	if (own && st->n_own == st->n)
		im = plancache_image(tr, tr->ps->leader, st->n);
	else if (mode == PATCH_LIB && st == tr->ps->st && n)
		im = plancache_image_at(tr, tr->ps->leader, clo, to - from);
	for (size_t i = from; i < to; i++) {
		struct routine *r = &st->r[i];
		struct patch *p;
		uint8_t code[32];
		uint64_t entry = r->addr + bias;
		size_t len = r->size < sizeof(code) ? (size_t)r->size : sizeof(code);
		const char *name = r->display ? r->display : r->names[0], *why;
		bool hook;

		if (!patch_wanted(tr, r, mode, &hook))
			continue;
		p = patch_new(tr);
		p->slot = base + hdr + k * INSN_STUB_SIZE;
		why = hook ? "the unwinder: return addresses are put back at each call"
			   : try_stub(tr, r, entry, p, buf + hdr + k * INSN_STUB_SIZE, im,
				      own ? 0 : from, &w);
		if (!why) {
			if (p->pad_addr)
				fs_info(2,
					"patch %s at 0x%" PRIx64
					": jmp to a stub through padding at "
					"0x%" PRIx64 " (%u bytes moved)",
					name, p->jmp_addr, p->pad_addr, p->orig_len);
			else
				fs_info(2,
					"patch %s at 0x%" PRIx64
					": jmp to a stub (%u bytes moved%s)",
					name, p->jmp_addr, p->orig_len,
					p->call_ret ? ", a call emulated" : "");
			tr->ps->n_patches++;
			k++;
			if (own && tr->ps->go)
				go_x += go_add_probe_exits(
				    tr, i, tr->ps->n_patches - 1, bias,
				    base + hdr + n * INSN_STUB_SIZE + go_x * INSN_GO_EXIT_SIZE,
				    buf + hdr + n * INSN_STUB_SIZE + go_x * INSN_GO_EXIT_SIZE,
				    go_room - go_x * INSN_GO_EXIT_SIZE);
			continue;
		}
		err = mem_read(tr->ps->memfd, entry, code, len);
		if (!err)
			insn_plan(code, len, entry, p->slot, &p->plan);
		if (err || p->plan.kind == INSN_REFUSE) {
			fs_info(1, "not %s %s: %s", hook ? "hooking" : "timing", name,
				err ? "its code cannot be read" : p->plan.reason);
			if (r->flags & RT_SELECTED)
				tr->n_refused++;
			r->flags &= ~(unsigned)RT_SELECTED;
			continue;
		}
		p->trap = p->plan.addr;
		p->unhook = hook && is_unwinder(r);
		p->rehook = hook && !p->unhook;
		p->routine =
		    mode != PATCH_HOOKS && (r->flags & RT_SELECTED) ? (uint32_t)i : ACCT_NONE;
		p->noreturn = (r->flags & RT_NORETURN) != 0;
		p->alloc = p->routine != ACCT_NONE ? (uint8_t)memcall_fn(tr, r) : 0;
		p->go_hook = own && go_is_hook(tr->ps, i);
		p->orig = code[p->plan.addr - entry];
		if (p->plan.kind == INSN_XOL)
			memcpy(buf + hdr + k * INSN_STUB_SIZE, p->plan.slot, p->plan.slot_len);
		fs_info(2, "patch %s at 0x%" PRIx64 ": %s (%s)", name, p->trap, p->plan.text,
			p->plan.kind == INSN_XOL ? "out of line" : "emulated");
		/* with probes, each timed routine that stops at every call, and why */
		if (tr->ps->probes && p->routine != ACCT_NONE) {
			fs_info(1, "%s: a trap at each call (%s)", name, why);
			n_trap++;
		}
		tr->ps->n_patches++;
		k++;
		if (own && tr->ps->go && p->routine != ACCT_NONE && !tr->o->count_only)
			go_add_exits(tr, i, bias); /* p is stale from here */
	}
	mem_cache_end();
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
	if (im && im->differ)
		fs_warn("%s: %zu plans from the plan cache differ from a fresh plan", what,
			im->differ);
	/* Calls through the executable's PLT into the unwinder (dynamic C++). */
	for (size_t j = 0; own && !tr->o->count_only && j < st->n_plt; j++) {
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
	if (n_trap)
		fs_info(1, "%s: %zu timed routine%s a trap at each call", what, n_trap,
			n_trap == 1 ? " takes" : "s take");
	err = own ? plancache_write_scratch(tr, im, tid, base, buf, size)
		  : mem_write(tr->ps->memfd, base, buf, size);
	free(buf);
	if (err) {
		fs_error("%s: cannot write scratch pages: %s", what, strerror(-err));
		return err;
	}
	err = write_entries(tr, p0, what);
	for (size_t j = p0; !err && j < tr->ps->n_patches; j++)
		u64map_put(&tr->ps->traps, tr->ps->patches[j].trap, (uint32_t)j);
	return err;
}
