#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# elffuzz.sh - fortstat on corrupted executables: a few hundred mutated
# copies of a small fixture (deterministic seeds: byte flips, truncations,
# fields of the ELF, program and section headers), each run directly and
# under fortstat, by tests/elffuzz (see its header for what it demands:
# never a crash or a hang of fortstat, every refusal one line with the
# reason, what the kernel runs is timed or refused in one line), in three
# builds of the fixture (-O0, -O2, and the package's flags: ending-deb, see
# fixtures/build.sh), count-only and with clocks: 420 mutants, about as
# many as the two builds had before. Bounded: about 15 s on an idle
# machine; bench/elffuzz runs many more seeds and builds.
. "$SRCDIR/tests/lib.sh"

FUZZ=$FIXTURES/../tests/elffuzz
[ -x "$FUZZ" ] || skip "tests/elffuzz not built"

# fuzz FIXTURE FIRST COUNT OPTS...: one batch; its summary line, and every
# failure in full.
fuzz() {
	fix=$1
	shift
	"$FUZZ" "$FORTSTAT" "$fix" "$T" "$@" >fuzz.out 2>&1
	rc=$?
	tail -n 1 fuzz.out
	if [ "$rc" != 0 ]; then
		fail "$fix: elffuzz exited $rc"
		grep -v '^elffuzz: ' fuzz.out | head -n 100 >&2
	fi
}

# ending: a dozen calls, so that a run under fortstat stays short even on a
# loaded machine; --pin=never: with every test suite of a busy machine
# pinning its runs to one CPU, a run took over 15 s twice in 2,400.
for flavour in O0 O2 deb; do
	fuzz "$BIN/ending-$flavour" 0 120 -c --pin=never
	fuzz "$BIN/ending-$flavour" 10000 20 --pin=never
done

# The reproducers of issue 16, exactly.
cp "$BIN/chain-O0" good
chmod +x good
# EI_VERSION (byte 6) changed: the kernel runs it, so fortstat times it.
cp good evers
printf '\007' | dd of=evers bs=1 seek=6 conv=notrunc 2>/dev/null
"$FORTSTAT" -c ./evers >/dev/null 2>err.txt
rc=$?
[ "$rc" = 0 ] || fail "EI_VERSION 7: exit $rc: $(cat err.txt)"
grep -q '^\* main  *1$' err.txt || fail "EI_VERSION 7: main not timed: $(cat err.txt)"
# The top byte of the code segment's p_memsz: the kernel kills it in
# execve; fortstat says why in one line, before running it.
cp good memsz
off=$((64 + 3 * 56 + 47)) # phdr[3] is the R E PT_LOAD of chain-O0
printf '\377' | dd of=memsz bs=1 seek=$off conv=notrunc 2>/dev/null
"$FORTSTAT" ./memsz >/dev/null 2>err.txt
rc=$?
[ "$rc" = 126 ] || fail "p_memsz: exit $rc: $(cat err.txt)"
[ "$(wc -l <err.txt)" = 1 ] || fail "p_memsz: not one line: $(cat err.txt)"
grep -q 'corrupt program headers' err.txt || fail "p_memsz: $(cat err.txt)"

# A corruption the ELF reader cannot foresee: the interpreter's own code
# segment is one the kernel cannot map, so the kernel kills the program in
# execve. The tracer says so in one line (it was a silent 126).
interp=$(readelf -lW good | sed -n 's/.*program interpreter: \(.*\)]$/\1/p')
[ -r "$interp" ] || skip "no interpreter found in $BIN/chain-O0"
cp "$interp" ldbad
idx=$(readelf -lW ldbad | awk '/^  [A-Z]/ && $1 != "Type" { if ($1 == "LOAD") { print n; exit } n++ }')
phoff=$(od -An -tu8 -j32 -N8 ldbad | tr -d ' ')
printf '\377' | dd of=ldbad bs=1 seek=$((phoff + idx * 56 + 46)) conv=notrunc 2>/dev/null
cp good badinterp
at=$(grep -obUa -- "$interp" badinterp | head -n 1 | cut -d: -f1)
printf './ldbad\000' | dd of=badinterp bs=1 seek="$at" conv=notrunc 2>/dev/null
sh -c './badinterp >/dev/null 2>&1' 2>/dev/null
rc=$?
[ "$rc" -gt 128 ] || fail "bad interpreter: the direct run exited $rc, not killed"
"$FORTSTAT" ./badinterp >/dev/null 2>err.txt
rc=$?
[ "$rc" = 126 ] || fail "bad interpreter: exit $rc: $(cat err.txt)"
[ "$(wc -l <err.txt)" = 1 ] || fail "bad interpreter: not one line: $(cat err.txt)"
grep -q '^fortstat: error: \./badinterp: the kernel could not load it (killed by .* in execve)' err.txt ||
	fail "bad interpreter: $(cat err.txt)"
# An interpreter that does not exist is named.
cp good nointerp
printf './nothere\000' | dd of=nointerp bs=1 seek="$at" conv=notrunc 2>/dev/null
"$FORTSTAT" ./nointerp >/dev/null 2>err.txt
rc=$?
[ "$rc" = 126 ] || fail "missing interpreter: exit $rc: $(cat err.txt)"
grep -q '^fortstat: error: \./nointerp: its ELF interpreter \./nothere (PT_INTERP) does not exist$' err.txt ||
	fail "missing interpreter: $(cat err.txt)"

finish
