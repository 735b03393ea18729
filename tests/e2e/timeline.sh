#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# timeline.sh - --timeline: Chrome trace-event JSON that Python's json reads,
# with exact calls per routine (every call with --timeline-min=0, only the
# long ones above a threshold), each thread's calls nested (a call inside
# its caller's interval), processes and threads named, one track a thread
# (threads), one process each (-f), the bound said in the file and on
# stderr, the name's %p and %r, a previous file replaced whole (and left
# whole by a fortstat killed with SIGKILL).
. "$SRCDIR/tests/lib.sh"
PY=/usr/bin/python3
[ -x "$PY" ] || skip "no /usr/bin/python3"

# tl.py FILE: check the file and summarise it, one fact a line:
#   calls NAME N      X events of routine NAME (every process)
#   pcalls PID NAME N the same in process PID
#   tcalls TID NAME N the same on thread TID
#   process PID PATH  a process_name; thread PID TID NAME a thread_name
#   tracks N, pids N, other KEY VALUE (otherData), instant NAME
# and "bad ..." for what the format or the nesting breaks.
cat >tl.py <<'PYEOF'
import collections, decimal, json, sys

D = decimal.Decimal
with open(sys.argv[1]) as f:
    doc = json.load(f, parse_float=D)
out = []
bad = lambda *a: out.append("bad " + " ".join(str(x) for x in a))
if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
    print("bad not a trace-event object")
    sys.exit(0)
named_p, named_t = set(), set()
tracks = collections.OrderedDict()
calls, pcalls, tcalls = (collections.Counter() for _ in range(3))
for e in doc["traceEvents"]:
    ph = e.get("ph")
    if ph == "M":
        if e["name"] == "process_name":
            named_p.add(e["pid"])
            out.append("process %d %s" % (e["pid"], e["args"]["name"]))
        elif e["name"] == "thread_name":
            named_t.add((e["pid"], e["tid"]))
            out.append("thread %d %d %s" % (e["pid"], e["tid"], e["args"]["name"]))
        else:
            bad("metadata", e["name"])
    elif ph == "X":
        for k, t in (("name", str), ("ts", D), ("dur", D), ("pid", int), ("tid", int)):
            if not isinstance(e.get(k), t):
                bad("field", k, e)
        if e["dur"] < 0:
            bad("negative dur", e)
        if (e["pid"], e["tid"]) not in named_t or e["pid"] not in named_p:
            bad("unnamed track", e["pid"], e["tid"])
        tracks.setdefault((e["pid"], e["tid"]), []).append(e)
        calls[e["name"]] += 1
        pcalls[(e["pid"], e["name"])] += 1
        tcalls[(e["tid"], e["name"])] += 1
    elif ph == "i":
        out.append("instant " + e["name"])
    else:
        bad("phase", ph)
for key, evs in tracks.items():
    stack, last = [], None
    for e in evs:
        b, end = e["ts"], e["ts"] + e["dur"]
        if last is not None and b < last:
            bad("unsorted track", key, e)
        last = b
        while stack and b >= stack[-1]:
            stack.pop()
        if stack and end > stack[-1]:
            bad("overlap", key, e)
        stack.append(end)
for k, v in sorted(calls.items()):
    out.append("calls %s %d" % (k, v))
for (p, k), v in sorted(pcalls.items()):
    out.append("pcalls %d %s %d" % (p, k, v))
for (t, k), v in sorted(tcalls.items()):
    out.append("tcalls %d %s %d" % (t, k, v))
out.append("tracks %d" % len(tracks))
out.append("pids %d" % len(set(p for p, _ in tracks)))
mindur = min((e["dur"] for evs in tracks.values() for e in evs), default=D(-1))
out.append("mindur %s" % mindur)
for k, v in sorted(doc.get("otherData", {}).items()):
    out.append("other %s %s" % (k, v))
print("\n".join(out))
PYEOF

# facts FILE: tl.py's lines in FILE.facts; a "bad" line fails.
facts() {
	"$PY" tl.py "$1" >"$1.facts" 2>"$1.pyerr" || { fail "$1: not JSON: $(cat "$1.pyerr")"; return; }
	if grep '^bad' "$1.facts" >&2; then
		fail "$1: not a well-formed timeline"
	fi
}

# fact FILE KEY...: the rest of FILE's fact line starting with KEY...
fact() {
	f=$1
	shift
	awk -v k="$*" 'index($0, k " ") == 1 { print substr($0, length(k) + 2); exit }' "$f.facts"
}

