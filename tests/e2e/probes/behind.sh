#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# behind.sh - a full ring is read while its thread runs on: at the ring's
# stop its events are copied out and the ring given back, the thread
# resumed, and the copy read into the books before fortstat waits again
# (the window's clocks are the stop's). The program then waits a copy (a
# few ns an event) where it waited the reading (some 200). What the books
# make of the events must not change: roundleaf (400,000 events, 24 full
# rings) and threads8 (8 threads of 100,000 calls, their rings filling
# while the others run) give the same counts, arcs and calling contexts
# as with the ring read at the stop (FORTSTAT_DEFER_DRAIN=0), exact; with
# the probes --pin=auto pins nothing, and where the program may run on one
# CPU only (taskset -c 0) the ring is read at the stop.
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/lib.sh"
graph() { # the report's counts: routine calls, arcs, contexts, sorted
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for s in d.get("sections", [d]):
    for r in s["routines"]:
        print("routine", r["name"], r["calls"], r.get("calls_lower_bound", False))
    for a in s.get("arcs", []):
        print("arc", a.get("caller"), a.get("callee"), a.get("calls"))
    for k in s.get("stacks", []):
        print("ctx", "/".join(k["frames"]), k["calls"])
PY
}
printf 'mid\nleaf10\n' >names.txt
p=$BIN/roundleaf-O2
"$FORTSTAT" -v --no-throttle -n names.txt --format=json -o on.json "$p" 200000 1 >t.out 2>t.err </dev/null ||
	fail "$p: exit status $? under fortstat: $(tail -n 2 t.err)"
grep -q 'full ring copied out at the stop and read while it runs on' t.err ||
	fail "$p: no full ring read behind its thread (-v said: $(grep -i ring t.err | head -n 3))"
# --pin=auto pins nothing then: the reading goes to the other CPU
grep -q 'not pinning: full rings are read on another CPU' t.err ||
	fail "$p: --pin=auto with the probes: $(grep -i pin t.err | head -n 2)"
# one CPU for both (taskset): read at the stop, where the program waits for it
if command -v taskset >/dev/null; then
	taskset -c 0 "$FORTSTAT" -v --no-throttle -n names.txt --format=json -o one.json "$p" 200000 1 >t.out 2>t.err </dev/null ||
		fail "$p: exit status $? under taskset -c 0 fortstat"
	! grep -q 'read while it runs on' t.err || fail "$p: one CPU, yet a ring was read behind its thread"
	graph one.json | sort >one.txt
fi
FORTSTAT_DEFER_DRAIN=0 "$FORTSTAT" -v --no-throttle -n names.txt --format=json -o off.json "$p" 200000 1 >t.out 2>t.err </dev/null ||
	fail "$p: exit status $? under fortstat (FORTSTAT_DEFER_DRAIN=0)"
! grep -q 'read while it runs on' t.err || fail "$p: FORTSTAT_DEFER_DRAIN=0 still read a ring behind its thread"
graph on.json | sort >on.txt
graph off.json | sort >off.txt
grep -q '^routine leaf10 200000 ' on.txt || fail "$p: leaf10: $(grep leaf10 on.txt | head -n 1), expected 200000 calls"
grep -q '^routine mid 200000 ' on.txt || fail "$p: mid: $(grep 'routine mid' on.txt), expected 200000 calls"
cmp -s on.txt off.txt || fail "$p: the books differ with the ring read behind its thread: $(diff off.txt on.txt | head -n 6)"
[ ! -e one.txt ] || cmp -s one.txt off.txt || fail "$p: the books differ on one CPU: $(diff off.txt one.txt | head -n 6)"

p=$BIN/threads8-O2
"$FORTSTAT" --no-throttle --format=json -o on.json "$p" >t.out 2>t.err </dev/null ||
	fail "$p: exit status $? under fortstat: $(tail -n 2 t.err)"
FORTSTAT_DEFER_DRAIN=0 "$FORTSTAT" --no-throttle --format=json -o off.json "$p" >t.out 2>t.err </dev/null ||
	fail "$p: exit status $? under fortstat (FORTSTAT_DEFER_DRAIN=0)"
graph on.json | sort >on.txt
graph off.json | sort >off.txt
grep -q '^routine leaf 800000 ' on.txt || fail "$p: leaf: $(grep 'routine leaf' on.txt), expected 800000 calls"
cmp -s on.txt off.txt || fail "$p: the books differ with the rings read behind their threads: $(diff off.txt on.txt | head -n 6)"
finish
