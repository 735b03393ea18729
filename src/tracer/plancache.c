// SPDX-License-Identifier: GPL-2.0-or-later
/*
 * plancache.c - the symbol tables and entry plans of the files exec'ed in
 * one run, kept for their next exec (plancache.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "fortstat/books.h"
#include "fortstat/inject.h"
#include "fortstat/procfs.h"
#include "fortstat/procmem.h"
#include "fortstat/symtab.h"
#include "fortstat/throttle.h"
#include "fortstat/trace.h"
#include "fortstat/util.h"
#include "plancache.h"
#include "tracer.h"

struct plancache {
	struct pc_image **im;
	size_t n;
};

enum pc_mode plancache_mode(void)
{
	static int mode = -1;

	if (mode < 0) {
		const char *e = getenv("FORTSTAT_PLAN_CACHE");

		mode = !e || !*e			      ? PC_ON
		       : !strcmp(e, "0") || !strcmp(e, "off") ? PC_OFF
		       : !strcmp(e, "check")		      ? PC_CHECK
							      : PC_ON;
	}
	return (enum pc_mode)mode;
}

static bool same_file(const struct pc_image *im, const struct stat *sb)
{
	return im->dev == sb->st_dev && im->ino == sb->st_ino && im->size == sb->st_size &&
	       im->mtime.tv_sec == sb->st_mtim.tv_sec && im->mtime.tv_nsec == sb->st_mtim.tv_nsec &&
	       im->ctime.tv_sec == sb->st_ctim.tv_sec && im->ctime.tv_nsec == sb->st_ctim.tv_nsec;
}

/* The file process pid runs: 0 and *sb, or -1. */
static int exe_stat(pid_t pid, struct stat *sb)
{
	char link[48];

	snprintf(link, sizeof(link), "/proc/%d/exe", (int)pid);
	return stat(link, sb) == 0 && S_ISREG(sb->st_mode) ? 0 : -1;
}

/* The entry of the file described by sb, made if need be. */
static struct pc_image *image_of(struct tracer *tr, const struct stat *sb)
{
	struct plancache *pc;
	struct pc_image *im;

	if (!tr->pc)
		tr->pc = xcalloc(1, sizeof(*tr->pc));
	pc = tr->pc;
	for (size_t i = 0; i < pc->n; i++)
		if (same_file(pc->im[i], sb))
			return pc->im[i];
	pc->im = xrealloc(pc->im, (pc->n + 1) * sizeof(*pc->im));
	im = pc->im[pc->n++] = xcalloc(1, sizeof(*im));
	im->share_fd = -1;
	im->dev = sb->st_dev;
	im->ino = sb->st_ino;
	im->size = sb->st_size;
	im->mtime = sb->st_mtim;
	im->ctime = sb->st_ctim;
	return im;
}

int plancache_symtab(struct tracer *tr, pid_t pid, const char *path, struct symtab *st)
{
	struct stat run, named, after;
	struct pc_image *im;
	int rc;

	/* the file the process runs, and the one its path names, must be one */
	if (plancache_mode() == PC_OFF || exe_stat(pid, &run) < 0 || stat(path, &named) < 0 ||
	    named.st_dev != run.st_dev || named.st_ino != run.st_ino)
		return symtab_load(path, st);
	im = image_of(tr, &run);
	if (im->have_st) {
		symtab_dup(im->st, st);
		fs_info(1, "%s: its symbols as read at its first exec (%zu routines)", path, st->n);
		return im->st_rc;
	}
	rc = symtab_load(path, st);
	/* kept when the file read was the one run: nothing changed it meanwhile */
	if ((rc == 0 || rc == SYMTAB_ENOSYMS || rc == SYMTAB_EBADSHDR) && stat(path, &after) == 0 &&
	    same_file(im, &after)) {
		im->st = xcalloc(1, sizeof(*im->st));
		symtab_dup(st, im->st);
		im->st_rc = rc;
		im->have_st = true;
	}
	return rc;
}

/*
 * The file mapped at addr in process pid, as the mapping says (its
 * map_files link: the file itself, whatever its path names now): 0 and
 * *sb, or -1.
 */
static int mapped_stat(pid_t pid, uint64_t addr, struct stat *sb)
{
	char path[96], line[512];
	uint64_t lo, hi;
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%" SCNx64 "-%" SCNx64, &lo, &hi) != 2 || addr < lo || addr >= hi)
			continue;
		snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid,
			 lo, hi);
		rc = stat(path, sb) == 0 && S_ISREG(sb->st_mode) ? 0 : -1;
		break;
	}
	fclose(f);
	return rc;
}

