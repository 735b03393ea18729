#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# alloc.sh - --alloc: storage per routine with exact answers. C (the
# program's own allocator when static, libc's by -l libc when dynamic;
# calloc, realloc, the aligned ones, a tail call into malloc, recursion, an
# untimed routine's requests), C++ new, new[] and the nothrow new[] (-l
# libstdc++), Fortran ALLOCATE (-l libgfortran -l libc): allocations, bytes
# and frees per routine, self and inclusive, the peak and its routine; the
# table, callgrind's events, the JSON schema; without the allocator's
# library, one line that says which to add.
. "$SRCDIR/tests/lib.sh"
echo helper >x.txt

# run PROG OPTS...: a JSON report of PROG under --alloc in r.json, its output unchanged.
run() {
	p=$1
	shift
	"$p" >u.out 2>u.err </dev/null
	echo $? >u.rc
	"$FORTSTAT" --alloc "$@" --format=json -o r.json "$p" >t.out 2>t.err </dev/null
	echo $? >t.rc
	cmp -s u.rc t.rc || fail "$p $*: exit status $(cat t.rc) under fortstat, $(cat u.rc) without: $(cat t.err)"
	cmp -s u.out t.out || fail "$p $*: stdout differs under fortstat"
	json_valid r.json
}

# want PROG PEAK_ROUTINE PEAK_LESS_LIVE NAME=ALLOCS,BYTES,FREES,ALLOCS_INCL,BYTES_INCL,FREES_INCL...:
# each routine's storage in r.json, exactly; the peak's routine, and the
# peak less the bytes still live at the end (what was live before the run's
# own blocks: the C library's start-up), or - for no check.
want() {
	python3 - "$@" <<'EOT' || fail "$1: storage per routine (above)"
import json, sys
prog, peak_routine, peak_less = sys.argv[1:4]
d = json.load(open("r.json"))
got = {r["name"]: r["alloc"] for r in d["routines"]}
bad = 0
for w in sys.argv[4:]:
    name, v = w.split("=")
    v = [int(x) for x in v.split(",")]
    a = got.get(name)
    g = a and [a[k] for k in ("allocs", "bytes", "frees", "allocs_incl", "bytes_incl", "frees_incl")]
    if g != v:
        print(f"{prog}: {name}: {g}, expected {v}", file=sys.stderr)
        bad = 1
t = d["alloc"]
if t["peak_routine"] != peak_routine:
    print(f"{prog}: peak in {t['peak_routine']}, expected {peak_routine}: {t}", file=sys.stderr)
    bad = 1
if peak_less != "-" and t["peak_bytes"] - t["live_bytes"] != int(peak_less):
    print(f"{prog}: peak {t['peak_bytes']} less live {t['live_bytes']}, expected {peak_less}", file=sys.stderr)
    bad = 1
# every block freed was seen made (a wrong RAX read at a return would not be found)
if t["unknown_frees"]:
    print(f"{prog}: {t['unknown_frees']} frees of blocks not seen made: {t}", file=sys.stderr)
    bad = 1
# the routines' own figures and those made outside any make up the totals
own = sum(a["allocs"] for a in got.values()) + t["outside_allocs"]
if own != t["allocs"] or sum(a["bytes"] for a in got.values()) + t["outside_bytes"] != t["bytes"]:
    print(f"{prog}: routines' allocations {own} do not add up to the total's {t}", file=sys.stderr)
    bad = 1
if any(r["name"] in ("malloc", "free", "libc.so.6:malloc", "libc.so.6:free") for r in d["routines"]):
    print(f"{prog}: an allocator is a row", file=sys.stderr)
    bad = 1
sys.exit(bad)
EOT
}

C="make_blocks=10,10000,10,10,10000,10 grow=3,26000,3,3,26000,3 inner=3,300,0,3,300,0
outer=1,50,1,4,350,1 peak_here=1,1000000,1,1,1000000,1 release=0,0,3,0,0,3 recur=4,32,4,4,32,4
via_helper=2,400,2,2,400,2 aligned=3,4320,3,3,4320,3 tail_alloc=2,128,0,2,128,0 tails=0,0,2,2,128,2
main=0,0,0,29,1041230,29"
for o in O0 O2; do
	run "$BIN/allocs-static-$o" -x x.txt
	# shellcheck disable=SC2086 # C: one word a routine
	want "allocs-static-$o" peak_here 1000300 $C
	run "$BIN/allocs-$o" -x x.txt -l libc
	# shellcheck disable=SC2086
	want "allocs-$o" peak_here 1000300 $C
	grep -q '"name": "helper"' r.json && fail "allocs-$o: helper is timed under -x"

	run "$BIN/allocs-cxx-$o" -l libstdc++
	want "allocs-cxx-$o" "make_array()" 4000 "make_nodes()=5,240,5,5,240,5" \
		"make_array()=1,4000,1,1,4000,1" "nothrow_array()=1,77,1,1,77,1" main=0,0,0,7,4317,7
	run "$BIN/allocs-cxx-static-$o"
	want "allocs-cxx-static-$o" "make_array()" 4000 "make_nodes()=5,240,5,5,240,5" \
		"make_array()=1,4000,1,1,4000,1" "nothrow_array()=1,77,1,1,77,1" main=0,0,0,7,4317,7

	run "$BIN/allocs-ftn-$o" -l libgfortran -l libc
	want "allocs-ftn-$o" store::fill - store::fill=2,12000,2,2,12000,2
