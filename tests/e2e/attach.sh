#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# attach.sh - fortstat -p PID: attach to a running program, time it for
# --duration, until SIGINT or SIGTERM, or until it exits; after a detach the
# program runs on untraced (TracerPid 0) to the same output and exit status
# as a run never traced. Bad -p input: one line each, the right status, the
# target unharmed. ticker calls tick() every 10 ms or so (slower on a
# loaded machine) and prints when: the calls timed are compared with the
# ticks printed in the last N seconds before fortstat returned, N the
# seconds attached, within 15% and 5 calls. The programs run long enough
# for fortstat's calibration on a loaded machine (-c has none). With the
# probes (tests/e2e/probes/attach.sh), nothing of them is left after a
# detach: no shared memory mapped, and the process attached to again and
# again gets them each time (its GS base back to 0).
. "$SRCDIR/tests/lib.sh"

pids=""
# Only our own children are killed when the test ends early.
cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

# start NAME PROG ARGS...: run PROG in the background (its pid in $pid),
# output in NAME.out; and the same untraced alongside, for same_as_untraced.
start() {
	name=$1
	shift
	"$@" >"$name.ref.out" 2>"$name.ref.err" &
	ref=$!
	"$@" >"$name.out" 2>"$name.err" &
	pid=$!
	pids="$pids $pid $ref"
	i=0
	while [ ! -s "$name.out" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || { fail "$name: the program did not start"; return; }
		sleep 0.05
	done
}

# reap NAME: wait for the program started as NAME, its status into NAME.rc
reap() {
	wait "$pid"
	echo $? >"$1.rc"
}

# said PATTERN WHAT: until fortstat's messages (-v, in fs.err) have a line
# matching PATTERN; after 20 s, WHAT fails
said() {
	i=0
	while ! grep -q "$1" fs.err; do
		i=$((i + 1))
		[ $i -lt 400 ] || { fail "$2: $(cat fs.err)"; break; }
		sleep 0.05
	done
}

# attached NAME: until fortstat says it attached
attached() {
	said 'attached to' "$1: fortstat did not attach"
}

# tracer_of PID: its TracerPid; "gone" when the process has ended (the
# shell reaps a background job that ends while it waits for fortstat)
tracer_of() {
	awk '/^TracerPid:/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo gone
}

# clean PID WHAT: nothing of fortstat's is left in the running process PID:
# no shared memory of its (the probes' event memory, shared anonymous memory
# or a memfd, is unmapped at the detach)
clean() {
	grep -q -e 'memfd:fortstat' -e '/dev/zero (deleted)' "/proc/$1/maps" 2>/dev/null &&
		fail "$2: fortstat's shared memory is still mapped: $(grep -e memfd: -e /dev/zero "/proc/$1/maps")"
}

# probed WHAT: fortstat -v (fs.err) timed with probes when they are the
# mechanism: their areas made, no warning (a GS base left set would say one;
# the report's own, on busy's tiny calls, says the times cannot be trusted)
probed() {
	grep 'warning' fs.err | grep -v "warning: .* % of the program's time" >warn.txt &&
		fail "$1: $(cat warn.txt)"
	[ "$MECH" = probes ] || return 0
	grep -q 'in-process probes: areas at' fs.err || fail "$1: not timed with probes: $(cat fs.err)"
}

# now: seconds since boot (CLOCK_BOOTTIME, as ticker prints them)
now() {
	cut -d' ' -f1 /proc/uptime
}

# ticks FILE SECONDS END: ticks printed in FILE in the SECONDS before END
ticks() {
	awk -v s="$2" -v e="$3" '$6 >= e - s - 0.02 && $6 <= e { n++ } END { print n + 0 }' "$1"
}

# near NAME GOT WANT: GOT within 15% and 5 of WANT
near() {
	awk -v g="$2" -v w="$3" 'BEGIN { d = g - w; if (d < 0) d = -d; exit !(g != "" && d <= 0.15 * w + 5) }' ||
		fail "$1: $2 calls, expected about $3"
}

# seconds FILE: the N of the table header's "attached to PID (PROG), N s"
seconds() {
	sed -n 's/^fortstat: attached to [0-9]* (.*), \([0-9.]*\) s, .*/\1/p' "$1"
}

# same_as_untraced NAME:
# status are those of the run never traced that start began alongside
same_as_untraced() {
	wait "$ref"
	echo $? >"$1.ref.rc"
	sed 's/ at .*//' "$1.ref.out" | sort >ref.sorted
	sed 's/ at .*//' "$1.out" | sort >"$1.sorted"
	cmp -s ref.sorted "$1.sorted" || fail "$1: the program's output differs from an untraced run's"
	cmp -s "$1.ref.rc" "$1.rc" || fail "$1: exit status $(cat "$1.rc"), $(cat "$1.ref.rc") untraced"
	cmp -s "$1.ref.err" "$1.err" || fail "$1: the program's stderr differs"
	[ "$(wc -l <"$1.out")" -gt 100 ] || fail "$1: the program's output is short"
}

# --duration=1, at -O0 and -O2: about 100 calls; then untraced, and its full output.
for opt in O0 O2; do
	prog=$BIN/ticker-$opt
	start d$opt "$prog" 600
	"$FORTSTAT" -v -p "$pid" --duration=1 --format=csv -o r.csv >fs.out 2>fs.err
	rc=$?
	end=$(now)
	[ "$rc" = 0 ] || fail "-p --duration=1 ($opt): fortstat exited $rc: $(cat fs.err) (the program: $(cat d$opt.err))"
	[ "$(tracer_of "$pid")" = 0 ] || fail "-p ($opt): still traced after the detach (TracerPid: $(tracer_of "$pid"))"
	clean "$pid" "-p --duration=1 ($opt)"
	probed "-p --duration=1 ($opt)"
	want=$(ticks d$opt.out 1 "$end")
	t=$(calls tick)
	near "tick ($opt, 1 s)" "$t" "$want"
	near "pause10 ($opt, 1 s)" "$(calls pause10)" "$want"
	# each tick calls pause10 once: but for the calls open at the attach and the detach
	awk -v t="$t" -v p="$(calls pause10)" 'BEGIN { d = p - t; exit !(t > 0 && d >= -1 && d <= 1) }' ||
		fail "-p ($opt): tick $t, pause10 $(calls pause10)"
	reap d$opt
	same_as_untraced d$opt
	[ -s fs.out ] && fail "-p ($opt): fortstat wrote to standard output"
done

# The table's header and notes.
prog=$BIN/ticker-O0
start tab "$prog" 300
"$FORTSTAT" -c -p "$pid" --duration=0.5 -o rep.txt 2>fs.err
rc=$?
[ "$rc" = 0 ] || fail "table: fortstat exited $rc"
grep -q "^fortstat: attached to $pid ($prog), 0\.[4-9] s, count only\$" rep.txt ||
	fail "table: no 'attached to' header: $(head -n 3 rep.txt)"
grep -q '^fortstat: detached after --duration=0.5: the program runs on untraced$' rep.txt ||
	fail "table: no note of the detach"
grep -q '^fortstat: active at attach (those calls are not timed): .*tick.*main' rep.txt ||
	fail "table: the routines active at attach are not named: $(head -n 4 rep.txt)"
reap tab
same_as_untraced tab

# JSON says it was attached, and by which mechanism: the probes record the
# calls in process (events read), the traps stop at each. No warning.
start js "$prog" 300
"$FORTSTAT" -p "$pid" --duration=0.3 --format=json -o r.json 2>fs.err
json_valid r.json
grep -q "\"attached\": {\"pid\": $pid, \"detached\": true" r.json || fail "json: not said attached"
[ -s fs.err ] && fail "json: fortstat said: $(cat fs.err)"
if [ "$MECH" = probes ]; then
	python3 -c 'import json,sys; d=json.load(open("r.json")); sys.exit(not (d["mechanism"] == "probes" and d["probe_events"] > 0))' ||
		fail "-p: probes: $(grep -E 'mechanism|probe_events' r.json | tr -d '\n')"
else
	grep -q '"mechanism": "traps"' r.json || fail "-p --traps: $(grep mechanism r.json)"
fi
reap js
same_as_untraced js

# Under a seccomp filter (one that allows everything, set by python3 before
# it execs the program), fortstat reads the filter: it lets the system calls
# that make the probes' memory through, and the probes time it, without a
# warning (tests/e2e/probes/seccomp.sh: the filters of containers). Not
# root, fortstat cannot read it: the traps, and a warning says why.
if [ "$MECH" = probes ] && command -v python3 >/dev/null; then
	cat >seccomp.py <<'EOF'
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class F(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint)]
class P(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(F))]
allow = (F * 1)(F(0x06, 0, 0, 0x7fff0000))  # BPF_RET|BPF_K, SECCOMP_RET_ALLOW
prog = P(1, allow)
# PR_SET_NO_NEW_PRIVS, then PR_SET_SECCOMP with SECCOMP_MODE_FILTER
if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.byref(prog), 0, 0):
    sys.exit(125)
