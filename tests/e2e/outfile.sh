#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# outfile.sh - the report files (-o, --svg) are written to a new file beside
# them and renamed into place at the end: a fortstat killed with SIGKILL
# midway leaves the previous reports whole, byte for byte; a normal run
# leaves no temporary file; a new file's mode is 0666 less the umask, an
# old one's is kept; an unwritable -o still fails at start, in one line,
# before the program runs.
. "$SRCDIR/tests/lib.sh"

# wait_for FILE: until FILE is not empty (within 10 s)
wait_for() {
	i=0
	while [ ! -s "$1" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { fail "$1 never came"; return 1; }
		sleep 0.05
	done
}

# leftovers: the temporary files left in this directory
leftovers() {
	ls -a | grep -F '.fortstat-' | tr '\n' ' '
}

p=$BIN/snapticker-O0
# the previous reports: a short run's
"$FORTSTAT" -o r.txt --svg=f.svg "$p" 5 >u.out 2>u.err </dev/null
[ $? = 3 ] || fail "the short run: $(cat u.err)"
grep -q '^ *tick  *5 ' r.txt || fail "the short run's report: $(cat r.txt)"
grep -q '<svg' f.svg || fail "the short run's flame graph: $(head -c 200 f.svg)"
[ -z "$(leftovers)" ] || fail "a normal run left $(leftovers)"
cp r.txt prev.txt
cp f.svg prev.svg

# a long run killed midway: fortstat's own pid, the test started it
rm -f pid.txt
"$FORTSTAT" -o r.txt --svg=f.svg "$p" 3000 pid.txt >t.out 2>t.err </dev/null &
fs=$!
wait_for pid.txt
prog=$(cat pid.txt)
sleep 0.3
kill -KILL "$fs"
wait "$fs"
# With the traps, PTRACE_O_EXITKILL ends the program with its tracer; with
# the probes it runs on untraced (outlive.sh): the test ends it, by its pid
if [ "$MECH" = probes ]; then
	kill -0 "$prog" 2>/dev/null || fail "the program $prog died with its killed tracer"
	kill -KILL "$prog" 2>/dev/null
fi
i=0
while kill -0 "$prog" 2>/dev/null && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.05
done
kill -0 "$prog" 2>/dev/null && fail "the program $prog outlived its killed tracer"
cmp -s prev.txt r.txt || fail "-o: the previous report is not whole after SIGKILL: $(cat r.txt)"
cmp -s prev.svg f.svg || fail "--svg: the previous flame graph is not whole after SIGKILL"

# a CSV report: the final counts, no temporary file left
rm -f pid.txt
"$FORTSTAT" --format=csv -o r.csv "$p" 30 pid.txt >t.out 2>t.err </dev/null
[ $? = 3 ] || fail "the CSV run: $(cat t.err)"
[ "$(awk -v want=tick -v col=2 -f "$SRCDIR/tests/csvfield.awk" r.csv)" = 30 ] ||
	fail "the CSV run's report: $(cat r.csv)"
[ -z "$(leftovers)" ] || fail "a normal run left $(leftovers)"

# a new file: 0666 less the umask, as fopen made it
rm -f new.txt
(umask 027 && "$FORTSTAT" -o new.txt "$p" 3 >/dev/null 2>&1)
[ "$(stat -c %a new.txt)" = 640 ] || fail "umask 027: new.txt has mode $(stat -c %a new.txt)"

# an existing file keeps its permissions, as when it was rewritten in place
chmod 604 new.txt
"$FORTSTAT" -o new.txt "$p" 3 >/dev/null 2>&1
[ "$(stat -c %a new.txt)" = 604 ] || fail "new.txt, mode 604: now $(stat -c %a new.txt)"

# %p: one file a process, no temporary file left either
"$FORTSTAT" -o 'r.%p.txt' "$p" 3 >/dev/null 2>&1
[ "$(ls r.[0-9]*.txt | wc -l)" = 1 ] || fail "-o r.%p.txt: $(ls)"
[ -z "$(leftovers)" ] || fail "-o r.%p.txt left $(leftovers)"

# an unwritable -o or --svg: one line at start, the program never runs
for opt in "-o /nonexistent-dir/x" "--svg=/nonexistent-dir/x.svg" "-o ." "-o prev.txt/x"; do
	rm -f pid.txt
	# shellcheck disable=SC2086
	"$FORTSTAT" $opt "$p" 3 pid.txt >t.out 2>t.err </dev/null
	rc=$?
	[ "$rc" = 125 ] || fail "$opt: exit status $rc, not 125"
	[ "$(wc -l <t.err)" = 1 ] && grep -q '^fortstat: error: .*: cannot write the ' t.err ||
		fail "$opt: $(cat t.err)"
	[ -e pid.txt ] && fail "$opt: the program ran"
done
# a directory that is not writable: a new file there fails at start; a
# writable file there is written in place, as before
if [ "$(id -u)" != 0 ]; then
	mkdir ro && cp prev.txt ro/r.txt && chmod 555 ro
	"$FORTSTAT" -o ro/new.txt "$p" 3 >t.out 2>t.err </dev/null
	[ $? = 125 ] || fail "-o ro/new.txt: exit status not 125: $(cat t.err)"
	"$FORTSTAT" -o ro/r.txt "$p" 4 >t.out 2>t.err </dev/null
	[ $? = 3 ] || fail "-o ro/r.txt: $(cat t.err)"
	grep -q '^ *tick  *4 ' ro/r.txt || fail "-o ro/r.txt: $(cat ro/r.txt)"
	chmod 755 ro
fi
finish
