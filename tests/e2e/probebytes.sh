#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# probebytes.sh - the probes' byte arrays in src/probe/stubs.c are what
# probe-code.s assembles to (GNU as, objcopy, nm): the stubs that run are
# the ones their source says, and the offsets the C code patches are the
# labels' (two branches once changed the assembly side by side).
. "$SRCDIR/tests/lib.sh"
for tool in as objcopy nm python3 cc; do
	command -v "$tool" >/dev/null || skip "$tool is not installed"
done
python3 "$SRCDIR/src/probe/probe-bytes.py" --check 2>err.txt ||
	fail "stubs.c's arrays: $(cat err.txt)"
finish