os.execv(sys.argv[1], sys.argv[1:])
EOF
	start sec python3 seccomp.py "$prog" 300
	if grep -q '^Seccomp:.*2' "/proc/$pid/status"; then
		"$FORTSTAT" -p "$pid" --duration=0.3 --format=json -o r.json 2>fs.err
		rc=$?
		json_valid r.json
		[ "$rc" = 0 ] || fail "seccomp: fortstat exited $rc: $(cat fs.err)"
		if [ "$(id -u)" = 0 ]; then
			[ -s fs.err ] && fail "seccomp: fortstat said: $(cat fs.err)"
			grep -q '"mechanism": "probes"' r.json || fail "seccomp: $(grep mechanism r.json)"
		else # without CAP_SYS_ADMIN the filter cannot be read: the traps, and why
			grep -q "^fortstat: warning: --probes: -p $pid: its seccomp filter cannot be read" fs.err ||
				fail "seccomp: no warning: $(cat fs.err)"
			grep -q '"mechanism": "traps"' r.json || fail "seccomp: $(grep mechanism r.json)"
		fi
		clean "$pid" seccomp
	else
		echo "note: no seccomp filter could be set: not tried"
	fi
	reap sec
	same_as_untraced sec
fi

# Until SIGINT to fortstat: the calls match the seconds attached.
start int "$prog" 600
"$FORTSTAT" -v -p "$pid" -o rep.txt >fs.out 2>fs.err &
fs=$!
pids="$pids $fs"
attached SIGINT
sleep 1
kill -INT "$fs"
wait "$fs"
rc=$?
end=$(now)
[ "$rc" = 0 ] || fail "SIGINT: fortstat exited $rc, expected 0"
[ "$(tracer_of "$pid")" = 0 ] || fail "SIGINT: still traced after the detach (TracerPid: $(tracer_of "$pid"))"
grep -q '^fortstat: detached on SIGINT: the program runs on untraced$' rep.txt ||
	fail "SIGINT: no note: $(head -n 3 rep.txt)"
