#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# execcache.sh - -f and a file exec'ed again (src/tracer/plancache.c): the
# spawner execs its program three times (fork + exec, posix_spawn, its own
# exec). The second and third take the symbol table read at the first, and
# with the probes every entry plan made there (-v says how many, none
# made): a program not built as PIE has its entries at the same addresses,
# a PIE is loaded elsewhere at each exec (ASLR) and its plans are moved
# there (-v says so); FORTSTAT_PLAN_CACHE=check plans them afresh too and
# finds none that differs; each section's exact counts equal those of a
# run without the cache (FORTSTAT_PLAN_CACHE=0) and the fixtures' own.
# With -l libc, each load of libc after the first takes its plans, moved.
# The scratch pages (the stubs) shared through a memfd: the execs map one,
# the counts unchanged. A throttle taken in one exec carries to the next
# (its stubs start throttled: plancache_carry), the counts unchanged, and so
# does a routine whose calls in the ended execs meet the rule together
# (plancache_pool); with FORTSTAT_THROTTLE_CARRY=0 each exec throttles on
# its own.
. "$SRCDIR/tests/lib.sh"
command -v "${CC:-cc}" >/dev/null || skip "no C compiler (${CC:-cc})"

# calls_of CSV N: section N's "routine calls" lines, sorted (one per routine)
calls_of() {
	awk -v want="$2" 'BEGIN { RS = ""; FS = "\n" } NR == want {
		for (i = 2; i <= NF; i++) { split($i, f, ","); print f[1], f[2] } }' "$1" | sort
}

# a PIE's load address changes at each exec unless ASLR is off
aslr=$(cat /proc/sys/kernel/randomize_va_space 2>/dev/null || echo 2)

for opt in O0 O2; do
	# riprel: RIP-relative first instructions, one that traps (a loop first);
	# tiny: routines shorter than a jmp, one entered past its first bytes
	for prog in riprel-nopie tiny-nopie chain-nopie riprel-pie tiny-pie chain-pie; do
		fx=${prog%-*}
		case $prog in
		*-nopie) pie="-fno-pie -no-pie" ;;
		*) pie="-fpie -pie" ;;
		esac
		prog=$prog-$opt
		# shellcheck disable=SC2086
		"${CC:-cc}" -$opt -g -fno-omit-frame-pointer $pie -o "$prog" \
			"$SRCDIR/fixtures/$fx.c" 2>cc.err || fail "$prog: cannot build: $(head -c 300 cc.err)"
		[ -x "$prog" ] || continue
		p="$BIN/spawner-$opt $PWD/$prog"

		# -v: the second and third exec take what the first read and planned
		# shellcheck disable=SC2086
		traced -f -v -- $p
		cp r.csv cached.csv
		n=$(grep -c "$prog: its symbols as read at its first exec" t.err)
		[ "$n" = 2 ] || fail "$prog -f: $n execs took the symbols read at the first, expected 2"
		if [ "$MECH" = probes ]; then
			grep "$prog: [0-9]* plans from the plan cache, " t.err >hits
			[ "$(wc -l <hits)" = 2 ] ||
				fail "$prog -f: $(wc -l <hits) execs took plans from the cache, expected 2"
			grep -v ' plans from the plan cache, 0 made$' hits >made
			[ ! -s made ] || fail "$prog -f: plans made again: $(cat made)"
			[ "$(sed 's/ plans.*//; s/.* //' hits | sort -u | wc -l)" = 1 ] ||
				fail "$prog -f: the two execs took different numbers of plans: $(cat hits)"
			[ "$(sed 's/ plans.*//; s/.* //' hits | head -n 1)" -gt 0 ] 2>/dev/null ||
				fail "$prog -f: no plan taken from the cache: $(cat hits)"
			# a PIE's plans moved to where each exec loaded it, every one of them
			grep "$prog: [0-9]* plans from the plan cache moved to this exec's addresses" t.err >moved
			case $prog in
			*-nopie-*) ;;
			*) [ "$aslr" = 0 ] || [ "$(sed 's/ plans.*//; s/.* //' moved)" = "$(sed 's/ plans.*//; s/.* //' hits)" ] ||
				fail "$prog -f: plans taken, then moved to each exec's addresses: $(cat hits moved)" ;;
			esac
			! grep -q "could not be moved" t.err || fail "$prog -f: $(grep 'could not be moved' t.err)"
		fi

		# the cache off: the same sections, the same counts
		FORTSTAT_PLAN_CACHE=0
		export FORTSTAT_PLAN_CACHE
		# shellcheck disable=SC2086
		traced -f -v -- $p
		! grep -q "plan cache\|first exec" t.err ||
			fail "$prog -f with FORTSTAT_PLAN_CACHE=0: the cache was used: $(grep -m1 'plan cache\|first exec' t.err)"
		for s in 1 2 3 4 5; do
			calls_of cached.csv $s >a
			calls_of r.csv $s >b
			[ -s a ] || fail "$prog -f: no section $s"
			cmp -s a b || fail "$prog -f: section $s's counts differ with the cache: $(diff a b | head -n 6)"
		done

		# check: every plan taken from the cache is made afresh and compared
		FORTSTAT_PLAN_CACHE=check
		# shellcheck disable=SC2086
		traced -f -v -- $p
		unset FORTSTAT_PLAN_CACHE
		if [ "$MECH" = probes ]; then
			n=$(grep -c "$prog: [1-9][0-9]* plans from the plan cache, checked against a fresh plan: 0 differ" t.err)
			[ "$n" = 2 ] || fail "$prog -f, check: $n execs' plans checked and equal, expected 2: $(grep 'plan cache' t.err)"
		fi
		! grep -q "differ from a fresh plan" t.err || fail "$prog -f, check: $(grep 'differ' t.err)"
	done
	# the sections of the program exec'ed: the fixtures' exact counts
	cp cached.csv r.csv
	for s in 2 4 5; do
		calls_of cached.csv $s >sec
		for kv in main=1 work=1000 leaf=3500 twice=500; do
			grep -qx "${kv%=*} ${kv#*=}" sec ||
				fail "$prog -f: section $s: ${kv%=*} $(grep "^${kv%=*} " sec || echo never), expected ${kv#*=}"
		done
	done
