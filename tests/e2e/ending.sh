#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ending.sh - the program exits from inside a timed routine, aborts, crashes,
# or is SIGKILLed: the report is still written with INCOMPLETE clocks, and
# fortstat exits as the program did (status, or 128+N).
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/ending-$opt
	for how in 7 abort segv kill; do
		traced -- "$p" "$how"
		case $how in
		7) want=7 ;;
		abort) want=134 ;;
		segv) want=139 ;;
		kill) want=137 ;;
		esac
		[ "$(cat t.rc)" = "$want" ] || fail "$p $how: fortstat exited $(cat t.rc), expected $want"
		expect "$p $how" main 1 step 10 finish 1
		# main and finish were running when the program ended; so was step,
		# except at -O2 where it tail-calls finish (the chain replaced it)
		running="main finish"
		[ "$opt" = O0 ] && running="$running step"
		for r in $running; do
			[ "$(incomplete "$r")" = 1 ] || fail "$p $how: $r not INCOMPLETE"
		done
		case $how in
		7) ;;
		*) [ "$(grep -c '^fortstat: .*killed by signal' t.err)" = 1 ] ||
			fail "$p $how: no one-line note of the signal: $(cat t.err)" ;;
		esac
	done
	# exec: timed up to the exec, then the new image runs untraced
	traced -- "$p" exec
	expect "$p exec" main 1 step 10 finish 1
	grep -q '^a new image$' t.out || fail "$p exec: the new image did not run: $(cat t.out)"
	grep -q "exec'ed a new image" t.err || fail "$p exec: no note: $(cat t.err)"
done
# The table marks them too.
"$FORTSTAT" "$BIN/ending-O0" abort >/dev/null 2>table.txt
grep -q '^\* *main .*INCOMPLETE' table.txt || fail "table: main not marked * and INCOMPLETE"
grep -q 'killed by signal 6' table.txt || fail "table: no line about signal 6"
finish
