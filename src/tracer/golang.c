// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * golang.c - Go programs. Go's runtime walks and copies goroutine stacks and
 * reads every return address on them, so fortstat never rewrites one there:
 * a timed routine's exit is an int3 on each of its own `ret` instructions
 * (an exit probe, the `ret` emulated). Goroutines migrate between threads,
 * so frames are kept per goroutine (its g, held in R14 by Go's register ABI
 * at a function's entry and return), with a goroutine's own books key, and
 * compared by depth in its stack (stack.hi - SP: copystack keeps it). With
 * the in-process probes, an entry's stub and a jmp over each exit's
 * epilogue record the event with the goroutine and that depth in the
 * thread's ring, no return address touched (go_take reads them); a routine
 * whose exits cannot take one (a branch into its epilogue, code there that
 * cannot move) takes the traps, its entry and its rets. A
 * function whose stack check calls runtime.morestack is re-entered from its
 * start once the stack has grown: a hook on runtime.morestack's entry marks
 * the goroutine, and that re-entry is not another call. runtime.Goexit
 * unwinds a goroutine's frames without returning: a hook on
 * runtime.goexit1 closes those still open. A goroutine's CPU clock runs
 * while a thread runs it: hooks on runtime.schedule (the thread leaves its
 * goroutine) and runtime.execute (it takes another) say which one that is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fortstat/books.h"
#include "fortstat/evabi.h"
#include "fortstat/insn.h"
#include "fortstat/map.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/util.h"
#include "tracer.h"
#include "golang.h"
#include "patches.h"
#include "../probe/areas.h"

#define GO_KEY0 ACCT_GOROUTINE0	 /* books key of the first goroutine (account.h) */
#define GO_SLOT_TOP (1ull << 62) /* a frame's slot: GO_SLOT_TOP - its depth (deeper is lower) */
#define GO_MAX_RETS 256		 /* return instructions probed in one routine */
#define GO_MAX_CODE (1u << 20)	 /* a routine longer than this is not scanned (refused) */
#define GO_PAD 8		 /* padding after a routine looked at for its last exit's jmp */
#define GO_MAX_GS (1u << 22)	 /* goroutines followed at most (a g is the program's word) */

/* One goroutine (a g the program ran timed routines on). */
struct gstate {
	uint64_t g;
	uint64_t lo, hi;  /* its stack's bounds at its last stop (g.stack: offsets 0 and 8) */
	uint64_t cpu;	  /* its CPU clock: what threads ran while running it (thr_cpu, ns) */
	uint64_t grow_pc; /* runtime.morestack was called from here: the next entry of the
			   * routine that holds it, on this g, is the same call again */
};

struct golang {
	size_t grow;	    /* runtime.morestack's routine index, SIZE_MAX: none */
	size_t goexit;	    /* runtime.goexit1's, SIZE_MAX: none */
	size_t sched, exec; /* runtime.schedule's and execute's (timed runs), SIZE_MAX: none */
	size_t n_routines;  /* routines of the table scanned */
	size_t *ret_first;  /* per routine: its exit probes' addresses in rets ... */
	size_t *ret_n;	    /* ... and how many (0: counted only, never timed) */
	bool *traps;	    /* per routine: its exits cannot be in process: it traps */
	size_t *entry;	    /* per routine: its in-process entry's patch, SIZE_MAX: none */
	uint64_t *rets;	    /* link-time addresses of the probed `ret`s */
	uint64_t *starts;   /* ... where the epilogue a jmp covers starts (probes) */
	size_t n_inproc;    /* exits that take an in-process probe (go_exit_room) */
	size_t n_rets, cap_rets;
	struct u64map gmap; /* g -> index in gs */
	struct gstate *gs;
	size_t n_gs, cap_gs;
};

static const char *rt_name(const struct routine *r)
{
	return r->display ? r->display : r->names[0];
}

static bool has_name(const struct routine *r, const char *name)
{
	for (size_t i = 0; i < r->n_names; i++)
		if (!strcmp(r->names[i], name))
			return true;
	return false;
}

/*
 * Why routine name s is not timed in a Go program, or NULL. The runtime
 * runs on the scheduler's and the signal handlers' stacks, switches
 * goroutines and unwinds them itself; assembly routines (ABI0) keep no g
 * in R14.
 */
static const char *go_untimed(const char *s)
{
	static const char *const pfx[] = {"runtime.",
					  "runtime/",
					  "internal/",
					  "sync/atomic.",
					  "syscall.rawVforkSyscall",
					  "syscall.forkAndExecInChild"};
	size_t n = strlen(s);

	for (size_t i = 0; i < sizeof(pfx) / sizeof(pfx[0]); i++)
		if (!strncmp(s, pfx[i], strlen(pfx[i])))
			return "part of Go's runtime";
	if (!strchr(s, '.'))
		return "not a Go function";
	if (n > 5 && !strcmp(s + n - 5, ".abi0"))
		return "assembly (ABI0: no goroutine in R14)";
	return NULL;
}

/* Record routine i's return instructions and their epilogues (link-time addresses). */
static void add_rets(struct golang *go, size_t i, const uint64_t *rets, const uint64_t *starts,
		     size_t n)
{
	if (go->n_rets + n > go->cap_rets) {
		go->cap_rets = 2 * (go->n_rets + n) + 64;
		go->rets = xrealloc(go->rets, go->cap_rets * sizeof(*go->rets));
		go->starts = xrealloc(go->starts, go->cap_rets * sizeof(*go->starts));
	}
	go->ret_first[i] = go->n_rets;
	go->ret_n[i] = n;
	memcpy(go->rets + go->n_rets, rets, n * sizeof(*rets));
	memcpy(go->starts + go->n_rets, starts, n * sizeof(*starts));
	go->n_rets += n;
}

/*
 * Find the exits of selected routine i (timed runs). Returns NULL, or why
 * the routine cannot be timed.
 */
static const char *scan_routine(struct tracer *tr, struct golang *go, size_t i)
{
	const struct routine *r = &tr->ps->st->r[i];
	uint64_t entry = r->addr + tr->ps->bias, rets[GO_MAX_RETS], starts[GO_MAX_RETS] = {0};
	size_t n = 0, pad = 0;
	const char *why = NULL, *trap_why = NULL;
	uint8_t *code;

	if (!r->size || r->size > GO_MAX_CODE)
		return "its size is unknown or too large to scan";
	code = xmalloc(r->size + GO_PAD);
	if (mem_read(tr->ps->memfd, entry, code, r->size) < 0)
		why = "its code cannot be read";
	else if (insn_scan_exits(code, r->size, r->addr, rets, GO_MAX_RETS, &n, &why) < 0)
		why = "the disassembler cannot start";
	/* the int3 padding after it, up to the next routine (a short last exit's jmp) */
	if (!why && i + 1 < tr->ps->st->n_own && tr->ps->st->r[i + 1].addr >= r->addr + r->size &&
	    mem_read(tr->ps->memfd, entry + r->size, code + r->size, GO_PAD) == 0)
		while (pad < GO_PAD && pad < tr->ps->st->r[i + 1].addr - r->addr - r->size &&
		       code[r->size + pad] == 0xcc)
			pad++;
	/* A bare `ret` at the entry (an empty function) is counted, not timed. */
	for (size_t k = 0; k < n && !why; k++)
		if (rets[k] == r->addr)
			n = 0;
	/* In process: a jmp over each exit's epilogue, else the routine traps. */
	if (!why && tr->ps->probes && n &&
	    insn_go_exits(code, r->size, pad, r->addr, rets, n, starts, &trap_why)) {
		go->traps[i] = true;
		fs_info(1, "%s: its entry and exits trap (%s)", rt_name(r),
			trap_why ? trap_why : "the disassembler cannot start");
	} else if (!why && tr->ps->probes) {
		go->n_inproc += n;
	}
	free(code);
	if (why)
		return why;
	add_rets(go, i, rets, starts, n);
	return NULL;
}

/*
 * Go's mainline is main.main. With cgo the C `main` of the runtime's start
 * came first (never timed: not a Go function); main.main takes its place,
 * selected when it was.
 */
static void go_mainline(struct symtab *st)
{
	size_t m = SIZE_MAX;
	unsigned sel = 0;

	for (size_t i = 0; i < st->n && m == SIZE_MAX; i++)
		if (has_name(&st->r[i], "main.main"))
			m = i;
	if (m == SIZE_MAX || (st->r[m].flags & RT_MAINLINE))
		return;
	for (size_t i = 0; i < st->n; i++) {
		if (st->r[i].flags & RT_MAINLINE)
			sel = st->r[i].flags & RT_SELECTED;
		st->r[i].flags &= ~(unsigned)RT_MAINLINE;
	}
	st->r[m].flags |= RT_MAINLINE | sel;
}

/* The index of runtime.morestack in st, or SIZE_MAX: it makes a Go program. */
static size_t find_grow(const struct symtab *st)
{
	for (size_t i = 0; i < st->n; i++)
		if (has_name(&st->r[i], "runtime.morestack.abi0") ||
		    has_name(&st->r[i], "runtime.morestack"))
			return i;
	return SIZE_MAX;
}

bool trace_is_go(const struct symtab *st)
{
	return find_grow(st) != SIZE_MAX;
}

bool trace_go_regabi(const struct symtab *st)
{
	size_t i = find_grow(st);

	return i != SIZE_MAX && has_name(&st->r[i], "runtime.morestack.abi0");
}

int go_setup(struct tracer *tr)
{
	struct symtab *st = tr->ps->st;
	struct golang *go;
	size_t grow = find_grow(st), n_rt = 0;

	/* the calibration's Go pair (calib.c) is probed as Go's code, with no runtime */
	if (grow == SIZE_MAX && !tr->o->go_calib)
		return 0;
	go = xcalloc(1, sizeof(*go));
	go->grow = grow;
	go->goexit = go->sched = go->exec = SIZE_MAX;
	for (size_t i = 0; i < st->n; i++) {
		if (has_name(&st->r[i], "runtime.goexit1"))
			go->goexit = i;
		else if (has_name(&st->r[i], "runtime.schedule"))
			go->sched = i;
		else if (has_name(&st->r[i], "runtime.execute"))
			go->exec = i;
	}
	if (tr->o->count_only || go->sched == SIZE_MAX || go->exec == SIZE_MAX)
		go->sched = go->exec = SIZE_MAX; /* CPU clocks: by the goroutine that stops */
	go->n_routines = st->n;
	go->ret_first = xcalloc(st->n ? st->n : 1, sizeof(*go->ret_first));
	go->ret_n = xcalloc(st->n ? st->n : 1, sizeof(*go->ret_n));
	go->traps = xcalloc(st->n ? st->n : 1, sizeof(*go->traps));
	go->entry = xmalloc((st->n ? st->n : 1) * sizeof(*go->entry));
	for (size_t i = 0; i < st->n; i++)
		go->entry[i] = SIZE_MAX;
	tr->ps->go = go;
	/* a guard: main.c asked for traps (-p, no goroutine in R14) */
	if (tr->ps->probes && !tr->o->go_calib && (tr->o->pid || !trace_go_regabi(st))) {
		tr->ps->probes = false;
		fs_info(1, "--probes: not for this Go program: traps");
	}
	fs_info(1, "a Go program: %s at each timed routine's `ret`, frames per goroutine",
		tr->ps->probes ? "in-process exit probes" : "exit probes (traps)");
	go_mainline(st);
	for (size_t i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];
		const char *why;

		if (!(r->flags & RT_SELECTED))
			continue;
		why = tr->o->go_calib ? NULL : go_untimed(r->names[0]);
		if (why) {
			fs_info(2, "not timing %s: %s", rt_name(r), why);
			r->flags &= ~(unsigned)RT_SELECTED;
			n_rt++;
			continue;
		}
		if (tr->o->count_only)
			continue;
		why = scan_routine(tr, go, i);
		if (why) {
			fs_info(1, "not timing %s: %s", rt_name(r), why);
			r->flags &= ~(unsigned)RT_SELECTED;
			tr->n_refused++;
		}
	}
	if (n_rt)
		fs_info(1,
			"Go: %zu routines of the runtime and assembly not timed (-vv names them)",
			n_rt);
	return 0;
}