done

# The scratch pages through a memfd (plancache_write_scratch), whatever
# their size (FORTSTAT_SHARE_STUBS=1; by default past 256 KiB: cc1's 19 MB):
# the three execs of a program not built as PIE map the one memfd the
# first made (each writes over it only the pages that differ: the one that
# names its event memory), with the counts of a run that writes the pages
# (FORTSTAT_SHARE_STUBS=0); and a throttle's byte, written into a stub at
# the first exec's end, stays in that process's copy of its page, while
# the next execs' stubs start throttled (their page written over the
# memfd's): leaf, work and twice counted from their first call, the counts
# exact and those of execs each throttling on its own
# (FORTSTAT_THROTTLE_CARRY=0, where leaf is timed until each exec's end).
prog=chain-nopie-O2
p="$BIN/spawner-O2 $PWD/$prog"
FORTSTAT_SHARE_STUBS=1
export FORTSTAT_SHARE_STUBS
# shellcheck disable=SC2086
traced -f -v --throttle=10,100000 -- $p
cp r.csv shared.csv
grep "$prog: scratch pages at .* mapped from a memfd" t.err >maps
[ "$(wc -l <maps)" = 3 ] || fail "$prog -f, stubs shared: $(wc -l <maps) execs mapped the memfd, expected 3: $(grep 'scratch pages' t.err)"
grep -q ": 3 processes of this file mapped one, 1 memfds made$" maps ||
	fail "$prog -f, stubs shared: not one memfd for the three execs: $(cat maps)"
! grep -q "not shared" t.err || fail "$prog -f, stubs shared: $(grep 'not shared' t.err)"
# carried: thrown is how many execs throttled leaf at their end, from how
# many started with it throttled (-v)
carried() {
	thrown=$(grep -c "^fortstat: leaf: throttled after 3500 calls" t.err)
	from=$(grep -c "$prog: 3 routines start throttled, as in [12] earlier execs\{0,1\} of this file$" t.err)
}
if [ "$MECH" = probes ]; then
	carried
	[ "$thrown" = 1 ] || fail "$prog -f, stubs shared: leaf throttled at the end of $thrown execs, expected 1 (the first): $(grep 'leaf: throttled' t.err)"
	[ "$from" = 2 ] || fail "$prog -f, stubs shared: $from execs started with leaf, work and twice throttled, expected 2: $(grep 'start throttled' t.err)"
