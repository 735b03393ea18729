#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# noreturn.sh - the C library's routines that never return (longjmp,
# siglongjmp, exit, _exit) timed with -l libc: exact counts, the frames
# longjmp leaves closed, the program's output and exit status (3) as
# untraced. With probes they take an entry-only stub (their return is never
# hooked), not a trap at each call.
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/noret-$opt
	traced -v -l libc -- "$p"
	[ "$(cat t.rc)" = 3 ] || fail "$p: exit status $(cat t.rc), expected 3"
	grep -q '^jumps 7 sigjumps 5$' t.out || fail "$p: $(cat t.out)"
	expect "$p" main 1 mid 7 leaf 7 sleaf 5 finish 1 libc.so.6:exit 1 libc.so.6:_exit 1
	# longjmp and siglongjmp are one routine in glibc (or __longjmp_chk, fortified)
	lj=$(calls libc.so.6:longjmp)
	ljc=$(calls libc.so.6:__longjmp_chk)
	n=$((${lj:-0} + ${ljc:-0}))
	[ "$n" = 12 ] || fail "$p: longjmp called $n times, expected 12"
	for r in mid leaf sleaf; do
		[ "$(incomplete "$r")" = 0 ] || fail "$p: $r INCOMPLETE after longjmp"
	done
	if [ "$MECH" = probes ]; then
		grep -E ':(exit|_exit|longjmp|siglongjmp|__longjmp_chk): a trap at each call' t.err &&
			fail "$p: a routine that never returns traps at each call"
	fi
done
finish
