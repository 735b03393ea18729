#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# trapbias.sh - with the traps, what a run measures of each stop (the
# clocks' advance between two stops less the program's time by the TSC)
# leaves the stubs' own code in the segment: the entry stub's after its
# TSC and the return site's before its own, some 35-55 ns a call that
# stayed in the routine's time, and as much in its caller's, whatever the
# routine's body. The calibration measures them on its empty routine and
# its driver, and each measured stop is charged them too
# (trace_opts.seg_resid_ns). roundleaf's mid calls one leaf (a multiply
# and an add) 20,000 times, both timed: the self time a call of each, the
# median of the quiet runs, stays under 15 ns (leaf) and 20 ns (mid, which also
# makes the call); the binary before read 42-55 and 56-71.
# Each run calibrates afresh (FORTSTAT_CALIB_CACHE=0): the residual is
# measured by the calibration and moves with the load, and a kept one
# carries the load of its own moment. In CI's make check a calibration
# kept from another test's run read 43 and 53 ns a call here; under a hog
# on every CPU a quiet calibration kept read 37 and 48, a fresh one 9.6
# and 28 (medians of 8).
FORTSTAT_MECHANISM=traps
FORTSTAT_CALIB_CACHE=0
export FORTSTAT_MECHANISM FORTSTAT_CALIB_CACHE
. "$SRCDIR/tests/lib.sh"
# A CPU hog on every CPU (CI's loaded pass) makes what follows each stop
# slower than even a fresh calibration saw it: mid reads 15-40 ns a call
# there. That residual moving with the load within a run is an open
# finding (issue 27's note), not something this test's bound can hold.
pgrep -x stress-ng >/dev/null 2>&1 && skip "a CPU hog (stress-ng) runs: the stops' residual moves with it"
# Each round is judged only when the machine was quiet through it: the
# other work on the CPUs (all of /proc/stat's busy time less this run's
# own, fortstat's and the program's) under a tenth of the round's wall
# time. Under make -j2 check, a test beside it, fresh calibrations still
# read mid at 22-43 ns a call (CI, 5 rounds). Up to 15 rounds for 5 quiet
# ones; fewer than 3: skipped, saying so.
p=$BIN/roundleaf-O2
printf 'mid\nleaf10\n' >names.txt
python3 - "$FORTSTAT" "$p" >per.txt 2>quiet.err <<'PY' || fail "$p: $(tail -n 3 quiet.err)"
import json, os, resource, subprocess, sys, time
fs, prog = sys.argv[1], sys.argv[2]
hz = os.sysconf("SC_CLK_TCK")
def busy():
    f = open("/proc/stat").readline().split()[1:]
    v = [int(x) for x in f]
    return (sum(v) - v[3] - v[4]) / hz  # all but idle and iowait
quiet = loaded = 0
for _ in range(15):
    if quiet == 5:
        break
    b0, u0, t0 = busy(), resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    r = subprocess.run([fs, "-n", "names.txt", "--format=json", "-o", "r.json", prog, "20000", "1"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    b1, u1, t1 = busy(), resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
    if r.returncode:
        sys.exit("exit status %d under fortstat: %s" % (r.returncode, r.stderr.decode()[-300:]))
    own = (u1.ru_utime - u0.ru_utime) + (u1.ru_stime - u0.ru_stime)
    other = (b1 - b0) - own
    if other > 0.1 * (t1 - t0) + 2.0 / hz:
        loaded += 1
        print("round: other work %.3f s in %.3f s: not judged" % (other, t1 - t0), file=sys.stderr)
        continue
    d = json.load(open("r.json"))
    rt = {x["name"]: x for x in d["routines"]}
    assert d["mechanism"] == "traps", d["mechanism"]
    assert rt["mid"]["calls"] == 20000 and rt["leaf10"]["calls"] == 20000, (rt["mid"]["calls"], rt["leaf10"]["calls"])
    print(rt["leaf10"]["self_s"] / 20000 * 1e9, rt["mid"]["self_s"] / 20000 * 1e9)
    quiet += 1
print("quiet rounds %d, loaded %d" % (quiet, loaded), file=sys.stderr)
PY
n=$(wc -l <per.txt)
[ "$n" -ge 3 ] || skip "the machine was busy through $(grep -c 'not judged' quiet.err) of the rounds (other work beside this test): the quiet bound cannot be judged"
cut -d' ' -f1 per.txt >leaf.txt
cut -d' ' -f2 per.txt >mid.txt
leaf=$(median_of leaf.txt)
mid=$(median_of mid.txt)
awk -v v="$leaf" 'BEGIN { exit !(v < 15) }' ||
	fail "leaf10: $leaf ns a call under the traps (median of $n quiet rounds: $(tr '\n' ' ' <leaf.txt)), expected under 15"
awk -v v="$mid" 'BEGIN { exit !(v < 20) }' ||
	fail "mid: $mid ns a call under the traps (median of $n quiet rounds: $(tr '\n' ' ' <mid.txt)), expected under 20"
finish
