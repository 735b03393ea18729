#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# edges.sh - what fortstat refuses in one line before the program runs (exit
# 126): a "#!" script (naming the interpreter to time instead), a setuid or
# setgid program when fortstat is not privileged, a program that another
# tracer owns first (strace -f). And programs that use ptrace themselves:
# PTRACE_TRACEME fails with EPERM as under any tracer; a mini debugger traces
# its own fork child to the end. Never a hang: every run is under timeout.
. "$SRCDIR/tests/lib.sh"

# refused RE CMD...: CMD exits 126 with one line on stderr matching RE, and
# the program did not run (no output).
refused() {
	re=$1
	shift
	timeout 60 "$@" >out.txt 2>err.txt </dev/null
	got=$?
	[ "$got" = 126 ] || fail "$*: exit $got, expected 126 ($(cat err.txt))"
	[ "$(wc -l <err.txt)" = 1 ] || fail "$*: expected one line, got: $(cat err.txt)"
	grep -q -- "$re" err.txt || fail "$*: $(cat err.txt)"
	[ ! -s out.txt ] || fail "$*: the program ran: $(cat out.txt)"
}

# within OPTS... -- PROG ARGS...: as traced (lib.sh), each run under
# `timeout 20`: PROG untraced and under fortstat end the same way, in time.
within() {
	opts=""
	while [ "$1" != "--" ]; do
		opts="$opts $1"
		shift
	done
	shift
	timeout 20 "$@" >u.out 2>u.err </dev/null
	echo $? >u.rc
	# shellcheck disable=SC2086
	timeout 20 "$FORTSTAT" $opts --format=csv -o r.csv "$@" >t.out 2>t.err </dev/null
	echo $? >t.rc
	[ "$(cat u.rc)" != 124 ] || fail "$*: hangs without fortstat"
	[ "$(cat t.rc)" != 124 ] || fail "$*: hangs under fortstat"
	cmp -s u.out t.out || fail "$*: stdout differs under fortstat: $(cat t.out)"
	grep -v '^fortstat: ' t.err >t.err.prog
	cmp -s u.err t.err.prog || { fail "$*: stderr differs under fortstat"; cat t.err >&2; }
	cmp -s u.rc t.rc || fail "$*: exit status $(cat t.rc) under fortstat, $(cat u.rc) without"
	[ -s r.csv ] || fail "$*: no report"
}

# ---- 1. "#!" scripts: name the interpreter to time ----
printf '#!/bin/sh\ntouch ran\n' >run.sh
printf '#!/bin/sh -e\ntouch ran\n' >arg.sh
printf '#!/usr/bin/env sh\ntouch ran\n' >env.sh
printf '#!\ntouch ran\n' >none.sh
chmod +x run.sh arg.sh env.sh none.sh
try="fortstat times ELF executables: try"
# A shell script: timing the shell would time the shell, not the script;
# -f times the programs it runs (a wrapper, a pyenv shim that execs).
shtry="fortstat times ELF executables: to time the programs it runs, try"
refused "^fortstat: error: \./run\.sh: a shell script (/bin/sh); $shtry 'fortstat -f \./run\.sh' (-f runs /bin/sh on it)\$" \
	"$FORTSTAT" ./run.sh
refused "^fortstat: error: \./arg\.sh: a shell script (/bin/sh -e); $shtry 'fortstat -f \./arg\.sh' (-f runs /bin/sh -e on it)\$" \
	"$FORTSTAT" -c ./arg.sh
# env would be timed, not the program it runs: name the program
refused "a shell script (/usr/bin/env sh); $shtry 'fortstat -f \./env\.sh' (-f runs sh on it)\$" "$FORTSTAT" ./env.sh
printf '#!/usr/bin/env bash\nexec "$0.real" "$@"\n' >shim
chmod +x shim
refused "^fortstat: error: \./shim: a shell script (/usr/bin/env bash); $shtry 'fortstat -f \./shim' (-f runs bash on it)\$" \
	"$FORTSTAT" ./shim
