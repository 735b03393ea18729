#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# threads.sh - 8 threads x 100,000 calls with exact totals; a thread that
# leaves by pthread_exit inside timed routines (forced unwinding), one
# cancelled inside a timed routine, and exit() called while three threads
# are inside a timed routine. --pin=always keeps the 1.6 million stops cheap.
# And the stops' cost measured per thread.
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/threads8-$opt
	traced --pin=always -- "$p" exit
	expect "$p" main 1 work 8 leaf 800000 quitter 1 inner 1 waiter 1 spinner 3
	[ "$(cat t.rc)" = 5 ] || fail "$p: exit status $(cat t.rc), expected 5"
	# still running when the program or their thread ended
	for r in main spinner inner waiter; do
		[ "$(incomplete "$r")" = 1 ] || fail "$p: $r not INCOMPLETE"
	done
	[ "$(incomplete leaf)" = 0 ] || fail "$p: leaf INCOMPLETE"
	# In-process probes with rings of 64 events: each thread waits on its full
	# ring some 3,000 times, and no call is lost.
	if [ "$MECH" = probes ]; then
		FORTSTAT_PROBE_RING=64 traced -- "$p" exit
		expect "$p (rings of 64)" main 1 work 8 leaf 800000 quitter 1 inner 1 waiter 1 spinner 3
		[ "$(cat t.rc)" = 5 ] || fail "$p (rings of 64): exit status $(cat t.rc), expected 5"
		# Throttling (10,000 calls under 10 us): leaf is counted, not timed,
		# once the whole process made 10,000 calls of it; counts exact. The
		# calls already in the other threads' rings (8 of 8,192 calls each)
		# are timed before the decision reaches them.
		"$FORTSTAT" -v --format=json -o r.json "$p" >t.out 2>t.err
		json_valid r.json
		grep -q '^fortstat: leaf: throttled after [0-9]* calls' t.err ||
			fail "$p: leaf not throttled: $(grep -i thrott t.err)"
		python3 -c 'import json,sys; d={r["name"]: r for r in json.load(open("r.json"))["routines"]}; l=d["leaf"]; sys.exit(not (l["calls"] == 800000 and 10000 <= l["throttled_after"] <= 10000 + 8 * 8192 and d["work"]["throttled_after"] is None))' ||
			fail "$p: throttled counts: $(grep -o '"name": "leaf".*throttled_after": [0-9a-z]*' r.json)"
		"$FORTSTAT" --no-throttle --format=json -o r.json "$p" >t.out 2>t.err
		json_valid r.json
		python3 -c 'import json,sys; d={r["name"]: r for r in json.load(open("r.json"))["routines"]}; sys.exit(not (d["leaf"]["calls"] == 800000 and d["leaf"]["throttled_after"] is None))' ||
			fail "$p --no-throttle: leaf throttled or miscounted"
	fi
done
# With several threads the shared event page is off, but each thread's
# stops are still measured (the TSC in the registers, t_go in a slot of the
# thread's own): 4 threads x 10,000 calls, every segment but each thread's
# first; f1 and f2 from that measure (stops cost more than calibrated once
# the CPUs are given back).
if [ "$MECH" = traps ] && grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo; then
	for opt in O0 O2; do
		p=$BIN/threads-$opt
		traced -v -- "$p"
		expect "$p" leaf 40000
		grep -q "stops measured in the run: .* (80004 segments;" t.err ||
			fail "$p: stops not measured per thread: $(grep stops t.err)"
	done
fi
finish
