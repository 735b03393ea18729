#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# shapes.sh - recursion 100,000 deep, function pointers, RIP-relative first
# instructions, C++ classes, templates and exceptions, Fortran: exact counts,
# same output.
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/recurse-$opt
	traced -- "$p"
	expect "$p" main 1 rec 100001
	p=$BIN/fptr-$opt
	traced -- "$p"
	expect "$p" main 1 apply 600 add 300 mul 200 neg 100
	p=$BIN/riprel-$opt
	traced -- "$p"
	expect "$p" main 1 get 400 bump 400 vload 400 pager_get 400 fetch 400
	p=$BIN/classes-$opt
	traced -- "$p"
	expect "$p" main 1 "Square::area() const" 400 "Circle::area() const" 200 \
		"Square::Square(double)" 20 "Circle::Circle(double)" 10
	expect "$p" "total_area(std::vector<Shape*, std::allocator<Shape*> > const&)" 20
	# exceptions through timed frames (and a timed destructor): the unwinder
	# must find the real return addresses; the program behaves as without us
	p=$BIN/throw-$opt
	traced -- "$p"
	expect "$p" main 1 "thrower(int)" 30 "middle(int)" 30 "Guard::Guard(int)" 30 \
		"Guard::~Guard()" 30 "at(std::vector<int, std::allocator<int> > const&, int)" 20
	# thrown inside libstdc++ (bad_alloc from operator new, stoi): seen
	# at libgcc_s's unwinder, found through the dynamic linker
	p=$BIN/throwlib-$opt
	traced -- "$p"
	grep -q '^sum 33$' t.out || fail "$p: output $(cat t.out)"
	expect "$p" main 1 "level1(unsigned long)" 6 "level2(unsigned long)" 6 \
		"grab(unsigned long)" 6 "parse(char const*)" 3 "conv(char const*)" 3
	for r in "level1(unsigned long)" "grab(unsigned long)" "conv(char const*)" main; do
		[ "$(incomplete "$r")" = 0 ] || fail "$p: $r INCOMPLETE after a caught exception"
	done
done
objdump -d --no-show-raw-insn "$BIN/riprel-O2" | grep -A1 '<get>:' | grep -q '(%rip)' ||
	fail "riprel-O2: get does not start with a RIP-relative load"
objdump -d --no-show-raw-insn "$BIN/riprel-O2" | grep -A1 '<vload>:' | grep -q 'movdqa.*(%rip)' ||
	fail "riprel-O2: vload does not start with a 0x66-prefixed RIP-relative load"
objdump -d --no-show-raw-insn "$BIN/riprel-O2" | grep -A1 '<pager_get>:' | grep -q 'jmp.*\*0x110(%rdi)' ||
	fail "riprel-O2: pager_get does not start with an indirect jmp"
# none of them refused, with stubs or with int3 patches, but odd (a loop
# instruction first): said with -v, and counted in one line without
for stubs in 0 1; do
	FORTSTAT_NO_STUBS=$stubs "$FORTSTAT" -v -o /dev/null "$BIN/riprel-O2" >/dev/null 2>v.err
	[ "$(grep '^fortstat: not timing' v.err)" = "fortstat: not timing odd: loop instruction" ] ||
		fail "riprel-O2 (no stubs: $stubs): $(grep 'not timing' v.err)"
done
"$FORTSTAT" -o /dev/null "$BIN/riprel-O2" >/dev/null 2>v.err
# (the traps' overhead on so short a program is the report's own warning: trust.sh)
[ "$(grep -v '^fortstat: warning: the overhead removed is' v.err)" = "fortstat: warning: 1 routine could not be timed (fortstat -v says which and why)" ] ||
	fail "riprel-O2: the refusal is not summed up in one line: $(cat v.err)"
p=$BIN/ftn-O0
traced -- "$p"
expect "$p" main 1 MAIN__ 1 geom::scale 50 geom::norm2d 50 accum 50 fact 10
# At -O2 gfortran inlines and unrolls: compare with callgrind's exact counts.
p=$BIN/ftn-O2
traced -- "$p"
callgrind_counts "$p"
same_as_callgrind "$p" main MAIN__ fact=fact_
finish