fi
FORTSTAT_SHARE_STUBS=0
# shellcheck disable=SC2086
traced -f -v --throttle=10,100000 -- $p
cp r.csv written.csv
! grep -q "memfd" t.err || fail "$prog -f, FORTSTAT_SHARE_STUBS=0: $(grep -m1 memfd t.err)"
if [ "$MECH" = probes ]; then
	carried
	[ "$thrown/$from" = 1/2 ] || fail "$prog -f, FORTSTAT_SHARE_STUBS=0: leaf throttled at the end of $thrown execs, from the start in $from, expected 1/2"
fi
# each exec on its own: leaf timed in each until its end (the stubs shared
# or not)
FORTSTAT_THROTTLE_CARRY=0
export FORTSTAT_THROTTLE_CARRY
for share in 1 0; do
	FORTSTAT_SHARE_STUBS=$share
	# shellcheck disable=SC2086
	traced -f -v --throttle=10,100000 -- $p
	cp r.csv alone$share.csv
	if [ "$MECH" = probes ]; then
		carried
		[ "$thrown/$from" = 3/0 ] || fail "$prog -f, FORTSTAT_THROTTLE_CARRY=0, FORTSTAT_SHARE_STUBS=$share: leaf throttled at the end of $thrown execs, from the start in $from, expected 3/0"
	fi
	! grep -q "start throttled" t.err || fail "$prog -f, FORTSTAT_THROTTLE_CARRY=0: $(grep -m1 'start throttled' t.err)"
done
unset FORTSTAT_SHARE_STUBS FORTSTAT_THROTTLE_CARRY
for s in 1 2 3 4 5; do
	calls_of shared.csv $s >a
	[ -s a ] || fail "$prog -f, stubs shared: no section $s"
	for other in written alone1 alone0; do
		calls_of $other.csv $s >b
		cmp -s a b || fail "$prog -f: section $s's counts differ from $other.csv's: $(diff a b | head -n 6)"
	done
done
for s in 2 4 5; do
	calls_of shared.csv $s >sec
	for kv in main=1 work=1000 leaf=3500 twice=500; do
		grep -qx "${kv%=*} ${kv#*=}" sec ||
			fail "$prog -f, stubs shared: section $s: ${kv%=*} $(grep "^${kv%=*} " sec || echo never), expected ${kv#*=}"
	done
done
# the report says which throttle came from an earlier exec: the table's
# mark; JSON's throttle_carried, with throttled_after 0
if [ "$MECH" = probes ]; then
	# shellcheck disable=SC2086
	"$FORTSTAT" -f --throttle=10,100000 -o r.txt $p >/dev/null 2>t.err </dev/null ||
		fail "$prog -f, table: fortstat failed: $(tail -n 3 t.err)"
	n=$(grep -c "^  leaf .*  THROTTLED from the start (in an earlier exec)$" r.txt)
	[ "$n" = 2 ] || fail "$prog -f, table: leaf marked throttled from the start in $n sections, expected 2: $(grep '^  leaf ' r.txt)"
	n=$(grep -c "^  leaf .*  THROTTLED after 3500 calls$" r.txt)
	[ "$n" = 1 ] || fail "$prog -f, table: leaf marked throttled after 3500 calls in $n sections, expected 1: $(grep '^  leaf ' r.txt)"
	# shellcheck disable=SC2086
	"$FORTSTAT" -f --throttle=10,100000 --format=json -o r.json $p >/dev/null 2>t.err </dev/null ||
		fail "$prog -f, JSON: fortstat failed: $(tail -n 3 t.err)"
	python3 -c '
import json, sys
for s in json.load(open(sys.argv[1])):
    for r in s["routines"]:
        if r["name"] == "leaf":
            print(r["calls"], r["throttled_after"], r.get("throttle_carried", "-"))
