#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# lapack.sh - a real program nobody here wrote: DGESV from Debian's reference
# LAPACK/BLAS (static archives), timed with -n; every count equals callgrind's.
. "$SRCDIR/tests/lib.sh"
p=$BIN/solve
cp "$SRCDIR/fixtures/dgesv.names" names.txt
traced -n names.txt -- "$p"
callgrind_counts "$p"
same_as_callgrind "$p" main dgesv_ dgetrf_ dgetrf2_ dgetrs_ dgemm_ dtrsm_ dlaswp_ idamax_ lsame_ dscal_ ilaenv_
# sanity: the recursion and the hot routine were really seen
[ "$(calls dgetrf2_)" -gt 100 ] || fail "dgetrf2_ recursion not seen"
[ "$(calls lsame_)" -gt 1000 ] || fail "lsame_ not seen"
finish