done

# The table: the storage columns, the totals and the peak's routine.
"$FORTSTAT" --alloc -x x.txt -o r.txt "$BIN/allocs-static-O2" >/dev/null 2>&1
grep -Eq '^ +ROUTINE +CALLED .* ALLOCS +BYTES +FREES +INCL ALLOCS +INCL BYTES' r.txt ||
	fail "the table has no storage columns: $(head -5 r.txt)"
grep -Eq '^  make_blocks +1 .* 10 +10000 +10 +10 +10000$' r.txt ||
	fail "the table's make_blocks row: $(grep make_blocks r.txt)"
grep -Eq '^  peak live +[0-9]+ bytes +\(in peak_here\)$' r.txt || fail "no peak line: $(cat r.txt)"
# CSV: the storage columns after the others
"$FORTSTAT" --alloc -x x.txt --format=csv -o r.csv "$BIN/allocs-static-O2" >/dev/null 2>&1
head -1 r.csv | grep -q ',calls_lower_bound,allocs,bytes,frees,allocs_incl,bytes_incl,frees_incl$' ||
	fail "CSV head: $(head -1 r.csv)"
grep -q '^outer,1,.*,1,50,1,4,350,1$' r.csv || fail "CSV: outer's row: $(grep '^outer,' r.csv)"
# callgrind: Allocs and Bytes are events, each routine's own cost after its calls
"$FORTSTAT" --alloc -x x.txt --format=callgrind -o r.cg "$BIN/allocs-static-O2" >/dev/null 2>&1
grep -q '^events: us calls Allocs Bytes$' r.cg || fail "callgrind: no Allocs Bytes events"
grep -A1 '^fn=peak_here$' r.cg | grep -Eq '^[0-9]+ [0-9]+ 1 1 1000000$' ||
	fail "callgrind: peak_here's cost: $(grep -A1 '^fn=peak_here$' r.cg)"
# pprof: alloc_objects and alloc_space, per calling context (go tool pprof, when installed)
GO=$(command -v /usr/bin/go go 2>/dev/null | head -n 1)
if [ -n "$GO" ]; then
	HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof
	export HOME GOCACHE GOPATH PPROF_TMPDIR
	mkdir -p "$HOME"
	"$FORTSTAT" --alloc -x x.txt --format=pprof -o r.pb.gz "$BIN/allocs-static-O2" >/dev/null 2>&1
	"$GO" tool pprof -sample_index=alloc_objects -top -cum -nodecount=100 -nodefraction=0 \
		r.pb.gz >pp.top 2>pp.err || fail "pprof: $(cat pp.err)"
	# flat (its own) and cum (below it too): make_blocks 10 and 10, outer 1 and 4, main 0 and 29
	for w in make_blocks:10:10 outer:1:4 main:0:29 recur:4:4; do
		n=${w%%:*}
		got=$(awk -v n="$n" '$NF == n { print $1 ":" $4 }' pp.top)
		[ "$got" = "${w#*:}" ] || fail "pprof alloc_objects: $n flat:cum $got, expected ${w#*:}"
	done
	"$GO" tool pprof -sample_index=alloc_space -raw r.pb.gz 2>/dev/null | grep -q 'alloc_space/bytes' ||
		fail "pprof: no alloc_space sample type"
fi
# a dynamic program without the C library timed: said in one line, nothing run
"$FORTSTAT" --alloc -o r.txt "$BIN/allocs-O0" >t.out 2>t.err && fail "--alloc without -l libc ran"
grep -q '^fortstat: error: --alloc: malloc is in libc.so.6, not in .*: add -l libc$' t.err ||
	fail "--alloc without -l libc: $(cat t.err)"
# -l without the allocator's library: the run says so at its end
"$FORTSTAT" --alloc -l libgfortran -o r.txt "$BIN/allocs-ftn-O0" >t.out 2>t.err ||
	fail "--alloc -l libgfortran failed: $(cat t.err)"
grep -q '^fortstat: warning: --alloc: no allocator call was seen: malloc is in libc.so.6: add -l libc$' t.err ||
	fail "--alloc -l libgfortran: no warning: $(cat t.err)"
# not with -c: the allocators' returns are needed
"$FORTSTAT" --alloc -c "$BIN/allocs-static-O0" >/dev/null 2>t.err && fail "--alloc -c ran"
finish
