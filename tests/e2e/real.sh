#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# real.sh - Debian's own programs, nobody's fixtures: bc -l with -l libc,
# sqlite3 with -l libsqlite3 (a stripped program timed through its own
# library), /usr/bin/python3 (its exported routines), gcc -c and make -j2
# under -f (programs reached by exec). Output and exit status unchanged;
# counts equal callgrind's on a small input. Skipped where a program is not
# installed (.ci/run installs them).
. "$SRCDIR/tests/lib.sh"

need() {
	for p in "$@"; do
		command -v "$p" >/dev/null || skip "$p is not installed"
	done
}
need bc sqlite3 gcc make valgrind
[ -x /usr/bin/python3 ] || skip "/usr/bin/python3 is not installed"

# bc: stripped; its C library's routines are timed with -l libc.
printf 'scale=30\n4*a(1)\nx=0\nfor (i = 0; i < 200; i++) x = x + s(i)\nx\n' >pi.bc
traced -l libc -- bc -l pi.bc
grep -q '^3\.14159265358979323846264338327' t.out || fail "bc: no pi in its output: $(head -c 80 t.out)"
callgrind_counts bc -l pi.bc
# routines of libc alone (callgrind names the dynamic loader's by the same
# names: malloc's there is __minimal_malloc)
same_as_callgrind bc libc.so.6:malloc=malloc libc.so.6:free=free \
	libc.so.6:realloc=realloc libc.so.6:__ctype_b_loc=__ctype_b_loc libc.so.6:putc=putc \
	libc.so.6:ferror=ferror libc.so.6:__overflow=__overflow