/* The file's entry, its plans' room for n routines, the counters at 0. */
static struct pc_image *image_for(struct tracer *tr, const struct stat *sb, size_t n)
{
	struct pc_image *im = image_of(tr, sb);

	if (im->n_plan < n) {
		im->plan = xrealloc(im->plan, n * sizeof(*im->plan));
		im->keys = xrealloc(im->keys, n * sizeof(*im->keys));
		memset(im->plan + im->n_plan, 0, (n - im->n_plan) * sizeof(*im->plan));
		im->n_plan = n;
	}
	im->uses++;
	im->hits = im->moved = im->made = im->checked = im->differ = im->far = 0;
	im->carried = 0;
	return im;
}

struct pc_image *plancache_image(struct tracer *tr, pid_t pid, size_t n)
{
	struct stat sb;

	if (plancache_mode() == PC_OFF || exe_stat(pid, &sb) < 0)
		return NULL;
	return image_for(tr, &sb, n);
}

struct pc_image *plancache_image_at(struct tracer *tr, pid_t pid, uint64_t addr, size_t n)
{
	struct stat sb;

	if (plancache_mode() == PC_OFF || mapped_stat(pid, addr, &sb) < 0)
		return NULL;
	return image_for(tr, &sb, n);
}

const struct pc_plan *plancache_get(const struct pc_image *im, size_t i, const struct pc_key *key)
{
	if (i >= im->n_plan || !im->plan[i] || memcmp(&im->keys[i], key, sizeof(*key)) != 0)
		return NULL;
	return im->plan[i];
}

static bool same_place(const struct insn_place *a, const struct insn_place *b)
{
	return a->bias == b->bias && a->stub == b->stub && a->retrap == b->retrap &&
	       a->tramp == b->tramp && a->page == b->page && a->patch == b->patch;
}

int plancache_move(struct pc_image *im, const struct pc_plan *pl, const struct insn_place *at,
		   struct pc_plan *out)
{
	if (same_place(&pl->at, at))
		return 0;
	/* a refusal before any reach was looked at holds anywhere (insn_stub.placed) */
	if (pl->rc == 1 && !pl->stub.placed) {
		*out = *pl;
		out->at = *at;
		im->moved++;
		return 1;
	}
	if (pl->rc != 0)
		return -1;
	*out = *pl;
	out->at = *at;
	if (insn_stub_move(&out->stub, &pl->at, at))
		return -1;
	im->moved++;
	return 1;
}

void plancache_put(struct pc_image *im, size_t i, const struct pc_key *key,
		   const struct pc_plan *plan)
{
	if (i >= im->n_plan)
		return;
	if (!im->plan[i])
		im->plan[i] = xmalloc(sizeof(*plan));
	*im->plan[i] = *plan;
	im->keys[i] = *key;
}

bool plancache_same(const struct pc_plan *a, const struct pc_plan *b)
{
	const struct insn_stub *x = &a->stub, *y = &b->stub;

	if (a->rc != b->rc)
		return false;
	if (a->rc) /* refused: for the same reason */
		return x->reason == y->reason ||
		       (x->reason && y->reason && !strcmp(x->reason, y->reason));
	return x->addr == y->addr && x->len == y->len && x->code_len == y->code_len &&
	       x->n_rel == y->n_rel &&
	       (x->n_rel > INSN_REL_MAX || !memcmp(x->rel, y->rel, x->n_rel * sizeof(x->rel[0]))) &&
	       x->code_len <= sizeof(x->code) && !memcmp(x->jmp, y->jmp, sizeof(x->jmp)) &&
	       !memcmp(x->code, y->code, x->code_len) && x->trap_off == y->trap_off &&
	       x->plain_off == y->plain_off && x->full_off == y->full_off &&
	       x->throttle_off == y->throttle_off && x->call_ret == y->call_ret &&
	       x->pad_addr == y->pad_addr && !memcmp(x->pad, y->pad, sizeof(x->pad)) &&
	       x->whole == y->whole && x->len <= sizeof(a->orig) &&
	       !memcmp(a->orig, b->orig, x->len) &&
	       (!x->pad_addr || !memcmp(a->pad_orig, b->pad_orig, sizeof(a->pad_orig)));
}

#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif
#define SHARE_MIN (256 * 1024) /* scratch pages shared past this size (cc1's: 19 MB) */
#define SHARE_PAGE 4096

