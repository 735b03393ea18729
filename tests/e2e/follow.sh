#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# follow.sh - -f: forked children and the programs they exec are timed too,
# one report per process (sections in one file, or one file each with %p):
# fork + exec, a fork that only calls, posix_spawn (vfork + exec), and the
# program's own exec, a thread's exec, `#!` scripts; exact counts in each,
# same output and exit status, each image timed by the mechanism asked for.
. "$SRCDIR/tests/lib.sh"
chain_ok() { # FILE WHAT: the call chain fixture's exact counts in CSV FILE
	for kv in main=1 work=1000 leaf=3500 twice=500; do
		got=$(awk -v want="${kv%=*}" -v col=2 -f "$SRCDIR/tests/csvfield.awk" "$1")
		[ "$got" = "${kv#*=}" ] || fail "$2: ${kv%=*} called ${got:-never} times, expected ${kv#*=}"
	done
}
for opt in O0 O2; do
	p=$BIN/spawner-$opt
	c=$BIN/chain-$opt
	# Without -f: the program alone, its children run untimed.
	traced -- "$p" "$c"
	expect "$p" main 1 ticks 1 tick 5 wait_for 3
	[ "$(grep -c '^routine,' r.csv)" = 1 ] || fail "$p: more than one report without -f"
	# ... and the report counts them: the fork that execs, the one that
	# only calls, posix_spawn's (its own exec is the note's)
	"$FORTSTAT" -o r.txt "$p" "$c" >/dev/null 2>t.err </dev/null || fail "$p: exit status $?"
	grep -q '^  processes not followed *3   (untimed, in no report: -f follows them)$' r.txt ||
		fail "$p: $(grep -i 'followed' r.txt || echo 'no processes not followed line')"
	"$FORTSTAT" --format=json -o r.json "$p" "$c" >/dev/null 2>t.err </dev/null
	n=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["processes_not_followed"])' r.json)
	[ "$n" = 3 ] || fail "$p: JSON processes_not_followed $n, expected 3"

	# -f, one file: a CSV block per process, in the order they appeared.
	traced -f -- "$p" "$c"
	awk 'BEGIN { RS = ""; n = 0 } { n++; f = "b" n ".csv"; print > f; close(f) } END { print n > "nblocks" }' r.csv
	[ "$(cat nblocks)" = 5 ] || fail "$p -f: $(cat nblocks) reports, expected 5"
	cp b1.csv r.csv
	expect "$p -f (program)" main 1 ticks 1 tick 5 wait_for 3
	chain_ok b2.csv "$p -f (fork + exec)"
	cp b3.csv r.csv
	expect "$p -f (fork)" ticks 1 tick 20
	absent "$p -f (fork)" main wait_for
	chain_ok b4.csv "$p -f (posix_spawn)"
	chain_ok b5.csv "$p -f (the program's own exec)"

	# -f -o FILE.%p: one file per process; the program's pid has its two images.
	rm -f r.[0-9]*
	"$FORTSTAT" -f --format=csv -o 'r.%p' "$p" "$c" >/dev/null 2>t.err </dev/null ||
		fail "$p -f -o r.%p: exit status $?"
	n=0
	for f in r.[0-9]*; do
		n=$((n + 1))
	done
	[ "$n" = 4 ] || fail "$p -f -o r.%p: $n files, expected 4: $(ls)"
	two=$(grep -l '^ticks,1,' r.[0-9]* | while read -r f; do
		[ "$(grep -c '^routine,' "$f")" = 2 ] && echo "$f"
	done)
	[ -n "$two" ] || fail "$p -f -o r.%p: no file with the program and its exec'ed image"
	# JSON: every file one document; the program's two images an array of two
	rm -f r.[0-9]* r.json
	"$FORTSTAT" -f --format=json -o 'r.%p.json' "$p" "$c" >/dev/null 2>t.err </dev/null ||
		fail "$p -f -o r.%p.json: exit status $?"
	"$FORTSTAT" -f --format=json -o r.json "$p" "$c" >/dev/null 2>t.err </dev/null ||
		fail "$p -f -o r.json: exit status $?"
		json_valid r.json r.[0-9]*.json
	python3 - r.json r.[0-9]*.json <<'EOT' || fail "$p -f: a JSON file that is not one document of the reports"
import json, sys
shapes = []
for f in sys.argv[1:]:
    d = json.load(open(f))  # raises on a second document
    shapes.append(len(d) if isinstance(d, list) else 1)
