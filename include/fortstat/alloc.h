/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * alloc.h - storage per routine (--alloc, Icon's ALC): which allocator a
 * symbol is, what one of its calls did (from its arguments and its result),
 * and the books of a process's storage: per routine the allocations, bytes
 * and frees it made (self) and made below it (inclusive), the live bytes
 * and their peak. Pure: fed by the tracer with a call's facts and the
 * thread's stack of timed routines.
 */
#ifndef FORTSTAT_ALLOC_H
#define FORTSTAT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The allocators fortstat knows, by what their arguments mean. */
enum alloc_fn {
	ALLOC_NONE = 0,
	ALLOC_MALLOC,	      /* (size): malloc, valloc, pvalloc, operator new and new[] */
	ALLOC_CALLOC,	      /* (n, size) */
	ALLOC_REALLOC,	      /* (ptr, size) */
	ALLOC_REALLOCARRAY,   /* (ptr, n, size) */
	ALLOC_MEMALIGN,	      /* (align, size): memalign, aligned_alloc */
	ALLOC_POSIX_MEMALIGN, /* (&ptr, align, size): 0 and the block in *ptr */
	ALLOC_FREE,	      /* (ptr): free, operator delete and delete[] */
};

/* Which allocator a symbol name is (a C name or a mangled C++ operator); ALLOC_NONE. */
enum alloc_fn alloc_fn_of(const char *name);

/*
 * One call's result, as its books see it. `block` is the block it made
 * (the return value; for posix_memalign the pointer it stored when it
 * returned 0, else 0); `args` its first three integer arguments. Returns
 * the bytes asked for in *size and the block freed in *freed (0: none);
 * false when it made no block (a free, a failure, calloc's n * size
 * overflowing).
 */
bool alloc_call(enum alloc_fn fn, const uint64_t args[3], uint64_t block, uint64_t *size,
		uint64_t *freed);

/* One routine's storage: its own requests (self) and those made below it too. */
struct alloc_routine {
	uint64_t allocs, bytes, frees;		      /* self */
	uint64_t allocs_incl, bytes_incl, frees_incl; /* inclusive (each routine once) */
};

/* A process's storage over the run. */
struct alloc_totals {
	uint64_t allocs, bytes, frees; /* every call seen */
	uint64_t outside_allocs, outside_bytes,
	    outside_frees;	/* with no timed routine on the stack */
	uint64_t live;		/* bytes of the blocks not freed yet */
	uint64_t peak;		/* the most live bytes at once */
	uint32_t peak_routine;	/* whose allocation reached it (ACCT_NONE: outside) */
	uint64_t unknown_frees; /* frees of blocks not seen made (before the run...) */
};

/*
 * A calling context's allocations: the stack of timed routines they were
 * made under, as a tree (parent: an index of the same array, the root 0
 * is no routine and parent of the outermost frames).
 */
struct alloc_ctx {
	uint32_t parent, routine;
	uint64_t allocs, bytes;
};

struct alloc_books;

/* New books for n_routines routines (every count 0). Never NULL; free with alloc_free_books. */
struct alloc_books *alloc_new(size_t n_routines);
void alloc_free_books(struct alloc_books *m);
/* A deep copy (for a snapshot). */
struct alloc_books *alloc_dup(const struct alloc_books *m);
void alloc_grow(struct alloc_books *m, size_t n_routines);

/*
 * One call of an allocator, made with `stack` the thread's timed routines
 * (bottom first, n of them; n == 0: none): its block charged to the top
 * (self) and to each routine on the stack once (inclusive), its free too.
 * Routines out of range are ignored.
 */
void alloc_charge(struct alloc_books *m, const uint32_t *stack, size_t n, enum alloc_fn fn,
		  const uint64_t args[3], uint64_t block);

/* Per-routine results (an array of alloc_n_routines), the totals. */
const struct alloc_routine *alloc_routines(const struct alloc_books *m);
size_t alloc_n_routines(const struct alloc_books *m);
void alloc_totals(const struct alloc_books *m, struct alloc_totals *t);
/* The calling contexts of the allocations (*n of them, the root first; parents first). */
const struct alloc_ctx *alloc_contexts(const struct alloc_books *m, size_t *n);

#endif
