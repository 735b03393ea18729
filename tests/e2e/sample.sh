#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# sample.sh - --sample and --lines: where inside a routine. hotline's hot()
# spends its time in one loop on one line (HOT), warm() in one of its own
# (WARM): under --sample each line has the most of its routine's samples
# (>= 60 %); mixed() spends its time in exp(), untimed: those samples are
# its own by FORTSTAT's folding rule, "(untimed callees)" (>= 50 %; with
# probes folded by time as its ring is read), at -O0 and -O2, in the table,
# JSON and callgrind (what
# callgrind_annotate shows beside the source); the counts are exact, the
# lines' times add up to their routine's, the samples match the CPU time at
# the rate asked; refused by the kernel (the FORTSTAT_SAMPLE_REFUSE hook),
# one line says so and the report is whole.
. "$SRCDIR/tests/lib.sh"
command -v python3 >/dev/null || skip "python3 is not installed"

src=$SRCDIR/fixtures/hotline.c
hot=$(grep -n '/\* HOT \*/' "$src" | cut -d: -f1)
warm=$(grep -n '/\* WARM \*/' "$src" | cut -d: -f1)
[ -n "$hot" ] && [ -n "$warm" ] || fail "no HOT or WARM line in $src"

# Can this kernel sample at all (perf_event_paranoid 3, a container's filter)?
"$FORTSTAT" --sample "$BIN/hotline-O0" 1 >/dev/null 2>probe.err </dev/null
if grep -q 'refused to sample' probe.err; then
	skip "perf_event_open is refused here: $(grep 'refused' probe.err)"
fi

# check.py REPORT HZ THREADS: the JSON report's facts (python, one place).
cat >check.py <<'PY'
import json, sys

rep, hz, threads = json.load(open(sys.argv[1])), int(sys.argv[2]), int(sys.argv[3])
hot_line, warm_line = int(sys.argv[4]), int(sys.argv[5])
errs = []
r = {x["name"]: x for x in rep["routines"]}
s = rep.get("sampling")
if not s or s["hz"] != hz or s["refused"]:
    errs.append("sampling: %r" % (s,))
    s = {"samples": 0, "outside": 0}
for name, calls in (("hot", threads + 1), ("warm", threads + 1), ("mixed", 1), ("main", 1)):
    if name not in r or r[name]["calls"] != calls:
        errs.append("%s: calls %r, not %d" % (name, r.get(name, {}).get("calls"), calls))
for name, want in (("hot", hot_line), ("warm", warm_line)):
    lines = r.get(name, {}).get("lines") or []
    n = sum(l["samples"] for l in lines)
    if n < 20:
        errs.append("%s: %d samples, too few to judge" % (name, n))
        continue
    top = lines[0]
    if top["line"] != want or not top["file"].endswith("hotline.c"):
        errs.append("%s: hottest line %s:%s, not %d" % (name, top["file"], top["line"], want))
    if top["samples"] / n < 0.6:
        errs.append("%s: line %d has %.0f %% of its samples" % (name, want, 100 * top["samples"] / n))
    if any(lines[i]["samples"] < lines[i + 1]["samples"] for i in range(len(lines) - 1)):
        errs.append("%s: lines not most first" % name)
    # the samples only divide the routine's time
    if abs(sum(l["self_s"] for l in lines) - r[name]["self_s"]) > 1e-5:
        errs.append("%s: lines add up to %.6f s, the routine %.6f s"
                    % (name, sum(l["self_s"] for l in lines), r[name]["self_s"]))
# mixed's time is most in exp(), untimed: its samples there are its own (folded)
lines = r.get("mixed", {}).get("lines") or []
n = sum(l["samples"] for l in lines)
if n < 20:
    errs.append("mixed: %d samples, too few to judge" % n)
elif not lines[0]["callees"] or lines[0]["samples"] / n < 0.5 or lines[0]["line"] is not None:
    errs.append("mixed: the untimed callees are not the most of its samples: %r" % lines[:2])
# hot and warm call nothing untimed: a sample or two in fortstat's own code
# on their way in or out (an entry's resumption, the return trap) at most
for name in ("hot", "warm"):
    lines = r.get(name, {}).get("lines") or []
    callees = sum(l["samples"] for l in lines if l["callees"])
    if callees > 0.05 * max(sum(l["samples"] for l in lines), 1):
        errs.append("%s: %d samples in untimed callees" % (name, callees))
# HZ samples a CPU second: the program's CPU time at the rate asked (every
# thread sampled). 0.70 below: CI's make check, two other tests beside it,
# read 0.748 once (-O0: 390 samples in 0.522 s, the program's CPU time a
# third above its usual 0.39 s while its samples were not): the kernel's
# clock sampled fewer than the thread's CPU time under that load (cause not
# found; issue 27's note). Half the samples lost, or the rate not the one
# asked, still fail.
cpu = rep["total_time_s"]
if cpu > 0 and not 0.70 <= s["samples"] / (cpu * hz) <= 1.15:
    errs.append("%d samples in %.3f s of CPU time at %d Hz" % (s["samples"], cpu, hz))
if s["outside"] > 0.1 * max(s["samples"], 1):
    errs.append("%d of %d samples outside the timed routines" % (s["outside"], s["samples"]))
for e in errs:
    print(e)
sys.exit(1 if errs else 0)
PY