bool go_is_hook(const struct pstate *ps, size_t i)
{
	return ps->go && (ps->go->grow == i || ps->go->goexit == i || ps->go->sched == i ||
			  ps->go->exec == i);
}

/* Is patch p on routine i? */
static bool patch_on(const struct tracer *tr, const struct patch *p, size_t i)
{
	const struct routine *r;
	uint64_t lo;

	if (i >= tr->ps->st->n)
		return false;
	r = &tr->ps->st->r[i];
	lo = r->addr + tr->ps->bias;
	return p->trap >= lo && p->trap < lo + r->size;
}

void go_add_exits(struct tracer *tr, size_t i, uint64_t bias)
{
	struct golang *go = tr->ps->go;

	if (!go || i >= go->n_routines)
		return;
	for (size_t k = 0; k < go->ret_n[i]; k++) {
		struct patch *p = patch_new(tr);

		p->trap = go->rets[go->ret_first[i] + k] + bias;
		p->orig = 0xc3;
		p->exit_probe = true;
		p->routine = (uint32_t)i;
		tr->ps->n_patches++;
	}
	fs_info(2, "%s: %zu exit probes", rt_name(&tr->ps->st->r[i]), go->ret_n[i]);
}

const char *go_stub_refused(const struct tracer *tr, const struct routine *r)
{
	const struct golang *go = tr->ps->go;
	size_t i = (size_t)(r - tr->ps->st->r);

	if (!go)
		return NULL;
	if (!tr->ps->probes)
		return "a Go program under the traps";
	if (i >= go->n_routines)
		return "not a routine of the Go program";
	if (go->traps[i])
		return "Go: its exits trap (-v says why)";
	if (!tr->o->count_only && !go->ret_n[i])
		return "Go: no `ret` to probe (counted at a trap)";
	return NULL;
}