# the suggestion works: -f runs the shim's interpreter on it (env's NAME,
# found in PATH) and follows its exec to the program it runs; so does the
# interpreter named as PROGRAM
cp "$BIN/chain-O2" shim.real
for cmd in "-f ./shim" "-f bash ./shim" "-v -f ./arg.sh"; do
	rm -f ran
	# shellcheck disable=SC2086 # the words of $cmd split on purpose
	timeout 60 "$FORTSTAT" $cmd >out.txt 2>err.txt </dev/null
	[ $? = 0 ] || fail "fortstat $cmd: $(cat err.txt)"
	case $cmd in
	*arg.sh)
		[ -e ran ] || fail "fortstat $cmd: the script did not run: $(cat err.txt)"
		grep -q "^fortstat: \./arg\.sh: a script for /bin/sh -e: -f runs /[a-z/]*sh on it and follows what it runs\$" err.txt ||
			fail "fortstat $cmd: -v did not say: $(head -n 3 err.txt)"
		grep -q "^fortstat: /[a-z/]*sh \[pid [0-9]*\] (exit status 0)" err.txt ||
			fail "fortstat $cmd: no report of the shell: $(grep '^fortstat: /' err.txt)"
		continue
		;;
	esac
	grep -q "^fortstat: /[a-z/]*bash \[pid [0-9]*\] (exit status 0)" err.txt ||
		fail "fortstat $cmd: bash not its first report: $(grep '^fortstat: /' err.txt)"
	grep -q "shim.real.*(exit status 0)" err.txt || fail "fortstat $cmd: chain not timed: $(cat err.txt)"
	grep -q '^\* main  *1 ' err.txt || fail "fortstat $cmd: no main: $(cat err.txt)"
	grep -q '^  leaf  *3500 ' err.txt || fail "fortstat $cmd: leaf not 3500: $(cat err.txt)"
done
rm -f ran
# another interpreter: timing it is the way (a Python script times python3)
printf '#!/usr/bin/env python3\n' >env.py
chmod +x env.py
refused "a script for /usr/bin/env python3; $try 'fortstat python3 \./env\.py'\$" "$FORTSTAT" ./env.py
# bytes of the file are escaped, never written raw to the terminal
printf '#!/bin/\033[2Jsh\n' >esc.sh
chmod +x esc.sh
refused 'a script for /bin/\\x1b\[2Jsh; ' "$FORTSTAT" ./esc.sh
refused "\./none\.sh: a script without an interpreter; fortstat times ELF executables\$" \
	"$FORTSTAT" ./none.sh
