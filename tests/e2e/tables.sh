#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tables.sh - readable C++ tables: --width=80 fits every line of the table
# (C++ names shortened perf's way, <…> and (…)) while CSV keeps the full
# names; without --width a table in a file keeps them too, one on a
# terminal fits it; --graph fits as well; --top=3 shows three rows, then
# one line for the rest, TOTAL still of them all; --merge's table alike.
. "$SRCDIR/tests/lib.sh"

# the table's lines: from the ROUTINE heads to TOTAL, the ellipsis one column
table_lines() {
	sed -n '/^  ROUTINE /,/^  TOTAL /p' "$1" | sed 's/…/./g'
}

for opt in O0 O2; do
	p=$BIN/classes-$opt
	"$FORTSTAT" --sort=calls --width=80 -o w.txt "$p" >/dev/null 2>t.err </dev/null ||
		fail "$p: --width=80: $(cat t.err)"
	"$FORTSTAT" --width=80 --format=csv -o w.csv "$p" >/dev/null 2>t.err </dev/null ||
		fail "$p: --width=80 --format=csv: $(cat t.err)"
	"$FORTSTAT" --sort=calls -o full.txt "$p" >/dev/null 2>t.err </dev/null || fail "$p: $(cat t.err)"
	n=$(($(wc -l <w.csv) - 1))
	[ "$n" -gt 3 ] || fail "$p: only $n routines in the CSV"
	[ "$(table_lines w.txt | wc -l)" = $((n + 2)) ] ||
		fail "$p: --width=80: $(table_lines w.txt | wc -l) table lines for $n routines"
	wide=$(table_lines w.txt | awk 'length($0) > 80' | head -3)
	[ -z "$wide" ] || fail "$p: --width=80: lines wider than 80: $wide"
	grep -q '<…>' w.txt || fail "$p: --width=80: no template elided: $(cat w.txt)"
	# the machine formats keep the full names, whatever the width
	grep -q '…' w.csv && fail "$p: --width=80 shortened the CSV's names"
	awk -F, 'length($0) > 120 { found = 1 } END { exit !found }' w.csv ||
		fail "$p: no long C++ name in the CSV"
	grep -q 'std::vector<double, std::allocator<double> >' w.csv ||
		fail "$p: the CSV lacks the full vector<double> names"
	# a table in a file, no --width: the full names, as before
	grep -q '…' full.txt && fail "$p: a table in a file without --width shortened names"
	grep -q 'std::vector<double, std::allocator<double> >' full.txt ||
		fail "$p: the table without --width lost the full names"
	# the same rows, whatever the width: their calls in the same order
	table_lines full.txt | awk '{ print $(NF - 3) }' >full.calls
	table_lines w.txt | awk '{ print $(NF - 3) }' >w.calls
	cmp -s full.calls w.calls || fail "$p: --width=80 changed the rows' calls or order"

	# --top=3: three rows, the closing line, TOTAL of every routine
	"$FORTSTAT" --top=3 --format=csv -o top.csv "$p" >/dev/null 2>&1
	"$FORTSTAT" --top=3 -c -o top.txt "$p" >/dev/null 2>t.err </dev/null ||
		fail "$p: --top=3: $(cat t.err)"
	[ "$(wc -l <top.csv)" = "$(wc -l <w.csv)" ] || fail "$p: --top=3 cut the CSV"
	table_lines top.txt >top.lines
	[ "$(wc -l <top.lines)" = 6 ] || fail "$p: --top=3: $(cat top.lines)"
	rest=$(($(grep -c . top.csv) - 1 - 3))
	all=$(awk -F, 'NR > 1 { s += $(NF - 11) } END { print s }' top.csv)
	# count only: the rest's calls are TOTAL's less the three rows'
	shown=$(sed -n '2,4p' top.lines | awk '{ s += $NF } END { print s }')
	total=$(awk '/^  TOTAL / { print $2 }' top.lines)
	[ "$total" = "$all" ] || fail "$p: --top=3: TOTAL $total, the CSV's calls $all"
	grep -qx "  ($rest more routines: $(printf %d $((total - shown)) |
		sed ':a;s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/;ta') calls)" top.lines ||
		fail "$p: --top=3: no closing line for $rest routines, $((total - shown)) calls: $(cat top.lines)"
