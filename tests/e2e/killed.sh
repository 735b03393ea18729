#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# killed.sh - fortstat is signalled: SIGTERM is passed to the program and the
# report still written; SIGINT from the terminal reaches the program as it
# would without fortstat; SIGSTOP/SIGCONT stop and resume it as job control
# does; a SIGKILLed fortstat takes the program with it under the traps, and
# leaves it running on untraced under the probes (outlive.sh kills it at
# random moments).
. "$SRCDIR/tests/lib.sh"
cp "$BIN/sleeper-O0" "./sleeper-$$"
prog=./sleeper-$$

# wait_line FILE: until the program has started (it prints "sleeping")
wait_line() {
	i=0
	while ! grep -q sleeping "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 100 ] || { fail "the program did not start"; return; }
		sleep 0.1
	done
}

# gone NAME: no process runs NAME any more (within 5 s)
gone() {
	i=0
	while pgrep -f "$1" >/dev/null; do
		i=$((i + 1))
		[ $i -lt 50 ] || { fail "$1 still runs"; pkill -KILL -f "$1"; return; }
		sleep 0.1
	done
}

# SIGTERM to fortstat alone: the program gets it and dies of it (143)
"$FORTSTAT" -o rep.txt "$prog" 100 >out1.txt 2>err1.txt &
fs=$!
wait_line out1.txt
kill -TERM "$fs"
wait "$fs"
rc=$?
[ "$rc" = 143 ] || fail "SIGTERM: fortstat exited $rc, expected 143"
grep -q 'nap' rep.txt || fail "SIGTERM: no report: $(cat rep.txt)"
grep -q 'killed by signal 15' err1.txt || fail "SIGTERM: no note: $(cat err1.txt)"
gone "$prog"

# SIGINT to the whole process group, as a terminal sends it. A background
# job of a non-interactive shell starts with SIGINT ignored: perl gives it
# back its default action, as an interactive shell would.
command -v perl >/dev/null || skip "perl is needed to reset SIGINT"
setsid perl -e '$SIG{INT} = "DEFAULT"; exec @ARGV' "$FORTSTAT" -o rep2.txt "$prog" 100 \
	>out2.txt 2>err2.txt &
sleep 0.1
wait_line out2.txt
pgid=$(ps -o pgid= -p "$(pgrep -f "$prog" | head -n 1)" | tr -d ' ')
kill -INT -- "-$pgid"
i=0
while [ ! -s rep2.txt ] && [ $i -lt 50 ]; do
	sleep 0.1
	i=$((i + 1))
done
grep -q 'killed by signal 2' rep2.txt || fail "SIGINT: the program did not end by SIGINT: $(cat rep2.txt err2.txt)"
gone "$prog"

# job control: SIGSTOP stops the program (a group-stop, not a signal
# fortstat eats), SIGCONT resumes it, and it then ends as usual
"$FORTSTAT" --format=csv -o rep4.csv "$prog" 10 >out4.txt 2>err4.txt &
fs=$!
wait_line out4.txt
pid=$(pgrep -f "^$prog 10" | head -n 1)
kill -STOP "$pid"
sleep 1.5
state=$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)
case $state in
T | t) ;;
*) fail "SIGSTOP: the program is in state '$state', not stopped" ;;
esac
kill -0 "$fs" 2>/dev/null || fail "SIGSTOP: fortstat ended while the program was stopped"
kill -CONT "$pid"
wait "$fs"
rc=$?
[ "$rc" = 0 ] || fail "SIGSTOP/SIGCONT: fortstat exited $rc: $(cat err4.txt)"
grep -q '^nap,10,' rep4.csv || fail "SIGSTOP/SIGCONT: nap not called 10 times: $(cat rep4.csv)"
gone "$prog"

# SIGKILL to fortstat: with the traps the program must not run on, patched
# (it dies with fortstat); with the probes it runs on, untraced, to its end
if [ "$MECH" = traps ]; then
	"$FORTSTAT" -o rep3.txt "$prog" 100 >out3.txt 2>&1 &
	fs=$!
	wait_line out3.txt
	kill -KILL "$fs"
	wait "$fs" 2>/dev/null
	gone "$prog"
else
	"$FORTSTAT" -o rep3.txt "$prog" 20 >out3.txt 2>&1 &
	fs=$!
	wait_line out3.txt
	kill -KILL "$fs"
	wait "$fs" 2>/dev/null
	sleep 0.5
	pgrep -f "^$prog 20" >/dev/null || fail "SIGKILL: the program died with fortstat under the probes"
	gone "$prog" # its 2 s of naps
fi
finish
