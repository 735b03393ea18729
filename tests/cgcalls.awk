# SPDX-License-Identifier: GPL-2.0-or-later
# cgcalls.awk - total calls per function in a callgrind profile: the sum of the
# calls= lines under each cfn=, recursion levels (name'N) folded. Prints "name count".
function resolve(s,    id, rest) {
	if (match(s, /^\([0-9]+\)/)) {
		id = substr(s, RSTART, RLENGTH)
		rest = substr(s, RLENGTH + 2)
		if (rest != "")
			names[id] = rest
		s = names[id]
	}
	sub(/'[0-9]+$/, "", s)
	return s
}
/^fn=/ { resolve(substr($0, 4)) }
/^cfn=/ { cur = resolve(substr($0, 5)) }
/^calls=/ { split(substr($0, 7), a, " "); cnt[cur] += a[1] }
END { for (k in cnt) print k, cnt[k] }