const char *go_stub_clash(const struct tracer *tr, const struct routine *r, uint64_t at,
			  unsigned len, unsigned whole, uint64_t pad_addr)
{
	const struct golang *go = tr->ps->go;
	size_t i = (size_t)(r - tr->ps->st->r);

	if (whole)
		return "Go: moved whole, its calls would return into the stub";
	/* the padding before it may hold the previous routine's last exit's jmp */
	if (pad_addr)
		return "Go: a short entry, its jmp in padding";
	if (tr->o->count_only || i >= go->n_routines)
		return NULL;
	for (size_t k = 0; k < go->ret_n[i]; k++) {
		uint64_t lo = go->starts[go->ret_first[i] + k] + tr->ps->bias;
		uint64_t hi = go->rets[go->ret_first[i] + k] + tr->ps->bias + 1;

		if (hi < lo + 5) /* the padding after it too */
			hi = lo + 5;
		if (lo < at + len && at < hi)
			return "Go: its entry's jmp and an exit's overlap";
	}
	return NULL;
}

size_t go_exit_room(const struct tracer *tr)
{
	const struct golang *go = tr->ps->go;

	return go && tr->ps->probes && !tr->o->count_only ? go->n_inproc * INSN_GO_EXIT_SIZE : 0;
}

size_t go_add_probe_exits(struct tracer *tr, size_t i, size_t j, uint64_t bias, uint64_t base,
			  uint8_t *buf, size_t room)
{
	struct golang *go = tr->ps->go;
	size_t n = 0;

	if (!go || i >= go->n_routines)
		return 0;
	go->entry[i] = j;
	if (tr->o->count_only)
		return 0;
	for (size_t k = 0; k < go->ret_n[i]; k++) {
		uint64_t ret = go->rets[go->ret_first[i] + k] + bias;
		uint64_t start = go->starts[go->ret_first[i] + k] + bias;
		size_t len = (size_t)(ret + 1 - start), cover = len < 5 ? 5 : len, code_len;
		unsigned trap_off, full_off;
		struct patch *p = patch_new(tr);

		p->slot = base + n * INSN_GO_EXIT_SIZE;
		if (cover > sizeof(p->orig_bytes) || (n + 1) * INSN_GO_EXIT_SIZE > room ||
		    mem_read(tr->ps->memfd, start, p->orig_bytes, cover) < 0 ||
		    insn_plan_go_exit(p->orig_bytes, len, cover, start, p->slot, (uint32_t)j,
				      buf + n * INSN_GO_EXIT_SIZE, &code_len, p->jmp, &trap_off,
				      &full_off)) {
			/* its entry's stub is written already: this exit traps */
			memset(p, 0, sizeof(*p));
			p->trap = ret;
			p->orig = 0xc3;
			fs_info(1, "%s: an exit at 0x%" PRIx64 " traps", rt_name(&tr->ps->st->r[i]),
				ret);
		} else {
			p->stub = true;
			p->jmp_addr = start;
			p->orig_len = (unsigned)cover;
			p->trap = p->slot + trap_off;
			u64map_put(&tr->ps->pfull, p->slot + full_off, 1);
			n++;
		}
		p->exit_probe = true;
		p->routine = (uint32_t)i;
		tr->ps->n_patches++;
	}
	fs_info(2, "%s: %zu exit probes in process", rt_name(&tr->ps->st->r[i]), n);
	return n;
}

