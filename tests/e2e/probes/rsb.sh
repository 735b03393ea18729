#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rsb.sh - a probe's cost stays in the probe: deepleaf's leaf, under 8
# untimed frames, timed alone (-n, --no-throttle), 1,000,000 calls (exact).
# The program time fortstat reports (JSON total_time_s) less the untraced
# run's CPU time, a call, stays under 20 ns (5 pairs, untraced and traced
# on CPU 0 as --pin=auto runs them; the median). A probe that left the
# CPU's return stack buffer one frame off (a `ret` out of the trampoline
# with the routine entered by a jmp) made each of the 8 frames' returns a
# misprediction: 50-55 ns a call more, in the program's own code, which
# the calibration's flat loop never sees.
FORTSTAT_MECHANISM=probes
# Each traced run calibrates in its own pair's moment: a calibration kept
# from another (FORTSTAT_CALIB_CACHE, 120 s), taken while a test beside
# this one (make -j2 check) loaded the CPU, over-corrected all 11 pairs
# of one run alike (-9.3..-12.6 ns a call, in CI's distcheck).
FORTSTAT_CALIB_CACHE=0
export FORTSTAT_MECHANISM FORTSTAT_CALIB_CACHE
. "$SRCDIR/tests/lib.sh"
p=$BIN/deepleaf-O2
n=1000000
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
echo leaf >names.txt
: >excess.txt
for i in 1 2 3 4 5; do
	$pin "$p" $n >u.out 2>u.err </dev/null || fail "$p: exit status $? untraced"
	"$FORTSTAT" -n names.txt --no-throttle --no-progress --format=json -o r.json "$p" $n \
		>t.out 2>t.err </dev/null || fail "$p: exit status $? under fortstat"
	cmp -s u.out t.out || fail "$p: stdout differs under fortstat"
	python3 - r.json "$(cat u.err)" $n >>excess.txt <<'PY' || fail "$p: report: $(cat t.err)"
import json, sys
d = json.load(open(sys.argv[1]))
cpu_ns, n = float(sys.argv[2]), int(sys.argv[3])
leaf = [r for r in d["routines"] if r["name"] == "leaf"]
assert leaf and leaf[0]["calls"] == n, ("leaf's calls", leaf and leaf[0]["calls"])
print("%.1f" % ((d["total_time_s"] * 1e9 - cpu_ns) / n))
PY
done
med=$(median_of excess.txt)
echo "program time less the untraced CPU time, ns a call: $(sort -g excess.txt | tr '\n' ' ')(median $med)"
[ -n "$med" ] || fail "$p: no measurement"
[ -z "$med" ] || awk -v m="$med" 'BEGIN { exit !(m < 20) }' ||
	fail "$p: the program time is $med ns a call above the untraced CPU time (limit 20)"
finish
