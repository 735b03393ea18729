#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# stripped.sh - fortstat without its symbol table, as distributions install it
# (dh_strip, install -s): it still finds its calibration routines (.dynsym),
# so it calibrates and removes the per-stop overhead.
. "$SRCDIR/tests/lib.sh"
command -v strip >/dev/null || skip "strip (binutils) is not installed"
strip -o "$T/fortstat-stripped" "$FORTSTAT" || fail "strip $FORTSTAT"
FORTSTAT=$T/fortstat-stripped
[ -z "$(nm "$FORTSTAT" 2>/dev/null)" ] || fail "strip left a symbol table"

p=$BIN/chain-O0
traced -- "$p"
expect "$p" main 1 work 1000 leaf 3500 twice 500
# (the traps' overhead may well be above the program's time: said, and fine here)
grep '^fortstat: ' t.err | grep -v '^fortstat: warning: the overhead removed is' >notes.txt &&
	fail "stripped fortstat said: $(cat notes.txt)"
"$FORTSTAT" --format=json -o r.json "$p" >/dev/null 2>err.txt || fail "$p: exit $?"
json_valid r.json
grep -q '"overhead_removed": true' r.json && grep -q '"f1_ns": [1-9]' r.json ||
	fail "stripped fortstat did not calibrate: $(grep 'f1_ns\|overhead_removed' r.json) $(cat err.txt)"
finish