/*
 * The goroutine running with registers regs, when R14 holds a g whose stack
 * holds SP; NULL when it does not (code that keeps no g in R14). Its bounds
 * are read at every stop: a stack that moved and shrank may lie inside the
 * bounds it had before, with another top.
 */
static struct gstate *g_of(struct tracer *tr, const arch_regs *regs, int *key)
{
	struct golang *go = tr->ps->go;
	uint64_t g = arch_go_g(regs), sp = arch_sp(regs), b[2], idx;
	struct gstate *gs;

	if (g < 4096 || mem_read(tr->ps->memfd, g, b, sizeof(b)) < 0 || sp < b[0] || sp >= b[1])
		return NULL;
	if (u64map_get(&go->gmap, g, &idx)) {
		gs = &go->gs[idx];
	} else {
		if (go->n_gs == go->cap_gs) {
			go->cap_gs = go->cap_gs ? 2 * go->cap_gs : 64;
			go->gs = xrealloc(go->gs, go->cap_gs * sizeof(*go->gs));
		}
		idx = go->n_gs++;
		gs = &go->gs[idx];
		*gs = (struct gstate){.g = g};
		u64map_put(&go->gmap, g, idx);
	}
	gs->lo = b[0];
	gs->hi = b[1];
	*key = GO_KEY0 + (int)idx;
	return gs;
}

