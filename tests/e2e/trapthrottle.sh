#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# trapthrottle.sh - a routine on the trap path (an int3 at its entry, every
# call a stop; forced here with the test hook FORTSTAT_TRAP_ROUTINES) is
# throttled like any other under the probes: past --throttle its int3 is
# removed, its calls from then on uncounted, its count a lower bound (>= in
# the table, calls_lower_bound in CSV and JSON), the program's output and
# exit status unchanged; its net mean may miss the rule by a stop's cost
# (that cost is an estimate). Four threads call it (10,000 calls each): stops
# still pending on the int3 when it goes are met, and counted. With
# --no-throttle, -c --no-throttle and the traps (which never throttle):
# exact counts.
. "$SRCDIR/tests/lib.sh"
FORTSTAT_TRAP_ROUTINES=leaf
export FORTSTAT_TRAP_ROUTINES
for opt in O0 O2; do
	p=$BIN/threads-$opt
	# the hook works: leaf's entry is an int3 (out of line or emulated), worker's a stub
	"$FORTSTAT" -vv -o /dev/null "$p" >/dev/null 2>t.err
	grep -q '^fortstat: patch leaf at .*(\(out of line\|emulated\))$' t.err ||
		fail "$p: leaf not on the trap path: $(grep 'patch leaf' t.err)"
	for c in "" -c; do
		traced $c -v --throttle=1000,1000 -- "$p"
		n=$(calls leaf)
		if [ "$MECH" = probes ]; then
			# throttled at its 1,000th call; a stop pending in each other thread
			[ "${n:-0}" -ge 1000 ] && [ "${n:-0}" -le 1003 ] ||
				fail "$p $c: leaf counted $n times, not 1000..1003"
			[ "$(field leaf 13)" = 1 ] || fail "$p $c: leaf's count not a lower bound in CSV"
			[ "$(field worker 13)" = 0 ] || fail "$p $c: worker's count a lower bound"
			grep -q '^fortstat: leaf: on the trap path, throttled after 1000 calls' t.err ||
				fail "$p $c: -v did not say leaf was throttled: $(grep -i thrott t.err)"
			"$FORTSTAT" $c --throttle=1000,1000 -o r.txt "$p" >/dev/null 2>&1
			grep -Eq '^ +leaf +>=100[0-3]( |$)' r.txt ||
				fail "$p $c: table: $(grep leaf r.txt)"
			"$FORTSTAT" $c --throttle=1000,1000 --format=json -o r.json "$p" >/dev/null 2>&1
			json_valid r.json
			python3 -c 'import json,sys; d={r["name"]: r for r in json.load(open("r.json"))["routines"]}; l=d["leaf"]; sys.exit(not (l["calls_lower_bound"] is True and 1000 <= l["calls"] <= 1003 and l["throttled_after"] == 1000 and d["worker"]["calls_lower_bound"] is False))' ||
				fail "$p $c: JSON: $(grep -o '"name": "leaf".*calls_lower_bound": [a-z]*' r.json)"
		else
			expect "$p $c" leaf 40000 worker 4
			[ "$(field leaf 13)" = 0 ] || fail "$p $c: traps: leaf's count a lower bound"
		fi
		# a net mean that misses the rule by less than twice the stop's cost
		# (the cost removed from each call is an estimate): leaf takes some
		# 20 ns, its calls on the trap path read 1-2 us net when the machine
		# is quiet (the plain rule never throttles it: 40,000 calls), 6-8
		# us under a CPU hog. Throttled (at its 1,000th call when quiet; under
		# load its mean may come under the bound only later: CI's loaded
		# pass, 21,179), or, when not, its net mean was at twice the stop's
		# cost at least (JSON: trap_cost_s over trap_calls, the estimate),
		# as the rule says.
		if [ "$MECH" = probes ] && [ -z "$c" ] && command -v python3 >/dev/null; then
			"$FORTSTAT" -v --throttle=1000,0.001 --format=json -o r.json "$p" >/dev/null 2>t.err ||
				fail "$p --throttle=1000,0.001: fortstat failed: $(tail -n 3 t.err)"
			python3 - r.json >rule.txt <<'PY' || fail "$p --throttle=1000,0.001: $(cat rule.txt)"
import json, sys
d = json.load(open(sys.argv[1]))
leaf = [r for r in d["routines"] if r["name"] == "leaf"][0]
stop = d["trap_cost_s"] / d["trap_calls"] if d["trap_calls"] else 0
mean = leaf["self_s"] / leaf["calls"]
if leaf["calls_lower_bound"]:
    t = leaf["throttled_after"]
    ok = 1000 <= t < 40000 and t <= leaf["calls"] <= t + 3
else:
    ok = leaf["calls"] == 40000 and mean >= 0.001e-6 + 2 * stop * 0.9
print("leaf: %d calls, lower bound %s, net %.3f us a call, a stop %.3f us" %
      (leaf["calls"], leaf["calls_lower_bound"], mean * 1e6, stop * 1e6))
sys.exit(not ok)
PY
		fi
		traced $c --no-throttle -- "$p"
		expect "$p $c --no-throttle" leaf 40000 worker 4
		[ "$(field leaf 13)" = 0 ] || fail "$p $c --no-throttle: leaf's count a lower bound"
	done
done
finish
