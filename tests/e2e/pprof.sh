#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# pprof.sh - --format=pprof read by go tool pprof: exact calls per routine
# (-top) and per calling context (-traces) for a C program, its threads
# (--threads: labelled), its processes (-f: labelled by pid), a Go
# program (the counts it prints itself) and a --merge of two runs; the
# sample types each run has (calls, cpu, wall; calls alone with -c); never
# gzip to a terminal.
. "$SRCDIR/tests/lib.sh"
GO=$(command -v /usr/bin/go go 2>/dev/null | head -n 1)
[ -n "$GO" ] || skip "go is not installed"
# go tool pprof keeps a cache and settings under HOME: the test's own
HOME=$T/home GOCACHE=$T/gocache GOPATH=$T/gopath PPROF_TMPDIR=$T/pprof
export HOME GOCACHE GOPATH PPROF_TMPDIR
mkdir -p "$HOME"

# top FILE [OPTS...]: "name flat" lines of go tool pprof -top on calls, sorted.
top() {
	f=$1
	shift
	"$GO" tool pprof -sample_index=calls -top -nodecount=100000 -nodefraction=0 \
		-edgefraction=0 "$@" "$f" 2>pp.err >pp.top || { fail "pprof -top $f: $(cat pp.err)"; return; }
	awk 'go { print $6, $1 } /^ *flat  *flat%/ { go = 1 }' pp.top | sort
}

# traces FILE: "[label] calls outer;...;inner" lines of go tool pprof -traces, sorted.
traces() {
	"$GO" tool pprof -sample_index=calls -traces "$1" 2>pp.err >pp.traces ||
		{ fail "pprof -traces $1: $(cat pp.err)"; return; }
	awk '
	/^-+\+-+$/ { if (v != "") print lab v, s; go = 1; v = ""; s = ""; lab = ""; next }
	!go { next }
	v == "" && $1 ~ /:$/ { lab = $2 " "; next }
	v == "" { v = $1; s = $2; next }
	{ s = $1 ";" s }' pp.traces | sort
}

# types FILE: the sample types as go tool pprof -raw lists them ("calls/count cpu/nanoseconds[dflt] ...").
types() {
	"$GO" tool pprof -raw "$1" 2>/dev/null | sed -n '/^Samples:/{n;p;q}' | sed 's/  */ /g; s/^ //; s/ $//'
}

# same FILE WANT WHAT: FILE's lines are WANT's (printf'ed lines).
same() {
	printf '%s\n' $2 | tr '=' ' ' | sort >want.txt
	cmp -s want.txt "$1" || fail "$3: $(tr '\n' ',' <"$1"), expected $(tr '\n' ',' <want.txt)"
}

# (-O0 last: its file is read again below)
for opt in O2 O0; do
	p=$BIN/chain-$opt
	"$FORTSTAT" --format=pprof -o r.pb.gz "$p" >/dev/null 2>t.err </dev/null ||
		fail "$p: fortstat failed: $(cat t.err)"
	[ "$(head -c 2 r.pb.gz | od -An -tx1 | tr -d ' ')" = 1f8b ] || fail "$p: not gzip"
	top r.pb.gz >got.txt
	same got.txt "leaf=3500 work=1000 twice=500 main=1" "$p: pprof -top"
	[ "$(types r.pb.gz)" = "calls/count cpu/nanoseconds[dflt] wall/nanoseconds" ] ||
		fail "$p: sample types $(types r.pb.gz)"
done

# Each calling context a sample, exact (at -O0: no tail call).
p=$BIN/chain-O0
traces r.pb.gz >got.txt
printf '%s\n' "1 main" "1000 main;work" "3000 main;work;leaf" "500 main;work;twice" \
	"500 main;work;twice;leaf" | sort >want.txt
cmp -s want.txt got.txt || fail "$p: pprof -traces: $(tr '\n' ',' <got.txt)"
# Functions with their source file and line (DWARF), in the program's mapping.
"$GO" tool pprof -raw r.pb.gz >raw.txt 2>&1
grep -q ' leaf [^ ]*fixtures/chain\.c:9 s=9$' raw.txt || fail "$p: leaf's file and line: $(grep ' leaf ' raw.txt)"
grep -q "^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x0 $p  *\[FN\]\[FL\]\[LN\]$" raw.txt ||
	fail "$p: the program's mapping: $(sed -n '/^Mappings/,$p' raw.txt | tr '\n' ' ')"

# The wall clock by default with --clock=wall; counts only: calls alone.
"$FORTSTAT" --clock=wall --format=pprof -o w.pb.gz "$p" >/dev/null 2>&1 </dev/null
[ "$(types w.pb.gz)" = "calls/count cpu/nanoseconds wall/nanoseconds[dflt]" ] ||
	fail "$p --clock=wall: sample types $(types w.pb.gz)"
"$FORTSTAT" -c --format=pprof -o c.pb.gz "$p" >/dev/null 2>&1 </dev/null
[ "$(types c.pb.gz)" = "calls/count[dflt]" ] || fail "$p -c: sample types $(types c.pb.gz)"
top c.pb.gz >got.txt
same got.txt "leaf=3500 work=1000 twice=500 main=1" "$p -c: pprof -top"

# A library's routines (-l) in a mapping of their own.
p=$BIN/mathcalls-O0
"$FORTSTAT" -l libm --format=pprof -o l.pb.gz "$p" >/dev/null 2>&1 </dev/null
top l.pb.gz >got.txt
grep -q '^wave 1000$' got.txt && grep -q '^libm[^ ]*:sin 1000$' got.txt ||
	fail "$p -l libm: pprof -top: $(tr '\n' ',' <got.txt)"
