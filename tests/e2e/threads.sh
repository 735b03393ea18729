#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# threads.sh - 8 threads x 100,000 calls with exact totals; a thread that
# leaves by pthread_exit inside timed routines (forced unwinding), one
# cancelled inside a timed routine, and exit() called while three threads
# are inside a timed routine. --pin=always keeps the 1.6 million stops cheap.
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/threads8-$opt
	traced --pin=always -- "$p" exit
	expect "$p" main 1 work 8 leaf 800000 quitter 1 inner 1 waiter 1 spinner 3
	[ "$(cat t.rc)" = 5 ] || fail "$p: exit status $(cat t.rc), expected 5"
	# still running when the program or their thread ended
	for r in main spinner inner waiter; do
		[ "$(incomplete "$r")" = 1 ] || fail "$p: $r not INCOMPLETE"
	done
	[ "$(incomplete leaf)" = 0 ] || fail "$p: leaf INCOMPLETE"
done
finish
