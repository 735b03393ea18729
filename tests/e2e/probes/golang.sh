#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# golang.sh with in-process probes as the mechanism (FORTSTAT_MECHANISM=probes):
# a launched Go program takes them (exit probes at its routines' rets), an
# attached one the traps.
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/e2e/golang.sh"
