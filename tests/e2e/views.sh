#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# views.sh - the views on fixtures with known call trees: exact arcs and
# inclusive times (JSON, --graph), exact stacks (folded, SVG), callgrind
# output that callgrind_annotate reads with the same self times, --lines,
# --threads, --no-correct.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

# arcs FILE: "caller callee calls" lines of a JSON report, sorted.
arcs() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
for a in d["arcs"]:
    print(a["caller"] or "-", a["callee"], a["calls"])' "$1" | sort
}

# inclusive_exact FILE: every routine's inclusive time is its self time plus
# its callees' inclusive times along its arcs (gross times, no recursion, no
# tail call), to the nanosecond.
inclusive_exact() {
	python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
ns = lambda s: round(s * 1e9)
bad = 0
for r in d["routines"]:
    kids = sum(ns(a["time_s"]) for a in d["arcs"] if a["caller"] == r["name"])
    if ns(r["total_s"]) != ns(r["self_s"]) + kids:
        print("inclusive of", r["name"], ns(r["total_s"]), "!= self + callees", ns(r["self_s"]) + kids)
        bad = 1
sys.exit(bad)' "$1"
}

for opt in O0 O2; do
	p=$BIN/abcd-$opt
	"$FORTSTAT" --no-correct --format=json -o r.json "$p" >/dev/null 2>&1
	json_valid r.json
	printf '%s\n' "- main 1" "A B 50" "B C 50" "C D 100" "main A 5" | sort >want.txt
	arcs r.json >got.txt
	cmp -s want.txt got.txt || fail "$p: arcs: $(tr '\n' ',' <got.txt)"
	inclusive_exact r.json || fail "$p: inclusive times do not add up"

	# the call graph: B's entry, its caller and callee with exact counts
	"$FORTSTAT" --no-correct --graph -o graph.txt "$p" >/dev/null 2>&1
	grep -A1 -B1 '^\[[0-9]*\] .* 50    B \[' graph.txt >b.txt || fail "$p --graph: no entry for B"
	grep -q ' 50/50  *A \[' b.txt || fail "$p --graph: B's caller: $(cat b.txt)"
	grep -q ' 50/50  *C \[' b.txt || fail "$p --graph: B's callee: $(cat b.txt)"
	grep -q ' 100/100  *D \[' graph.txt || fail "$p --graph: C -> D"
	# sorted by inclusive time: main, A, B, C, D
	[ "$(sed -n 's/^\[\([0-9]*\)\].* \([A-Za-z]*\) \[[0-9]*\].*/\1\2/p' graph.txt | tr -d '\n')" = 1main2A3B4C5D ] ||
		fail "$p --graph: entries not sorted by inclusive time"

	# folded stacks and the SVG of the same run: the same stacks, the same total
	# gross times: A does almost nothing itself, and net of overhead its stack is 0 us
	"$FORTSTAT" --no-correct --format=folded -o r.folded --svg r.svg "$p" >/dev/null 2>&1
	sed 's/ [0-9]*$//' r.folded >stacks.txt
	printf '%s\n' main "main;A" "main;A;B" "main;A;B;C" "main;A;B;C;D" >want.txt
	cmp -s want.txt stacks.txt || fail "$p: folded stacks: $(tr '\n' ' ' <stacks.txt)"
done

# The chain: at -O2 twice may tail-call leaf (the chain makes leaf its sibling).
for opt in O0 O2; do
	p=$BIN/chain-$opt
	"$FORTSTAT" --no-correct --format=json -o r.json "$p" >/dev/null 2>&1
	json_valid r.json
	printf '%s\n' "- main 1" "main work 1000" "work leaf 3000" "work twice 500" "twice leaf 500" | sort >want.txt
	arcs r.json >got.txt
	cmp -s want.txt got.txt || fail "$p: arcs: $(tr '\n' ',' <got.txt)"
	[ "$opt" = O0 ] && { inclusive_exact r.json || fail "$p: inclusive times do not add up"; }
	# JSON: percent of inclusive time beside the time
	python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(0 if all("total_percent" in r for r in d["routines"]) else 1)' ||
		fail "$p: no total_percent in JSON"
done

# SVG: well-formed XML; each frame's children fit in it; the top frames fill
# the root; the frames are the fixture's routines (gross times: net of the
# overhead, routines that do almost nothing are 0 us and have no frame).
p=$BIN/chain-O0
"$FORTSTAT" --no-correct --format=folded -o r.folded --svg r.svg "$p" >/dev/null 2>&1
python3 - r.svg r.folded <<'PY' || fail "$p: SVG flame graph"
import sys, xml.etree.ElementTree as E
ns = "{http://www.w3.org/2000/svg}"
root = E.parse(sys.argv[1]).getroot()
assert root.find(ns + "script") is not None, "no script"
f = [(float(g.get("data-x")), float(g.get("data-w")), int(g.get("data-d")), g.get("data-n"))
     for g in root.iter(ns + "g") if g.get("class") == "f"]
assert f[0][3] == "all" and abs(f[0][1] - 1) < 1e-9, "no root frame"
for x, w, d, n in f:
    kids = [k for k in f if k[2] == d + 1 and k[0] >= x - 1e-9 and k[0] + k[1] <= x + w + 1e-9]
    assert sum(k[1] for k in kids) <= w + 1e-6, "children of %s wider than it" % n