done

# no --width, the table on a terminal: the terminal's width (script(1) makes one)
if command -v script >/dev/null && script -qec true /dev/null >/dev/null 2>&1 </dev/null; then
	script -qec "stty cols 90 rows 40; '$FORTSTAT' --no-progress '$BIN/classes-O0' >/dev/null" \
		tty.raw >/dev/null 2>&1 </dev/null
	tr -d '\r' <tty.raw >tty.txt
	[ "$(table_lines tty.txt | wc -l)" -gt 5 ] || fail "a terminal: no table: $(cat tty.txt)"
	wide=$(table_lines tty.txt | awk 'length($0) > 90' | head -3)
	[ -z "$wide" ] || fail "a terminal 90 columns wide: lines wider: $wide"
	grep -q '<…>' tty.txt || fail "a terminal 90 columns wide: no name shortened: $(cat tty.txt)"
fi

# --graph: its lines fit --width too, the names shortened as in the table
"$FORTSTAT" --graph --width=80 -o g.txt "$BIN/classes-O0" >/dev/null 2>&1
sed -n '/^Call graph/,$p' g.txt | sed 's/…/./g' >g.lines
[ "$(grep -c '^\[' g.lines)" -gt 3 ] || fail "--graph --width=80: no call graph: $(cat g.txt)"
wide=$(awk 'length($0) > 80' g.lines | head -3)
[ -z "$wide" ] || fail "--graph --width=80: lines wider than 80: $wide"

# a timed --top: the rest's share of the time
"$FORTSTAT" --top=1 -o top.txt "$BIN/classes-O0" >/dev/null 2>&1
grep -Eq '^  \([0-9,]+ more routines: [0-9]+\.[0-9] % of the time\)$' top.txt ||
	fail "--top=1: $(cat top.txt)"

# --merge's table: --width and --top too, its CSV whole
"$FORTSTAT" --format=json -o m1.json "$BIN/classes-O0" >/dev/null 2>&1
"$FORTSTAT" --format=json -o m2.json "$BIN/classes-O0" >/dev/null 2>&1
json_valid m1.json m2.json
"$FORTSTAT" --merge --width=150 m1.json m2.json >m.txt 2>t.err || fail "--merge --width: $(cat t.err)"
sed -n '/^  ROUTINE /,/^$/p' m.txt | sed 's/…/./g' >m.lines
[ "$(grep -c . m.lines)" -gt 10 ] || fail "--merge --width=150: $(cat m.txt)"
wide=$(awk 'length($0) > 150' m.lines | head -3)
[ -z "$wide" ] || fail "--merge --width=150: lines wider than 150: $wide"
grep -q '<…>' m.txt || fail "--merge --width=150: no name shortened: $(cat m.txt)"
"$FORTSTAT" --merge --width=150 --format=csv m1.json m2.json >m.csv 2>/dev/null
grep -q '…' m.csv && fail "--merge --width=150 shortened the CSV's names"
"$FORTSTAT" --merge --top=3 m1.json m2.json >m.txt 2>/dev/null
n=$(($(wc -l <m.csv) - 1))
sed -n '/^  ROUTINE /,/^$/p' m.txt >m.lines
[ "$(grep -c . m.lines)" = 5 ] || fail "--merge --top=3: $(cat m.lines)"
grep -Eq "^  \($((n - 3)) more routines: [0-9]+\.[0-9] % of the time\)\$" m.lines ||
	fail "--merge --top=3: no closing line for $((n - 3)) routines: $(cat m.lines)"

# bad values: a usage error
for bad in --width=0 --width=x --top=0 --top=-1; do
	"$FORTSTAT" $bad -o r.txt "$BIN/classes-O0" >/dev/null 2>t.err </dev/null
	rc=$?
	[ "$rc" = 125 ] || fail "$bad: exit status $rc"
	grep -q "^fortstat: .*$(echo "$bad" | sed 's/=.*//')" t.err || fail "$bad: $(cat t.err)"
done
finish