sec=$(seconds rep.txt)
got=$(awk '$1 == "tick" { print $2 }' rep.txt)
near "SIGINT: tick (${sec} s)" "$got" "$(ticks int.out "$sec" "$end")"
reap int
same_as_untraced int

# SIGUSR1 to an attached fortstat writes a snapshot (running, the ticks so
# far) into -o; SIGTERM detaches, and the final report replaces it.
start term "$prog" 300
"$FORTSTAT" -c -v -p "$pid" -o rep.txt 2>fs.err &
fs=$!
pids="$pids $fs"
attached SIGTERM
sleep 0.7
kill -USR1 "$fs"
i=0
while ! grep -q 'snapshot after' rep.txt 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 200 ] || { fail "SIGUSR1: no snapshot: $(cat fs.err)"; break; }
	sleep 0.05
done
grep -q "^fortstat: attached to $pid (.*), [0-9.]* s, running, count only\$" rep.txt ||
	fail "SIGUSR1: snapshot header: $(head -n 1 rep.txt)"
got=$(awk '$1 == "tick" { print $2 }' rep.txt)
[ "${got:-0}" -ge 30 ] && [ "${got:-0}" -le 400 ] ||
	fail "SIGUSR1: tick called ${got:-never} times in the snapshot (0.7 s at 100 a second)"
