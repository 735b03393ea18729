#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# rust.sh - a Rust program (Debian's rustc) whose panics are caught with
# catch_unwind through timed frames: the unwinder calls the program's own
# personality routine mid-walk, where return addresses must stay original.
# Same output and exit status, exact counts, caught frames not INCOMPLETE,
# names demangled in both manglings.
. "$SRCDIR/tests/lib.sh"
[ -x "$BIN/panic-O0" ] || skip "no Rust compiler when the fixtures were built"
for p in "$BIN"/panic-O0 "$BIN"/panic-O2 "$BIN"/panic-v0-O0 "$BIN"/panic-v0-O2; do
	traced -- "$p"
	grep -q '^sum 13380 caught 10$' t.out || fail "$p: output $(cat t.out)"
	expect "$p" "panic::leaf" 100 "panic::middle" 100 __rust_start_panic 10 \
		__rust_panic_cleanup 10 main 1
	for r in panic::leaf panic::middle panic::main main; do
		[ "$(incomplete "$r")" = 0 ] || fail "$p: $r INCOMPLETE after caught panics"
	done
done
finish
