/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * plancache.h - private to src/tracer/: what one fortstat run learnt of an
 * executable file, kept for the next time a followed process (-f) execs it
 * (make runs cc1 once a source file, cc1 has 26,000 routines): its symbol
 * table as read, and each routine's entry plan with the inputs it was made
 * from; and the plans of the shared libraries timed (-l), which every
 * program of the run may load. A plan is reused only when every input but
 * the addresses is the same (the file, the routine and its neighbours at
 * the same places in the file, the mode); then it is moved to this exec's
 * addresses (a PIE's or a library's load bias, the stub's, the
 * trampoline's, the return trap's) and patch number (insn_stub_move), and
 * is the plan that planning would make there,
 * byte for byte, unless a displacement no longer reaches: then the routine
 * is planned again. A file is known by its device, inode, size,
 * modification and change times, as the process's /proc/PID/exe says (the
 * file it runs, whatever its path names now).
 */
#ifndef FORTSTAT_PLANCACHE_H
#define FORTSTAT_PLANCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include "fortstat/insn.h"

struct tracer;
struct symtab;
struct plancache;

/* FORTSTAT_PLAN_CACHE (a test hook, not an option): 0 off, check, else on. */
enum pc_mode {
	PC_ON,
	PC_OFF,
	PC_CHECK, /* every plan taken from the cache also made afresh and compared */
};

/*
 * What an entry's planning needs besides the file's bytes and the addresses
 * (try_stub, patch.c): its addresses in the file, not in the process.
 */
#define PC_KEY_N 12
struct pc_key {
	uint64_t v[PC_KEY_N];
};

/* One routine's entry, planned (patch.c's try_stub). */
struct pc_plan {
	int rc; /* insn_plan_probe's or insn_plan_stub's: 0 planned, 1 refused */
	struct insn_stub stub;
	uint8_t orig[16];     /* the bytes the jmp covers (stub.len of them) */
	uint8_t pad_orig[5];  /* the padding's bytes under pad[] (with stub.pad_addr) */
	struct insn_place at; /* the addresses it was planned for */
};

/* One executable file of the run. */
struct pc_image {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime, ctime;
	bool have_st; /* st holds its table as symtab_load left it */
	int st_rc;    /* ... and what symtab_load returned */
	struct symtab *st;
	struct pc_plan **plan; /* by routine index, NULL: none yet */
	struct pc_key *keys;   /* plan[i]'s inputs */
	size_t n_plan;
	size_t uses; /* images of it patched so far */
	/* in the patching under way (patch_routines): plans taken, of them moved, made, ... */
	size_t hits, moved, made, checked, differ;
	size_t far; /* plans found that could not be moved here: made again */
	/*
	 * The scratch pages (stubs) as last written to a process of this file,
	 * in a sealed memfd (share_fd) that each process maps privately
	 * (plancache_write_scratch); share_map: fortstat's view, to compare.
	 */
	int share_fd;
	const uint8_t *share_map;
	size_t share_size;
	size_t share_made, share_used; /* memfds made, processes that mapped one */
	/*
	 * The routines (by index, n_thr of them) --throttle's rule stopped
	 * timing in an exec of this file so far (drain.c's throttle(), a probe
	 * stub's throttle), which a later exec's stubs take throttled from its
	 * first call (plancache_carry); carried: how many the patching under
	 * way took so.
	 */
	uint8_t *thr;
	size_t n_thr, n_thr_set;
	size_t carried;
	/*
	 * The calls and net CPU self time (ns) of each routine not throttled,
	 * summed over the ended execs of this file (plancache_pool), n_thr of
	 * them: a routine that reaches --throttle's rule in all starts
	 * throttled in the later execs.
	 */
	uint64_t (*pool)[2];
};

enum pc_mode plancache_mode(void);

/*
 * symtab_load(path, st) for the image that process pid runs (its exec
 * stop), read once a file: a later exec of the same file gets a copy of
 * the table as it was read. Returns as symtab_load.
 */
int plancache_symtab(struct tracer *tr, pid_t pid, const char *path, struct symtab *st);

/*
 * The file that process pid runs, for its routines' plans (n of them in
 * its table), or NULL when the cache is off or the file cannot be known.
 * Its counters (hits, made, checked, differ) start at 0.
 */
struct pc_image *plancache_image(struct tracer *tr, pid_t pid, size_t n);

/*
 * The same for a shared library (-l): the file mapped at addr in process
 * pid (a routine of it), n routines in its part of the table.
 */
struct pc_image *plancache_image_at(struct tracer *tr, pid_t pid, uint64_t addr, size_t n);

/* The plan of routine i with these inputs, if one was made: NULL else. */
const struct pc_plan *plancache_get(const struct pc_image *im, size_t i, const struct pc_key *key);

/*
 * The plan kept, `pl`, for this exec's addresses `at`: 0 (the same
 * addresses: pl as it is), 1 (moved there, into *out), or -1 when it
 * cannot be (a displacement out of reach; a refusal that came from one):
 * plan again.
 */
int plancache_move(struct pc_image *im, const struct pc_plan *pl, const struct insn_place *at,
		   struct pc_plan *out);

/* Keep routine i's plan, made from these inputs. */
void plancache_put(struct pc_image *im, size_t i, const struct pc_key *key,
		   const struct pc_plan *plan);

/* Are two plans the same, byte for byte where the program sees them? */
bool plancache_same(const struct pc_plan *a, const struct pc_plan *b);

/*
 * Write the scratch pages of a process's own image (buf, size bytes, at
 * base, mapped there already) into process tid at its exec stop. Past a
 * size, with the cache on and no -p, they go into a sealed memfd mapped
 * privately over base in the process (MAP_PRIVATE|MAP_FIXED), kept with
 * im for the next exec of the same file, which maps the same memfd when
 * its pages are byte for byte the same: the kernel maps the pages the
 * program touches from the memfd, fortstat copies nothing, and a byte
 * fortstat writes later (a throttle) goes to that process's own copy of
 * its page. Else, or when any step fails, written through /proc/PID/mem.
 * Returns 0 or -errno.
 */
int plancache_write_scratch(struct tracer *tr, struct pc_image *im, pid_t tid, uint64_t base,
			    const uint8_t *buf, size_t size);

/*
 * FORTSTAT_THROTTLE_CARRY (a test hook, not an option): 0 off (each exec
 * throttles on its own), else on.
 */
bool plancache_carry_on(void);

/*
 * Routine i of im's file was throttled in a process running it (a probe
 * stub's throttle): the later execs of the file start with it throttled.
 * im NULL: nothing (the cache off, the carry off, not the program's own).
 */
void plancache_throttled(struct pc_image *im, size_t i);

/*
 * A process of im's file (NULL: nothing) ended or exec'ed away, with these
 * books over its table st: each routine it timed and did not throttle adds
 * its calls and net CPU self time to the file's pool, and one whose pool
 * then meets --throttle's rule (min_calls, max_ns) starts throttled in the
 * later execs, as if one exec had throttled it. make running cc1 once a
 * source file: a routine called 3,000 times a file would be timed in each
 * cc1 whole, the decision never reached in one.
 */
struct books;
void plancache_pool(struct pc_image *im, const struct books *b, const struct symtab *st,
		    uint64_t min_calls, double max_ns);

/*
 * Is routine i of im's file (NULL: none) to start throttled, throttled in
 * an earlier exec? Counted in im->carried when it is.
 */
bool plancache_carry(struct pc_image *im, size_t i);

/* Free the run's cache (tracer_free). */
void plancache_free(struct tracer *tr);

#endif