/* A frame's slot: its depth in its goroutine's stack (copystack keeps it). */
static uint64_t g_slot(const struct gstate *gs, uint64_t sp)
{
	return GO_SLOT_TOP - (gs->hi - sp);
}

/*
 * What thread th ran since its previous goroutine stop goes to the CPU
 * clock of the goroutine it ran (th->go.cur, as the scheduler's hooks
 * said), else to `fallback` (without the hooks: the goroutine that stops
 * now); to none between runtime.schedule and runtime.execute (the
 * scheduler's own work, an idle thread's spinning).
 */
static void thr_cpu(struct tracer *tr, struct tthread *th, struct gstate *fallback)
{
	struct golang *go = tr->ps->go;
	uint64_t c = th->now.t[CLOCK_KIND_CPU], idx;
	struct gstate *cur = fallback;

	if (go->exec != SIZE_MAX)
		cur = th->go.cur && u64map_get(&go->gmap, th->go.cur, &idx) ? &go->gs[idx] : NULL;
	if (th->go.cpu_seen < th->c0)
		th->go.cpu_seen = th->c0;
	if (c > th->go.cpu_seen) {
		if (cur)
			cur->cpu += c - th->go.cpu_seen;
		th->go.cpu_seen = c;
	}
}

/*
 * The goroutine's clocks at this stop of thread th: its CPU clock (see
 * thr_cpu), the wall is th's. This stop's cost joins the goroutine's (its
 * net books).
 */
