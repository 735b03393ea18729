/* SPDX-License-Identifier: GPL-2.0-or-later */
/* version.h - the version fortstat was built as: release and, from git, the commit. */
#ifndef FORTSTAT_VERSION_H
#define FORTSTAT_VERSION_H

/*
 * The release version (configure.ac's AC_INIT), followed by " (git X)" when
 * the build was made from a git checkout, X being `git describe --always
 * --dirty` at build time; the release version alone in a build from a
 * release tarball. A static string: never NULL, never to be freed.
 */
const char *fs_version(void);

#endif
