#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# seccomp.sh - fortstat -p on a process under a seccomp filter, as
# containers and services run (tests/seclaunch sets it before the exec):
# under an allowlist like Docker's default profile (anything else EPERM)
# and one like systemd's @system-service ~@ipc (no memfd_create, anything
# else kills), the probes time it, their memory shared anonymous memory
# that fortstat reaches through /proc/PID/map_files; busy's calls counted
# (leaf twice a mid, mid ten times a top, but for the calls open at the
# attach and the detach), attached to twice; after each detach it runs on
# untraced and untouched: its code byte for byte its files', nothing of
# fortstat's mapped; at its end, its own output and status. Where the
# filter forbids what the probes need (mmap of shared memory kills), the
# traps time it and one line says why; where it forbids fortstat's code
# pages (anonymous executable memory), fortstat does not attach and says
# why in one line, and so in seccomp's strict mode (a system call would
# kill it); where fortstat cannot read the filter (under a filter itself),
# the traps, and one line. Without CAP_SYS_ADMIN on a process
# with no filter, the probes through a memfd.
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/lib.sh"

LAUNCH=$FIXTURES/../tests/seclaunch
[ -x "$LAUNCH" ] || skip "tests/seclaunch is not built (libseccomp-dev is not installed)"
command -v python3 >/dev/null || skip "python3 is not installed"
[ "$(id -u)" = 0 ] || skip "fortstat reads seccomp filters as root only (CAP_SYS_ADMIN)"
prog=$BIN/busy-O2
real=$(readlink -f "$prog")

pids=""
# Only our own children are killed when the test ends early.
cleanup() {
	for p in $pids; do
		kill -KILL "$p" 2>/dev/null
	done
	rm -rf "$T"
}
trap cleanup EXIT