kill -TERM "$fs"
wait "$fs"
rc=$?
[ "$rc" = 0 ] || fail "SIGTERM: fortstat exited $rc, expected 0"
grep -q '^fortstat: detached on SIGTERM' rep.txt || fail "SIGTERM: no note: $(head -n 3 rep.txt)"
grep -q 'snapshot after' rep.txt && fail "SIGTERM: the snapshot was not replaced by the report"
reap term
same_as_untraced term

# Until the program exits: fortstat exits with its status (3); calls match
# the seconds attached.
start ex "$prog" 200
"$FORTSTAT" -c -p "$pid" -o rep.txt 2>fs.err
rc=$?
# attached to the end: the window ends at the program's last tick (under a
# CPU hog fortstat's own end came 2 s after it, and the window held none)
end=$(awk '$3 == "tick" { t = $6 } END { print t + 0.001 }' ex.out)
[ "$rc" = 3 ] || fail "to the end: fortstat exited $rc, expected the program's 3"
grep -q "^fortstat: attached to $pid (.*), [0-9.]* s, exit status 3, count only\$" rep.txt ||
	fail "to the end: header: $(head -n 1 rep.txt)"
sec=$(seconds rep.txt)
got=$(awk '$1 == "tick" { print $2 }' rep.txt)
near "to the end: tick (${sec} s)" "$got" "$(ticks ex.out "$sec" "$end")"
# every tick entered after the attach called pause10; the one open then may too
p=$(awk '$1 == "pause10" { print $2 }' rep.txt)
awk -v t="$got" -v p="$p" 'BEGIN { d = p - t; exit !(t > 0 && d >= 0 && d <= 1) }' ||
	fail "to the end: tick $got, pause10 $p"
reap ex
same_as_untraced ex

# Three threads, -c and --threads: every thread is seized and let go. The
# program runs 6 s or more: under a CPU hog fortstat's start and its second
# attached took more than the 3 s of 300 ticks, and the program had ended
# (reaped: "still traced") before fortstat returned.
start thr "$prog" 600 3
"$FORTSTAT" -p "$pid" --duration=1 -c --threads --format=csv -o r.csv 2>fs.err
rc=$?
end=$(now)
[ "$rc" = 0 ] || fail "threads: fortstat exited $rc: $(cat fs.err)"
[ "$(tracer_of "$pid")" = 0 ] || fail "threads: still traced after the detach (TracerPid: $(tracer_of "$pid"))"
near "threads: tick (3 threads, 1 s)" "$(calls tick)" "$(ticks thr.out 1 "$end")"
reap thr
same_as_untraced thr

# -l: the libraries already loaded are patched at the attach, and let go.
# 1,500 ticks (15 s): in CI's distcheck, beside make -j2's other tests,
# reading and patching libc at the attach, the second and the detach
# outlasted 600 (6 s), and the program had ended (TracerPid: gone).
start lib "$prog" 1500 2
"$FORTSTAT" -p "$pid" -l libc --duration=1 --format=csv -o r.csv 2>fs.err
rc=$?
[ "$rc" = 0 ] || fail "-l libc: fortstat exited $rc: $(cat fs.err)"
[ "$(tracer_of "$pid")" = 0 ] || fail "-l libc: still traced after the detach (TracerPid: $(tracer_of "$pid"))"
# each tick prints once: printf's calls are tick's, but for the one each of
# the 2 threads had open at the attach or the detach (against the ticks of
# the last second before fortstat ended, the count missed by a third under
# load: the detach, not the window, took that long)
awk -v t="$(calls tick)" -v p="$(calls libc.so.6:printf)" \
	'BEGIN { d = p - t; exit !(t > 0 && d >= -2 && d <= 2) }' ||
	fail "-l libc: printf $(calls libc.so.6:printf) calls, tick $(calls tick) (2 threads, 1 s)"
