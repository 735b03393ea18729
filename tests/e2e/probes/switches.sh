#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# switches.sh - context-switch records the kernel drops are said, never
# silent: pingpong's two threads switch 80,000 times inside ping() and
# pong() with no stop between. With the test hook FORTSTAT_SWITCH_PAGES=1
# (one page a ring, read at stops only) the records surely overflow: the
# table says "switch records lost" with both threads, JSON the same facts.
# With the default rings and their reader, whatever is lost is said the
# same way. Output, exit status and counts stay exact either way.
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 (JSON reading) not found"

# lost FILE.json: the JSON's loss facts, consistent ("stops threads" printed)
lost() {
	python3 - "$1" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
stops, tids, recs = d["switch_lost_stops"], d["switch_lost_tids"], d["switch_records_lost"]
assert (stops == 0) == (tids == []) and recs >= 0 and len(set(tids)) == len(tids) <= 4, d
assert stops == 0 or len(tids) <= stops, d
print(stops, len(tids))
PY
}

# line FILE.txt: the table's line, when the report has one ("stops threads" printed)
line() {
	sed -n 's/^  switch records lost *\([0-9]*\) stops   (threads* \([0-9, ]*\): CPU times spread over elapsed time there.*/\1 \2/p' "$1" |
		awk '{ print $1, NF - 1 }'
}

for opt in O0 O2; do
	p=$BIN/pingpong-$opt
	FORTSTAT_SWITCH_PAGES=1
	export FORTSTAT_SWITCH_PAGES
	traced -- "$p"
	expect "$p (one page)" main 1 ping 1 pong 1
	"$FORTSTAT" --format=json -o l.json "$p" >/dev/null 2>&1 &&
		"$FORTSTAT" -o l.txt "$p" >/dev/null 2>&1 || fail "$p (one page): fortstat failed"
	unset FORTSTAT_SWITCH_PAGES
	# both threads overflowed their one page (20,000 rounds: 80,000 records
	# each), in the JSON and in the table
	got=$(lost l.json) || fail "$p (one page): the loss facts"
	echo "$got" | awk '{ exit !($1 >= 2 && $2 == 2) }' ||
		fail "$p (one page): lost at stops, threads: ${got:-?} (expected 2 or more, 2)"
	got=$(line l.txt)
	echo "$got" | awk '{ exit !($1 >= 2 && $2 == 2) }' ||
		fail "$p (one page): table: $(grep 'switch records' l.txt)"

	traced -- "$p"
	expect "$p" main 1 ping 1 pong 1
	"$FORTSTAT" --format=json -o d.json "$p" >/dev/null 2>&1 &&
		"$FORTSTAT" -o d.txt "$p" >/dev/null 2>&1 || fail "$p: fortstat failed"
	got=$(lost d.json) || fail "$p: the loss facts (default rings)"
	[ "${got%% *}" = 0 ] || echo "$p: switch records lost with the default rings: $got" >&2
	got=$(line d.txt)
	[ -z "$got" ] || echo "$p: the table says switch records were lost: $got" >&2
done
finish