# one file of all 5 reports; 4 files, one of them with the program's two images
sys.exit(not (shapes[0] == 5 and sorted(shapes[1:]) == [1, 1, 1, 2]))
EOT

	# Every image exec'ed is timed by the mechanism asked for, as the program
	# is: with probes, in its own areas of the event memory (mapped at its
	# exec stop), every call an entry and a return event, none a trap.
	[ "$(grep -c '"processes_not_followed": 0,' r.json)" = 5 ] ||
		fail "$p -f: $(grep '"processes_not_followed"' r.json | tr -d '\n'), expected 0 in each of 5"
	[ "$(grep -c "\"mechanism\": \"$MECH\"" r.json)" = 5 ] ||
		fail "$p -f: mechanisms $(grep '"mechanism"' r.json | tr -d '\n'), expected $MECH 5 times"
	if [ "$MECH" = probes ]; then
		[ "$(grep '"probe_events"' r.json | tr -d ' \n')" = \
			'"probe_events":19,"probe_events":10002,"probe_events":42,"probe_events":10002,"probe_events":10002,' ] ||
			fail "$p -f: probe events $(grep '"probe_events"' r.json | tr -d ' \n'), expected 19 10002 42 10002 10002"
	fi

	# A thread (not the main one) execs from inside a timed routine: what it
	# recorded before is read at the exec (thread_func never returns), with
	# -f and without; with -f the new image is timed in a section of its own.
	# Events: main's entry, step's two; runner's and thread_func's entries, step's two.
	x=$BIN/threadexec-$opt
	traced -- "$x" "$c"
	expect "$x" main 1 step 2 runner 1 thread_func 1
	traced -f -- "$x" "$c"
	awk 'BEGIN { RS = ""; n = 0 } { n++; f = "b" n ".csv"; print > f; close(f) } END { print n > "nblocks" }' r.csv
	[ "$(cat nblocks)" = 2 ] || fail "$x -f: $(cat nblocks) reports, expected 2"
	cp b1.csv r.csv
	expect "$x -f" main 1 step 2 runner 1 thread_func 1
	chain_ok b2.csv "$x -f (exec'ed by a thread)"
	"$FORTSTAT" -f --format=json -o x.json "$x" "$c" >/dev/null 2>t.err </dev/null
	json_valid x.json
	[ "$(grep -c "\"mechanism\": \"$MECH\"" x.json)" = 2 ] ||
		fail "$x -f: mechanisms $(grep '"mechanism"' x.json | tr -d '\n'), expected $MECH twice"
	if [ "$MECH" = probes ]; then
		[ "$(grep '"probe_events"' x.json | tr -d ' \n')" = '"probe_events":7,"probe_events":10002,' ] ||
			fail "$x -f: probe events $(grep '"probe_events"' x.json | tr -d ' \n'), expected 7 and 10002"
	fi

	# A `#!` script exec'ed: the kernel runs its interpreter, a program with
	# symbols (timed, its section named after it) or /bin/sh running one.
	printf '#!%s\n' "$c" >viachain
	printf '#!/bin/sh\n"%s" || exit 9\nexit 4\n' "$c" >viash
	chmod +x viachain viash
	traced -f -- "$p" ./viachain
	awk 'BEGIN { RS = ""; n = 0 } { n++; f = "b" n ".csv"; print > f; close(f) } END { print n > "nblocks" }' r.csv
	[ "$(cat nblocks)" = 5 ] || fail "$p -f ./viachain: $(cat nblocks) reports, expected 5"
	for b in 2 4 5; do
		chain_ok b$b.csv "$p -f ./viachain (report $b)"
	done
	"$FORTSTAT" -f "$p" ./viachain >/dev/null 2>t.err </dev/null
	[ "$(grep -c "^fortstat: $c \[pid [0-9]*\] (exit status 0)" t.err)" = 3 ] ||
		fail "$p -f ./viachain: table headers: $(grep '^fortstat: /' t.err)"
	traced -f -- "$p" ./viash
	[ "$(grep -c '^leaf,3500,' r.csv)" = 3 ] && [ "$(grep -c '^work,1000,' r.csv)" = 3 ] ||
		fail "$p -f ./viash: chain's counts in $(grep -c '^leaf,' r.csv) reports, expected 3"
	[ "$(cat t.rc)" = 4 ] || fail "$p -f ./viash: exit status $(cat t.rc), expected 4"

	# A stripped program exec'ed: with -l, its libraries' routines are timed.
	strip -o mstripped "$BIN/mathcalls-$opt"
	traced -f -l libm -- "$p" ./mstripped
	awk 'BEGIN { RS = ""; n = 0 } { n++; f = "b" n ".csv"; print > f; close(f) } END { print n > "nblocks" }' r.csv
	[ "$(cat nblocks)" = 5 ] || fail "$p -f -l libm: $(cat nblocks) reports, expected 5"
	for b in 2 4 5; do
		cp b$b.csv r.csv
		expect "$p -f -l libm (stripped, report $b)" libm.so.6:sin 1000 libm.so.6:cos 1000 \
			libm.so.6:exp 300
	done

	# Table: each report is headed by its program and pid.
	"$FORTSTAT" -f "$p" "$c" >/dev/null 2>t.err </dev/null
	[ "$(grep -c "^fortstat: $c \[pid [0-9]*\] (exit status 0)" t.err)" = 3 ] ||
		fail "$p -f: table headers: $(grep '^fortstat: /' t.err)"

	# fork without exec, system() and posix_spawn of stripped programs: the
	# child's own calls are timed in its own report.
	p=$BIN/forks-$opt
	traced -f -- "$p"
	awk 'BEGIN { RS = ""; n = 0 } { n++; f = "b" n ".csv"; print > f; close(f) } END { print n > "nblocks" }' r.csv
	[ "$(cat nblocks)" = 2 ] || fail "$p -f: $(cat nblocks) reports, expected 2"
	cp b1.csv r.csv
	expect "$p -f (program)" main 1 spawn 1 work 2 leaf 20
	cp b2.csv r.csv
	expect "$p -f (child)" work 1 leaf 100
	absent "$p -f (child)" main spawn
	# Every process is timed by the mechanism asked for (probes: the child in
	# an area of its own, or its leaf calls would land in its parent's books).
	"$FORTSTAT" -f --format=json -o m.json "$p" >/dev/null 2>t.err </dev/null
	json_valid m.json
	[ "$(grep -c "\"mechanism\": \"$MECH\"" m.json)" = 2 ] ||
		fail "$p -f: mechanisms $(grep '"mechanism"' m.json | tr -d '\n'), expected $MECH twice"
	# ... and counts its own events: 24 calls in the program, 101 in the child.
	if [ "$MECH" = probes ]; then
		[ "$(grep '"probe_events"' m.json | tr -d ' \n')" = '"probe_events":48,"probe_events":202,' ] ||
			fail "$p -f: probe events $(grep '"probe_events"' m.json | tr -d ' \n'), expected 48 and 202"
	fi
done
finish
