#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# schema.sh - man/fortstat.schema.json, the JSON report's schema: a valid
# schema that admits real reports (--threads, -f, -c, a merge, the golden
# files of check_report), refuses documents broken one way each
# (tests/validate-json must fail, naming the place), knows every key that
# src/report/json.c writes (a run's and a merge's), and has each of its keys
# described in the man page's JSON REPORT section.
. "$SRCDIR/tests/lib.sh"
"${JSON_PYTHON:-/usr/bin/python3}" -c 'import jsonschema' 2>/dev/null ||
	fail "python3-jsonschema is not installed for ${JSON_PYTHON:-/usr/bin/python3}"
V="${JSON_PYTHON:-/usr/bin/python3} $SRCDIR/tests/validate-json $SRCDIR/man/fortstat.schema.json"

# real reports pass
"$FORTSTAT" --threads --format=json -o t.json "$BIN/threads-O0" >/dev/null 2>&1
"$FORTSTAT" -f -c --format=json -o f.json "$BIN/forks-O0" >/dev/null 2>&1
"$FORTSTAT" --merge --format=json -o m.json t.json t.json 2>/dev/null ||
	fail "--merge failed"
json_valid t.json f.json m.json
# and the golden reports that check_report compares the JSON view with
json_valid "$SRCDIR"/tests/golden/*.json

# broken documents fail, each with its place named
/usr/bin/python3 - <<'PY' || fail "cannot make the broken documents"
import copy, json
t = json.load(open("t.json"))
m = json.load(open("m.json"))
f = json.load(open("f.json"))
def put(name, doc):
    json.dump(doc, open(name, "w"))
d = copy.deepcopy(t); del d["routines"][0]["calls"]; put("b-nocalls.json", d)
d = copy.deepcopy(t); d["surprise"] = 1; put("b-extra.json", d)
d = copy.deepcopy(t); d["mechanism"] = "int3"; put("b-mech.json", d)
d = copy.deepcopy(t); d["routines"][0]["calls"] = str(d["routines"][0]["calls"]); put("b-str.json", d)
d = copy.deepcopy(t); d["threads"][0]["routines"][0]["cpu"] = d["routines"][0]["cpu"]; put("b-thrclock.json", d)
d = copy.deepcopy(t); d["rank"] = 1; put("b-ranknosize.json", d)
d = copy.deepcopy(t); d["routines"][0]["address"] = "4096"; put("b-addr.json", d)
d = copy.deepcopy(m); d["routines"][0]["calls"] = None; put("b-mcalls.json", d)
d = copy.deepcopy(m); del d["routines"][0]["self_s"]["imbalance"]; put("b-mstat.json", d)
d = copy.deepcopy(f); d[1]["stacks"][0]["frames"] = []; put("b-frames.json", d)
put("b-empty.json", [])
PY
head -c 300 t.json >b-trunc.json
for b in b-*.json; do
	# shellcheck disable=SC2086
	$V "$b" >out.txt 2>&1
	rc=$?
	[ "$rc" = 1 ] || fail "$b: validate-json exit status $rc, expected 1: $(cat out.txt)"
	grep -q "^$b: " out.txt || fail "$b: no error named: $(cat out.txt)"
done
# the errors name the place in the document
# shellcheck disable=SC2086
$V b-nocalls.json | grep -q "'calls' is a required property" ||
	fail "b-nocalls.json: $($V b-nocalls.json)"
# shellcheck disable=SC2086
$V b-str.json | grep -q "/routines/0/calls" || fail "b-str.json: $($V b-str.json)"
# a broken schema is refused
sed 's/"type": "object"/"type": "objet"/' "$SRCDIR/man/fortstat.schema.json" >bad-schema.json
"${JSON_PYTHON:-/usr/bin/python3}" "$SRCDIR/tests/validate-json" bad-schema.json t.json >out.txt 2>&1
[ $? = 2 ] || fail "a broken schema: not refused: $(cat out.txt)"

# the schema's keys: every key written (json.c: runs and merges) and each described
/usr/bin/python3 - "$SRCDIR/man/fortstat.schema.json" >schema-keys.txt <<'PY'
import json, sys
keys = set()
def walk(v):
    if isinstance(v, dict):
        for k, x in v.get("properties", {}).items():
            keys.add(k)
        for x in v.values():
            walk(x)
    elif isinstance(v, list):
        for x in v:
            walk(x)
walk(json.load(open(sys.argv[1])))
print("\n".join(sorted(keys)))
PY
cat "$SRCDIR/src/report/json.c" |
	grep -o '\\"[a-z_0-9]*\\":' | tr -d '\\":' | sort -u >written.txt
[ "$(wc -l <written.txt)" -ge 50 ] || fail "only $(wc -l <written.txt) keys found in json.c"
while read -r k; do
	grep -qx "$k" schema-keys.txt || fail "key \"$k\" (src/report) is not in man/fortstat.schema.json"
done <written.txt
sed -n '/^\.SH JSON REPORT/,/^\.SH /p' "$SRCDIR/man/fortstat.1" >section.txt
while read -r k; do
	grep -Eq "^\.(B|BR|RB|TP|IP).*(^|[ \"])$k([ \",]|\$)" section.txt ||
		fail "schema key \"$k\" is not described in man/fortstat.1 (JSON REPORT)"
done <schema-keys.txt
finish