same() { # same WHAT GOT WANT
	[ "$2" = "$3" ] || fail "$1: '$2', expected '$3'"
}

for opt in O0 O2; do
	p=$BIN/abcd-$opt
	# Every call: the counts of the report, each nested in its caller.
	traced --timeline=all.json --timeline-min=0 -- "$p"
	facts all.json
	for rc in "main 1" "A 5" "B 50" "C 50" "D 100"; do
		set -- $rc
		same "abcd-$opt: $1 in the timeline" "$(fact all.json calls "$1")" "$2"
		same "abcd-$opt: $1 in the report" "$(field "$1" 2)" "$2"
	done
	same "abcd-$opt: tracks" "$(fact all.json tracks)" 1
	same "abcd-$opt: calls" "$(fact all.json other calls)" 206
	same "abcd-$opt: short calls" "$(fact all.json other short_calls)" 0
	same "abcd-$opt: none left out" "$(fact all.json other calls_left_out)" 0
	pid=$(awk '/^process / { print $2; exit }' all.json.facts)
	same "abcd-$opt: process name" "$(fact all.json process "$pid")" "$p"
	same "abcd-$opt: main thread" "$(fact all.json thread "$pid" "$pid")" "abcd-$opt"
	grep -q '^instant' all.json.facts && fail "abcd-$opt: an instant event without the bound"

	# A threshold: main, A, B, C last at least 270 us each (C's loop of
	# 150,000), D 2 us alone: only D may be left out; what is kept is long.
	"$FORTSTAT" --timeline=long.json --timeline-min=100 -o r.csv --format=csv "$p" >/dev/null 2>&1
	facts long.json
	for rc in "main 1" "A 5" "B 50" "C 50"; do
		set -- $rc
		same "abcd-$opt, 100 us: $1" "$(fact long.json calls "$1")" "$2"
	done
	d=$(fact long.json calls D)
	short=$(fact long.json other short_calls)
	same "abcd-$opt, 100 us: D kept and left out" "$((${d:-0} + short))" 100
	same "abcd-$opt, 100 us: calls" "$(fact long.json other calls)" "$((106 + ${d:-0}))"
	awk '$1 == "mindur" && $2 < 100 { exit 1 }' long.json.facts ||
		fail "abcd-$opt, 100 us: a call shorter than 100 us kept ($(fact long.json mindur))"
	same "abcd-$opt, 100 us: threshold said" "$(fact long.json other min_us)" 100.000
done

# The default threshold, 10 us.
"$FORTSTAT" --timeline=def.json -o r.csv --format=csv "$BIN/abcd-O0" >/dev/null 2>&1
facts def.json
same "default threshold" "$(fact def.json other min_us)" 10.000

# The bound: the first 20 calls to close, a note in the file, one line on stderr.
"$FORTSTAT" --timeline=full.json --timeline-min=0 --timeline-max=20 -o r.csv --format=csv \
	"$BIN/abcd-O0" >/dev/null 2>full.err
facts full.json
same "bound: calls" "$(fact full.json other calls)" 20
same "bound: left out" "$(fact full.json other calls_left_out)" 186
same "bound: instant event" "$(fact full.json instant)" "fortstat: timeline full"
grep -q 'the bound of 20 calls was reached' full.json ||
	fail "bound: no note in the file"
same "bound: one line on stderr" "$(grep -c 'timeline' full.err)" 1
grep -q -- '--timeline=full.json: 20 calls kept, the bound (--timeline-max)' full.err ||
	fail "bound: $(cat full.err)"

# Threads: one track each, named, their calls on their own track.
"$FORTSTAT" --no-throttle --timeline=thr.json --timeline-min=0 -o r.csv --format=csv \
	"$BIN/threads-O2" >/dev/null 2>&1
facts thr.json
same "threads: leaf" "$(fact thr.json calls leaf)" 40000
same "threads: worker" "$(fact thr.json calls worker)" 4
same "threads: main" "$(fact thr.json calls main)" 1
same "threads: tracks" "$(fact thr.json tracks)" 5
same "threads: one process" "$(fact thr.json pids)" 1
awk '$1 == "tcalls" && $3 == "worker" { print $2 }' thr.json.facts >workers
same "threads: worker tracks" "$(sort -u workers | wc -l)" 4
for t in $(cat workers); do
	same "threads: leaf on thread $t" "$(fact thr.json tcalls "$t" leaf)" 10000
	same "threads: thread $t named" "$(awk -v t="$t" '$1 == "thread" && $3 == t { $1 = $2 = $3 = ""; print substr($0, 4) }' thr.json.facts)" "thread $t"
