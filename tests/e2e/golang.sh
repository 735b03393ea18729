#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# golang.sh - a Go program (Debian's golang-go) with goroutines, stacks that
# grow (runtime.morestack re-enters the growing function), panic/recover
# through deferred calls (a nil pointer's SIGSEGV too), runtime.Goexit: the
# same output and exit status under fortstat, by default, with -c and with
# -n on the recursive function, with one and with several Ps; counts
# exactly the program's own (with the probes, through a small ring and
# throttled too; in process: the probes' events, few traps); the frames a
# panic or runtime.Goexit unwound
# closed, not INCOMPLETE; a routine that computes for a known time timed as
# the program times it; attached to (-p) and let go, it runs on unharmed.
. "$SRCDIR/tests/lib.sh"
command -v go >/dev/null 2>&1 || [ -x /usr/bin/go ] || skip "go is not installed"
[ -x "$BIN/gowork-O2" ] && [ -x "$BIN/gowork-O0" ] || { fail "no Go fixtures, though go is installed"; finish; }

# counts_ok PROG NAMES: the counts in r.csv are those the program printed.
counts_ok() {
	line=$(grep '^counts ' t.out)
	[ -n "$line" ] || { fail "$1: no counts printed"; return; }
	for kv in ${line#counts }; do
		k=${kv%%=*}
		case " $2 " in *" $k "*) ;; *) continue ;; esac
		expect "$1" "main.$k" "${kv#*=}"
	done
}

# close_to A B REL ABS: |A - B| <= REL*B + ABS (seconds).
close_to() {
	awk -v a="$1" -v b="$2" -v r="$3" -v s="$4" \
		'BEGIN { d = a - b; if (d < 0) d = -d; exit !(a != "" && d <= r * b + s) }'
}

