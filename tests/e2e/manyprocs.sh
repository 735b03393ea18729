#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# manyprocs.sh - -f over many processes, as a build spawns them: a process
# that ended holds no descriptor of its memory (under ulimit -n 48, each of
# 80 runs of a program is followed and timed: every run kept one, and
# those after the 40th were "cannot patch it: not followed"), and keeps in
# its books and its table the routines it used alone (-vv says how many of
# how many, with -l libc: a few of libc's 2,000; a forked child's table is
# its parent's, kept small on a copy): its report is the one of
# every routine kept (FORTSTAT_COMPACT=0), and with --zeros the routines
# never called are still listed.
. "$SRCDIR/tests/lib.sh"
p=$BIN/chain-O2
# each turn: a forked child that runs no other program (a command
# substitution: its table is the shell's), and the program
printf 'i=0\nwhile [ $i -lt $1 ]; do\n\tx=$(echo $i)\n\t%s >/dev/null\n\ti=$((i + 1))\ndone\n' "$p" >runs.sh

# 160 processes, 48 descriptors
(ulimit -n 48 && exec "$FORTSTAT" -f -o r.txt sh runs.sh 80) 2>t.err ||
	fail "fortstat -f under ulimit -n 48 failed: $(tail -2 t.err)"
! grep -q 'not followed' t.err || fail "processes not followed: $(grep -m1 'not followed' t.err)"
n=$(grep -c "^fortstat: $p \[pid [0-9]*\] (exit status 0)" r.txt)
[ "$n" = 80 ] || fail "$n of 80 runs reported"
n=$(grep -c '^  leaf  *3500 ' r.txt)
[ "$n" = 80 ] || fail "leaf's 3500 calls in $n of 80 runs"

# an ended process keeps what it used: the same report as keeping everything
# (the variable set in both runs: sh's own calls depend on its environment)
FORTSTAT_COMPACT=1 "$FORTSTAT" -vv -f -l libc --format=csv -o small.csv sh runs.sh 2 2>v.err >/dev/null ||
	fail "fortstat -f -l libc failed"
n=$(grep -c 'ended: [0-9]* of its [0-9]* routines kept' v.err)
[ "$n" = 4 ] || fail "-vv: $n processes kept small, 4 wanted (2 forked shells, 2 programs)"
grep 'routines kept' v.err | awk '{ if ($5 + 0 >= $8 / 4 || $8 + 0 < 2000) bad = 1 } END { exit bad }' ||
	fail "kept: $(grep -m1 'routines kept' v.err)"
FORTSTAT_COMPACT=0 "$FORTSTAT" -f -l libc --format=csv -o all.csv sh runs.sh 2 >/dev/null 2>&1 ||
	fail "fortstat -f -l libc (FORTSTAT_COMPACT=0) failed"
# each section's rows (sorted by time: sorted by name here), the section's number first
rows() { cut -d, -f1,2,8,13 "$1" | awk '/^routine,/ { s++ } { print s "," $0 }' | sort; }
rows small.csv >small.cut
rows all.csv >all.cut
cmp -s small.cut all.cut || fail "routines and calls differ when kept small: $(diff small.cut all.cut | head -4)"
[ "$(grep -c '^leaf,3500,' small.csv)" = 2 ] || fail "leaf,3500 not in both runs' rows"

# --zeros lists the routines never called: nothing is dropped then
"$FORTSTAT" -vv -z -f -l libc --format=csv -o zeros.csv sh runs.sh 1 2>v.err >/dev/null
! grep -q 'routines kept' v.err || fail "--zeros: a process kept small"
n=$(grep -c '^libc.so.6:[^,]*,0,' zeros.csv)
[ "$n" -gt 1000 ] || fail "--zeros: $n of libc's routines listed with no call"
finish
