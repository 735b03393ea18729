#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# nsexec.sh - -f and a program exec'ed in other namespaces (a sandbox, a
# container): its event memory and its shared stubs are opened by the name
# /proc/FORTSTAT/fd/N, which a process with its own /proc would resolve in
# its own pid namespace (another process's descriptor, or none). fortstat
# looks the name up from the process's root through its mounts first
# (proc_fd_name_for): under `unshare --pid --fork --mount-proc` it says the
# /proc is not its own and the calls trap; under `unshare --pid --fork`
# (a pid namespace, the host's /proc) the probes and the shared stubs are
# the same as without it. Counts exact in every section either way.
FORTSTAT_MECHANISM=probes
export FORTSTAT_MECHANISM
. "$SRCDIR/tests/lib.sh"
command -v unshare >/dev/null || skip "unshare (util-linux) is not installed"
unshare --pid --fork --mount-proc true 2>/dev/null || skip "cannot make pid and mount namespaces here"
p=$BIN/chain-nopie-O2
FORTSTAT_SHARE_STUBS=1 # the stubs through the memfd, whatever their size
export FORTSTAT_SHARE_STUBS

for how in own-proc host-proc; do
	case $how in
	own-proc) ns="--pid --fork --mount-proc" ;;
	*) ns="--pid --fork" ;;
	esac
	# shellcheck disable=SC2086
	traced -f -v -- "$BIN/spawner-O2" "$(command -v unshare)" $ns "$p"
	# each of the three execs of chain: its own section, exact counts
	for kv in leaf,3500 work,1000 twice,500; do
		n=$(grep -c "^${kv%,*},${kv#*,}," r.csv)
		[ "$n" = 3 ] || fail "$how: ${kv%,*} with ${kv#*,} calls in $n sections, expected 3"
	done
	case $how in
	own-proc)
		grep -q "its /proc is not fortstat's" t.err ||
			fail "$how: no word that the process's /proc is not fortstat's: $(grep -i 'event memory' t.err | head -2)"
		;;
	*)
		! grep -q "its /proc is not fortstat's\|not shared" t.err ||
			fail "$how: the host's /proc refused: $(grep "/proc is not\|not shared" t.err | head -2)"
		grep -q "chain-nopie-O2: scratch pages .* mapped from a memfd" t.err ||
			fail "$how: chain's stubs not mapped from the shared memfd"
		;;
	esac
done
finish
