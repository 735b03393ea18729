#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# libs.sh - routines of shared libraries (-l): LAPACK/BLAS linked dynamically
# (counts equal the static run's and callgrind's), libm's sin/cos (indirect
# functions) and exp, a plugin loaded by dlopen, closed and loaded again,
# -x on a hot library routine, LIB:NAME qualified names.
. "$SRCDIR/tests/lib.sh"
cp "$SRCDIR/fixtures/dgesv.names" names.txt

# The static LAPACK fixture: the reference counts.
traced -n names.txt -- "$BIN/solve"
for r in main dgesv_ dgetrf_ dgetrf2_ dgetrs_ dgemm_ dtrsm_ dlaswp_ idamax_ lsame_ dscal_ ilaenv_; do
	eval "static_$r=\$(calls $r)"
done

p=$BIN/solve-dyn
traced -n names.txt -l libblas -l liblapack -- "$p"
grep -q "matches no routine" t.err && fail "$p: names of libraries said unmatched under -l"
# Names say where each routine lives (liblapack carries its own lsame_,
# and every call goes to it: it is first in the lookup order).
for r in dgesv_ dgetrf_ dgetrf2_ dgetrs_ dlaswp_ ilaenv_ lsame_; do
	eval "want=\$static_$r"
	expect "$p" "liblapack.so.3:$r" "$want"
done
for r in dgemm_ dtrsm_ idamax_ dscal_; do
	eval "want=\$static_$r"
	expect "$p" "libblas.so.3:$r" "$want"
done
expect "$p" main 1
callgrind_counts "$p"
same_as_callgrind "$p" main liblapack.so.3:dgesv_=dgesv_ liblapack.so.3:dgetrf2_=dgetrf2_ \
	libblas.so.3:dgemm_=dgemm_ libblas.so.3:dtrsm_=dtrsm_ liblapack.so.3:lsame_=lsame_ \
	liblapack.so.3:dlaswp_=dlaswp_ libblas.so.3:idamax_=idamax_
# JSON names the library of each routine.
"$FORTSTAT" -n names.txt -l libblas -l liblapack --format=json -o r.json "$p" >/dev/null 2>&1 ||
	fail "$p: JSON run failed"
json_valid r.json
grep -q '"name": "libblas.so.3:dgemm_", .*"module": "libblas.so.3"' r.json ||
	fail "$p: JSON lacks dgemm_'s module: $(grep dgemm_ r.json | head -1)"
grep -q '"name": "main", .*"module": null' r.json || fail "$p: JSON: main has a module"
# Library routines get the same net times as the program's: their stubs
# reach the return trap, so their stops are measured like any other (as
# deterministic as the counts: every stop but the first, 2 * calls - 1; it
# was 0 when library routines fell back to int3 patches, and 2 fewer while
# main, whose first bytes end with a call, took an int3), and BLAS's two
# heavy routines keep a real share of the program's CPU time (about 35-45%;
# 0 then).
MECH=$MECH python3 - "$p" <<'EOT' || fail "$p: library routines' times (stops measured, dgemm_+dtrsm_ share)"
import json, os, sys
d = json.load(open("r.json"))
calls = sum(r["calls"] for r in d["routines"])
heavy = sum(r["self_s"] for r in d["routines"] if r["name"] in ("libblas.so.3:dgemm_", "libblas.so.3:dtrsm_"))
print("stops measured", d["stops_measured"], "probe events", d["probe_events"], "calls", calls, "dgemm_+dtrsm_", heavy, "of", d["total_time_s"])
# with in-process probes every entry and return is an event read from the ring instead
seen = d["stops_measured"] + 1 if os.environ["MECH"] == "traps" else d["probe_events"]
sys.exit(not (seen == 2 * calls and heavy >= 0.15 * d["total_time_s"]))
EOT

# The hot routine excluded: gone from the report, every other count unchanged.
echo lsame_ >x.txt
traced -n names.txt -x x.txt -l libblas -l liblapack -- "$p"
absent "$p" liblapack.so.3:lsame_ libblas.so.3:lsame_
expect "$p" libblas.so.3:dgemm_ "$static_dgemm_" liblapack.so.3:dgetrf2_ "$static_dgetrf2_"

# LIB:NAME picks one library's lsame_ where both define one (-z shows uncalled ones).
printf 'liblapack:lsame_\nlibblas:dgemm_\n' >q.txt
traced -z -n q.txt -l libblas -l liblapack -- "$p"
expect "$p" liblapack.so.3:lsame_ "$static_lsame_" libblas.so.3:dgemm_ "$static_dgemm_" main 1
absent "$p" libblas.so.3:lsame_ liblapack.so.3:dgesv_
# ... and unqualified, both are timed (libblas's is never called: 0 with -z).
echo lsame_ >u.txt
traced -z -n u.txt -l libblas -l liblapack -- "$p"
expect "$p" liblapack.so.3:lsame_ "$static_lsame_" libblas.so.3:lsame_ 0

