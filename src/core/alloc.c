// SPDX-License-Identifier: GPL-2.0-or-later
/* alloc.c - storage per routine (--alloc): the allocators' calls into books, pure. */
#include <stdlib.h>
#include <string.h>

#include "fortstat/account.h"
#include "fortstat/alloc.h"
#include "fortstat/map.h"
#include "fortstat/util.h"

static const struct {
	const char *name;
	enum alloc_fn fn;
} known[] = {
    {"malloc", ALLOC_MALLOC},
    {"__libc_malloc", ALLOC_MALLOC},
    {"valloc", ALLOC_MALLOC},
    {"pvalloc", ALLOC_MALLOC},
    {"calloc", ALLOC_CALLOC},
    {"__libc_calloc", ALLOC_CALLOC},
    {"realloc", ALLOC_REALLOC},
    {"__libc_realloc", ALLOC_REALLOC},
    {"reallocarray", ALLOC_REALLOCARRAY},
    {"memalign", ALLOC_MEMALIGN},
    {"__libc_memalign", ALLOC_MEMALIGN},
    {"aligned_alloc", ALLOC_MEMALIGN},
    {"posix_memalign", ALLOC_POSIX_MEMALIGN},
    {"free", ALLOC_FREE},
    {"__libc_free", ALLOC_FREE},
    {"cfree", ALLOC_FREE},
};

enum alloc_fn alloc_fn_of(const char *name)
{
	size_t n;

	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (!strcmp(name, known[i].name))
			return known[i].fn;
	/*
	 * C++: operator new and new[] (_Znwm, _Znam) and their nothrow and
	 * aligned forms take the size first; operator delete and delete[]
	 * (_ZdlPv, _ZdaPv) and their sized, aligned and nothrow forms the
	 * pointer first.
	 */
	n = strlen(name);
	if (n >= 5 && (!strncmp(name, "_Znwm", 5) || !strncmp(name, "_Znam", 5)) &&
	    (n == 5 || !strcmp(name + 5, "RKSt9nothrow_t") ||
	     !strcmp(name + 5, "St11align_val_t") ||
	     !strcmp(name + 5, "St11align_val_tRKSt9nothrow_t")))
		return ALLOC_MALLOC;
	if (n >= 6 && (!strncmp(name, "_ZdlPv", 6) || !strncmp(name, "_ZdaPv", 6))) {
		const char *t = name + 6;

		if (*t == 'm')
			t++;
		if (!*t || !strcmp(t, "St11align_val_t") || !strcmp(t, "RKSt9nothrow_t") ||
		    !strcmp(t, "St11align_val_tRKSt9nothrow_t"))
			return ALLOC_FREE;
	}
	return ALLOC_NONE;
}

bool alloc_call(enum alloc_fn fn, const uint64_t args[3], uint64_t block, uint64_t *size,
		uint64_t *freed)
{
	*size = 0;
	*freed = 0;
	switch (fn) {
	case ALLOC_MALLOC:
		*size = args[0];
		break;
	case ALLOC_CALLOC:
		if (__builtin_mul_overflow(args[0], args[1], size))
			return false;
		break;
	case ALLOC_REALLOC:
	case ALLOC_REALLOCARRAY:
		if (fn == ALLOC_REALLOC)
			*size = args[1];
		else if (__builtin_mul_overflow(args[1], args[2], size))
			return false;
		/*
		 * The old block is freed when a new one is made, and by a
		 * size of 0 (the C library's realloc(p, 0): NULL back, p freed);
		 * a failure leaves it.
		 */
		if (block || !*size)
			*freed = args[0];
		break;
	case ALLOC_MEMALIGN:
		*size = args[1];
		break;
	case ALLOC_POSIX_MEMALIGN:
		*size = args[2];
		break;
	case ALLOC_FREE:
		*freed = args[0];
		return false;
	default:
		return false;
	}
	return block != 0;
}

struct alloc_books {
	struct alloc_ctx *ctx; /* calling contexts, [0] the root */
	size_t n_ctx, cap_ctx;
	struct u64map ctx_of; /* (parent << 32 | routine) + 1 -> context */
	struct alloc_routine *r;
	uint64_t *seen; /* the last charge that counted routine i inclusively */
	size_t n;
	uint64_t serial;
	struct u64map live; /* block -> its size + 1 */
	struct alloc_totals t;
};

struct alloc_books *alloc_new(size_t n_routines)
{
	struct alloc_books *m = xcalloc(1, sizeof(*m));

	m->t.peak_routine = ACCT_NONE;
	alloc_grow(m, n_routines);
	m->cap_ctx = 16;
	m->ctx = xcalloc(m->cap_ctx, sizeof(*m->ctx));
	m->ctx[0] = (struct alloc_ctx){.parent = ACCT_NONE, .routine = ACCT_NONE};
	m->n_ctx = 1;
	return m;
}

void alloc_free_books(struct alloc_books *m)
{
	if (!m)
		return;
	free(m->r);
	free(m->seen);
	free(m->ctx);
	u64map_free(&m->ctx_of);
	u64map_free(&m->live);
	free(m);
}

