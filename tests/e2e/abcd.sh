#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# abcd.sh - FORTSTAT's example: main calls A 5 times, A calls B 10 times, B
# calls C, C calls D twice. With -n timing only A and D, B's and C's time
# lands in A (an untimed routine is part of its caller), D's calls stay exact.
. "$SRCDIR/tests/lib.sh"
printf '# FORTSTAT example\n A\n\n D # comment\n' >names.txt
for opt in O0 O2; do
	p=$BIN/abcd-$opt
	traced -- "$p"
	expect "$p" main 1 A 5 B 50 C 50 D 100
	full_abc=$(awk -F, '$1 == "A" || $1 == "B" || $1 == "C" { s += $3 } END { printf "%.9f", s }' r.csv)
	traced -n names.txt -- "$p"
	expect "$p -n" main 1 A 5 D 100
	absent "$p -n" B C
	a=$(self A)
	# A now holds A+B+C's work: within 30% of the full run's sum (CPU clock).
	awk -v a="$a" -v s="$full_abc" 'BEGIN { exit !(a > 0.7 * s && a < 1.3 * s) }' ||
		fail "$p -n: A's time $a is not A+B+C's $full_abc within 30%"
done
finish