reap lib
same_as_untraced lib

# A child forked while attached, and let go (no -f), keeps nothing of
# fortstat's either: the shell's subshells (timed through -l libc: sh has no
# symbols of its own) sleep a while, long enough to look at one.
sh=$(command -v sh)
rm -f stop
"$sh" -c 'while [ ! -e stop ]; do (sleep 0.3; echo x); done' >fk.out 2>&1 &
spid=$!
pids="$pids $spid"
# attach once it runs sh: the test's own shell forks it and then execs sh,
# and an attach before that exec is refused ("it exec'ed another program
# while fortstat attached": seen under load in a package build)
i=0
until [ -s fk.out ]; do
	i=$((i + 1))
	[ $i -lt 400 ] || { fail "fork: the shell printed nothing in 20 s"; break; }
	sleep 0.05
done
"$FORTSTAT" -v -p "$spid" -l libc --duration=1.5 --format=csv -o r.csv 2>fs.err &
fs=$!
pids="$pids $fs"
said '^fortstat: forked child' "fork: no child forked while attached"
c=$(sed -n 's/^fortstat: forked child \([0-9]*\): .*/\1/p' fs.err | head -n 1)
[ -n "$c" ] && clean "$c" "a forked child"
wait "$fs"
rc=$?
[ "$rc" = 0 ] || fail "fork: fortstat exited $rc: $(cat fs.err)"
clean "$spid" "the shell"
touch stop
wait "$spid"
rc=$?
[ "$rc" = 0 ] && [ -s fk.out ] || fail "fork: the shell ended with $rc: $(cat fk.out)"
[ "$(wc -l <r.csv)" -gt 1 ] || fail "fork: nothing timed: $(cat r.csv)"

# Hot calls in two threads, attached to and let go three times: every
# detach lands in the middle of calls (threads in stubs, returns hooked),
# and the program checks every result. leaf is called twice a mid, mid ten
# times a top: exactly, but for the calls open at the attach and detach.
for opt in O0 O2; do
	rm -f stop
	"$BIN/busy-$opt" 2 stop >busy.out 2>busy.err &
	bpid=$!
	pids="$pids $bpid"
	sleep 0.2
	for k in 1 2 3; do
		# the second time no routine is throttled: with the probes, the
		# detach lands in their stubs and trampoline, not the count path
		thr=
		[ $k = 2 ] && thr=--no-throttle
		"$FORTSTAT" -v $thr -p "$bpid" --duration=0.3 --format=csv -o r.csv 2>fs.err
		rc=$?
		[ "$rc" = 0 ] || { fail "busy ($opt) attach $k: fortstat exited $rc: $(cat fs.err)"; break; }
		[ "$(tracer_of "$bpid")" = 0 ] || fail "busy ($opt) attach $k: still traced (TracerPid: $(tracer_of "$bpid"))"
		clean "$bpid" "busy ($opt) attach $k"
		# again and again: each detach left the threads' GS bases as they were (0)
		probed "busy ($opt) attach $k"
		l=$(calls leaf)
		m=$(calls mid)
		t=$(calls top)
		awk -v l="$l" -v m="$m" -v t="$t" 'BEGIN {
			d = l - 2 * m; e = m - 10 * t
			exit !(t > 0 && d >= -4 && d <= 4 && e >= -20 && e <= 20) }' ||
			fail "busy ($opt) attach $k: leaf $l, mid $m, top $t"
	done
	touch stop
	wait "$bpid"
	rc=$?
	[ "$rc" = 0 ] && [ "$(cat busy.out)" = ok ] ||
		fail "busy ($opt): the program ended with $rc: $(cat busy.out busy.err)"
