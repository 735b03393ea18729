#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# abcd.sh - FORTSTAT's example: main calls A 5 times, A calls B 10 times, B
# calls C, C calls D twice. With -n timing only A and D, B's and C's time
# lands in A (an untimed routine is part of its caller), D's calls stay exact.
# Corrected times are non-negative and ordered as the known work.
. "$SRCDIR/tests/lib.sh"
printf '# FORTSTAT example\n A\n\n D # comment\n' >names.txt
for opt in O0 O2; do
	p=$BIN/abcd-$opt
	traced -- "$p"
	expect "$p" main 1 A 5 B 50 C 50 D 100
	full_abc=$(awk -F, '$1 == "A" || $1 == "B" || $1 == "C" { s += $3 } END { printf "%.9f", s }' r.csv)
	# corrected (net) times: never negative, ordered as the known work per
	# call (C 150,000 loop steps > B 100,000 > D 1,000; A only calls B)
	for r in main A B C D; do
		awk -v v="$(self "$r")" 'BEGIN { exit !(v >= 0) }' || fail "$p: $r net time $(self "$r") < 0"
	done
	awk -v a="$(self A)" -v b="$(self B)" -v c="$(self C)" -v d="$(self D)" \
		'BEGIN { exit !(c / 50 > b / 50 && b / 50 > d / 100 && b / 50 > a / 5) }' ||
		fail "$p: net times per call not ordered as the work: A $(self A) B $(self B) C $(self C) D $(self D)"
	# JSON carries both clocks, read at the same stops; the chosen one is what is shown
	if command -v python3 >/dev/null; then
		"$FORTSTAT" --format=json -o r.json "$p" >/dev/null 2>&1
		json_valid r.json
		MECH=$MECH python3 - r.json <<'PY' || fail "$p: JSON cpu/wall objects"
import json, os, sys
d = json.load(open(sys.argv[1]))
traps = os.environ["MECH"] == "traps"
for r in d["routines"]:
    for c in ("cpu", "wall"):
        o = r[c]
        assert 0 <= o["self_s"] <= o["gross_self_s"] + 1e-9, (r["name"], c, o)
        assert o["total_s"] >= o["self_s"] - 1e-9, (r["name"], c, o)
    assert r["cpu"]["self_s"] == r["self_s"], r
    assert r["cpu"]["gross_self_s"] == r["gross_self_s"], r
# calibration ran and its overhead was removed: a few us a stop here
# (in-process probes: a few ns)
lo, hi = (500, 100000) if traps else (1, 1000)
assert lo < d["f1_ns"] < hi and 0 <= d["f2_ns"] < hi, (d["f1_ns"], d["f2_ns"])
assert d["overhead_s"] > 0 and d["overhead_removed"], d["overhead_s"]
# too few segments measured for f1 and f2 (see -v above): the calibration's
assert d["stops_measured"] == 0, d["stops_measured"]
assert abs(d["gross_total_time_s"] - d["total_time_s"] - d["overhead_s"]) < 1e-6, d
# a thread's CPU time cannot exceed its elapsed time (gross, same stops);
# the other way round is load, which this test does not control
c = [r for r in d["routines"] if r["name"] == "C"][0]
assert c["cpu"]["gross_self_s"] <= c["wall"]["gross_self_s"] * 1.02 + 1e-5, c
PY
	fi
	# 206 calls, 412 stops: every segment but the first measured, too few
	# (under 1000) to replace the calibration's f1 and f2, and -v says so
	if [ "$MECH" = traps ] && grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo; then
		traced -v -- "$p"
		grep -q "stops measured in the run: 411 segments (too few)" t.err ||
			fail "$p: $(grep 'stops measured' t.err)"
	fi
	# A now holds A+B+C's work. In the same run (no drift between runs):
	# at least 90 % of the program's time (D's 100 short calls and main are
	# about 1 %; B's and C's lost, A would hold almost nothing)
	if command -v python3 >/dev/null; then
		"$FORTSTAT" -n names.txt --format=json -o n.json "$p" >/dev/null 2>&1
		python3 - n.json <<'PY' || fail "$p -n: A's share of the program's time"
import json, sys
d = json.load(open(sys.argv[1]))
a = [r for r in d["routines"] if r["name"] == "A"][0]
assert a["self_s"] >= 0.9 * d["total_time_s"], (a["self_s"], d["total_time_s"])
PY
	fi
	# (A's time was also compared with a full run's A+B+C: runs of 30 ms
	# drift by 30 % and more between runs on a loaded VM, 0.77 to 1.46 in
	# five alternated pairs; the share above, in one run, has no drift and
	# is what the rule says: the untimed routines' time is their caller's)
	traced -n names.txt -- "$p"
	expect "$p -n" main 1 A 5 D 100
	absent "$p -n" B C
done
finish
