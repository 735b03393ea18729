// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * patchplan.c - a routine's entry stub planned in the process (try_stub,
 * for patch_routines): whether it may take one at all, what of its code
 * and its neighbours' the planner must read (stub_extent, the gap before
 * it), the plan taken from the plan cache (moved to this exec's addresses)
 * or made from the code read now, and the patch's fields and slot bytes
 * filled from it. A routine refused here takes the int3 (patch.c).
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "golang.h"
#include "memcall.h"
#include "patch_int.h"
#include "plancache.h"
#include "tracer.h"
#include "../probe/areas.h"

/*
 * The routine before r in the program's own table and the bytes after it
 * up to r's entry, which belong to no routine: where a short entry may put
 * its jmp rel32 (insn_gap). A neighbour within 4 KiB, of the program's
 * own: its place in gap (addr, len, code_len), left 0 when there is none.
 * With .dynsym alone (cc1, python3) routines unknown may lie between: the
 * planner takes the gap only when all its bytes after the neighbour's code
 * are padding, which no routine is. gap_before reads the bytes.
 */
static void gap_place(struct tracer *tr, const struct routine *r, uint64_t entry,
		      struct insn_gap *gap)
{
	const struct symtab *st = tr->ps->st;
	size_t i = (size_t)(r - st->r);
	const struct routine *q;

	if (i == 0 || i >= st->n_own)
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
 * walked too. Up to 16 bytes after a routine, to the next one, come with
 * it (gap->tail, padding if the planner finds so): a routine shorter than
 * a jmp runs across them, a short entry may put its jmp rel32 there.
 * Returns NULL or why it cannot be planned.
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
	if ((r->flags & (RT_IFUNC | RT_SIZED)) == RT_IFUNC) {
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
	} else {
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
 * Why routine r takes no stub whatever its code (FORTSTAT_NO_STUBS=1 turns
 * the stubs off: bench/overhead compares both), or NULL.
 */
static const char *stub_refused(struct tracer *tr, const struct routine *r)
{
	static int off = -1;
	const char *why;

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
	return NULL;
}

/* The kind of stub that routine r takes. */
static enum insn_probe_mode stub_mode(struct tracer *tr, const struct routine *r)
{
	return tr->o->count_only	  ? INSN_PROBE_COUNT
	       : memcall_fn(tr, r)	  ? INSN_PROBE_ALLOC
	       : tr->ps->go		  ? INSN_PROBE_GO
	       : (r->flags & RT_NORETURN) ? INSN_PROBE_ENTRY
					  : INSN_PROBE_TIMED;
}

/*
 * The inputs of r's plan: *at, the addresses it is for (the image's bias,
 * the stub at p->slot, what it jumps to), and *key, every other input but
 * the file's bytes, its addresses the image's own (less the bias): a plan
 * made at an earlier exec of a PIE, loaded elsewhere, is moved to this
 * one's (insn_stub_move).
 */
static void plan_inputs(struct tracer *tr, const struct routine *r, uint64_t entry,
			const struct patch *p, size_t len, const struct insn_gap *gap,
			enum insn_probe_mode mode, struct insn_place *at, struct pc_key *key)
{
	*at = (struct insn_place){
	    .bias = entry - r->addr,
	    .stub = p->slot,
	    .retrap = tr->ps->probes || !tr->o->count_only ? tr->ps->retrap : 0,
	    .tramp = tr->ps->probes ? tr->ps->probe_tramp : 0,
	    .page = tr->ps->probes ? 0 : tr->ps->page_addr,
	    .patch = (uint32_t)(p - tr->ps->patches),
	};
	*key = (struct pc_key){
	    {r->addr, r->size, r->flags & (RT_IFUNC | RT_NORETURN), len,
	     gap->near_len ? gap->near_addr - at->bias : 0, gap->near_len, gap->tail, gap->open_end,
	     gap->len ? gap->addr - at->bias : 0, gap->len, gap->code_len,
	     (uint64_t)mode | (uint64_t)tr->ps->probes << 8 | (uint64_t)tr->o->count_only << 9 |
		 (uint64_t)(at->retrap != 0) << 10 | (uint64_t)(at->tramp != 0) << 11 |
		 (uint64_t)(at->page != 0) << 12}};
}

/*
 * r's plan: from the plan cache's image `im` (moved to *at's addresses in
 * *moved) when it holds one for `key`, else made now into *fresh (and kept
 * in im when all its code could be read); under PC_CHECK made anyway and
 * compared. Counts what it did in im.
 */
static const struct pc_plan *plan_get(struct tracer *tr, const struct routine *r, uint64_t entry,
				      size_t len, const struct insn_gap *gap,
				      const struct insn_place *at, const struct pc_key *key,
				      enum insn_probe_mode mode, struct pc_image *im, size_t i0,
				      struct code_window *w, struct pc_plan *fresh,
				      struct pc_plan *moved)
{
	const struct pc_plan *hit = NULL, *pl;
	bool whole_read = false;

	/* a Go program's plans meet its exits', -p's the threads' places: never kept */
	if (tr->ps->go || tr->n_avoid)
		im = NULL;
	if (im)
		hit = plancache_get(im, (size_t)(r - tr->ps->st->r) - i0, key);
	if (hit) {
		int mv = plancache_move(im, hit, at, moved);

		/* out of reach from here, or refused where it was: planned again */
		if (mv < 0) {
			im->far++;
			hit = NULL;
		} else if (mv > 0) {
			hit = moved;
		}
	}
	if (!hit || plancache_mode() == PC_CHECK)
		plan_fresh(tr, entry, len, *gap, at, at->patch, mode, w, fresh, &whole_read);
	pl = fresh;
	if (hit && plancache_mode() == PC_CHECK) {
		im->checked++;
		if (!plancache_same(hit, fresh))
			im->differ++;
	} else if (hit) {
		pl = hit;
	} else if (im && whole_read) {
		plancache_put(im, (size_t)(r - tr->ps->st->r) - i0, key, fresh);
	}
	if (im)
		*(hit ? &im->hits : &im->made) += 1;
	return pl;
}

/* Why plan pl cannot be taken for r, or NULL. */
static const char *plan_refused(struct tracer *tr, const struct routine *r,
				const struct pc_plan *pl)
{
	const struct insn_stub *stub = &pl->stub;
	const char *why;

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
	return NULL;
}

/* Patch p of routine r takes plan pl: its entry, its stub's bytes at `slot_buf`. */
static void plan_take(struct tracer *tr, const struct routine *r, struct patch *p,
		      const struct pc_plan *pl, uint8_t *slot_buf)
{
	const struct insn_stub *stub = &pl->stub;
	bool throttled = false;

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
	else if (p->throttle && plancache_carry(tr->ps->pc_own, (size_t)(r - tr->ps->st->r))) {
		/* throttled in an earlier exec of the file: counted from its first call */
		throttled = true;
		tr->ps->st->r[r - tr->ps->st->r].throttle_carried = true;
	}
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
}

/* The fast entry patch (patch_int.h). */
const char *try_stub(struct tracer *tr, const struct routine *r, uint64_t entry, struct patch *p,
		     uint8_t *slot_buf, struct pc_image *im, size_t i0, struct code_window *w)
{
	struct insn_gap gap = {0};
	const struct pc_plan *pl;
	struct pc_plan fresh, moved;
	struct insn_place at;
	struct pc_key key;
	enum insn_probe_mode mode;
	const char *why;
	size_t len;

	why = stub_refused(tr, r);
	if (!why)
		why = stub_extent(tr, r, entry, &len, &gap);
	if (why)
		return why;
	gap_place(tr, r, entry, &gap);
	mode = stub_mode(tr, r);
	plan_inputs(tr, r, entry, p, len, &gap, mode, &at, &key);
	pl = plan_get(tr, r, entry, len, &gap, &at, &key, mode, im, i0, w, &fresh, &moved);
	why = plan_refused(tr, r, pl);
	if (why)
		return why;
	plan_take(tr, r, p, pl, slot_buf);
	return NULL;
}
