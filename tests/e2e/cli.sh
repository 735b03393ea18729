#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# cli.sh - --help, --version, bad options and input, and fortstat's exit codes:
# 125 its own error, 126 PROGRAM cannot be timed, 127 PROGRAM not found.
. "$SRCDIR/tests/lib.sh"

# status WANT CMD...: run fortstat with CMD, demand exit status WANT and,
# when it is an error, exactly one line on stderr starting "fortstat: ".
status() {
	want=$1
	shift
	"$FORTSTAT" "$@" >out.txt 2>err.txt </dev/null
	got=$?
	[ "$got" = "$want" ] || fail "fortstat $*: exit $got, expected $want ($(cat err.txt))"
	if [ "$want" -ge 125 ]; then
		[ "$(wc -l <err.txt)" = 1 ] || fail "fortstat $*: expected one error line, got: $(cat err.txt)"
		grep -q '^fortstat: ' err.txt || fail "fortstat $*: error line lacks the prefix"
	fi
}

status 0 --help
for o in names exclude all output format sort zeros count-only clock pin verbose help version \
	inclusive graph svg lines threads no-correct progress no-progress interval probes traps \
	throttle no-throttle; do
	grep -q -- "--$o" out.txt || fail "--help does not list --$o"
	grep -v '^\.\\"' "$SRCDIR/man/fortstat.1" | sed 's/\\-/-/g' | grep -q -- "--$o" || fail "the man page does not list --$o"
done
status 0 -h
status 0 --version
# The release version; from a git checkout, also the commit it was built from
# (make check rebuilds first, so HEAD is still that commit).
: "${PACKAGE_VERSION:?PACKAGE_VERSION must name the release version}"
if [ -e "$SRCDIR/.git" ] && head=$(git -C "$SRCDIR" describe --always 2>/dev/null); then
	want="fortstat $PACKAGE_VERSION (git $head"
	case $(cat out.txt) in
	"$want)" | "$want-dirty)") ;;
	*) fail "--version: '$(cat out.txt)', expected '$want)' or '$want-dirty)'" ;;
	esac
else
	[ "$(cat out.txt)" = "fortstat $PACKAGE_VERSION" ] ||
		fail "--version: '$(cat out.txt)', expected 'fortstat $PACKAGE_VERSION'"
fi
grep -q "^\\.TH FORTSTAT 1 .* \"fortstat $PACKAGE_VERSION\"" "$SRCDIR/man/fortstat.1" ||
	fail "the man page's .TH does not name fortstat $PACKAGE_VERSION"
status 0 -V
[ "$(wc -l <out.txt)" = 1 ] || fail "-V: $(cat out.txt)"

status 125 --no-such-option /bin/true
status 125 --format=xml /bin/true
status 125 --sort=size /bin/true
status 125 --clock=sundial /bin/true
status 125 --pin=sometimes /bin/true
status 125 --format=flame /bin/true
status 125 --svg= /bin/true
status 125 --interval=0 /bin/true
status 125 --interval=soon /bin/true
FORTSTAT_MECHANISM=sometimes status 125 /bin/true
grep -q "FORTSTAT_MECHANISM is traps or probes, not 'sometimes'" err.txt ||
	fail "bad FORTSTAT_MECHANISM: $(cat err.txt)"
status 125 --throttle=10 /bin/true
status 125 --throttle=-5,10 /bin/true
status 125 --throttle=100,0 /bin/true
status 125 --throttle=100,x /bin/true
status 125 -n
status 125
status 127 ./no-such-program
status 127 no-such-program-in-path-$$
grep -q 'command not found' err.txt || fail "PATH miss: $(cat err.txt)"

printf 'hello\n' >text.sh
chmod +x text.sh
status 126 ./text.sh
grep -q 'not an ELF' err.txt || fail "text file: $(cat err.txt)"
cp "$BIN/chain-O0" noexec
chmod -x noexec
status 126 ./noexec
mkdir adir
status 126 ./adir
if [ -x "$FIXTURES/elf/bin/elf32" ]; then
	status 126 "$FIXTURES/elf/bin/elf32"
	grep -q 'x86-64' err.txt || fail "32-bit ELF: $(cat err.txt)"
fi
head -c 200 "$BIN/chain-O0" >trunc
chmod +x trunc
status 126 ./trunc
grep -q 'trunc: truncated ELF file' err.txt || fail "truncated: $(cat err.txt)"
# stripped: a dynamic executable is timed through -l (libs.sh); a static one not at all
for opt in O0 O2; do
	strip -o sstatic "$BIN/chain-static-$opt"
	status 126 ./sstatic
	grep -q "sstatic: no function symbols (stripped?), and statically linked: nothing in it can be timed\$" err.txt ||
		fail "stripped static $opt: $(cat err.txt)"
done

# names files: unreadable stops the run; a name with no match only warns
status 125 -n missing-names.txt "$BIN/chain-O0"
grep -q 'missing-names.txt' err.txt || fail "missing names file not named: $(cat err.txt)"
status 125 -x adir "$BIN/chain-O0"
printf 'work\nno_such_routine\n' >names.txt
"$FORTSTAT" -n names.txt -o rep.txt "$BIN/chain-O0" >out.txt 2>err.txt
[ $? = 0 ] || fail "-n with an unmatched name did not run"
grep -q "names.txt:2: 'no_such_routine' matches no routine" err.txt ||
	fail "unmatched name not reported: $(cat err.txt)"
