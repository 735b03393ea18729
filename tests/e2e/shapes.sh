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
	expect "$p" main 1 get 400 bump 400
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
p=$BIN/ftn-O0
traced -- "$p"
expect "$p" main 1 MAIN__ 1 geom::scale 50 geom::norm2d 50 accum 50 fact 10
# At -O2 gfortran inlines and unrolls: compare with callgrind's exact counts.
p=$BIN/ftn-O2
traced -- "$p"
callgrind_counts "$p"
same_as_callgrind "$p" main MAIN__ fact=fact_
finish