/*
 * FORTSTAT_SHARE_STUBS (a test hook, not an option): 0 never shares the
 * scratch pages, 1 shares them whatever their size; else past SHARE_MIN.
 */
static int share_mode(void)
{
	static int mode = -1;

	if (mode < 0) {
		const char *e = getenv("FORTSTAT_SHARE_STUBS");

		mode = e && !strcmp(e, "0") ? 0 : e && !strcmp(e, "1") ? 1 : 2;
	}
	return mode;
}

/* A sealed memfd holding buf, and fortstat's read-only view of it; -errno. */
static int share_make(struct pc_image *im, const uint8_t *buf, size_t size)
{
	int fd = memfd_create("fortstat-stubs", MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_EXEC);
	void *m;

	if (fd < 0 && errno == EINVAL) /* a kernel before MFD_EXEC (6.3) */
		fd = memfd_create("fortstat-stubs", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) < 0)
		goto fail;
	for (size_t done = 0; done < size;) {
		ssize_t w = pwrite(fd, buf + done, size - done, (off_t)done);

		if (w <= 0)
			goto fail;
		done += (size_t)w;
	}
	if (fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) < 0)
		goto fail;
	m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	if (im->share_map)
		munmap((void *)im->share_map, im->share_size);
	if (im->share_fd >= 0)
		close(im->share_fd);
	im->share_fd = fd;
	im->share_map = m;
	im->share_size = size;
	im->share_made++;
	return 0;
fail:;
	int err = -errno;

	close(fd);
	return err ? err : -EIO;
}

/*
 * Map im's memfd privately over [base, base + size) in process tid (at its
 * exec stop: the system calls run at RIP): openat of /proc/FORTSTAT/fd/N,
 * its name written at base (the scratch mapped there, replaced by the
 * mmap), mmap, close. Returns 0 or -errno.
 */
static int share_map_in(struct tracer *tr, struct pc_image *im, pid_t tid, uint64_t base,
			size_t size)
{
	char path[64];
	long args[6] = {0}, fd = -1, addr = -1, ret;
	uint8_t check[SHARE_PAGE];
	size_t mid = size / 2 / SHARE_PAGE * SHARE_PAGE;
	int err;

	/* not when tid would open something else by that name (a sandbox's /proc) */
	err = proc_fd_name_for(tid, im->share_fd, path, sizeof(path));
	if (err)
		return err;
	err = mem_write(tr->ps->memfd, base, path, sizeof(path));
	if (err)
		return err;
	args[0] = AT_FDCWD;
	args[1] = (long)base;
	args[2] = O_RDONLY | O_CLOEXEC;
	err = inject_syscall(tid, tr->ps->memfd, SYS_openat, args, &fd);
	if (!err && fd < 0)
		err = fd > -4096 ? (int)fd : -EIO;
	if (err)
		return err;
	{
		long margs[6] = {
		    (long)base, (long)size, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_FIXED, fd, 0};
		long cargs[6] = {fd, 0, 0, 0, 0, 0};

		err = inject_syscall(tid, tr->ps->memfd, SYS_mmap, margs, &addr);
		if (!err && (uint64_t)addr != base)
			err = addr < 0 && addr > -4096 ? (int)addr : -EEXIST;
		/* the mapping holds the file */
		inject_syscall(tid, tr->ps->memfd, SYS_close, cargs, &ret);
	}
	/* the memfd it mapped is fortstat's: a page of it read back */
	if (!err && size - mid >= SHARE_PAGE &&
	    (mem_read(tr->ps->memfd, base + mid, check, SHARE_PAGE) < 0 ||
	     memcmp(check, im->share_map + mid, SHARE_PAGE)))
		err = -ENOENT;
	return err;
}

/* The pages of buf that differ from the memfd's (share_size == size): how many. */
static size_t pages_differ(const struct pc_image *im, const uint8_t *buf, size_t size)
{
	size_t n = 0;

	for (size_t off = 0; off < size; off += SHARE_PAGE) {
		size_t len = size - off < SHARE_PAGE ? size - off : SHARE_PAGE;

		n += memcmp(im->share_map + off, buf + off, len) != 0;
	}
	return n;
}