[ "$(calls libc.so.6:malloc)" -gt 100 ] 2>/dev/null || fail "bc: malloc called $(calls libc.so.6:malloc) times"
# fortstat's own memory: the copy of the code it patches spans libc's
# routines, not the vDSO that time()'s indirect function resolves to (145 MB
# after libc here: fortstat's peak was 157 MB, 16 MB without it). The
# largest child's peak RSS (python's getrusage), bc's included.
rss=$(python3 -c 'import resource, subprocess, sys
subprocess.run(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)' "$FORTSTAT" -l libc -o /dev/null bc -l pi.bc)
[ "${rss:-999999}" -lt 65536 ] || fail "bc -l libc: fortstat's peak memory ${rss:-?} KiB, 64 MiB allowed"

# sqlite3: its own library, stripped to its exported routines.
{
	echo "CREATE TABLE t(id INTEGER PRIMARY KEY, name TEXT, v REAL);"
	echo "BEGIN;"
	i=1
	while [ $i -le 300 ]; do
		echo "INSERT INTO t(name, v) VALUES ('n$((i % 17))', $i.5);"
		i=$((i + 1))
	done
	echo "COMMIT;"
	echo "SELECT count(*), sum(v) FROM t;"
	echo "SELECT name, count(*) FROM t GROUP BY name ORDER BY 2 DESC, 1 LIMIT 3;"
} >q.sql
traced -l libsqlite3 -- sqlite3 :memory: ".read q.sql"
grep -q '^300|' t.out || fail "sqlite3: no count in its output: $(head -c 80 t.out)"
callgrind_counts sqlite3 :memory: ".read q.sql"
same_as_callgrind sqlite3 libsqlite3.so.0:sqlite3_step=sqlite3_step \
	libsqlite3.so.0:sqlite3_prepare_v2=sqlite3_prepare_v2 \
	libsqlite3.so.0:sqlite3_finalize=sqlite3_finalize \
	libsqlite3.so.0:sqlite3_column_text=sqlite3_column_text \
	libsqlite3.so.0:sqlite3_column_count=sqlite3_column_count
[ "$(calls libsqlite3.so.0:sqlite3_step)" -ge 300 ] 2>/dev/null ||
	fail "sqlite3: sqlite3_step called $(calls libsqlite3.so.0:sqlite3_step) times"

# The rest under the probes alone: with the traps, the interpreter's and
# cc1's millions of calls are a stop each (minutes).
[ "$MECH" = probes ] || finish

# python3: the interpreter's own routines (its dynamic symbol table: 1,400
# of them). The hash seed fixed: the interpreter's work then depends on the
# script alone.
PYTHONHASHSEED=0
export PYTHONHASHSEED
cat >rec.py <<'EOF'
import json
recs = [{"id": i, "name": "n%03d" % ((i * 37) % 101)} for i in range(2000)]
recs.sort(key=lambda r: (r["name"], r["id"]))
print(len(json.dumps(recs)), recs[0]["id"], recs[-1]["id"])
EOF
traced -- /usr/bin/python3 rec.py
[ "$(cat t.out)" = "$(cat u.out)" ] && [ -s t.out ] || fail "python3: no output"
callgrind_counts /usr/bin/python3 rec.py
same_as_callgrind python3 PyList_Append PyObject_GC_Del PyArg_ParseTuple PyCMethod_New \
	_PyObject_GenericGetAttrWithDict
[ "$(calls PyList_Append)" -ge 2000 ] 2>/dev/null ||
	fail "python3: PyList_Append called $(calls PyList_Append) times"

# gcc under -f: gcc execs cc1 (24,000 exported routines) and as; the object
# file is the same.
cat >f.c <<'EOF'
static int sq(int x) { return x * x; }
int sum(int n) { int s = 0; for (int i = 0; i < n; i++) s += sq(i); return s; }
EOF
gcc -O2 -c -o u.o f.c || fail "gcc failed untraced"
"$FORTSTAT" -f --format=csv -o "gcc.%p.csv" gcc -O2 -c -o t.o f.c >gcc.out 2>gcc.err </dev/null ||
	fail "gcc -f: exit status $? under fortstat: $(tail -n 3 gcc.err)"
cmp -s u.o t.o || fail "gcc -f: the object file differs under fortstat"
[ "$(ls gcc.*.csv 2>/dev/null | wc -l)" -ge 3 ] ||
	fail "gcc -f: $(ls gcc.*.csv 2>/dev/null | wc -l) reports, expected gcc's, cc1's and as's"

# make -j2 under -f: make forks and execs sh, gcc, cc1, as, collect2, ld.
mkdir proj
printf 'int two(void) { return 2; }\n' >proj/two.c
printf '#include <stdio.h>\nint two(void);\nint main(void) { printf("%%d\\n", two() * 21); return 0; }\n' >proj/main.c
printf 'prog: main.o two.o\n\t$(CC) -o $@ main.o two.o\n' >proj/Makefile
# (the suite's own make's variables unset: the inner make would say its
# directories)
cp -r proj uproj
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS make -s -j2 -C uproj >umake.out 2>&1 </dev/null ||
	fail "make failed untraced"
env -u MAKEFLAGS -u MAKELEVEL -u MFLAGS "$FORTSTAT" -f --format=csv -o "make.%p.csv" \
	make -s -j2 -C proj >make.out 2>make.err </dev/null ||
	fail "make -f: exit status $? under fortstat: $(tail -n 3 make.err)"
[ "$(proj/prog 2>&1)" = 42 ] || fail "make -f: the program it built printed $(proj/prog 2>&1)"
sed 's/uproj/proj/g' umake.out | cmp -s - make.out || fail "make -f: printed $(head -c 80 make.out)"
# make, gcc, cc1, as, collect2, ld: each a report
[ "$(ls make.*.csv 2>/dev/null | wc -l)" -ge 10 ] ||
	fail "make -f: $(ls make.*.csv 2>/dev/null | wc -l) reports"
# each stripped program's warning (most of its time unaccounted) said on
# stderr at its first process, the others of it counted in one line: as
# twice, gcc three times (with the traps an overhead warning may come
# first in some: then said for those too)
for w in as:2 gcc:3; do
	prog=${w%:*}
	said=$(grep -c "^fortstat: warning: [^ ]*[-/]$prog[-0-9]* \[pid [0-9]*\]: " make.err)
	more=$(sed -n "s|^fortstat: warning: [^ ]*[-/]$prog[-0-9]*: the same for \([0-9]*\) more process.* of this program (.*)\$|\1|p" make.err)
	[ "$((said + ${more:-0}))" = "${w#*:}" ] && [ "$said" -ge 1 ] ||
		fail "make -f: $prog's warning said $said times, and for ${more:-0} more: $(grep "$prog" make.err)"
	[ "$MECH" = traps ] || [ "$said" = 1 ] ||
		fail "make -f: $prog's warning said $said times: $(grep "$prog" make.err)"
done
finish
