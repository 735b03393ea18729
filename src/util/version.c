// SPDX-License-Identifier: GPL-2.0-or-later
/* version.c - the version string: the release, and the commit a git build came from. */
#include "fortstat/version.h"

#include "config.h"
/* Generated at each make (Makefile.am): FS_GIT_DESCRIBE, "" outside git. */
#include "gitversion.h"

const char *fs_version(void)
{
	if (FS_GIT_DESCRIBE[0] == '\0')
		return PACKAGE_VERSION;
	return PACKAGE_VERSION " (git " FS_GIT_DESCRIBE ")";
}
