#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# round.sh - the probes' cost removed is what calls going round many
# routines pay: roundleaf's mid calls one of 64 leaves, picked at random,
# 400,000 times (--no-throttle: 800,000 timed calls, counts exact). The
# program time fortstat reports (JSON total_time_s) less the untraced run's
# CPU time, a timed call, stays within 8 ns of 0 (11 pairs, untraced and
# traced on CPU 0 as --pin=auto runs them; the median). The flat
# calibration loop alone (one routine, every branch of the probe
# predicted) left 10-19 ns a call in the program's time (calib.c's round
# calls); over-correcting by as much would fail too.
FORTSTAT_MECHANISM=probes
# Each traced run calibrates in its own pair's moment: a calibration kept
# from another (FORTSTAT_CALIB_CACHE, 120 s), taken while a test beside
# this one (make -j2 check) loaded the CPU, over-corrected all 11 pairs
# of one run alike (-9.3..-12.6 ns a call, in CI's distcheck).
FORTSTAT_CALIB_CACHE=0
export FORTSTAT_MECHANISM FORTSTAT_CALIB_CACHE
. "$SRCDIR/tests/lib.sh"
p=$BIN/roundleaf-O2
n=1000000
pin=""
command -v taskset >/dev/null && pin="taskset -c 0"
: >excess.txt
for a in 1 2 3 4 5 6 7 8; do for b in 0 1 2 3 4 5 6 7; do echo "leaf$a$b"; done; done >names.txt
for i in 1 2 3 4 5 6 7 8 9 10 11; do
	$pin "$p" $n >u.out 2>u.err </dev/null || fail "$p: exit status $? untraced"
	"$FORTSTAT" -n names.txt --no-throttle --no-progress --format=json -o r.json "$p" $n \
		>t.out 2>t.err </dev/null || fail "$p: exit status $? under fortstat"
	cmp -s u.out t.out || fail "$p: stdout differs under fortstat"
	python3 - r.json "$(cat u.err)" $n >>excess.txt <<'PY' || fail "$p: report: $(cat t.err)"
import json, sys
d = json.load(open(sys.argv[1]))
cpu_ns, n = float(sys.argv[2]), int(sys.argv[3])
calls = {r["name"]: r["calls"] for r in d["routines"]}
leaves = sum(c for k, c in calls.items() if k.startswith("leaf"))
assert leaves == n and "mid" not in calls, ("calls of the leaves", leaves, sorted(calls))
assert len([k for k in calls if k.startswith("leaf")]) == 64, sorted(calls)
print("%.1f" % ((d["total_time_s"] * 1e9 - cpu_ns) / n))
PY
done
med=$(median_of excess.txt)
echo "program time less the untraced CPU time, ns a timed call: $(sort -g excess.txt | tr '\n' ' ')(median $med)"
[ -n "$med" ] || fail "$p: no measurement"
[ -z "$med" ] || awk -v m="$med" 'BEGIN { exit !(m < 8 && m > -8) }' ||
	fail "$p: the program time is $med ns a timed call off the untraced CPU time (limit 8)"
finish
