#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# chain.sh - a call chain, exact counts, in every placement and code shape:
# PIE, non-PIE, static (libc left alone), endbr64 (CET), -pg (a relative call first).
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
# Routines whose first instruction cannot be handled are left alone, and -v
# says which and why; the program runs as without fortstat.
for opt in O0 O2; do
	p=$BIN/chain-pgpie-$opt
	traced -v -- "$p"
	grep -q "not timing leaf: indirect branch" t.err || fail "$p: no -v line for leaf: $(cat t.err)"
	absent "$p" leaf work twice
done
# -pg: the first instruction really is a relative call (emulated).
objdump -d --no-show-raw-insn "$BIN/chain-pg-O2" | grep -A1 '<leaf>:' | grep -q 'call.*__fentry__' ||
	fail "chain-pg-O2: leaf does not start with call __fentry__"
# CET: leaf starts with endbr64.
objdump -d --no-show-raw-insn "$BIN/chain-cet-O0" | grep -A1 '<leaf>:' | grep -q endbr64 ||
	fail "chain-cet-O0: leaf does not start with endbr64"
finish