"$GO" tool pprof -raw l.pb.gz 2>/dev/null | sed -n '/^Mappings/,$p' >maps.txt
grep -q "^1: .* $p  *\[FN\]" maps.txt && grep -q '^2: .* libm[^ ]*  *\[FN\]' maps.txt ||
	fail "$p -l libm: mappings $(tr '\n' ' ' <maps.txt)"

# --threads: each thread's contexts, labelled with its id (every call timed:
# leaf's 40,000 would be throttled after 10,000).
p=$BIN/threads-O0
"$FORTSTAT" --no-throttle --threads --format=pprof -o t.pb.gz "$p" >/dev/null 2>&1 </dev/null
traces t.pb.gz >got.txt
[ "$(grep -c '^[0-9]* 10000 worker;leaf$' got.txt)" = 4 ] &&
	[ "$(grep -c '^[0-9]* 1 worker$' got.txt)" = 4 ] &&
	[ "$(grep -c '^[0-9]* 1 main$' got.txt)" = 1 ] &&
	[ "$(awk '{ print $1 }' got.txt | sort -u | wc -l)" = 5 ] ||
	fail "$p --threads: pprof -traces: $(tr '\n' ',' <got.txt)"

# -f: the processes in one file, labelled by pid; the counts add up.
p=$BIN/forks-O0
"$FORTSTAT" -f --format=pprof -o f.pb.gz "$p" >/dev/null 2>&1 </dev/null
top f.pb.gz >got.txt
same got.txt "leaf=120 work=3 spawn=1 main=1" "$p -f: pprof -top"
traces f.pb.gz >got.txt
[ "$(awk '{ print $1 }' got.txt | sort -u | wc -l)" = 2 ] &&
	grep -q '^[0-9]* 100 work;leaf$' got.txt && grep -q '^[0-9]* 20 main;work;leaf$' got.txt ||
	fail "$p -f: pprof -traces: $(tr '\n' ',' <got.txt)"

# --merge of two runs: the contexts summed.
p=$BIN/chain-O0
"$FORTSTAT" --format=json -o a.json "$p" >/dev/null 2>&1 </dev/null
"$FORTSTAT" --format=json -o b.json "$p" >/dev/null 2>&1 </dev/null
"$FORTSTAT" --merge --format=pprof -o m.pb.gz a.json b.json 2>t.err || fail "--merge: $(cat t.err)"
top m.pb.gz >got.txt
same got.txt "leaf=7000 work=2000 twice=1000 main=2" "--merge: pprof -top"
traces m.pb.gz >got.txt
printf '%s\n' "2 main" "2000 main;work" "6000 main;work;leaf" "1000 main;work;twice" \
	"1000 main;work;twice;leaf" | sort >want.txt
cmp -s want.txt got.txt || fail "--merge: pprof -traces: $(tr '\n' ',' <got.txt)"
[ "$(types m.pb.gz)" = "calls/count cpu/nanoseconds[dflt]" ] || fail "--merge: sample types $(types m.pb.gz)"
# ... to standard output when it is not a terminal: the same bytes
"$FORTSTAT" --merge --format=pprof a.json b.json >m2.pb.gz 2>t.err || fail "--merge >file: $(cat t.err)"
cmp -s m.pb.gz m2.pb.gz || fail "--merge: standard output differs from -o"

# A Go program: its own counts (it prints them).
if [ -x "$BIN/gowork-O2" ]; then
	p=$BIN/gowork-O2
	"$FORTSTAT" --format=pprof -o g.pb.gz "$p" >g.out 2>g.err </dev/null
	line=$(grep '^counts ' g.out)
	[ -n "$line" ] || fail "$p: no counts printed"
	top g.pb.gz >got.txt
	for kv in ${line#counts }; do
		want="main.${kv%%=*} ${kv#*=}"
		grep -qx "$want" got.txt || fail "$p: pprof -top: $(grep "^main.${kv%%=*} " got.txt), expected $want"
	done
else
	fail "no Go fixture, though go is installed"
fi

# Never gzip to a terminal, nor to standard error (the program's own): one line, no run.
p=$BIN/chain-O0
"$FORTSTAT" --format=pprof "$p" >out.txt 2>err.txt </dev/null
rc=$?
[ "$rc" = 125 ] && [ ! -s out.txt ] && [ "$(wc -l <err.txt)" = 1 ] &&
	grep -q '^fortstat: error: --format=pprof writes gzip data: give -o FILE$' err.txt ||
	fail "--format=pprof without -o: status $rc, $(cat out.txt err.txt)"
if command -v script >/dev/null; then
	script -qec "$FORTSTAT --format=pprof -o /dev/tty $p; echo rc=\$?" /dev/null >tty.txt </dev/null
	tr -d '\r' <tty.txt >tty2.txt
	grep -q '^fortstat: error: -o /dev/tty: a terminal: --format=pprof writes gzip data to a file$' tty2.txt &&
		grep -q '^rc=125$' tty2.txt && [ "$(wc -l <tty2.txt)" = 2 ] ||
		fail "-o /dev/tty: $(cat -v tty.txt)"
	script -qec "$FORTSTAT --merge --format=pprof a.json b.json; echo rc=\$?" /dev/null >tty.txt </dev/null
	tr -d '\r' <tty.txt >tty2.txt
	grep -q '^fortstat: error: --format=pprof writes gzip data: not to a terminal' tty2.txt &&
		grep -q '^rc=125$' tty2.txt && [ "$(wc -l <tty2.txt)" = 2 ] ||
		fail "--merge to a terminal: $(cat -v tty.txt)"
fi
finish
