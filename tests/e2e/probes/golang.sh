#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# golang.sh with in-process probes as the mechanism (FORTSTAT_MECHANISM=probes):
# a Go program falls back to traps, calibration included.
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/e2e/golang.sh"