struct alloc_books *alloc_dup(const struct alloc_books *m)
{
	struct alloc_books *c = xcalloc(1, sizeof(*c));

	*c = *m;
	c->r = xcalloc(m->n ? m->n : 1, sizeof(*c->r));
	c->seen = xcalloc(m->n ? m->n : 1, sizeof(*c->seen));
	if (m->n) {
		memcpy(c->r, m->r, m->n * sizeof(*c->r));
		memcpy(c->seen, m->seen, m->n * sizeof(*c->seen));
	}
	u64map_dup(&c->live, &m->live);
	c->ctx = xmalloc(m->cap_ctx * sizeof(*c->ctx));
	memcpy(c->ctx, m->ctx, m->n_ctx * sizeof(*c->ctx));
	u64map_dup(&c->ctx_of, &m->ctx_of);
	return c;
}

void alloc_grow(struct alloc_books *m, size_t n_routines)
{
	if (n_routines <= m->n && m->r)
		return;
	m->r = xrealloc(m->r, (n_routines ? n_routines : 1) * sizeof(*m->r));
	m->seen = xrealloc(m->seen, (n_routines ? n_routines : 1) * sizeof(*m->seen));
	if (n_routines > m->n) {
		memset(m->r + m->n, 0, (n_routines - m->n) * sizeof(*m->r));
		memset(m->seen + m->n, 0, (n_routines - m->n) * sizeof(*m->seen));
		m->n = n_routines;
	}
}

/* The calling context of stack[0..n) (made when new): its index in m->ctx. */
static size_t context_of(struct alloc_books *m, const uint32_t *stack, size_t n)
{
	uint64_t k = 0, v;

	for (size_t i = 0; i < n; i++) {
		uint64_t key = ((k << 32) | stack[i]) + 1;

		if (stack[i] >= m->n)
			continue;
		if (!u64map_get(&m->ctx_of, key, &v)) {
			if (m->n_ctx == m->cap_ctx) {
				m->cap_ctx *= 2;
				m->ctx = xrealloc(m->ctx, m->cap_ctx * sizeof(*m->ctx));
			}
			m->ctx[m->n_ctx] =
			    (struct alloc_ctx){.parent = (uint32_t)k, .routine = stack[i]};
			v = m->n_ctx++;
			u64map_put(&m->ctx_of, key, v);
		}
		k = v;
	}
	return (size_t)k;
}

/* Charge a block made (made) or freed to the stack: self to its top, inclusive once each. */
static void charge(struct alloc_books *m, const uint32_t *stack, size_t n, bool made, uint64_t size)
{
	uint32_t top = n ? stack[n - 1] : ACCT_NONE;

	m->serial++;
	if (top >= m->n) {
		if (made) {
			m->t.outside_allocs++;
			m->t.outside_bytes += size;
		} else {
			m->t.outside_frees++;
		}
	} else if (made) {
		size_t k = context_of(m, stack, n); /* it may move m->ctx: read it after */

		m->ctx[k].allocs++;
		m->ctx[k].bytes += size;
		m->r[top].allocs++;
		m->r[top].bytes += size;
	} else {
		m->r[top].frees++;
	}
	for (size_t i = 0; i < n; i++) {
		struct alloc_routine *r;

		if (stack[i] >= m->n || m->seen[stack[i]] == m->serial)
			continue; /* a recursive routine counts once */
		m->seen[stack[i]] = m->serial;
		r = &m->r[stack[i]];
		if (made) {
			r->allocs_incl++;
			r->bytes_incl += size;
		} else {
			r->frees_incl++;
		}
	}
}

void alloc_charge(struct alloc_books *m, const uint32_t *stack, size_t n, enum alloc_fn fn,
		  const uint64_t args[3], uint64_t block)
{
	uint64_t size, freed, old;
	bool made = alloc_call(fn, args, block, &size, &freed);

	if (freed) {
		m->t.frees++;
		charge(m, stack, n, false, 0);
		if (u64map_get(&m->live, freed, &old)) {
			m->t.live -= old - 1;
			u64map_del(&m->live, freed);
		} else {
			m->t.unknown_frees++;
		}
	}
	if (!made)
		return;
	m->t.allocs++;
	m->t.bytes += size;
	charge(m, stack, n, true, size);
	/* a block made again at the address of one not seen freed: the old one is gone */
	if (u64map_get(&m->live, block, &old))
		m->t.live -= old - 1;
	u64map_put(&m->live, block, size + 1);
	m->t.live += size;
	if (m->t.live > m->t.peak) {
		m->t.peak = m->t.live;
		m->t.peak_routine = n && stack[n - 1] < m->n ? stack[n - 1] : ACCT_NONE;
	}
}

const struct alloc_routine *alloc_routines(const struct alloc_books *m)
{
	return m->r;
}

size_t alloc_n_routines(const struct alloc_books *m)
{
	return m->n;
}

void alloc_totals(const struct alloc_books *m, struct alloc_totals *t)
{
	*t = m->t;
}

const struct alloc_ctx *alloc_contexts(const struct alloc_books *m, size_t *n)
{
	*n = m->n_ctx;
	return m->ctx;
}
