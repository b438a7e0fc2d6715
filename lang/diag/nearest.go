package diag

import "strings"

// Nearest returns the candidate nearest to name, if near enough to be a likely
// typo (or the same but for case), else "".
func Nearest(name string, candidates []string) string {
	best, bestD := "", 0
	limit := len(name)/3 + 1
	if limit > 3 {
		limit = 3
	}
	lower := strings.ToLower(name)
	// `bind` means `binding` more likely than `min`, however near by edits:
	// a cut-short name is the likelier typo when it is the start of one candidate.
	if len(name) >= 3 {
		prefixed := ""
		for _, c := range candidates {
			if c != name && strings.HasPrefix(strings.ToLower(c), lower) {
				if prefixed != "" {
					prefixed = ""
					break
				}
				prefixed = c
			}
		}
		if prefixed != "" {
			return prefixed
		}
	}
	for _, c := range candidates {
		if c == name {
			continue
		}
		if strings.ToLower(c) == lower {
			return c
		}
		d := EditDistance(name, c)
		if d <= limit && (best == "" || d < bestD || d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best
}

// EditDistance is the optimal string alignment distance: insertions, deletions,
// substitutions and swaps of neighbours each cost one.
func EditDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 99
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