done

# The same with a signal handler that runs every 200 us in either thread:
# a detach finds it interrupting a stub or the trampoline, lets the threads
# go a moment (their signals held back) until it has returned, and the
# program runs on to its end, every result checked.
rm -f stop
"$BIN/busy-O2" 2 stop signals >busy.out 2>busy.err &
bpid=$!
pids="$pids $bpid"
sleep 0.2
for k in 1 2 3 4; do
	thr=
	[ $k = 2 ] || [ $k = 4 ] && thr=--no-throttle
	"$FORTSTAT" -v $thr -p "$bpid" --duration=0.2 --format=csv -o r.csv 2>fs.err
	rc=$?
	[ "$rc" = 0 ] || { fail "busy signals attach $k: fortstat exited $rc: $(cat fs.err)"; break; }
	kill -0 "$bpid" 2>/dev/null || { fail "busy signals attach $k: the program died"; break; }
	clean "$bpid" "busy signals attach $k"
	probed "busy signals attach $k"
	[ "$(calls top)" -gt 0 ] 2>/dev/null || fail "busy signals attach $k: top not timed"
done
sleep 0.2
touch stop
wait "$bpid"
rc=$?
[ "$rc" = 0 ] && [ "$(cat busy.out)" = ok ] ||
	fail "busy signals: the program ended with $rc: $(cat busy.out busy.err)"

# A signal handler that interrupted its thread just as a return reached
# its hook (the trampoline, the return trap) runs nearly all the time
# (busy's "returns": late_ret's ud2, whose SIGILL handler makes its `ret`
# and spins 20 ms): the PC it resumes at is fortstat's code, not a hooked
# return address; the detach lets it return first, and the program runs
# on (it died of SIGSEGV, or SIGTRAP with the traps, just after).
rm -f stop
"$BIN/busy-O2" 1 stop returns >busy.out 2>busy.err &
bpid=$!
pids="$pids $bpid"
sleep 0.2
for k in 1 2 3; do
	"$FORTSTAT" -v -p "$bpid" --duration=0.2 --format=csv -o r.csv 2>fs.err
	rc=$?
	[ "$rc" = 0 ] || { fail "busy returns attach $k: fortstat exited $rc: $(cat fs.err)"; break; }
	sleep 0.1 # the handler's 20 ms and more
	kill -0 "$bpid" 2>/dev/null || { fail "busy returns attach $k: the program died"; break; }
	clean "$bpid" "busy returns attach $k"
	probed "busy returns attach $k"
	[ "$(calls late_ret)" -gt 0 ] 2>/dev/null || fail "busy returns attach $k: late_ret not timed"
done
touch stop
wait "$bpid"
rc=$?
[ "$rc" = 0 ] && [ "$(cat busy.out)" = ok ] ||
	fail "busy returns: the program ended with $rc: $(cat busy.out busy.err)"

# ---- bad input: one line, the status, the target unharmed ----

# bad NAME RC PATTERN FORTSTAT-ARGS...: fortstat fails with status RC and one line matching PATTERN
bad() {
	name=$1
	want=$2
	pat=$3
	shift 3
	"$FORTSTAT" "$@" >bad.out 2>bad.err
	rc=$?
	[ "$rc" = "$want" ] || fail "$name: exit status $rc, expected $want: $(cat bad.err)"
	[ "$(wc -l <bad.err)" = 1 ] || fail "$name: not one line: $(cat bad.err)"
	grep -q "$pat" bad.err || fail "$name: message: $(cat bad.err)"
}

