#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# placement.sh - threads, fork, system() and posix_spawn run as without
# fortstat; --pin=auto never changes how many CPUs a threaded program may use
# or how many threads an OpenMP program starts.
. "$SRCDIR/tests/lib.sh"
[ "$(nproc)" -ge 2 ] || skip "one CPU: placement cannot be seen"
for opt in O0 O2; do
	p=$BIN/threads-$opt
	traced -- "$p"
	expect "$p" main 1 worker 4 leaf 40000
	traced --pin=never -- "$p"
	expect "$p --pin=never" main 1 worker 4 leaf 40000

	p=$BIN/omp-$opt
	traced -- "$p"
	expect "$p" main 1 kernel 1000
	# the check can fail: pinned always, OpenMP sees one CPU
	"$FORTSTAT" --pin=always -o /dev/null "$p" >pinned.out 2>/dev/null
	grep -q 'max threads 1, team 1' pinned.out || fail "$p --pin=always: $(cat pinned.out)"
	cmp -s pinned.out u.out && fail "$p: --pin=always should differ from the untraced run"

	p=$BIN/forks-$opt
	traced -- "$p"
	expect "$p" main 1 spawn 1 work 2 leaf 20
done
finish