grep -q '^chain done' out.txt || fail "program output lost"
grep -q ' work  *1000 ' rep.txt || fail "-n work: $(cat rep.txt)"
grep -q '^[ *] *leaf  ' rep.txt && fail "-n work: leaf should not be timed"
# a binary names file (an executable given to -n by mistake) is refused
status 125 -n "$BIN/chain-O0" "$BIN/chain-O0"
grep -q "^fortstat: error: $BIN/chain-O0: cannot read names file: not a text file\$" err.txt ||
	fail "binary names file: $(cat err.txt)"
[ -s out.txt ] && fail "the program ran although the names file is binary"
# an empty names file (or only comments) is said, and the run goes on
for opt in O0 O2; do
	: >empty.txt
	"$FORTSTAT" -n empty.txt -o rep.txt "$BIN/chain-$opt" >out.txt 2>err.txt
	[ $? = 0 ] || fail "-n empty.txt: $(cat err.txt)"
	grep -q "^fortstat: warning: empty.txt: no names in it (empty, or only comments): -n times the mainline alone\$" err.txt ||
		fail "-n empty.txt: not warned: $(cat err.txt)"
	grep -q '^\* main  *1 ' rep.txt || fail "-n empty.txt, $opt: main not timed: $(cat rep.txt)"
	grep -q '^[ *] *work  ' rep.txt && fail "-n empty.txt, $opt: work timed"
	printf '# nothing\n\n' >comments.txt
	"$FORTSTAT" -x comments.txt -o rep.txt "$BIN/chain-$opt" >out.txt 2>err.txt
	grep -q "^fortstat: warning: comments.txt: no names in it (empty, or only comments): -x excludes nothing\$" err.txt ||
		fail "-x comments.txt: not warned: $(cat err.txt)"
	grep -q ' leaf  *3500 ' rep.txt || fail "-x comments.txt, $opt: $(cat rep.txt)"
done
# names are printed escaped, never as raw bytes
printf 'work\nno\302\240such\n' >esc.txt
"$FORTSTAT" -n esc.txt -o rep.txt "$BIN/chain-O0" >out.txt 2>err.txt
grep -q "esc.txt:2: 'no\\\\xc2\\\\xa0such' matches no routine" err.txt ||
	fail "unmatched name not escaped: $(cat err.txt)"
LC_ALL=C grep -q "$(printf '\302')" err.txt && fail "raw bytes on stderr: $(cat err.txt)"

# -o: unwritable report file is fortstat's error, before the program runs
status 125 -o /nonexistent-dir/report.txt "$BIN/chain-O0"
[ -s out.txt ] && fail "the program ran although the report cannot be written"

# PROGRAM found through PATH, its arguments passed unchanged
PATH="$BIN:$PATH" "$FORTSTAT" -o rep.txt ending-O0 5 >out.txt 2>err.txt
[ $? = 5 ] || fail "PATH lookup or argument passing failed"
grep -q 'step 9' out.txt || fail "PATH lookup: program output lost"

# formats
"$FORTSTAT" --format=json -o rep.json "$BIN/chain-O0" >/dev/null 2>&1
json_valid rep.json
if command -v python3 >/dev/null; then
	python3 -c 'import json,sys; d=json.load(open("rep.json")); r={x["name"]: x["calls"] for x in d["routines"]}; sys.exit(0 if r["leaf"] == 3500 and d["exit_status"] == 0 else 1)' ||
		fail "JSON report wrong"
fi
"$FORTSTAT" --sort=name -z -o rep.txt "$BIN/chain-O0" >/dev/null 2>&1
sed -n 's/^[ *] *\([a-z_]*\)  .*/\1/p' rep.txt | grep -v '^$' >names.got
[ "$(tr '\n' ' ' <names.got)" = "leaf main twice work " ] || fail "--sort=name: $(tr '\n' ' ' <names.got)"

# a report that cannot be written: said in one line, status 125 (the
# program's own failure status stands), the program's output intact
if [ -w /dev/full ]; then
	for opt in "-o /dev/full" "--svg=/dev/full -o rep.txt"; do
		# shellcheck disable=SC2086
		"$FORTSTAT" $opt "$BIN/ending-O0" 0 >out.txt 2>err.txt
		rc=$?
		[ "$rc" = 125 ] || fail "$opt: exit status $rc, not 125"
		[ "$(grep -c '^fortstat: error: /dev/full: cannot write' err.txt)" = 1 ] ||
			fail "$opt: $(cat err.txt)"
		grep -q 'step' out.txt || fail "$opt: the program's output lost"
	done
	"$FORTSTAT" -o /dev/full "$BIN/ending-O0" 5 >/dev/null 2>err.txt
	[ $? = 5 ] || fail "-o /dev/full: the program's status 5 not kept"
fi
finish