' r.json | sort | tr '\n' ' ' >marks || fail "$prog -f, JSON: cannot read r.json"
	[ "$(cat marks)" = "3500 0 True 3500 0 True 3500 3500 - " ] ||
		fail "$prog -f, JSON: leaf's calls, throttled_after, throttle_carried: $(cat marks), expected 3500 3500 - once, 3500 0 True twice"
	# pooled: leaf's 3,500 calls an exec never reach --throttle=5000 in one,
	# the first two execs' 7,000 do (plancache_pool): the third starts
	# with it throttled; without the carry, none
	for carry in 1 0; do
		# shellcheck disable=SC2086
		FORTSTAT_THROTTLE_CARRY=$carry "$FORTSTAT" -f --throttle=5000,100000 -o r.txt $p \
			>/dev/null 2>t.err </dev/null || fail "$prog -f, pooled: fortstat failed: $(tail -n 3 t.err)"
		grep '^  leaf ' r.txt | sed 's/  */ /g' | cut -d' ' -f2,3 | tr '\n' ' ' >leafs
		[ "$(cat leafs)" = "leaf 3500 leaf 3500 leaf 3500 " ] ||
			fail "$prog -f, pooled: leaf's rows: $(cat leafs)"
		n=$(grep -c "^  leaf .*  THROTTLED from the start (in an earlier exec)$" r.txt)
		[ "$n" = "$carry" ] ||
			fail "$prog -f, pooled, FORTSTAT_THROTTLE_CARRY=$carry: leaf throttled from the start in $n sections, expected $carry: $(grep '^  leaf ' r.txt)"
		! grep -q "THROTTLED after" r.txt ||
			fail "$prog -f, pooled: $(grep 'THROTTLED after' r.txt)"
	done
fi

# -l libc: the spawner and the three execs of its program load it, each
# elsewhere and with other patch numbers (the spawner's own routines are
# fewer); the three later ones take its plans from the first, moved; the
# counts are those of a run without the cache
prog=chain-pie-O2
p="$BIN/spawner-O2 $PWD/$prog"
# shellcheck disable=SC2086
traced -f -l libc -v -- $p
cp r.csv cached.csv
if [ "$MECH" = probes ]; then
	grep "libc[^:]*: [0-9]* plans from the plan cache, " t.err >hits
	[ "$(wc -l <hits)" = 3 ] || fail "$prog -f -l libc: $(wc -l <hits) loads of libc took plans from the cache, expected 3"
	grep -v ' plans from the plan cache, 0 made$' hits >made
	[ ! -s made ] || fail "$prog -f -l libc: plans made again: $(cat made)"
	[ "$(sed 's/ plans.*//; s/.* //' hits | sort -u | wc -l)" = 1 ] &&
		[ "$(sed 's/ plans.*//; s/.* //' hits | head -n 1)" -gt 1000 ] 2>/dev/null ||
		fail "$prog -f -l libc: libc's plans taken from the cache: $(cat hits)"
	grep "libc[^:]*: [0-9]* plans from the plan cache moved to this exec's addresses" t.err >moved
	[ "$aslr" = 0 ] || [ "$(sed 's/ plans.*//; s/.* //' moved)" = "$(sed 's/ plans.*//; s/.* //' hits)" ] ||
		fail "$prog -f -l libc: plans taken, then moved to each load's addresses: $(cat hits moved)"
fi
FORTSTAT_PLAN_CACHE=0
export FORTSTAT_PLAN_CACHE
# shellcheck disable=SC2086
traced -f -l libc -- $p
for s in 1 2 3 4 5; do
	calls_of cached.csv $s >a
	calls_of r.csv $s >b
	grep -q "^libc[^ ]*:" a || fail "$prog -f -l libc: section $s: no routine of libc timed"
	cmp -s a b || fail "$prog -f -l libc: section $s's counts differ with the cache: $(diff a b | head -n 6)"
done
FORTSTAT_PLAN_CACHE=check
# shellcheck disable=SC2086
traced -f -l libc -v -- $p
unset FORTSTAT_PLAN_CACHE
if [ "$MECH" = probes ]; then
	n=$(grep -c "libc[^:]*: [1-9][0-9]* plans from the plan cache, checked against a fresh plan: 0 differ" t.err)
	[ "$n" = 3 ] || fail "$prog -f -l libc, check: $n loads' plans checked and equal, expected 3: $(grep 'plan cache' t.err)"
fi
! grep -q "differ from a fresh plan" t.err || fail "$prog -f -l libc, check: $(grep 'differ' t.err)"
finish
