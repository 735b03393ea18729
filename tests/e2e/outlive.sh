#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# outlive.sh - fortstat killed by SIGKILL at a random moment of a busy
# program's run (tests/e2e/outlive.py; fixtures/outlive.c calls tiny
# routines as fast as it can and checks each result until told to stop,
# then prints "stopped" and exits with status 3). With the probes the
# program outlives fortstat, launched or attached with -p: it ends with
# its own output and exit status, and no process is left behind. Here 40
# tries (about 30 s): launched (one thread and two; --no-throttle with a
# ring of 64 events, so that the kill often finds a thread stopped on a
# full ring) and -p; bench/outlive makes 100 of each. With the traps the
# program dies with fortstat (SIGKILL): their int3s would kill it anyway.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 is needed"
prog=$BIN/outlive-O2
drv="$SRCDIR/tests/e2e/outlive.py"

if [ "$MECH" = traps ]; then
	python3 "$drv" launch 3 0.2 die "$prog" || fail "--traps: the program did not die with fortstat"
	finish
fi
python3 "$drv" launch 10 0.3 outlive "$prog" || fail "launched: the program did not outlive fortstat"
python3 "$drv" launch 5 0.3 outlive "$prog" -- 2 || fail "launched, 2 threads: the program did not outlive fortstat"
FORTSTAT_PROBE_RING=64 python3 "$drv" launch 10 0.3 outlive "$prog" --no-throttle ||
	fail "launched, full rings: the program did not outlive fortstat"
python3 "$drv" attach 10 0.3 outlive "$prog" -- 2 || fail "-p: the program did not outlive fortstat"
python3 "$drv" attach 5 0.3 outlive "$prog" || fail "-p: the program did not outlive fortstat"
finish