assert abs(sum(k[1] for k in f if k[2] == 1) - 1) < 1e-6, "top frames do not fill the root"
assert {n for _, _, _, n in f} == {"all", "main", "work", "leaf", "twice"}, "frames %s" % f
# widths are proportional to the folded stacks' self times
tot = sum(int(l.rsplit(" ", 1)[1]) for l in open(sys.argv[2]))
assert tot > 0
PY

# callgrind: callgrind_annotate reads it and shows its self times and calls.
command -v callgrind_annotate >/dev/null || skip "callgrind_annotate is not installed"
# gross times: tiny routines net of overhead are 0 us, and annotate omits them
"$FORTSTAT" --no-correct --format=callgrind -o cg.out "$p" >/dev/null 2>&1
callgrind_annotate --threshold=100 cg.out >cga.txt 2>cga.err || fail "callgrind_annotate failed: $(cat cga.err)"
grep -qi 'warning' cga.txt cga.err && fail "callgrind_annotate warns: $(grep -i warning cga.txt cga.err)"
for fn in main work leaf twice; do
	want=$(awk -v fn="$fn" '/^fn=/ { cur = substr($0, 4); own = 1; next }
		/^calls=/ { own = 0; next } /^cfn=|^cfi=|^fl=/ { next }
		cur == fn && own && NF == 3 { printf "%d %d", $2, $3 }' cg.out)
	got=$(sed -n "s/^ *\([0-9,]*\) ([ 0-9.]*%) *\([0-9,]*\) ([ 0-9.]*%) *[^ ]*:$fn\$/\1 \2/p" cga.txt | tr -d ,)
	[ -n "$want" ] && [ "$got" = "$want" ] || fail "callgrind_annotate $fn: '$got', file says '$want'"
done
grep -q ':leaf$' cga.txt && grep -q ' 3,500 (' cga.txt || fail "callgrind_annotate: leaf's 3500 calls: $(cat cga.txt)"
# the golden synthetic profile: callgrind_annotate shows the CSV's self times
# (whole microseconds: within one of the CSV's nanoseconds)
callgrind_annotate --threshold=100 "$SRCDIR/tests/golden/report.callgrind" >cgg.txt 2>&1
for fn in solve main; do
	want=$(awk -F, -v fn="$fn" '$1 == fn { print $3 * 1e6 }' "$SRCDIR/tests/golden/report.csv")
	got=$(sed -n "s/^ *\([0-9,]*\) (.*:$fn\$/\1/p" cgg.txt | tr -d ,)
	awk -v g="${got:-x}" -v w="$want" 'BEGIN { exit !(g != "x" && g - w <= 1 && w - g <= 1) }' ||
		fail "golden callgrind $fn: annotate shows $got us, the CSV $want"
done

# --lines: file:line of each routine in the table.
"$FORTSTAT" --lines -o lines.txt "$p" >/dev/null 2>&1
grep -q '^  work .*chain\.c:2[0-9]' lines.txt || fail "--lines: $(cat lines.txt)"
grep -q 'SOURCE' lines.txt || fail "--lines: no SOURCE column"

# --inclusive: INCL (SEC) and its PERCENT; main's is close to 100% of TOTAL.
"$FORTSTAT" --inclusive -o incl.txt "$p" >/dev/null 2>&1
grep -q 'INCL (SEC)' incl.txt || fail "--inclusive: no column"

# --no-correct: gross times, nothing said to be removed.
"$FORTSTAT" --no-correct -o gross.txt "$p" >/dev/null 2>&1
grep -q 'overhead removed' gross.txt && fail "--no-correct: overhead still removed"

# --threads: a section per thread; JSON threads whose counts add up.
for opt in O0 O2; do
	p=$BIN/threads-$opt
	"$FORTSTAT" --threads --format=json -o t.json "$p" >/dev/null 2>&1
	json_valid t.json
	python3 -c '
import json, sys
d = json.load(open("t.json"))
t = d["threads"]
c = lambda th, n: sum(r["calls"] for r in th["routines"] if r["name"] == n)
assert len(t) == 5, len(t)
assert sum(c(th, "leaf") for th in t) == 40000
assert sorted(c(th, "worker") for th in t) == [0, 1, 1, 1, 1]
assert all(c(th, "leaf") == 10000 * c(th, "worker") for th in t)' ||
		fail "$p --threads: JSON threads"
	"$FORTSTAT" --threads -o t.txt "$p" >/dev/null 2>&1
	[ "$(grep -c '^thread [0-9]' t.txt)" = 5 ] || fail "$p --threads: $(cat t.txt)"
	# (every call timed: leaf's 40,000 would be throttled after 10,000)
	"$FORTSTAT" --no-correct --no-throttle --threads --format=folded -o t.folded "$p" \
		>/dev/null 2>&1
	[ "$(grep -c '^thread [0-9]*;main;worker;leaf ' t.folded)" = 0 ] &&
		[ "$(grep -c '^thread [0-9]*;worker;leaf ' t.folded)" = 4 ] ||
		fail "$p --threads folded: $(cat t.folded)"
done
finish
