/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * modules.h - the program's image and its shared libraries (modules.c):
 * patched at the exec stop, followed through the dynamic linker's
 * rendezvous. The state they act on is tracer.h's.
 */
#ifndef FORTSTAT_TRACER_MODULES_H
#define FORTSTAT_TRACER_MODULES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct tracer;
struct tthread;

/*
 * Patch the current process's image at its exec stop: the event page, the
 * load bias, its routines, and the dynamic linker's rendezvous to follow
 * its libraries. Returns 0 or -errno (said).
 */
int setup_image(struct tracer *tr);

/* The thread stopped on _dl_debug_state: look at the libraries, then return. */
void handle_rdebug(struct tracer *tr, struct tthread *th);

/*
 * Follow the dynamic linker (for -l): a breakpoint on _dl_debug_state, which
 * it calls with r_debug.r_state RT_CONSISTENT after each change of the
 * library list (at start, dlopen, dlclose). Its body is a bare `ret`, which
 * the breakpoint emulates.
 */
void setup_rdebug(struct tracer *tr);

/*
 * Attaching (-p): the libraries already loaded, read from the dynamic
 * linker's list now (when it is consistent), patched as at their load.
 */
void modules_attach(struct tracer *tr, struct tthread *th);

#endif