done

# -f: the child's calls in a process of its own, both named.
"$FORTSTAT" -f --timeline=fk.json --timeline-min=0 -o r.csv --format=csv "$BIN/forks-O0" \
	>/dev/null 2>&1
facts fk.json
same "-f: processes" "$(fact fk.json pids)" 2
same "-f: process names" "$(grep -c "^process [0-9]* $BIN/forks-O0\$" fk.json.facts)" 2
parent=$(awk '$1 == "pcalls" && $3 == "main" { print $2 }' fk.json.facts)
child=$(awk -v p="$parent" '$1 == "process" && $2 != p { print $2 }' fk.json.facts)
same "-f: parent's work" "$(fact fk.json pcalls "$parent" work)" 2
same "-f: parent's leaf" "$(fact fk.json pcalls "$parent" leaf)" 20
same "-f: child's work" "$(fact fk.json pcalls "$child" work)" 1
same "-f: child's leaf" "$(fact fk.json pcalls "$child" leaf)" 100
same "-f: child's main" "$(fact fk.json pcalls "$child" main)" ""

# The name: %p the program's pid, %r the MPI rank; a previous file replaced whole.
echo "previous" >"tl.3.json"
OMPI_COMM_WORLD_RANK=3 OMPI_COMM_WORLD_SIZE=4 "$FORTSTAT" --timeline=tl.%r.json \
	--timeline-min=0 -o r.csv --format=csv "$BIN/abcd-O0" >/dev/null 2>&1
facts tl.3.json
same "%r: A" "$(fact tl.3.json calls A)" 5
"$FORTSTAT" --timeline=x.%r.json -o r.csv --format=csv "$BIN/abcd-O0" >/dev/null 2>r.err
[ -f x.0.json ] || fail "%r outside a job: no x.0.json"
grep -q -- '--timeline=x.%r.json: no MPI rank in the environment: %r is 0' r.err ||
	fail "%r outside a job: $(cat r.err)"
"$FORTSTAT" --timeline=tl.%p.json -o r.csv --format=csv "$BIN/abcd-O0" >/dev/null 2>&1
set -- tl.[0-9]*[0-9].json
[ -f "$1" ] || fail "%p: no tl.PID.json"
[ -f "$1" ] && facts "$1" && same "%p: the program's pid" \
	"$(awk '/^process / { print $2; exit }' "$1.facts")" "$(echo "$1" | tr -dc 0-9)"

# SIGKILL midway: the previous timeline stays whole (a new file is renamed
# over it at the end only); a normal run leaves no temporary file.
p=$BIN/snapticker-O0
"$FORTSTAT" --timeline=k.json --timeline-min=0 -o r.txt "$p" 5 >/dev/null 2>&1
grep -q '"name":"tick"' k.json || fail "snapticker: no tick in $(head -c 300 k.json)"
[ -z "$(ls -a | grep -F '.fortstat-')" ] || fail "a normal run left $(ls -a | grep -F '.fortstat-')"
cp k.json prev.json
rm -f pid.txt
"$FORTSTAT" --timeline=k.json --timeline-min=0 -o r.txt "$p" 3000 pid.txt >/dev/null 2>&1 </dev/null &
fs=$!
i=0
while [ ! -s pid.txt ] && [ $i -lt 200 ]; do
	i=$((i + 1))
	sleep 0.05
done
[ -s pid.txt ] || fail "snapticker never wrote its pid"
prog=$(cat pid.txt)
sleep 0.3
kill -KILL "$fs"
wait "$fs"
# with the probes the program runs on untraced (outlive.sh): ended by its pid
[ -n "$prog" ] && kill -KILL "$prog" 2>/dev/null
i=0
while [ -n "$prog" ] && kill -0 "$prog" 2>/dev/null && [ $i -lt 100 ]; do
	i=$((i + 1))
	sleep 0.05
done
cmp -s prev.json k.json || fail "SIGKILL: the previous timeline is not whole"

# Refused: -c has no times; a directory that cannot take the file.
"$FORTSTAT" -c --timeline=c.json "$BIN/abcd-O0" >/dev/null 2>c.err
same "-c: exit status" "$?" 125
grep -q -- '--timeline needs times' c.err || fail "-c: $(cat c.err)"
"$FORTSTAT" --timeline=/nonexistent/t.json "$BIN/abcd-O0" >/dev/null 2>nd.err
same "no directory: exit status" "$?" 125
grep -q 'cannot write the timeline' nd.err || fail "no directory: $(cat nd.err)"
finish
