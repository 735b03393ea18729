#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# manyprocs.sh with in-process probes as the mechanism (FORTSTAT_MECHANISM=probes).
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/e2e/manyprocs.sh"