static void g_stamp(struct tracer *tr, struct tthread *th, struct gstate *gs, int key,
		    struct stamp *s)
{
	thr_cpu(tr, th, gs);
	if (tr->ps->go->exec != SIZE_MAX)
		th->go.cur = gs->g; /* it runs here, whatever the hooks saw */
	s->t[CLOCK_KIND_CPU] = gs->cpu;
	s->t[CLOCK_KIND_WALL] = th->now.t[CLOCK_KIND_WALL];
	books_stop_cost(tr->ps->books, key, th->seg.last_ovh);
}

/* Close the goroutine's frames at or below `slot` (deeper): a panic unwound them. */
static void g_unwind(struct tracer *tr, int key, uint64_t slot, const struct stamp *s)
{
	uint32_t routine;
	uint64_t top_slot, ret;

	while (books_top(tr->ps->books, key, &routine, &top_slot, &ret) == 0 && top_slot <= slot)
		books_leave(tr->ps->books, key, s, &ret);
}

/*
 * runtime.morestack was called from gs->grow_pc: when the routine there
 * re-enters through the count path of its in-process entry (-c, or
 * throttled), that call is counted in the thread's area and is no other
 * call: its counter is taken one back now (probe_uncount).
 */
static void grow_counted(struct tracer *tr, struct tthread *th, struct gstate *gs)
{
	struct golang *go = tr->ps->go;
	const struct routine *r;
	size_t i, j;

	if (!tr->ps->probes || th->probe.area <= 0 || !gs->grow_pc || gs->grow_pc < tr->ps->bias)
		return;
	r = symtab_find(tr->ps->st, gs->grow_pc - tr->ps->bias);
	i = r ? (size_t)(r - tr->ps->st->r) : SIZE_MAX;
	if (i >= go->n_routines || (j = go->entry[i]) >= tr->ps->n_patches)
		return;
	if (tr->o->count_only || tr->ps->patches[j].throttled) {
		probe_uncount(tr, th, j);
		gs->grow_pc = 0;
	}
}

void go_entry(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p)
{
	struct golang *go = tr->ps->go;
	struct stamp s;
	int key = 0;
	struct gstate *gs = g_of(tr, regs, &key);
	uint64_t sp = arch_sp(regs);

	if (p->go_hook && (patch_on(tr, p, go->sched) || patch_on(tr, p, go->exec))) {
		/* The thread leaves its goroutine, or takes another (execute's gp). */
		thr_cpu(tr, th, NULL);
		th->go.cur = patch_on(tr, p, go->exec) ? arch_go_arg0(regs) : 0;
		goto resume;
	}
	if (p->go_hook && patch_on(tr, p, go->goexit)) {
		/* runtime.Goexit: the goroutine's frames still open are unwound. */
		if (gs && !tr->o->count_only) {
			g_stamp(tr, th, gs, key, &s);
			g_unwind(tr, key, UINT64_MAX, &s);
		}
		goto resume;
	}
	if (p->go_hook) {
		uint64_t ra;

		if (gs && mem_read(tr->ps->memfd, sp, &ra, sizeof(ra)) == 0) {
			gs->grow_pc = ra;
			grow_counted(tr, th, gs);
		}
		goto resume;
	}
	if (p->routine == ACCT_NONE)
		goto resume;
	if (gs && gs->grow_pc) {
		const struct routine *r = &tr->ps->st->r[p->routine];
		uint64_t pc = gs->grow_pc, lo = r->addr + tr->ps->bias;

		gs->grow_pc = 0;
		if (pc >= lo && pc < lo + r->size)
			goto resume; /* re-entered once its stack has grown: the same call */
	}
	if (!gs) {
		books_count(tr->ps->books, th->tid, p->routine);
		goto resume;
	}
	if (tr->o->count_only || p->routine >= go->n_routines || !go->ret_n[p->routine]) {
		books_count(tr->ps->books, key, p->routine);
		goto resume;
	}
	g_stamp(tr, th, gs, key, &s);
	g_unwind(tr, key, g_slot(gs, sp), &s);
	books_enter(tr->ps->books, key, p->routine, g_slot(gs, sp), 0, &s);
resume:
	resume_patched(tr, th->tid, regs, p, false);
}