# found through PATH: the line names the file found
refused "$T/run\.sh: a shell script (/bin/sh)" env PATH="$T:$PATH" "$FORTSTAT" run.sh
[ ! -e ran ] || fail "a script ran"
# The suggested command times the interpreter (one with symbols).
p=$BIN/chain-O0
printf '#!%s\n' "$p" >chain.sh
chmod +x chain.sh
if [ ${#p} -lt 120 ]; then
	refused "a script for $p; $try 'fortstat $p \./chain\.sh'\$" "$FORTSTAT" ./chain.sh
	cmd=$(sed -n "s/.*; $try 'fortstat \(.*\)'\$/\1/p" err.txt)
	# shellcheck disable=SC2086
	traced -- $cmd
	expect "$cmd" main 1 work 1000 leaf 3500 twice 500
else
	echo "SKIP: $p is too long a path for a #! line"
fi

# ---- 2. setuid and setgid programs ----
if [ "$(id -u)" != 0 ]; then
	echo "SKIP: setuid programs: not root (cannot make a setuid copy for another user)"
elif ! command -v setpriv >/dev/null; then
	echo "SKIP: setuid programs: setpriv is not installed"
else
	# A directory that user nobody (65534) can reach, with copies of fortstat and
	# of chain: setuid to another user (12345), setgid to another group,
	# setuid to nobody itself (nothing changes: it is timed).
	D=$(mktemp -d "${TMPDIR:-/tmp}/fortstat-suid.XXXXXX")
	trap 'rm -rf "$T" "$D"' EXIT
	chmod 755 "$D"
	mkdir "$D/w"
	chmod 777 "$D/w"
	cp "$FORTSTAT" "$D/fortstat"
	for f in suid sgid own plain; do
		cp "$BIN/chain-O0" "$D/$f"
	done
	chown 12345:12345 "$D/suid"
	chmod 4755 "$D/suid"
	chown 65534:12345 "$D/sgid"
	chmod 2755 "$D/sgid"
	chown 65534:65534 "$D/own"
	chmod 4755 "$D/own"
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	if findmnt -no OPTIONS -T "$D" 2>/dev/null | grep -q nosuid; then
		echo "SKIP: setuid programs: $D is on a nosuid file system"
	elif ! $nobody test -x "$D/fortstat" -a -x "$D/suid" -a -w "$D/w"; then
		echo "SKIP: setuid programs: user 65534 cannot reach $D"
	else
		priv="(run fortstat as root or time a copy without the"
		# shellcheck disable=SC2086
		refused "^fortstat: error: $D/suid: setuid program: cannot be traced without privileges $priv setuid bit)\$" \
			$nobody "$D/fortstat" "$D/suid"
		# shellcheck disable=SC2086
		refused "^fortstat: error: $D/sgid: setgid program: cannot be traced without privileges $priv setgid bit)\$" \
			$nobody "$D/fortstat" -c "$D/sgid"
		# the same user, or no setuid bit: timed as usual
		for f in own plain; do
			rm -f "$D/w/r.csv"
			# shellcheck disable=SC2086
			timeout 60 $nobody "$D/fortstat" --format=csv -o "$D/w/r.csv" "$D/$f" >t.out 2>t.err </dev/null
			rc=$?
			[ "$rc" = 0 ] || fail "$f as nobody: exit $rc ($(cat t.err))"
			grep -q '^chain done' t.out || fail "$f as nobody: $(cat t.out)"
			cp "$D/w/r.csv" r.csv 2>/dev/null || fail "$f as nobody: no report"
			expect "$f as nobody" main 1 work 1000 leaf 3500 twice 500
		done
		# root may trace a setuid program: timed as usual
		traced -- "$D/suid"
		expect "$D/suid" main 1 work 1000 leaf 3500 twice 500
	fi
fi

# ---- 3. programs that use ptrace ----
for opt in O0 O2; do
	# (a) PTRACE_TRACEME fails with EPERM, as under any tracer, and it runs on
	p=$BIN/edges_traceme-$opt
	timeout 20 "$FORTSTAT" --format=csv -o r.csv "$p" >t.out 2>t.err </dev/null
	rc=$?
	[ "$rc" = 3 ] || fail "$p: exit $rc, expected 3 ($(cat t.err))"
	printf 'traceme failed: EPERM\nsum 525\n' | cmp -s - t.out || fail "$p: $(cat t.out)"
	[ ! -s t.err ] || fail "$p: $(cat t.err)"
	expect "$p" main 1 check 1 work 10 leaf 30
	if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
		timeout 20 strace -o /dev/null "$p" >s.out 2>/dev/null </dev/null
		rc=$?
		[ "$rc" = 3 ] || fail "$p under strace: exit $rc"
		cmp -s s.out t.out || fail "$p: under strace $(cat s.out), under fortstat $(cat t.out)"
	fi
	# (b) a mini debugger runs its fork child to the end; the child is not timed
	p=$BIN/edges_debugger-$opt
	for mode in traceme attach seize; do
		# attach and seize come right after fork: the child must be let go by then
		for pin in auto never; do
			within --pin=$pin -- "$p" $mode
			grep -q '^child sum 14950$' t.out || fail "$p $mode: $(cat t.out)"
			grep -q '^debugger: 1 stop(s), child exited 7$' t.out || fail "$p $mode: $(cat t.out)"
			expect "$p $mode" main 1 debug 1 resume 1 report 1
			absent "$p $mode" child_work leaf
		done
	done
done
# The race that (b) is about is lost only now and then: run it often, quickly.
p=$BIN/edges_debugger-O2
for i in 1 2 3 4 5 6 7 8 9 10; do
	for mode in attach seize; do
		timeout 20 "$FORTSTAT" -c --pin=never -o /dev/null "$p" $mode >t.out 2>t.err </dev/null
		rc=$?
		[ "$rc" = 0 ] || fail "$p $mode (run $i): exit $rc: $(cat t.out t.err)"
	done
done

# (c) another tracer follows fortstat's children (strace -f): fortstat cannot
# seize the program; it says who has it, before the program runs.
if command -v strace >/dev/null && strace -o /dev/null true 2>/dev/null; then
	p=$BIN/chain-O0
	refused "^fortstat: error: $p: already traced by process [0-9][0-9]* (strace): cannot time it\$" \
		strace -f -o /dev/null "$FORTSTAT" "$p"
	refused "already traced by process [0-9][0-9]* (strace)" strace -f -o /dev/null "$FORTSTAT" -c "$p"
	# strace without -f: fortstat's children are its own
	timeout 60 strace -o /dev/null "$FORTSTAT" --format=csv -o r.csv "$p" >t.out 2>t.err </dev/null
	rc=$?
	[ "$rc" = 0 ] || fail "strace fortstat $p: exit $rc ($(cat t.err))"
	expect "strace fortstat $p" main 1 work 1000 leaf 3500 twice 500
else
	echo "SKIP: a program already traced: strace is not installed or cannot trace"
fi

# The CPU clock is the kernel's own count of the thread's time (schedstat's
# sum_exec_runtime), which leaves out a VM's steal and interrupt time: a
# perf task-clock counts them (0.066 s read for 0.05 s on a loaded VM).
"$FORTSTAT" -v -o r.txt "$BIN/chain-O0" >t.out 2>t.err </dev/null
grep -q '^fortstat: clock: schedstat$' t.err || fail "the CPU clock: $(grep 'clock:' t.err)"

# Where the kernel refuses perf to users (kernel.perf_event_paranoid=3,
# Debian's default; libnoperf.so refuses it here): CPU clocks from
# schedstat, no context-switch records, the same counts; nothing said but
# with -v, and then once (a warning from each of the calibration's runs
# was seven lines before every report, and tests that want a silent
# fortstat failed there).
p=$BIN/chain-O0
LD_PRELOAD=$BIN/libnoperf.so timeout 60 "$FORTSTAT" --format=csv -o r.csv "$p" >t.out 2>t.err \
	</dev/null
rc=$?
[ "$rc" = 0 ] || fail "perf refused: exit $rc ($(cat t.err))"
# (the traps' overhead on so short a program is the report's own warning: trust.sh)
! grep -v '^fortstat: warning: the overhead removed is' t.err | grep -q . ||
	fail "perf refused: fortstat said something: $(cat t.err)"
expect "perf refused $p" main 1 work 1000 leaf 3500 twice 500
LD_PRELOAD=$BIN/libnoperf.so timeout 60 "$FORTSTAT" -v -o r.txt "$p" >t.out 2>t.err </dev/null
grep -q 'clock: schedstat' t.err || fail "perf refused: not the schedstat clock: $(cat t.err)"
if [ "$MECH" = probes ]; then
	n=$(grep -c 'no context-switch records' t.err)
	[ "$n" = 1 ] || fail "perf refused, -v: the records' refusal said $n times: $(cat t.err)"
fi
finish
