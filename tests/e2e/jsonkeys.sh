#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# jsonkeys.sh - every key of fortstat's JSON report is documented in the man
# page's JSON REPORT section: the keys that src/report/json.c writes (its
# string literals) and those that real runs give (threads, -f, an MPI rank,
# -c, a signal, both clocks), each must be a bold item of that section.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

# the keys written as literals by the JSON view
grep -o '\\"[a-z_0-9]*\\":' "$SRCDIR/src/report/json.c" | tr -d '\\":' | sort -u >static.txt
[ "$(wc -l <static.txt)" -ge 40 ] || fail "only $(wc -l <static.txt) keys found in json.c"

# the keys of real reports
run() {
	out=$1
	shift
	"$FORTSTAT" --format=json -o "$out" "$@" >/dev/null 2>run.err </dev/null
}
run plain.json "$BIN/chain-O0"
run threads.json --threads "$BIN/threads-O0"
run follow.json -f "$BIN/forks-O0"
run count.json -c "$BIN/abcd-O0"
run signals.json "$BIN/signals-O0"
OMPI_COMM_WORLD_RANK=1 OMPI_COMM_WORLD_SIZE=2 run rank.json "$BIN/chain-O2"
json_valid plain.json threads.json follow.json count.json signals.json rank.json
python3 - plain.json threads.json follow.json count.json signals.json rank.json >real.txt <<'PY' ||
import json, sys

keys = set()

def walk(v):
    if isinstance(v, dict):
        for k, x in v.items():
            keys.add(k)
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)

for f in sys.argv[1:]:
    walk(json.load(open(f)))
print("\n".join(sorted(keys)))
PY
	fail "a report is not JSON"
for k in threads tid rank size cpu wall warnings trap_calls; do
	grep -qx "$k" real.txt || fail "no run gave the key $k: the runs miss a case"
done

# the bold words of the man page's JSON REPORT section (.B, .BR, .TP items)
sed -n '/^\.SH JSON REPORT/,/^\.SH /p' "$SRCDIR/man/fortstat.1" >section.txt
[ -s section.txt ] || fail "the man page has no JSON REPORT section"
python3 - section.txt >documented.txt <<'PY'
import shlex, sys

words = set()
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    for macro, bold in ((".B ", (0,)), (".BR ", (0, 2, 4, 6)), (".RB ", (1, 3, 5))):
        if line.startswith(macro):
            try:
                args = shlex.split(line[len(macro):].replace("\\", "\\\\"))
            except ValueError:
                args = line[len(macro):].split()
            for i in bold:
                if i < len(args):
                    words.add(args[i])
print("\n".join(sorted(words)))
PY

sort -u static.txt real.txt >keys.txt
while read -r k; do
	grep -qx "$k" documented.txt || fail "JSON key \"$k\" is not documented in man/fortstat.1 (JSON REPORT)"
done <keys.txt
finish