void go_exit(struct tracer *tr, struct tthread *th, arch_regs *regs, const struct patch *p)
{
	struct stamp s;
	int key = 0;
	struct gstate *gs = g_of(tr, regs, &key);
	uint32_t routine;
	uint64_t slot, top_slot, ret;

	(void)p;
	if (gs) {
		slot = g_slot(gs, arch_sp(regs));
		g_stamp(tr, th, gs, key, &s);
		g_unwind(tr, key, slot - 1, &s);
		if (books_top(tr->ps->books, key, &routine, &top_slot, &ret) == 0 &&
		    top_slot == slot)
			books_leave(tr->ps->books, key, &s, &ret);
	}
	arch_emulate_ret_regs(th->tid, tr->ps->memfd, regs);
}

/* The goroutine g's state (made at its first event), its books key; NULL: too many. */
static struct gstate *g_find(struct golang *go, uint64_t g, int *key)
{
	uint64_t idx;

	if (!u64map_get(&go->gmap, g, &idx)) {
		if (go->n_gs >= GO_MAX_GS)
			return NULL;
		if (go->n_gs == go->cap_gs) {
			go->cap_gs = go->cap_gs ? 2 * go->cap_gs : 64;
			go->gs = xrealloc(go->gs, go->cap_gs * sizeof(*go->gs));
		}
		idx = go->n_gs++;
		go->gs[idx] = (struct gstate){.g = g};
		u64map_put(&go->gmap, g, idx);
	}
	*key = GO_KEY0 + (int)idx;
	return &go->gs[idx];
}

void go_throttled(struct tracer *tr, size_t j)
{
	struct golang *go = tr->ps->go;
	const struct patch *p = j < tr->ps->n_patches ? &tr->ps->patches[j] : NULL;
	const struct routine *r;
	uint64_t lo;

	if (!go || !p || p->routine == ACCT_NONE || p->routine >= tr->ps->st->n)
		return;
	r = &tr->ps->st->r[p->routine];
	lo = r->addr + tr->ps->bias;
	for (size_t i = 0; i < go->n_gs; i++) {
		struct gstate *gs = &go->gs[i];

		if (gs->grow_pc >= lo && gs->grow_pc < lo + r->size) {
			probe_uncount(tr, NULL, j);
			gs->grow_pc = 0;
		}
	}
}

