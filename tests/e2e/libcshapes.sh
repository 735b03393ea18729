#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# libcshapes.sh - glibc's routines of shapes that took a trap at each call
# under the probes (fixtures/libcshapes.c: time() resolved into the vDSO,
# __read_nocancel's syscall among its first 5 bytes, memcpy@GLIBC_2.2.5
# entered past its first instruction with 8 bytes of padding after it):
# exact counts (callgrind's, the program's own), same output; with the
# probes, the only routines of libc that trap at each call are the
# unwinder's (on purpose), and none of these calls stops.
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/libcshapes-$opt
	traced -l libc -- "$p" 50
	[ "$(cat t.out)" = "nprocs 1" ] || fail "$p: output $(cat t.out)"
	expect "$p" main 1 libc.so.6:time 1000 libc.so.6:get_nprocs 50 \
		libc.so.6:memcpy@GLIBC_2.2.5 300
	# __read_nocancel: callgrind's count less the dynamic loader's own
	# calls of its copy (the same with no get_nprocs)
	callgrind_counts "$p" 0
	base=$(awk '$1 == "__read_nocancel" { print $2 }' cg.txt)
	callgrind_counts "$p" 50
	all=$(awk '$1 == "__read_nocancel" { print $2 }' cg.txt)
	[ -n "$all" ] && [ "$all" -gt "${base:-0}" ] ||
		fail "$p: callgrind saw no __read_nocancel from get_nprocs (${base:-0}, ${all:-0})"
	expect "$p" libc.so.6:__read_nocancel $((all - ${base:-0}))
	[ "$MECH" = probes ] || continue
	"$FORTSTAT" -v -l libc --format=json -o r.json "$p" 1 >/dev/null 2>v.err
	grep -q '"trap_calls": 0,' r.json ||
		fail "$p: calls trapped: $(grep -o '"trap_calls": [0-9]*' r.json)"
	grep ': a trap at each call (' v.err | grep -v '(the unwinder: ' >traps.txt || true
	[ ! -s traps.txt ] || fail "$p: libc's routines that trap: $(cat traps.txt)"
done