true &
gone=$!
wait "$gone"
bad "no such process" 127 "^fortstat: error: -p $gone: no such process\$" -p "$gone"
bad "not a pid" 125 "^fortstat: error: -p needs a process id: 'abc'" -p abc
bad "PROGRAM too" 125 "no PROGRAM with it" -p 1 "$prog"
bad "--duration alone" 125 "^fortstat: error: --duration needs -p PID" --duration=1 "$prog"
bad "parent" 126 "^fortstat: error: -p $$ (.*): that is fortstat's parent, which waits for it\$" -p $$
sh -c 'exec "$0" -p $$' "$FORTSTAT" >bad.out 2>bad.err
rc=$?
[ "$rc" = 126 ] || fail "itself: exit status $rc"
grep -q '^fortstat: error: -p [0-9]*: that is fortstat itself$' bad.err || fail "itself: $(cat bad.err)"

# A zombie: a child that exited, of a parent that never reaps it.
command -v perl >/dev/null || skip "perl is needed for a zombie"
perl -e '$p = fork; exit 0 unless $p; open F, ">zombie.pid"; print F "$p\n"; close F; sleep 5' &
zparent=$!
pids="$pids $zparent"
i=0
while ! grep -q ') Z' "/proc/$(cat zombie.pid 2>/dev/null || echo 0)/stat" 2>/dev/null; do
	i=$((i + 1))
	[ $i -lt 100 ] || break
	sleep 0.05
done
z=$(cat zombie.pid)
bad "zombie" 126 "^fortstat: error: -p $z (perl): a zombie: it has exited and waits for its parent to reap it\$" -p "$z"
kill "$zparent"
wait "$zparent"

# Already traced: strace holds it.
if command -v strace >/dev/null; then
	start st "$prog" 300
	strace -o /dev/null -p "$pid" 2>strace.err &
	str=$!
	pids="$pids $str"
	i=0
	while [ "$(tracer_of "$pid")" != "$str" ]; do
		i=$((i + 1))
		[ $i -lt 100 ] || break
		sleep 0.05
	done
	bad "traced" 126 "^fortstat: error: -p $pid (ticker-O0): already traced by process $str (strace): cannot time it\$" -p "$pid"
	kill -TERM "$str"
	wait "$str"
	reap st
	same_as_untraced st
else
	echo "note: strace is not installed: an already traced process is not tried"
fi

# Stripped, without -l: nothing of its own to time.
cp "$prog" ./ticker-stripped
strip ./ticker-stripped
start strip ./ticker-stripped 100
bad "stripped" 126 "^fortstat: error: -p $pid: .*ticker-stripped has no function symbols (stripped?): time its libraries' routines with -l, e.g. fortstat -p $pid -l libc\$" -p "$pid"
[ "$(tracer_of "$pid")" = 0 ] || fail "stripped: left traced"
reap strip
same_as_untraced strip

# A 32-bit process (fixtures/sleep32.s, when binutils could make one).
if [ -x "$BIN/sleep32" ]; then
	"$BIN/sleep32" &
	pid=$!
	pids="$pids $pid"
	i=0
	while [ "$(readlink "/proc/$pid/exe")" = "$(readlink /proc/$$/exe)" ] && [ $i -lt 100 ]; do
		i=$((i + 1))
		sleep 0.05 # until the child shell has exec'ed it
	done
	bad "32-bit" 126 "^fortstat: error: -p $pid (sleep32): a 32-bit process (i386): fortstat times x86-64 programs only\$" -p "$pid"
	[ "$(tracer_of "$pid")" = 0 ] || fail "32-bit: left traced"
	kill "$pid"
	wait "$pid" 2>/dev/null
else
	echo "note: no 32-bit fixture (as --32): a 32-bit process is not tried"
fi

# Another user's process: fortstat run as nobody may not trace it.
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	start user "$prog" 100
	setpriv --reuid=65534 --regid=65534 --clear-groups "$FORTSTAT" -p "$pid" >bad.out 2>bad.err
	rc=$?
	[ "$rc" = 126 ] || fail "other user: exit status $rc: $(cat bad.err)"
	grep -q "^fortstat: error: -p $pid (ticker-O0): a process of user 0: " bad.err ||
		fail "other user: message: $(cat bad.err)"
	reap user
	same_as_untraced user
fi

finish