# launch NAME PROFILE: busy (2 threads) under PROFILE's filter in the
# background ($pid), once it runs (exec'ed, its filter set); PROFILE
# "none": no filter
launch() {
	rm -f stop
	if [ "$2" = none ]; then
		"$prog" 2 stop >"$1.out" 2>"$1.err" &
	else
		"$LAUNCH" "$2" "$prog" 2 stop >"$1.out" 2>"$1.err" &
	fi
	pid=$!
	pids="$pids $pid"
	i=0
	until [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$real" ]; do
		i=$((i + 1))
		[ $i -lt 200 ] || { fail "$1: the program did not start: $(cat "$1.err")"; return 1; }
		sleep 0.05
	done
	if [ "$2" != none ] && ! grep -q '^Seccomp:[[:space:]]*2' "/proc/$pid/status"; then
		fail "$1: no seccomp filter on it"
	fi
	sleep 0.2 # its threads at work
}

# ended NAME: stopped, it ends as an untraced run does: "ok", status 0, no stderr
ended() {
	touch stop
	wait "$pid"
	rc=$?
	[ "$rc" = 0 ] && [ "$(cat "$1.out")" = ok ] && [ ! -s "$1.err" ] ||
		fail "$1: the program ended with $rc: $(cat "$1.out" "$1.err")"
}

# untouched NAME: after the detach, untraced, its code (every executable
# mapping of a file) byte for byte the file's: no int3, no jmp of
# fortstat's; no shared memory mapped (the probes' event memory).
untouched() {
	[ "$(awk '/^TracerPid:/ { print $2 }' "/proc/$pid/status")" = 0 ] ||
		fail "$1: still traced after the detach"
	python3 - "$pid" >untouched.txt 2>&1 <<'EOF' || fail "$1: $(cat untouched.txt)"
import sys
pid = sys.argv[1]
bad = []
with open(f"/proc/{pid}/maps") as maps, open(f"/proc/{pid}/mem", "rb", 0) as mem:
    for line in maps:
        f = line.split(maxsplit=5)
        lo, hi = (int(x, 16) for x in f[0].split("-"))
        path = f[5].strip() if len(f) > 5 else ""
        if f[1][3] == "s":
            bad.append(f"shared memory left mapped: {line.strip()}")
        if f[1][2] != "x" or not path.startswith("/"):
            continue
        with open(path, "rb") as b:
            b.seek(int(f[2], 16))
            want = b.read(hi - lo)
        mem.seek(lo)
        got = mem.read(len(want))
        if got != want:
            at = next(i for i in range(len(want)) if got[i] != want[i])
            bad.append(f"{path}: byte {hex(lo + at)} is {got[at]:#04x}, {want[at]:#04x} in the file")
print("\n".join(bad))
sys.exit(1 if bad else 0)
EOF
}

# report NAME MECH: r.json says mechanism MECH, and busy's calls counted:
# leaf twice a mid, mid ten times a top, but for the calls open at the
# attach and the detach (two threads); with the probes, events recorded.
report() {
	python3 - "$2" >report.txt 2>&1 <<'EOF' || fail "$1: $(cat report.txt)"
import json, sys
d = json.load(open("r.json"))
c = {r["name"]: r["calls"] for r in d["routines"]}
l, m, t = (c.get(n, 0) for n in ("leaf", "mid", "top"))
ok = d["mechanism"] == sys.argv[1] and t > 0 and abs(l - 2 * m) <= 4 and abs(m - 10 * t) <= 20
if sys.argv[1] == "probes":
    ok = ok and d["probe_events"] > 0
print(f"mechanism {d['mechanism']}, probe events {d['probe_events']}, leaf {l}, mid {m}, top {t}")
sys.exit(0 if ok else 1)
EOF
}

# attach NAME ARGS...: fortstat -vv -p $pid --duration=0.4, the JSON report in r.json
attach() {
	name=$1
	shift
	"$FORTSTAT" -vv "$@" -p "$pid" --duration=0.4 --format=json -o r.json 2>fs.err
	rc=$?
	grep 'warning: --probes' fs.err >probes.warn
}

# Docker's and a service's filters: the probes, twice each.
for profile in docker service; do
	launch "$profile" "$profile" || continue
	for k in 1 2; do
		attach "$profile $k"
		[ "$rc" = 0 ] || { fail "$profile $k: fortstat exited $rc: $(grep -v '^fortstat: patch' fs.err)"; break; }
		[ -s probes.warn ] && fail "$profile $k: $(cat probes.warn)"
		grep -q "^fortstat: event memory made in process $pid at 0x[0-9a-f]* (shared anonymous memory, through /proc/PID/map_files)\$" fs.err ||
			fail "$profile $k: not its shared anonymous memory: $(grep -e 'event memory' -e 'seccomp' fs.err)"
		report "$profile $k" probes
		untouched "$profile $k"
	done
	ended "$profile"
done

# The traps still time it when asked for.
launch traps docker && {
	attach traps --traps
	[ "$rc" = 0 ] || fail "--traps: fortstat exited $rc"
	[ -s probes.warn ] && fail "--traps: $(cat probes.warn)"
	report "--traps" traps
	untouched "--traps"
	ended traps
}

# mmap of shared memory kills it, and there is no memfd_create: the traps,
# and why in one line.
launch noshm noshm && {
	attach noshm
	[ "$rc" = 0 ] || fail "noshm: fortstat exited $rc: $(cat fs.err)"
	[ "$(wc -l <probes.warn)" = 1 ] &&
		grep -q "^fortstat: warning: --probes: -p $pid: mmap of shared memory: its seccomp filter kills the process; memfd_create: its seccomp filter kills the process: traps instead\$" probes.warn ||
		fail "noshm: not one line saying why: $(grep -e warning -e seccomp fs.err)"
	grep -q 'event memory made' fs.err && fail "noshm: shared memory made in it"
	report noshm traps
	untouched noshm
	ended noshm
}

# Its filter refuses anonymous executable memory: fortstat cannot put its
# code in it, says so, and leaves it alone.
launch noexec noexec && {
	"$FORTSTAT" -p "$pid" --duration=0.4 --format=json -o r.json >fs.out 2>fs.err
	rc=$?
	[ "$rc" = 126 ] || fail "noexec: fortstat exited $rc, 126 expected: $(cat fs.err)"
	[ "$(wc -l <fs.err)" = 1 ] &&
		grep -q "^fortstat: error: -p $pid: cannot time it: mmap of fortstat's code: its seccomp filter refuses it (EPERM)\$" fs.err ||
		fail "noexec: not one line saying why: $(cat fs.err)"
	untouched noexec
	ended noexec
}

# In seccomp's strict mode any system call but read, write, exit and
# sigreturn kills the process: fortstat makes it run none, says why, and
# lets it go (it ends with its own "ok" at SIGUSR1).
rm -f strict.out
"$LAUNCH" strict >strict.out 2>strict.err &
pid=$!
pids="$pids $pid"
i=0
until [ -s strict.out ]; do
	i=$((i + 1))
	[ $i -lt 200 ] || { fail "strict: the program did not start: $(cat strict.err)"; break; }
	sleep 0.05
done
if grep -q '^Seccomp:[[:space:]]*1' "/proc/$pid/status"; then
	"$FORTSTAT" -p "$pid" --duration=0.4 -o r.txt >fs.out 2>fs.err
	rc=$?
	[ "$rc" = 126 ] || fail "strict: fortstat exited $rc, 126 expected: $(cat fs.err)"
	[ "$(wc -l <fs.err)" = 1 ] &&
		grep -q "^fortstat: error: -p $pid: cannot time it: mmap of fortstat's code: it runs in seccomp's strict mode (read, write, exit only)\$" fs.err ||
		fail "strict: not one line saying why: $(cat fs.err)"
	untouched strict
else
	fail "strict: not in seccomp's strict mode: $(cat strict.out strict.err)"
fi
kill -USR1 "$pid"
wait "$pid"
rc=$?
[ "$rc" = 0 ] && [ "$(cat strict.out)" = "$(printf 'ready\nok')" ] ||
	fail "strict: the program ended with $rc: $(cat strict.out strict.err)"

# fortstat itself under a filter may not read another's (the kernel says
# EACCES): the traps, and why.
launch unread docker && {
	"$LAUNCH" allow "$FORTSTAT" -p "$pid" --duration=0.4 --format=json -o r.json 2>fs.err
	rc=$?
	[ "$rc" = 0 ] || fail "unread: fortstat exited $rc: $(cat fs.err)"
	grep -q "^fortstat: warning: --probes: -p $pid: its seccomp filter cannot be read (Permission denied: fortstat runs under a seccomp filter itself), and might kill it for the system calls that make the probes' memory: traps instead\$" fs.err ||
		fail "unread: not one line saying why: $(cat fs.err)"
	report unread traps
	untouched unread
	ended unread
}

# Without CAP_SYS_ADMIN and CAP_CHECKPOINT_RESTORE /proc/PID/map_files is
# closed to fortstat: on a process without a filter, a memfd instead.
if command -v capsh >/dev/null; then
	launch nocap none && {
		capsh --drop=cap_sys_admin,cap_checkpoint_restore -- -c \
			"exec '$FORTSTAT' -vv -p $pid --duration=0.4 --format=json -o r.json 2>fs.err"
		rc=$?
		[ "$rc" = 0 ] || fail "nocap: fortstat exited $rc: $(grep -v '^fortstat: patch' fs.err)"
		grep -q "^fortstat: event memory made in process $pid at 0x[0-9a-f]* (a memfd)\$" fs.err ||
			fail "nocap: not a memfd: $(grep -e 'event memory' -e map_files fs.err)"
		grep -q 'warning: --probes' fs.err && fail "nocap: $(grep 'warning: --probes' fs.err)"
		report nocap probes
		untouched nocap
		ended nocap
	}
else
	echo "note: capsh is not installed: fortstat without CAP_SYS_ADMIN not tried"
fi
finish