# A pattern that matches no library is said, and the run goes on.
traced -n names.txt -l libnosuch -- "$p"
grep -q "fortstat: warning: -l libnosuch: no library of the program matched" t.err ||
	fail "$p: no warning for -l libnosuch: $(cat t.err)"
grep -q "'dgemm_' matches no routine in .* or the libraries of -l" t.err ||
	fail "$p: dgemm_ (in no library timed) not said unmatched: $(cat t.err)"

for opt in O0 O2; do
	# libm: sin and cos are indirect functions (resolved in the program), exp is not.
	p=$BIN/mathcalls-$opt
	traced -l libm -- "$p"
	expect "$p" libm.so.6:sin 1000 libm.so.6:cos 1000 libm.so.6:exp 300 main 1
	[ "$opt" = O0 ] && expect "$p" wave 1000
	absent "$p" libmvec.so.1:sin
	# -n applies to library routines
	echo sin >s.txt
	traced -n s.txt -l 'libm.so*' -- "$p"
	expect "$p" libm.so.6:sin 1000 main 1
	absent "$p" libm.so.6:cos libm.so.6:exp
	# a stripped executable: refused alone (nothing to time), but with -l
	# its libraries' routines are timed as ever
	strip -o stripped "$p"
	"$FORTSTAT" -o r.txt ./stripped >/dev/null 2>err.txt </dev/null
	[ $? = 126 ] || fail "stripped $p: not refused without -l"
	grep -q "^fortstat: error: \./stripped: no function symbols (stripped?): time its libraries' routines with -l, e.g. fortstat -l libc \./stripped\$" err.txt ||
		fail "stripped $p: -l not named: $(cat err.txt)"
	[ "$(wc -l <err.txt)" = 1 ] || fail "stripped $p: not one line: $(cat err.txt)"
	traced -l libm -- ./stripped
	expect "stripped $p" libm.so.6:sin 1000 libm.so.6:cos 1000 libm.so.6:exp 300
	absent "stripped $p" main

	# A plugin loaded by dlopen after main starts, closed, loaded again: counts add up.
	p=$BIN/dlhost-$opt
	traced -l 'libplug*' -- "$p" "$BIN/libplug-$opt.so"
	expect "$p" "libplug-$opt.so:plug_work" 15 "libplug-$opt.so:plug_helper" 60 main 1
	# without -l the plugin is not timed, and nothing else changes
	traced -- "$p" "$BIN/libplug-$opt.so"
	absent "$p" "libplug-$opt.so:plug_work"
	expect "$p" main 1
	# opened by a relative path, and found through LD_LIBRARY_PATH=.: the
	# link map names it "./libplug-O2.so"
	cp "$BIN/libplug-$opt.so" .
	traced -l 'libplug*' -- "$p" "./libplug-$opt.so"
	expect "$p" "libplug-$opt.so:plug_work" 15 "libplug-$opt.so:plug_helper" 60 main 1
	export LD_LIBRARY_PATH=.
	traced -l 'libplug*' -- "$p" "libplug-$opt.so"
	unset LD_LIBRARY_PATH
	expect "$p" "libplug-$opt.so:plug_work" 15 "libplug-$opt.so:plug_helper" 60 main 1
	rm -f "libplug-$opt.so"
done

# C++ exceptions with libstdc++ and libc timed too: the unwinder calls timed
# library routines (the personality routine) while it walks the stack, and
# must still find the real return addresses there.
for opt in O0 O2; do
	p=$BIN/throwlib-$opt
	traced -l 'libstdc++' -l libc -l libgcc_s -- "$p"
	expect "$p" main 1 "level1(unsigned long)" 6 "level2(unsigned long)" 6 \
		"grab(unsigned long)" 6 "parse(char const*)" 3 "conv(char const*)" 3
	[ "$(calls 'libstdc++.so.6:__gxx_personality_v0')" -gt 0 ] ||
		fail "$p: the personality routine was not timed"
	grep -q "libgcc_s.so.1 is the unwinder's library" t.err ||
		fail "$p: -l libgcc_s not said to be left untimed: $(cat t.err)"
done

# A static executable has no shared libraries: said, and timed as usual.
traced -l libc -- "$BIN/chain-static-O2"
grep -q "statically linked" t.err || fail "chain-static: -l on a static executable not said"
expect chain-static main 1
finish
