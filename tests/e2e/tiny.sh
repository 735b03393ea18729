#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tiny.sh - routines shorter than a jmp (a load and a ret, xor %eax,%eax;
# ret), a routine entered past its first instruction by another (as
# glibc's mempcpy enters memmove), one whose loop goes back to its second
# instruction with no padding near (moved whole), and glibc's indirect
# functions' targets (-l libc): exact counts, same output and exit status;
# with the probes none of them stops at each call but the one with no
# padding after it, which -v names with its reason.
. "$SRCDIR/tests/lib.sh"
for opt in O0 O2; do
	p=$BIN/tiny-$opt
	traced -- "$p"
	grep -q '^sum 22230$' t.out || fail "$p: output $(cat t.out)"
	expect "$p" main 1 getv 300 zero 200 fwd 100 fwd_p 50 ident 30 ident2 30 twice 20 llen 25
	traced -l libc -- "$p"
	expect "$p" main 1 fwd 100 fwd_p 50 libc.so.6:memrchr 70 libc.so.6:rawmemchr 40 \
		libc.so.6:wcsnlen 10
	[ "$MECH" = probes ] || continue
	"$FORTSTAT" -v -l libc -o /dev/null "$p" >/dev/null 2>v.err
	! grep -E ':(memrchr|rawmemchr|wcsnlen): a trap' v.err ||
		fail "$p: glibc's indirect functions' targets take a trap"
	grep -q '^fortstat: libc.so.6: [0-9]* timed routines take a trap at each call$' v.err ||
		fail "$p: -v does not count libc's routines that trap"
	"$FORTSTAT" -v -o /dev/null "$p" >/dev/null 2>v.err
	grep 'a trap at each call' v.err >traps.txt
	want="fortstat: ident: a trap at each call (a routine shorter than a jmp, without padding after it)
fortstat: $p: 1 timed routine takes a trap at each call"
	[ "$(cat traps.txt)" = "$want" ] || fail "$p: the routines that trap: $(cat traps.txt)"
done
# the shapes are there: at -O2 getv and zero are shorter than a jmp with
# padding after them, ident has none, fwd_p jumps to fwd's second instruction,
# llen follows fwd with no padding between them
objdump -d --no-show-raw-insn "$BIN/tiny-O2" >dis.txt
for f in getv zero ident; do
	awk -v f="<$f>:" '$2 == f { getline; getline; print $2; exit }' dis.txt | grep -qx ret ||
		fail "tiny-O2: $f is not one instruction and a ret"
done
grep -A3 '<fwd_p>:' dis.txt | grep -q 'jmp.*<fwd+0x3>' || fail "tiny-O2: fwd_p does not jump to fwd+3"
grep -B2 '<llen>:' dis.txt | grep -q 'ret' || fail "tiny-O2: llen does not follow fwd's ret"
grep -A8 '<llen>:' dis.txt | grep -q 'jmp.*<llen+0x2>' || fail "tiny-O2: llen does not loop to llen+2"
finish