all="fib deep thrower safe worker spin leaf quitter deref"
for p in "$BIN/gowork-O2" "$BIN/gowork-O0"; do
	for procs in 1 4; do
		export GOMAXPROCS=$procs
		traced -- "$p"
		[ "$(cat t.rc)" = 3 ] || fail "$p: exit status $(cat t.rc), expected 3"
		grep -q '^safe -10 0$' t.out || fail "$p: recover went wrong: $(cat t.out)"
		grep -q '^guarded -1 6$' t.out || fail "$p: a nil pointer's panic went wrong: $(cat t.out)"
		counts_ok "$p (GOMAXPROCS=$procs)" "$all"
		for r in main.fib main.deep main.thrower main.safe main.worker main.leaf main.spin \
			main.quitter main.deref main.guarded; do
			[ "$(incomplete "$r")" = 0 ] || fail "$p: $r INCOMPLETE (GOMAXPROCS=$procs)"
		done
		# main.main is the mainline (it ends in os.Exit: INCOMPLETE).
		[ "$(field main.main 8)" = 1 ] || fail "$p: main.main is not the mainline"
		grep -q 'unknown pc\|unexpected return pc\|fatal error' t.err &&
			fail "$p: the Go runtime complained: $(head -n 3 t.err)"

		traced -c -- "$p"
		counts_ok "$p -c (GOMAXPROCS=$procs)" "$all"
	done
	unset GOMAXPROCS

	# -n on the recursive function alone, timed and counted.
	echo main.fib >fib.names
	traced -n fib.names -- "$p"
	counts_ok "$p -n" fib
	absent "$p -n" main.deep main.thrower
	traced -c -n fib.names -- "$p"
	counts_ok "$p -c -n" fib

	# Times: spin computes and calls nothing; the program measures it too
	# (its wall clock and the process's CPU time, written to spin.ns).
	traced --clock=wall -- "$p" "$T/spin.ns"
	want=$(awk '{ printf "%.9f", $1 / 1e9 }' spin.ns)
	got=$(self main.spin)
	close_to "$got" "$want" 0.1 0.02 ||
		fail "$p: spin's wall time ${got:-?} s, the program measured $want s"
	traced -- "$p" "$T/spin.ns"
	want=$(awk '{ printf "%.9f", $2 / 1e9 }' spin.ns)
	got=$(self main.spin)
	# Its CPU time: the process's (getrusage) while it ran alone.
	close_to "$got" "$want" 0.1 0.01 ||
		fail "$p: spin's CPU time ${got:-?} s, the program measured $want s"
	# The recursive functions' times are small but there (FORTSTAT's switched clocks).
	[ -n "$(self main.fib)" ] || fail "$p: no time for main.fib"

	# -p: attach to it running, for a second, and let it go: it ends as untraced.
	# (att.out of the -O0 round must not let the -O2 round attach to the shell
	# that has not exec'ed the program yet.)
	rm -f att.out att.err
	"$p" attach >att.out 2>att.err &
	pid=$!
	i=0
	while [ ! -s att.out ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.05
	done
	"$FORTSTAT" -p "$pid" --duration 1 --format=csv -o r.csv >a.out 2>a.err ||
		fail "$p -p: fortstat failed: $(cat a.err)"
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] || fail "$p -p: exit status $rc after the detach"
	[ "$(cat att.out)" = "attach ready
attach done" ] || fail "$p -p: output $(cat att.out) $(head -n 3 att.err)"
	[ -n "$(calls main.fib)" ] || fail "$p -p: main.fib not timed while attached"
done
# The mechanism: a launched Go program takes the in-process probes (the
# default), at each timed routine's entry and at its own rets; --traps
# (this test's traps run) the int3s throughout.
if [ "$MECH" = probes ]; then
	for p in "$BIN/gowork-O2" "$BIN/gowork-O0"; do
		# (calibrated afresh each time: the Go figures are said as they are measured)
		env -u FORTSTAT_MECHANISM FORTSTAT_CALIB_CACHE=0 "$FORTSTAT" -v --format=json -o d.json "$p" \
			>d.out 2>d.err
		[ $? = 3 ] || fail "$p, default mechanism: exit status not 3: $(head -n 3 d.err)"
		json_valid d.json
		grep -q '"mechanism": "probes"' d.json || fail "$p, default mechanism: $(grep mechanism d.json)"
		grep -q 'in-process exit probes at each timed routine' d.err ||
			fail "$p, -v: the probes not said: $(head -n 5 d.err)"
		# the probes' cost removed is measured through Go's own probes
		grep -q "calibration of Go's probes: f1 0\.0" d.err ||
			fail "$p, -v: Go's probes not calibrated: $(grep calibration d.err)"
		grep 'a trap at each call\|its entry and exits trap' d.err | grep -q ' main\.' &&
			fail "$p: a main. routine traps: $(grep ' main\.' d.err | head -n 3)"
		# every call of fib and deep is an entry and an exit in the rings
		line=$(grep '^counts ' d.out)
		want=$(echo "$line" | tr ' ' '\n' | awk -F= '$1 == "fib" || $1 == "deep" { n += 2 * $2 } END { print n + 0 }')
		events=$(sed -n 's/.*"probe_events": \([0-9]*\).*/\1/p' d.json)
		traps=$(sed -n 's/.*"trap_calls": \([0-9]*\).*/\1/p' d.json)
		[ "${events:-0}" -ge "$want" ] && [ "$want" -gt 20000 ] ||
			fail "$p: ${events:-no} probe events, fib and deep alone made $want"
		[ "${traps:-999}" -lt 50 ] || fail "$p: ${traps:-?} calls took the traps"
		# a ring of 64 events: full at every few calls (the thread's SIGURG stop), counts exact
		GOMAXPROCS=4 FORTSTAT_PROBE_RING=64 traced -- "$p"
		counts_ok "$p, a small ring" "$all"
		# fib, deep and safe on the traps (entries and rets), the rest in process: one run mixes both
		GOMAXPROCS=4 FORTSTAT_TRAP_ROUTINES=main.fib,main.deep,main.safe traced -v -- "$p"
		counts_ok "$p, three routines on the traps" "$all"
		grep -q 'main.deep: a trap at each call' t.err || fail "$p: main.deep not on the traps"
		for r in main.fib main.deep main.thrower main.safe main.worker main.leaf; do
			[ "$(incomplete "$r")" = 0 ] || fail "$p: $r INCOMPLETE (mixed)"
		done
		# throttled (fib and deep: their calls counted in process), counts exact still
		GOMAXPROCS=4 traced --throttle=100,1000 -v -- "$p"
		grep -q 'main.fib: throttled after' t.err || fail "$p: main.fib not throttled"
		counts_ok "$p --throttle" "$all"
	done
	"$FORTSTAT" --probes -c -o /dev/null "$BIN/gowork-O2" >/dev/null 2>p.err
	grep -q -- '--probes' p.err && fail "Go, --probes: a warning: $(cat p.err)"
else
	"$FORTSTAT" -v --format=json -o d.json "$BIN/gowork-O2" >/dev/null 2>d.err
	grep -q '"mechanism": "traps"' d.json || fail "Go, --traps: $(grep mechanism d.json)"
	grep -q 'exit probes (traps) at each timed routine' d.err ||
		fail "Go, --traps, -v: the traps not said: $(head -n 5 d.err)"
fi
finish