for opt in O0 O2; do
	# 40 M iterations: about 0.1 s at -O2, 0.25 s at -O0 (a hundred samples and more)
	"$FORTSTAT" --sample --format=json -o r.json "$BIN/hotline-$opt" 40 >t.out 2>t.err </dev/null ||
		fail "$opt: fortstat failed: $(cat t.err)"
	json_valid r.json
	python3 check.py r.json 997 0 "$hot" "$warm" >check.out ||
		fail "$opt: $(tr '\n' ';' <check.out)"
	# two threads more, at another rate: each thread's samples are read
	"$FORTSTAT" --sample=2000 --format=json -o r2.json "$BIN/hotline-$opt" 20 2 >t.out \
		2>t.err </dev/null || fail "$opt: fortstat failed with threads: $(cat t.err)"
	python3 check.py r2.json 2000 2 "$hot" "$warm" >check.out ||
		fail "$opt, 3 threads: $(tr '\n' ';' <check.out)"

	# the table: the hottest line under its routine's row, the samples summed up
	"$FORTSTAT" --sample --lines -o table.txt "$BIN/hotline-$opt" 40 >t.out 2>t.err </dev/null
	first=$(awk '$1 == "hot" { getline; print $1; exit }' table.txt)
	[ "$first" = "hotline.c:$hot" ] ||
		fail "$opt: the table's line under hot is '$first', not hotline.c:$hot: $(cat table.txt)"
	first=$(awk '$1 == "mixed" { getline; print $1 $2; exit }' table.txt)
	[ "$first" = "(untimedcallees)" ] ||
		fail "$opt: the table's line under mixed is '$first', not (untimed callees)"
	grep -q '^  samples  *[0-9][0-9]*   (997 Hz of CPU time' table.txt ||
		fail "$opt: no samples line in the table"
	# without --lines, no line rows
	"$FORTSTAT" --sample -o plain.txt "$BIN/hotline-$opt" 5 >t.out 2>t.err </dev/null
	grep -q 'hotline\.c:' plain.txt && fail "$opt: line rows without --lines"

	# callgrind: callgrind_annotate puts the most cost beside the HOT line
	if command -v callgrind_annotate >/dev/null; then
		"$FORTSTAT" --sample --format=callgrind -o cg.out "$BIN/hotline-$opt" 40 >t.out \
			2>t.err </dev/null
		# the fixture's file as its DWARF names it: relative to the build's
		# top (its comp_dir), ../../fixtures in make distcheck's build
		callgrind_annotate --auto=yes --include="$SRCDIR" \
			--include="$(cd "$FIXTURES/.." && pwd)" cg.out >ann.txt 2>ann.err ||
			fail "$opt: callgrind_annotate failed: $(cat ann.err)"
		# the annotated source's lines (not the '=>' call lines, which are
		# inclusive, nor line 0's: the untimed callees' and lines not known)
		best=$(awk '/Auto-annotated source:/ { on = 1 }
			on && !/=>|events annotated|unidentified lines/ && $1 ~ /^[0-9][0-9,]*$/ {
			c = $1; gsub(",", "", c); if (c + 0 > max) { max = c + 0; line = $0 } }
			END { print line }' ann.txt)
		case $best in
		*'/* HOT */'*) ;;
		*) fail "$opt: callgrind_annotate's costliest source line is not HOT: '$best'" ;;
		esac
	fi
done

# 20,000 Hz for a second with no stop: the ring (8,192 samples) is read
# while the program runs (sample_timer), none is lost
"$FORTSTAT" --sample=20000 --format=json -o fast.json "$BIN/hotline-O2" 150 >t.out 2>t.err \
	</dev/null || fail "20 kHz: fortstat failed: $(cat t.err)"
python3 check.py fast.json 20000 0 "$hot" "$warm" >check.out ||
	fail "20 kHz: $(tr '\n' ';' <check.out)"
python3 - fast.json <<'PY' || fail "20 kHz: samples were lost"
import json, sys
s = json.load(open(sys.argv[1]))["sampling"]
assert s["lost"] == 0 and not s["lost_more"] and s["samples"] > 12000, s
PY

# Refused (perf_event_paranoid, a seccomp filter): one line, and the report is whole.
FORTSTAT_SAMPLE_REFUSE=1 "$FORTSTAT" --sample --lines --format=json -o refused.json \
	"$BIN/hotline-O0" 5 >t.out 2>t.err </dev/null
echo $? >t.rc
[ "$(cat t.rc)" = 0 ] || fail "refused: fortstat exited $(cat t.rc)"
[ "$(grep -c 'fortstat: ' t.err)" = 1 ] || fail "refused: not one line: $(cat t.err)"
grep -q 'fortstat: warning: --sample: the kernel refused to sample' t.err ||
	fail "refused: the line does not say it: $(cat t.err)"
json_valid refused.json
python3 - refused.json <<'PY' || fail "refused: the report is not whole"
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["name"]: x for x in d["routines"]}
assert d["sampling"]["refused"] and d["sampling"]["samples"] == 0
assert r["hot"]["calls"] == 1 and r["warm"]["calls"] == 1 and r["main"]["calls"] == 1
assert r["hot"]["self_s"] > 0.3 * d["total_time_s"] and r["hot"]["lines"] == []
PY

# -c counts only: --sample has nothing to divide
"$FORTSTAT" -c --sample "$BIN/hotline-O0" 1 >t.out 2>t.err </dev/null &&
	fail "-c --sample was taken"
finish
