#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# signals.sh - the program's own SIGTRAP (raise and int3) reaches its handler;
# handlers, one on a sigaltstack, call timed routines inside a timed routine;
# siglongjmp out of a handler through timed frames; swapcontext coroutines;
# exact counts, same output.
# The SIGTRAP handler timed too: a breakpoint hit in it (SIGTRAP blocked)
# makes the kernel reset the handler to the default, which fortstat puts
# back; without that the program's second SIGTRAP ended it.
. "$SRCDIR/tests/lib.sh"
echo on_trap >x.txt
for opt in O0 O2; do
	p=$BIN/signals-$opt
	traced -vv -- "$p"
	expect "$p" main 1 on_trap 2 work 20 in_handler 30 on_usr1 10 mid 10 deep 10 on_usr2 5
	grep -q '^traps 2 usr1 10 jumps 5' t.out || fail "$p: $(cat t.out)"
	# each SIGTRAP reached the handler with its own siginfo (raise: SI_TKILL,
	# the program's int3: SI_KERNEL), as untraced
	grep -q ' codes -6 128$' t.out || fail "$p: si_code changed: $(cat t.out)"
	# (a breakpoint in the handler resets it: probes take none there)
	[ "$MECH" = probes ] || [ "$(grep -c 'SIGTRAP handler put back' t.err)" = 2 ] ||
		fail "$p: SIGTRAP handler not put back twice: $(grep SIGTRAP t.err)"
	# and with the handler left out (-x)
	traced -x x.txt -- "$p"
	expect "$p -x" main 1 work 20 in_handler 30 on_usr1 10 mid 10 deep 10 on_usr2 5
	absent "$p -x" on_trap
	grep -q '^traps 2 usr1 10 jumps 5' t.out || fail "$p -x: $(cat t.out)"
	# the frames left by siglongjmp were closed, not left running
	for r in mid deep on_usr2; do
		[ "$(incomplete "$r")" = 0 ] || fail "$p: $r INCOMPLETE after siglongjmp"
	done
	# swapcontext coroutines: returns on the other stack still find their way
	p=$BIN/coro-$opt
	traced -- "$p"
	expect "$p" main 1 consume 10 step 20 yield_to_main 10 producer 1
	# a program that forbids rdtsc: fortstat's own TSC reads (stubs, return
	# sites) fault; fortstat takes those faults, the program's own still
	# reaches its handler, and the calibration's f1, f2 stand
	p=$BIN/tscoff-$opt
	traced -v -- "$p"
	expect "$p" main 1 f 2000 g 2000
	grep -q '^sum 5997000 rdtsc refused$' t.out || fail "$p: $(cat t.out)"
	grep -q "forbids rdtsc" t.err || fail "$p: no -v line on rdtsc: $(cat t.err)"
	! grep -q "stops measured in the run" t.err || fail "$p: stops measured without rdtsc"
done
finish
