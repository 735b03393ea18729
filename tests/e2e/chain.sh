#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# chain.sh - a call chain, exact counts, in every placement and code shape:
# PIE, non-PIE, static (libc left alone), endbr64 (CET), -pg (a relative call first),
# -pg -fPIE (an indirect call first).
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	for v in chain chain-nopie chain-static chain-cet chain-pg; do
		p=$BIN/$v-$opt
		traced -- "$p"
		expect "$p" main 1 work 1000 leaf 3500 twice 500
		absent "$p" printf puts _start frame_dummy
		# count-only: the same counts with one stop per call
		traced -c -- "$p"
		expect "$p -c" main 1 work 1000 leaf 3500 twice 500
		# the plain int3 entry patch everywhere (no jmp to a stub)
		export FORTSTAT_NO_STUBS=1
		traced -- "$p"
		unset FORTSTAT_NO_STUBS
		expect "$p (int3 patches)" main 1 work 1000 leaf 3500 twice 500
	done
done
# The fast entry patch is what routines get by default.
traced -vv -- "$BIN/chain-O0"
grep -q "patch leaf at .*: jmp to a stub" t.err || fail "chain-O0: leaf not patched with a jmp"
# In-process probes: every entry and return recorded in the program, read
# from its ring (2 x 5001: the look for a CET shadow stack was made at the
# dynamic linker's stop, before main), no stop of its own; the calibration's
# f1 and f2 (made with probes too) are nanoseconds.
if [ "$MECH" = probes ] && command -v python3 >/dev/null; then
	"$FORTSTAT" -v --format=json -o r.json "$BIN/chain-O0" >/dev/null 2>t.err
	json_valid r.json
	grep -q "in-process probes: areas at" t.err || fail "chain-O0: no probes: $(cat t.err)"
	python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(not (d["mechanism"] == "probes" and d["probe_events"] == 10002 and d["stops_measured"] == 0 and 0 < d["f1_ns"] < 1000))' ||
		fail "chain-O0: probes: $(grep -E 'mechanism|probe_events|stops_measured|f1_ns' r.json | tr -d '\n')"
	"$FORTSTAT" -c --format=json -o r.json "$BIN/chain-O0" >/dev/null 2>&1
	json_valid r.json
	python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(not (d["mechanism"] == "probes" and d["probe_events"] == 5001))' ||
		fail "chain-O0 -c: probes: $(grep -E 'mechanism|probe_events' r.json | tr -d '\n')"
fi
# The run measures what its stops cost (the TSC read around each stub's and
# return site's int3): every segment between two such stops, here all but
# the first of 2 x 5001 stops; f1 and f2 then come from that measure.
if [ "$MECH" = traps ] && grep -qw constant_tsc /proc/cpuinfo && grep -qw nonstop_tsc /proc/cpuinfo; then
	traced -v -- "$BIN/chain-O0"
	grep -q "stops measured in the run: .* (10001 segments;" t.err ||
		fail "chain-O0: stops not measured: $(grep stops t.err)"
	if command -v python3 >/dev/null; then
		"$FORTSTAT" --format=json -o r.json "$BIN/chain-O0" >/dev/null 2>&1
		json_valid r.json
		python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(not (d["f1_ns"] == d["f2_ns"] > 500 and d["stops_measured"] == 10001))' ||
			fail "chain-O0: f1, f2 not the run's measure"
	fi
	# without the event page, the calibration's f1 and f2 stand
	export FORTSTAT_NO_SHARED=1
	traced -v -- "$BIN/chain-O0"
	unset FORTSTAT_NO_SHARED
	expect "chain-O0 (no event page)" main 1 work 1000 leaf 3500 twice 500
	! grep -q "stops measured" t.err || fail "chain-O0 without the event page: stops measured"
	grep -q "calibration: f1" t.err || fail "chain-O0 without the event page: no calibration"
fi
# -pg -fPIE: each routine begins with an indirect call (call
# *__fentry__@GOTPCREL(%rip)). The entry stub emulates it (the callee sees
# the routine's own return address): exact counts. Under an int3 alone
# (FORTSTAT_NO_STUBS) such a first instruction cannot run out of line: the
# routines are left alone, -v says which and why, and the program runs as
# without fortstat.
for opt in O0 O2; do
	p=$BIN/chain-pgpie-$opt
	traced -- "$p"
	expect "$p" main 1 work 1000 leaf 3500 twice 500
	traced -c -- "$p"
	expect "$p -c" main 1 work 1000 leaf 3500 twice 500
	export FORTSTAT_NO_STUBS=1
	traced -v -- "$p"
	unset FORTSTAT_NO_STUBS
	grep -q "not timing leaf: indirect branch" t.err || fail "$p: no -v line for leaf: $(cat t.err)"
	absent "$p" leaf work twice
done
objdump -d --no-show-raw-insn "$BIN/chain-pgpie-O2" | grep -A1 '<leaf>:' |
	grep -q 'call[q]* *\*.*(%rip)' || fail "chain-pgpie-O2: leaf does not start with an indirect call"
# -pg: the first instruction really is a relative call (emulated).
objdump -d --no-show-raw-insn "$BIN/chain-pg-O2" | grep -A1 '<leaf>:' | grep -q 'call.*__fentry__' ||
	fail "chain-pg-O2: leaf does not start with call __fentry__"
# CET: leaf starts with endbr64.
objdump -d --no-show-raw-insn "$BIN/chain-cet-O0" | grep -A1 '<leaf>:' | grep -q endbr64 ||
	fail "chain-cet-O0: leaf does not start with endbr64"
finish
