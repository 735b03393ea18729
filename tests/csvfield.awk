# SPDX-License-Identifier: GPL-2.0-or-later
# csvfield.awk - print field `col` (2 = calls, 3 = self_s, 7 = incomplete) of the
# report row whose routine is `want`; the routine field may be quoted (RFC 4180).
{
	line = $0
	if (substr(line, 1, 1) == "\"") {
		name = ""
		for (i = 2; i <= length(line); i++) {
			c = substr(line, i, 1)
			if (c == "\"") {
				if (substr(line, i + 1, 1) != "\"")
					break
				i++
			}
			name = name c
		}
		rest = substr(line, i + 2)
	} else {
		n = index(line, ",")
		name = substr(line, 1, n - 1)
		rest = substr(line, n + 1)
	}
	if (name == want) {
		split(rest, f, ",")
		print f[col - 1]
	}
}