void go_take(struct tracer *tr, struct tthread *th, const struct probe_event *e, uint64_t counted)
{
	struct golang *go = tr->ps->go;
	uint64_t kind = e->word & PROBE_W_KIND, j = e->word & 0xffffffffull, depth = e->slot;
	const struct patch *p = j < tr->ps->n_patches ? &tr->ps->patches[j] : NULL;
	struct gstate *gs;
	struct stamp s;
	uint32_t routine;
	uint64_t slot, top_slot, ret;
	int key = 0;

	/* Only a live in-process entry's patch; a depth no stack has: dropped. */
	if (!p || !p->stub || p->dead || p->exit_probe || p->routine == ACCT_NONE ||
	    p->routine >= go->n_routines || depth >= GO_SLOT_TOP || e->ret < 4096 ||
	    (kind != PROBE_W_ENTRY && kind != PROBE_W_EXIT) || !(gs = g_find(go, e->ret, &key)))
		return;
	slot = GO_SLOT_TOP - depth;
	/* the goroutine's clocks at the event (th->now: the thread's then) */
	thr_cpu(tr, th, gs);
	if (go->exec != SIZE_MAX)
		th->go.cur = gs->g;
	s.t[CLOCK_KIND_CPU] = gs->cpu;
	s.t[CLOCK_KIND_WALL] = th->now.t[CLOCK_KIND_WALL];
	/* what the probe cost, and the count path's calls since the last event (drain.c's take) */
	if (counted)
		books_stop_cost(tr->ps->books, key,
				(double[FS_N_CLOCKS]){
				    (double)counted * tr->o->probe_count_ns[CLOCK_KIND_CPU],
				    (double)counted * tr->o->probe_count_ns[CLOCK_KIND_WALL]});
	books_stop_cost(tr->ps->books, key,
			kind == PROBE_W_EXIT ? tr->o->probe_ret_ns : tr->o->probe_ns);
	if (kind == PROBE_W_EXIT) {
		g_unwind(tr, key, slot - 1, &s);
		if (books_top(tr->ps->books, key, &routine, &top_slot, &ret) == 0 &&
		    top_slot == slot)
			books_leave(tr->ps->books, key, &s, &ret);
		return;
	}
	if (gs->grow_pc) {
		const struct routine *r = &tr->ps->st->r[p->routine];
		uint64_t pc = gs->grow_pc, lo = r->addr + tr->ps->bias;

		gs->grow_pc = 0;
		if (pc >= lo && pc < lo + r->size)
			return; /* re-entered once its stack has grown: the same call */
	}
	g_unwind(tr, key, slot, &s);
	books_enter(tr->ps->books, key, p->routine, slot, 0, &s);
	probe_throttle_candidate(tr, (size_t)j);
}

struct golang *go_dup(const struct golang *go)
{
	struct golang *d;
	size_t n;

	if (!go)
		return NULL;
	d = xmalloc(sizeof(*d));
	*d = *go;
	n = go->n_routines ? go->n_routines : 1;
	d->ret_first = xmalloc(n * sizeof(*d->ret_first));
	memcpy(d->ret_first, go->ret_first, n * sizeof(*d->ret_first));
	d->ret_n = xmalloc(n * sizeof(*d->ret_n));
	memcpy(d->ret_n, go->ret_n, n * sizeof(*d->ret_n));
	d->traps = xmalloc(n * sizeof(*d->traps));
	memcpy(d->traps, go->traps, n * sizeof(*d->traps));
	d->entry = xmalloc(n * sizeof(*d->entry));
	memcpy(d->entry, go->entry, n * sizeof(*d->entry));
	d->rets = xmalloc((go->n_rets ? go->n_rets : 1) * sizeof(*d->rets));
	memcpy(d->rets, go->rets, go->n_rets * sizeof(*d->rets));
	d->starts = xmalloc((go->n_rets ? go->n_rets : 1) * sizeof(*d->starts));
	memcpy(d->starts, go->starts, go->n_rets * sizeof(*d->starts));
	d->cap_rets = go->n_rets;
	u64map_dup(&d->gmap, &go->gmap);
	d->gs = xmalloc((go->n_gs ? go->n_gs : 1) * sizeof(*d->gs));
	memcpy(d->gs, go->gs, go->n_gs * sizeof(*d->gs));
	d->cap_gs = go->n_gs ? go->n_gs : 1;
	return d;
}

void go_free(struct golang *go)
{
	if (!go)
		return;
	free(go->ret_first);
	free(go->ret_n);
	free(go->traps);
	free(go->entry);
	free(go->rets);
	free(go->starts);
	u64map_free(&go->gmap);
	free(go->gs);
	free(go);
}