/* Write the pages of buf that differ from the memfd's into the process. */
static int write_differing(struct tracer *tr, const struct pc_image *im, uint64_t base,
			   const uint8_t *buf, size_t size)
{
	for (size_t off = 0; off < size; off += SHARE_PAGE) {
		size_t len = size - off < SHARE_PAGE ? size - off : SHARE_PAGE;
		int err;

		if (!memcmp(im->share_map + off, buf + off, len))
			continue;
		err = mem_write(tr->ps->memfd, base + off, buf + off, len);
		if (err)
			return err;
	}
	return 0;
}

int plancache_write_scratch(struct tracer *tr, struct pc_image *im, pid_t tid, uint64_t base,
			    const uint8_t *buf, size_t size)
{
	int mode = share_mode(), err = 0;
	size_t differ = 0;

	if (!im || !mode || (mode == 2 && size < SHARE_MIN) || tr->o->pid)
		return mem_write(tr->ps->memfd, base, buf, size);
	/*
	 * The first page holds the return trap, which names this process's
	 * event page: a few pages that differ are the process's own copies,
	 * written over the memfd's; more, and the memfd is made anew.
	 */
	if (im->share_map && im->share_size == size)
		differ = pages_differ(im, buf, size);
	if (!im->share_map || im->share_size != size || differ > size / SHARE_PAGE / 8) {
		err = share_make(im, buf, size);
		differ = 0;
	}
	if (!err)
		err = share_map_in(tr, im, tid, base, size);
	if (!err && differ)
		err = write_differing(tr, im, base, buf, size);
	if (!err) {
		im->share_used++;
		fs_info(1,
			"%s: scratch pages at 0x%" PRIx64 " (%zu bytes) mapped from a memfd, %zu "
			"pages written: %zu processes of this file mapped one, %zu memfds made",
			tr->ps->st->path, base, size, differ, im->share_used, im->share_made);
		return 0;
	}
	/* the scratch at base: the anonymous pages still, or the memfd's: written whole */
	fs_info(1, "%s: scratch pages at 0x%" PRIx64 " not shared (%s): written whole",
		tr->ps->st->path, base, strerror(-err));
	return mem_write(tr->ps->memfd, base, buf, size);
}

bool plancache_carry_on(void)
{
	static int on = -1;

	if (on < 0) {
		const char *e = getenv("FORTSTAT_THROTTLE_CARRY");

		on = !(e && (!strcmp(e, "0") || !strcmp(e, "off")));
	}
	return on;
}

void plancache_throttled(struct pc_image *im, size_t i)
{
	if (!im || i >= im->n_plan)
		return;
	if (!im->thr) {
		im->thr = xcalloc(im->n_plan, 1);
		im->n_thr = im->n_plan;
	}
	if (i < im->n_thr && !im->thr[i]) {
		im->thr[i] = 1;
		im->n_thr_set++;
	}
}

void plancache_pool(struct pc_image *im, const struct books *b, const struct symtab *st,
		    uint64_t min_calls, double max_ns)
{
	if (!im || !b || !st || !min_calls)
		return;
	for (size_t i = 0; i < im->n_plan && i < st->n_own; i++) {
		const struct routine *r = &st->r[i];
		uint64_t c;

		if (r->throttled_at || r->throttle_carried || (im->thr && im->thr[i]))
			continue;
		c = books_calls(b, (uint32_t)i);
		if (!c)
			continue;
		if (!im->pool)
			im->pool = xcalloc(im->n_plan, sizeof(*im->pool));
		im->pool[i][0] += c;
		im->pool[i][1] += (uint64_t)books_self(b, CLOCK_KIND_CPU, true, (uint32_t)i);
		if (throttle_due(im->pool[i][0], im->pool[i][1], min_calls, max_ns))
			plancache_throttled(im, i);
	}
}

bool plancache_carry(struct pc_image *im, size_t i)
{
	if (!im || i >= im->n_thr || !im->thr[i])
		return false;
	im->carried++;
	return true;
}

void plancache_free(struct tracer *tr)
{
	struct plancache *pc = tr->pc;

	if (!pc)
		return;
	for (size_t i = 0; i < pc->n; i++) {
		struct pc_image *im = pc->im[i];

		for (size_t j = 0; j < im->n_plan; j++)
			free(im->plan[j]);
		free(im->plan);
		free(im->keys);
		free(im->thr);
		free(im->pool);
		if (im->st) {
			symtab_free(im->st);
			free(im->st);
		}
		if (im->share_map)
			munmap((void *)im->share_map, im->share_size);
		if (im->share_fd >= 0)
			close(im->share_fd);
		free(im);
	}
	free(pc->im);
	free(pc);
	tr->pc = NULL;
}
