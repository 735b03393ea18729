#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# terminal.sh - the status line on a terminal the program prints to: under
# tmux (a pane of 100x20), fortstat times a program that prints a line every
# 50 ms for 2 s. While it runs, the status line is on the pane's last row
# and nowhere else; at the end, the whole pane and its history hold the
# program's lines whole and in order, the report after them, and no status
# line anywhere (it used to stay in the scrollback, the program's lines
# written after it).
. "$SRCDIR/tests/lib.sh"

command -v tmux >/dev/null 2>&1 || skip "no tmux"
# A private server: its socket in the test's directory, killed at the end.
TMUX_TMPDIR=$T
export TMUX_TMPDIR
unset TMUX
tm() {
	tmux -L fortstat-terminal -f "$T/tmux.conf" "$@"
}
trap 'tm kill-server >/dev/null 2>&1; rm -rf "$T"' EXIT
# The pane stays (and can be read) after the command has ended.
echo "set-option -g remain-on-exit on" >"$T/tmux.conf"

N=40
STATUS='fortstat: [0-9]+:[0-9][0-9], [0-9]+ calls?, '
cat >run.sh <<EOF
FORTSTAT_MECHANISM=$MECH "$FORTSTAT" "$BIN/ticker-O0" $N 1 50
echo "rc \$?" >"$T/rc"
EOF
tm new-session -d -x 100 -y 20 "sh $T/run.sh" || skip "tmux cannot start a session here"

# While it runs: the status line, on the last row only.
seen=0
i=0
while [ $i -lt 600 ] && [ ! -f rc ]; do
	tm capture-pane -p >live.txt 2>/dev/null
	if [ "$(wc -l <live.txt)" -eq 20 ] && tail -n 1 live.txt | grep -Eq "^$STATUS"; then
		seen=1
		head -n 19 live.txt | grep -E 'fortstat: [0-9]+:[0-9]' &&
			fail "a status line above the last row: $(cat live.txt)"
		break
	fi
	sleep 0.05
	i=$((i + 1))
done
[ "$seen" = 1 ] || fail "no status line on the last row while the program ran: $(cat live.txt)"

i=0
while [ $i -lt 300 ] && [ ! -f rc ]; do
	sleep 0.1
	i=$((i + 1))
done
[ -f rc ] || fail "fortstat did not end in 30 s"
[ "$(cat rc)" = "rc 3" ] || fail "exit status: $(cat rc)"
tm capture-pane -p -S - -E - >all.txt

# No status line left anywhere, nor a fragment of one.
grep -En 'fortstat: [0-9]+:[0-9][0-9]' all.txt && fail "a status line left in the pane: $(cat all.txt)"
# The program's lines, each whole on its own row, in order, then the report.
grep -E '^(thread 0 tick [0-9]+ at [0-9.]+|done)$' all.txt >prog.txt
k=0
expected=$(while [ $k -lt $N ]; do
	echo "thread 0 tick $k"
	k=$((k + 1))
done
echo "done")
[ "$(sed 's/ at [0-9.]*$//' prog.txt)" = "$expected" ] ||
	fail "the program's lines are not all there whole and in order: $(cat all.txt)"
[ "$(grep -c 'thread 0 tick' all.txt)" -eq $N ] ||
	fail "$(grep -c 'thread 0 tick' all.txt) lines of ticks in the pane: $(cat all.txt)"
awk '/^done$/ { d = NR } /^fortstat: .*ticker-O0 \(exit status 3\)/ { h = NR }
	d && h > d && $1 == "tick" && $2 == '$N' { ok = 1 } END { exit !ok }' all.txt ||
	fail "no report after the program's output: $(cat all.txt)"

# Out of line mode the screen is the program's: no status line drawn.
cat >raw.sh <<EOF
stty -icanon -echo
FORTSTAT_MECHANISM=$MECH "$FORTSTAT" "$BIN/ticker-O0" $N 1 50
echo "rc \$?" >"$T/rc2"
stty sane
EOF
tm new-session -d -s raw -x 100 -y 20 "sh $T/raw.sh" || fail "tmux: no second session"
i=0
: >raw-live.txt
while [ $i -lt 600 ] && [ ! -f rc2 ]; do
	tm capture-pane -p -t raw >>raw-live.txt 2>/dev/null
	sleep 0.05
	i=$((i + 1))
done
[ -f rc2 ] || fail "fortstat out of line mode did not end in 30 s"
tm capture-pane -p -S - -E - -t raw >raw-all.txt
grep -q '^thread 0 tick 20 at ' raw-live.txt || fail "out of line mode: the run was not seen: $(tail -n 20 raw-live.txt)"
grep -Eq "$STATUS" raw-live.txt raw-all.txt &&
	fail "out of line mode: a status line was drawn: $(grep -E "$STATUS" raw-live.txt | head -n 3)"
[ "$(grep -c '^thread 0 tick [0-9]* at [0-9.]*$' raw-all.txt)" = $N ] ||
	fail "out of line mode: the program's lines: $(cat raw-all.txt)"
finish
