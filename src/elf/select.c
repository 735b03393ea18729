// SPDX-License-Identifier: GPL-2.0-or-later
/* select.c - which routines to time (-n, -x, defaults), and tables grown by libraries' routines. */
#include "symtab_int.h"
#include "fortstat/alloc.h"
#include "fortstat/names.h"
#include "fortstat/util.h"

#include <stdlib.h>

/*
 * Does a pattern of @nm match one of the routine's names, its display name,
 * or the display name without blanks (names files lose their blanks)?
 * Each matching entry is counted once per routine.
 */
static bool match_routine_in(struct names *nm, const struct routine *r,
			     const char *const *mod_names);

static bool match_routine(struct names *nm, const struct routine *r)
{
	return match_routine_in(nm, r, NULL);
}

/* Does LIB (the first len bytes of a LIB:NAME pattern) match one of mod_names? */
static bool lib_matches(const char *pattern, size_t len, const char *const *mod_names)
{
	for (size_t i = 0; mod_names && mod_names[i]; i++)
		if (names_lib_match(pattern, len, mod_names[i]))
			return true;
	return false;
}

/*
 * As match_routine, for a routine of the library known as mod_names (NULL
 * for the program): a LIB:NAME pattern matches only there.
 */
static bool match_routine_in(struct names *nm, const struct routine *r,
			     const char *const *mod_names)
{
	char *squeezed, *q;
	const char *p;
	bool any = false;
	size_t e, i;

	if (!nm || !nm->n)
		return false;
	squeezed = xmalloc(strlen(r->display) + 1);
	for (p = r->display, q = squeezed; *p; p++)
		if (*p != ' ' && *p != '\t')
			*q++ = *p;
	*q = '\0';
	for (e = 0; e < nm->n; e++) {
		struct names one = {.path = nm->path, .v = &nm->v[e], .n = 1};
		size_t qual = names_qualifier(nm->v[e].pattern);
		struct names_entry unq;
		bool hit;

		if (qual) {
			if (!lib_matches(nm->v[e].pattern, qual - 1, mod_names))
				continue;
			unq = nm->v[e];
			unq.pattern += qual;
			unq.is_glob = strpbrk(unq.pattern, "*?[") != NULL;
			one.v = &unq;
		}
		hit = names_test(&one, r->display) || names_test(&one, squeezed);

		for (i = 0; !hit && i < r->n_names; i++)
			hit = names_test(&one, r->names[i]);
		if (hit) {
			nm->v[e].matched++;
			any = true;
		}
	}
	free(squeezed);
	return any;
}

/*
 * Set RT_SELECTED on the routines to time (rules in symtab.h) and return how
 * many. A routine matches when a pattern matches any symbol name, the display
 * name, or the display name without blanks. Counts the default-skipped ones
 * in st->n_skipped_default and says so at -v.
 */
size_t symtab_select(struct symtab *st, struct names *names, struct names *exclude, bool all)
{
	size_t i, n_sel = 0, n_helper = 0, n_library = 0;

	st->n_skipped_default = 0;
	for (i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];
		bool excluded = match_routine(exclude, r);
		bool sel;

		r->flags &= ~RT_SELECTED;
		if (names)
			sel = match_routine(names, r) || (r->flags & RT_MAINLINE);
		else if (all || (r->flags & RT_MAINLINE))
			sel = true;
		else if (r->flags & (RT_HELPER | RT_LIBRARY)) {
			sel = false;
			st->n_skipped_default++;
			if (r->flags & RT_HELPER)
				n_helper++;
			else
				n_library++;
		} else
			sel = true;
		if (excluded || (r->flags & RT_RETURNS_TWICE))
			sel = false;
		if (sel) {
			r->flags |= RT_SELECTED;
			n_sel++;
		}
	}
	if (st->n_skipped_default)
		fs_info(1,
			"%zu routines not timed by default: %zu C-runtime helpers, %zu library "
			"routines",
			st->n_skipped_default, n_helper, n_library);
	return n_sel;
}

