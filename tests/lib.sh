# SPDX-License-Identifier: GPL-2.0-or-later
# lib.sh - helpers for the end-to-end tests (sourced). Each test runs in its
# own temporary directory, starts and reaps its own children, and exits
# 0 (pass), 1 (fail) or 77 (skip).
set -u
: "${FORTSTAT:?FORTSTAT must name the fortstat binary}"
: "${FIXTURES:?FIXTURES must name the built fixtures directory}"
: "${SRCDIR:?SRCDIR must name the source tree}"
BIN=$FIXTURES/bin
# The mechanism the tests run with (tests/e2e/probes/ runs them with probes):
# assertions about the stops themselves hold for traps only.
MECH=${FORTSTAT_MECHANISM:-probes}
T=$(mktemp -d "${TMPDIR:-/tmp}/fortstat-test.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
failures=0

fail() {
	echo "FAIL: $*" >&2
	failures=$((failures + 1))
}

skip() {
	echo "SKIP: $*"
	exit 77
}

# finish: the test's exit status.
finish() {
	if [ "$failures" -ne 0 ]; then
		echo "$failures failure(s)" >&2
		exit 1
	fi
	exit 0
}

# json_valid FILE...: each FILE (a report, an array of them, a merged report)
# is what the JSON Schema man/fortstat.schema.json allows (tests/validate-json,
# python3-jsonschema; /usr/bin/python3 unless JSON_PYTHON names another).
json_valid() {
	"${JSON_PYTHON:-/usr/bin/python3}" "$SRCDIR/tests/validate-json" \
		"$SRCDIR/man/fortstat.schema.json" "$@" >json_valid.err 2>&1 ||
		fail "$*: not what man/fortstat.schema.json allows: $(head -c 2000 json_valid.err)"
}

# traced OPTS... -- PROG ARGS...: run PROG untraced (u.out, u.err, u.rc) and
# under fortstat with OPTS and a CSV report in r.csv (t.out, t.err, t.rc);
# demand identical stdout, stderr and exit status.
traced() {
	opts=""
	while [ "$1" != "--" ]; do
		opts="$opts $1"
		shift
	done
	shift
	"$@" >u.out 2>u.err </dev/null
	echo $? >u.rc
	# shellcheck disable=SC2086
	"$FORTSTAT" $opts --format=csv -o r.csv "$@" >t.out 2>t.err </dev/null
	echo $? >t.rc
	cmp -s u.out t.out || fail "$*: stdout differs under fortstat"
	# fortstat may add its own one-line notes (how the program ended)
	grep -v '^fortstat: ' t.err >t.err.prog
	cmp -s u.err t.err.prog || { fail "$*: stderr differs under fortstat"; cat t.err >&2; }
	cmp -s u.rc t.rc || fail "$*: exit status $(cat t.rc) under fortstat, $(cat u.rc) without"
	[ -s r.csv ] || fail "$*: no report"
}

# field NAME COL: column COL of routine NAME's row in r.csv (empty if absent).
field() {
	awk -v want="$1" -v col="$2" -f "$SRCDIR/tests/csvfield.awk" r.csv
}

# calls NAME: the call count of routine NAME in r.csv (empty if absent).
calls() {
	field "$1" 2
}

# incomplete NAME: 1 when NAME's clock was still running at the end.
incomplete() {
	field "$1" 7
}

# expect PROG NAME N...: each routine's exact call count in r.csv.
expect() {
	prog=$1
	shift
	while [ $# -gt 1 ]; do
		got=$(calls "$1")
		[ "$got" = "$2" ] || fail "$prog: $1 called ${got:-never} times, expected $2"
		shift 2
	done
}

# absent PROG NAME...: these routines must not be in the report.
absent() {
	prog=$1
	shift
	for n in "$@"; do
		[ -z "$(calls "$n")" ] || fail "$prog: $n should not be timed"
	done
}

# self NAME: the self time (seconds) of routine NAME in r.csv.
self() {
	field "$1" 3
}

# The median of the numbers in file $1, one a line (nothing if it has none).
median_of() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# callgrind_counts PROG ARGS...: exact call counts by valgrind's callgrind, in cg.txt.
callgrind_counts() {
	command -v valgrind >/dev/null || skip "valgrind is not installed"
	valgrind --tool=callgrind --callgrind-out-file=cg.out "$@" >/dev/null 2>cg.log </dev/null ||
		fail "callgrind failed on $*"
	awk -f "$SRCDIR/tests/cgcalls.awk" cg.out >cg.txt
}

# same_as_callgrind PROG NAME...: fortstat's counts equal callgrind's. A NAME
# of the form shown=symbol compares fortstat's `shown` with callgrind's `symbol`.
same_as_callgrind() {
	prog=$1
	shift
	for n in "$@"; do
		cg=${n#*=}
		n=${n%%=*}
		want=$(awk -v n="$cg" '$1 == n { print $2 }' cg.txt)
		got=$(calls "$n")
		[ "$got" = "$want" ] || fail "$prog: $n: fortstat counted ${got:-0}, callgrind ${want:-0}"
	done
}
