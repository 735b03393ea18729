#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# trust.sh - a report says when it cannot be trusted: the calls that went
# through the traps (exactly: those of the routines whose entries took no
# probe), the overhead's share, and one warning line with the way forward
# (a stripped program: -l with its own DT_NEEDED libraries, then libc),
# in the table, in JSON and on stderr with -o; the program's output and
# exit status unchanged. A fixture whose times are sound says nothing.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

# json FILE EXPR: a Python expression over the report d, printed.
json() {
	python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

# ---- 1. a fixture whose times are sound: no warning anywhere ----
p=$BIN/abcd-O0
for fmt in table json; do
	"$FORTSTAT" --format=$fmt -o "r.$fmt" "$p" >t.out 2>t.err </dev/null
	rc=$?
	[ $rc = 3 ] || fail "$p: exit $rc, expected 3 (its own)"
	grep -q 'fortstat: warning' t.err "r.$fmt" && fail "$p ($fmt): a warning: $(grep warning t.err "r.$fmt")"
done
# the share, then how well it is known (the calibration's spread: issue 27)
grep -q '^  overhead removed  *[0-9.]* s  *[0-9.]* % ± [0-9]*\.[0-9]\{6\} s   (f1 ' r.table ||
	fail "$p: no overhead share and uncertainty: $(grep overhead r.table)"
unc=$(json r.json 'd["overhead_uncertainty_s"]')
ovh=$(json r.json 'd["overhead_s"]')
# known, and small against what was removed (a spread of a few per cent of f1)
awk -v u="$unc" -v o="$ovh" 'BEGIN { exit !(u > 0 && u < o / 2) }' ||
	fail "$p: overhead $ovh s known to within $unc s"
json_valid r.json
[ "$(json r.json 'd["warnings"]')" = "[]" ] || fail "$p: JSON warnings $(json r.json 'd["warnings"]')"
# every call of the traps stops; with probes none of this fixture's does
want=0
[ "$MECH" = traps ] && want=$(json r.json 'd["calls_timed"]')
[ "$(json r.json 'd["trap_calls"]')" = "$want" ] ||
	fail "$p: trap_calls $(json r.json 'd["trap_calls"]'), expected $want"
if [ "$MECH" = traps ]; then
	grep -q '^  calls trapped  *all   (the traps: every call is a ptrace stop)$' r.table ||
		fail "$p: traps: $(grep 'calls trapped' r.table)"
else
	grep -q '^  calls trapped  *0$' r.table || fail "$p: probes: $(grep 'calls trapped' r.table)"
fi

# ---- 2. the traps' overhead larger than the program's time (chain: 5000 tiny calls) ----
if [ "$MECH" = traps ]; then
	p=$BIN/chain-O0
	"$FORTSTAT" -o r.txt "$p" >t.out 2>t.err </dev/null || fail "$p: exit $?"
	w="fortstat: warning: the overhead removed is [0-9]* % of the program's time (its times are small differences of large estimates): every call is a ptrace stop with the traps: "
	grep -q "^$w" r.txt || fail "$p: no overhead warning in the table: $(tail -n 3 r.txt)"
	[ "$(grep -c "^$w" t.err)" = 1 ] || fail "$p: not said once on stderr: $(cat t.err)"
	share=$(sed -n 's/^  overhead removed  *[0-9.]* s  *\([0-9.]*\) %.*/\1/p' r.txt)
	awk -v s="$share" 'BEGIN { exit !(s > 100) }' || fail "$p: overhead share $share %"
fi

# ---- 3. a stripped program with -l libc: gzip (it names libc alone) ----
gz=$(command -v gzip) || skip "gzip is not installed"
if readelf -S "$gz" 2>/dev/null | grep -q '\.symtab'; then
	skip "$gz has a symbol table: not a stripped program"
fi
seq 1 400000 >in.txt
gzip -c in.txt >u.gz 2>u.err
echo $? >u.rc
# (libc's routines all take probes now: two gzip calls are kept on the
# trap path by the test hook, so that some calls stop)
FORTSTAT_TRAP_ROUTINES=read,write "$FORTSTAT" -vv -l libc --format=json -o g.json gzip -c in.txt \
	>t.gz 2>t.err
echo $? >t.rc
json_valid g.json
cmp -s u.gz t.gz || fail "gzip: its output differs under fortstat"
cmp -s u.rc t.rc || fail "gzip: exit status $(cat t.rc) under fortstat, $(cat u.rc) without"
grep -v '^fortstat: ' t.err | cmp -s u.err - || fail "gzip: stderr differs: $(cat t.err | head -c 300)"
w="[0-9.]* % of the program's time is unaccounted (outside every timed routine): $gz has no symbol table of its own (stripped) and -l times every library it names: its own code can be timed only in a build with symbols"
json g.json 'd["warnings"][0]' | grep -q "^$w\$" || fail "gzip: JSON warning: $(json g.json 'd["warnings"]')"
[ "$(json g.json 'len(d["warnings"])')" = 1 ] || fail "gzip: not one warning"
[ "$(grep -c "^fortstat: warning: $w\$" t.err)" = 1 ] || fail "gzip: not said once on stderr"
json g.json 'd["unaccounted_percent"] > 50 and abs(d["unaccounted_percent"] - 100 * d["unaccounted_s"] / d["total_time_s"]) < 0.01' |
	grep -q True || fail "gzip: unaccounted_percent $(json g.json 'd["unaccounted_percent"]')"
# the calls that stopped are exactly those of the routines patched out of line
# (-vv names them); with the traps, every call
grep '(out of line)$\|(emulated)$' t.err | sed 's/^fortstat: patch \([^ ]*\) at .*/\1/' | sort -u >ool.txt
if [ "$MECH" = traps ]; then
	want=$(json g.json 'd["calls_timed"]')
else
	want=$(python3 -c 'import json, sys
d = json.load(open("g.json")); ool = set(open("ool.txt").read().split())
print(sum(r["calls"] for r in d["routines"] if r["name"] in ool))')
	[ "$want" -gt 0 ] || fail "gzip: no out-of-line routine called ($(wc -l <ool.txt) patched)"
fi
[ "$(json g.json 'd["trap_calls"]')" = "$want" ] ||
	fail "gzip: trap_calls $(json g.json 'd["trap_calls"]'), expected $want"
json g.json 'd["trap_cost_s"] > 0 or d["trap_calls"] == 0' | grep -q True ||
	fail "gzip: trap_cost_s $(json g.json 'd["trap_cost_s"]')"

# ---- 4. xz refused alone names liblzma; git (a few routines exported, none
# called) runs, and its empty table says which -l to try ----
xz=$(command -v xz) && readelf -d "$xz" | grep -q 'NEEDED.*\[liblzma' && {
	"$FORTSTAT" xz --version >t.out 2>t.err </dev/null
	[ $? = 126 ] || fail "xz without -l: not refused"
	grep -q "^fortstat: error: $xz: no function symbols (stripped?): time its libraries' routines with -l, e.g. fortstat -l liblzma $xz (its other libraries: [a-z0-9, -]*libc)\$" t.err ||
		fail "xz without -l: $(cat t.err)"
}
git=$(command -v git) && ! readelf -S "$git" | grep -q '\.symtab' && {
	# its first library that is not the system's: the one the hint names first
	first=$(readelf -d "$git" | sed -n 's/.*(NEEDED).*\[\(lib[^].]*\)\.so.*/\1/p' |
		grep -v -x -e libc -e libm -e libpthread -e libdl -e librt | head -n 1)
	git --version >u.out 2>u.err </dev/null
	echo $? >u.rc
	"$FORTSTAT" -o r.txt git --version >t.out 2>t.err </dev/null
	echo $? >t.rc
	cmp -s u.out t.out && cmp -s u.rc t.rc || fail "git: output or status differ: $(cat t.out t.rc)"
	grep -q "^  TOTAL  *0 " r.txt || fail "git: calls timed: $(grep TOTAL r.txt)"
	w="^fortstat: warning: 100.0 % of the program's time is unaccounted (outside every timed routine): $git has no symbol table of its own (stripped): time its libraries' routines with -l, e.g. fortstat -l ${first:-libc} $git"
	grep -q "$w" r.txt || fail "git: no hint naming ${first:-libc}: $(tail -n 1 r.txt)"
}

# ---- 5. sqlite3: refused alone, its own library named; with -l libc, the same hint ----
sq=$(command -v sqlite3) || skip "sqlite3 is not installed"
readelf -d "$sq" | grep -q 'NEEDED.*\[libsqlite3' || skip "$sq does not link libsqlite3"
"$FORTSTAT" sqlite3 :memory: 'select 1;' >t.out 2>t.err </dev/null
[ $? = 126 ] || fail "sqlite3 without -l: not refused"
[ ! -s t.out ] || fail "sqlite3 without -l: it ran: $(cat t.out)"
grep -q "^fortstat: error: $sq: no function symbols (stripped?): time its libraries' routines with -l, e.g. fortstat -l libsqlite3 $sq (its other libraries: [a-z0-9, -]*libc)\$" t.err ||
	fail "sqlite3 without -l: $(cat t.err)"
# a query, then one that fails: exit status 1 and its message
q='select 6 * 7; select nosuchcolumn;'
sqlite3 -bail :memory: "$q" >u.out 2>u.err </dev/null
echo $? >u.rc
"$FORTSTAT" -l libc -o r.txt sqlite3 -bail :memory: "$q" >t.out 2>t.err </dev/null
echo $? >t.rc
cmp -s u.out t.out || fail "sqlite3: stdout differs: $(cat t.out)"
grep -v '^fortstat: ' t.err | cmp -s u.err - || fail "sqlite3: stderr differs: $(cat t.err)"
cmp -s u.rc t.rc || fail "sqlite3: exit status $(cat t.rc) under fortstat, $(cat u.rc) without"
[ "$(cat u.rc)" = 1 ] || fail "sqlite3: the query did not fail as meant: $(cat u.rc)"
# (with the traps, the overhead may be said first, in the same line)
w="^fortstat: warning: .*[0-9.]* % of the program's time is unaccounted (outside every timed routine): .*$sq has no symbol table of its own (stripped): time its libraries' routines with -l, e.g. fortstat -l libc -l libsqlite3 $sq (its other libraries: [a-z0-9, -]*)\$"
grep -q "$w" r.txt || fail "sqlite3 -l libc: no hint naming libsqlite3: $(tail -n 2 r.txt)"
[ "$(grep -c "$w" t.err)" = 1 ] || fail "sqlite3 -l libc: not said once on stderr: $(cat t.err)"
finish
