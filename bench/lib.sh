# SPDX-License-Identifier: GPL-2.0-or-later
# bench/lib.sh - what the benchmarks share (sourced, not run): timing a
# command, and a call's cost as the slope between two call counts.
# The sourcing script sets REPS (runs per figure) and work (work.c built).

# wall CMD...: median wall time in ns of REPS runs of CMD, or "failed".
wall() {
	local t=() s e i
	for ((i = 0; i < REPS; i++)); do
		s=$(date +%s%N)
		if ! "$@" >/dev/null 2>&1; then
			echo failed
			return
		fi
		e=$(date +%s%N)
		t+=($((e - s)))
	done
	printf '%s\n' "${t[@]}" | sort -n | sed -n "$((REPS / 2 + 1))p"
}

# calls N: the number of routine calls work makes for N iterations.
calls() {
	"$work" "$1" | awk '{ print $2 }'
}

# slope N1 N2 [CMD...]: ns a call between `work N1` and `work N2` run under
# CMD (none: untraced), so that start-up, calibration and exit cancel;
# "failed" if a run failed.
slope() {
	local n1=$1 n2=$2 t1 t2
	shift 2
	t1=$(wall "$@" "$work" "$n1")
	t2=$(wall "$@" "$work" "$n2")
	if [[ $t1 == failed || $t2 == failed ]]; then
		echo failed
		return
	fi
	awk -v a="$t1" -v b="$t2" -v c1="$(calls "$n1")" -v c2="$(calls "$n2")" \
		'BEGIN { printf "%.1f", (b - a) / (c2 - c1) }'
}
