#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# calibcache.sh - a calibration kept for the next runs (calibcache.h): the
# first run measures it and keeps it in $XDG_CACHE_HOME/fortstat/calibration,
# the next takes it (-v says so) with the same figures and the same exact
# counts; FORTSTAT_CALIB_CACHE=0 measures afresh and keeps nothing; other
# options that change a call's cost (another clock, the other mechanism)
# measure their own; a line that is not sane (a cost of 1e300 ns, a bad
# count of batches, a cut line, garbage) is not taken; an old line neither;
# no home for the cache: measured each time, nothing said.
. "$SRCDIR/tests/lib.sh"

XDG_CACHE_HOME=$T/cache
export XDG_CACHE_HOME
unset FORTSTAT_CALIB_CACHE
file=$XDG_CACHE_HOME/fortstat/calibration
p=$BIN/chain-O0

calib_lines() { grep -c '^fortstat-calibration-2 ' "$file" 2>/dev/null || echo 0; }
taken() { grep -c 'calibration of the [a-z]*: taken from a run' t.err; }
figures() { grep '^fortstat: calibration: f1' t.err | sed 's/, [0-9.]* s$//'; }

# 1. measured and kept, then taken
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "first run took a calibration from an empty cache: $(grep taken t.err)"
figures >first
[ -s first ] || fail "first run: no calibration said: $(grep calibration t.err)"
expect "first run" main 1 work 1000 leaf 3500 twice 500
want=1
[ "$MECH" = probes ] && want=2 # the probes' and the stops'
[ "$(calib_lines)" = "$want" ] || fail "kept $(calib_lines) calibrations, expected $want"
[ "$(stat -c %a "$file")" = 600 ] || fail "the cache file is $(stat -c %a "$file"), not 600"
traced -v -- "$p"
[ "$(taken)" = "$want" ] || fail "second run took $(taken) calibrations, expected $want: $(grep calibration t.err)"
figures >second
cmp -s first second || fail "the figures differ when taken: $(cat first) / $(cat second)"
expect "second run" main 1 work 1000 leaf 3500 twice 500
[ "$(calib_lines)" = "$want" ] || fail "after taking: $(calib_lines) lines kept, expected $want"

# 2. off: measured, not taken, nothing kept
cp "$file" kept
FORTSTAT_CALIB_CACHE=0
export FORTSTAT_CALIB_CACHE
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "FORTSTAT_CALIB_CACHE=0: a calibration was taken"
cmp -s kept "$file" || fail "FORTSTAT_CALIB_CACHE=0: the cache changed"
# a bad value is off too
FORTSTAT_CALIB_CACHE=soon
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "FORTSTAT_CALIB_CACHE=soon: a calibration was taken"
unset FORTSTAT_CALIB_CACHE

# 3. other options measure their own (the wall clock), kept beside the first
traced -v --clock=wall -- "$p"
[ "$(taken)" = 0 ] || fail "--clock=wall took the CPU clock's calibration"
[ "$(calib_lines)" = $((2 * want)) ] || fail "--clock=wall: $(calib_lines) lines kept, expected $((2 * want))"
traced -v --clock=wall -- "$p"
[ "$(taken)" = "$want" ] || fail "--clock=wall, again: $(taken) taken, expected $want"

# 4. too old: FORTSTAT_CALIB_CACHE=1 and a second's wait
sleep 1.2
FORTSTAT_CALIB_CACHE=1
export FORTSTAT_CALIB_CACHE
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "FORTSTAT_CALIB_CACHE=1: a calibration older than a second was taken"
unset FORTSTAT_CALIB_CACHE

# 5. lines that are not sane are not taken (nor do they crash fortstat)
for bad in 1e300 nan -5 0x1p+2000; do
	sed "s/^\(fortstat-calibration-2 [0-9a-f]* [0-9.]* [0-9]* [0-9]*\) [^ ]*/\1 $bad/" kept >"$file"
	traced -v -- "$p"
	[ "$(taken)" = 0 ] || fail "a line with f1 = $bad was taken"
	expect "f1 = $bad in the cache" main 1 work 1000 leaf 3500 twice 500
done
sed 's/^\(fortstat-calibration-2 [0-9a-f]* [0-9.]*\) [0-9]*/\1 99/' kept >"$file"
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "a line of 99 batches was taken"
cut -c 1-120 kept >"$file"
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "a cut line was taken"
head -c 100000 /dev/urandom >"$file"
traced -v -- "$p"
[ "$(taken)" = 0 ] || fail "garbage was taken"
expect "garbage in the cache" main 1 work 1000 leaf 3500 twice 500
# (the garbage was replaced by the sane lines: taken again)
traced -v -- "$p"
[ "$(taken)" = "$want" ] || fail "after the garbage: $(taken) taken, expected $want: $(grep -i calibration t.err) / $(cut -c 1-60 "$file")"

# 6. no home for it: measured each time, nothing said
env -u XDG_CACHE_HOME -u HOME "$FORTSTAT" -o r.txt "$p" >t.out 2>t.err </dev/null
[ $? = 0 ] || fail "no cache home: fortstat failed: $(cat t.err)"
grep -v '^fortstat: warning: the overhead removed is' t.err | grep -q . &&
	fail "no cache home: fortstat said something: $(cat t.err)"
finish