size_t symtab_select_module(struct symtab *st, struct names *names, struct names *exclude,
			    const char *const *mod_names)
{
	size_t n_sel = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];
		bool sel;

		/* In a library, main (if any) is not the mainline and nothing is "library". */
		r->flags &= ~(unsigned)(RT_SELECTED | RT_MAINLINE | RT_LIBRARY);
		if (names)
			sel = match_routine_in(names, r, mod_names);
		else
			sel = !(r->flags & RT_HELPER);
		if ((exclude && match_routine_in(exclude, r, mod_names)) ||
		    (r->flags & RT_RETURNS_TWICE))
			sel = false;
		if (sel) {
			r->flags |= RT_SELECTED;
			n_sel++;
		}
	}
	return n_sel;
}

size_t symtab_select_alloc(struct symtab *st)
{
	size_t n = 0;

	for (size_t i = 0; i < st->n; i++) {
		struct routine *r = &st->r[i];

		for (size_t k = 0; k < r->n_names; k++) {
			if (alloc_fn_of(r->names[k]) == ALLOC_NONE)
				continue;
			r->flags |= RT_ALLOC | RT_SELECTED;
			n++;
			break;
		}
	}
	return n;
}

struct routine *symtab_add_routine(struct symtab *st, uint64_t addr, uint64_t size,
				   const char *name)
{
	size_t lo = 0, hi = st->n;
	struct routine *r;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (st->r[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->n && st->r[lo].addr == addr) {
		r = &st->r[lo];
		for (size_t k = 0; k < r->n_names; k++)
			if (!strcmp(r->names[k], name))
				return r;
		r->names = xrealloc(r->names, (r->n_names + 1) * sizeof(*r->names));
		/*
		 * The indirect function's public name goes first: it is what
		 * callers call. Among several (sin, sinf32x, sinf64) the shortest.
		 */
		if ((r->flags & RT_IFUNC) && strlen(name) >= strlen(r->names[0])) {
			r->names[r->n_names++] = xstrdup(name);
			return r;
		}
		memmove(r->names + 1, r->names, r->n_names * sizeof(*r->names));
		r->names[0] = xstrdup(name);
		r->n_names++;
		r->flags |= RT_IFUNC;
		free(r->display);
		r->display = display_make(name, NULL);
		return r;
	}
	st->r = xrealloc(st->r, (st->n + 1) * sizeof(*st->r));
	memmove(&st->r[lo + 1], &st->r[lo], (st->n - lo) * sizeof(*st->r));
	st->n++;
	st->n_own = st->n;
	r = &st->r[lo];
	memset(r, 0, sizeof(*r));
	r->addr = addr;
	r->size = size;
	r->names = xmalloc(sizeof(*r->names));
	r->names[0] = xstrdup(name);
	r->n_names = 1;
	r->display = display_make(name, NULL);
	r->flags |= RT_IFUNC;
	if (display_is_noreturn(name))
		r->flags |= RT_NORETURN;
	if (display_is_returns_twice(name))
		r->flags |= RT_RETURNS_TWICE;
	return r;
}

size_t symtab_append(struct symtab *st, struct symtab *lib, const char *module)
{
	size_t first = st->n, k = 0;
	char *mod;

	st->modules = xrealloc(st->modules, (st->n_modules + 1) * sizeof(*st->modules));
	mod = xstrdup(module);
	st->modules[st->n_modules++] = mod;
	for (size_t i = 0; i < lib->n; i++)
		k += (lib->r[i].flags & RT_SELECTED) != 0;
	st->r = xrealloc(st->r, (st->n + k + 1) * sizeof(*st->r));
	for (size_t i = 0; i < lib->n; i++) {
		struct routine *r = &lib->r[i];
		char *display;

		if (!(r->flags & RT_SELECTED))
			continue;
		display = xasprintf("%s:%s", mod, r->display ? r->display : r->names[0]);
		free(r->display);
		r->display = display;
		r->module = mod;
		st->r[st->n++] = *r;
		memset(r, 0, sizeof(*r)); /* moved */
	}
	symtab_free(lib);
	return first;
}
