package names

// MatchGlob reports whether name matches pattern, where '*' matches any run
// of bytes (none included) and every other byte matches itself. There is no
// escape and no other metacharacter: a token's board patterns are plain
// "slots-*" globs. It is here, beside the rule for names, because the token
// check (auth) and the apply-time reach check (internal/ledger) must agree
// byte for byte.
//
// No standard function fits: path.Match and filepath.Match give '?', '[' and
// '\' meanings of their own and fail on malformed classes, and their '*' stops
// at '/'. Compiling a regexp per pattern would cost an allocation per call.
//
// The scan keeps only the last '*' seen: on a mismatch it lets that star
// swallow one more byte and retries from there. An earlier star never needs to
// be retried, since the last star can absorb anything the earlier one could.
// Cost: O(len(pattern)+len(name)) for patterns with at most one star, and
// O(len(pattern)·len(name)) at worst; no allocation. Matching bytes rather
// than runes is exact for valid UTF-8, because a literal's first byte is never
// a continuation byte.
func MatchGlob(pattern, name string) bool {
	p, n := 0, 0
	star, resume := -1, 0 // the last '*' in pattern, and where in name it stopped swallowing
	for n < len(name) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, resume = p, n
			p++
		case p < len(pattern) && pattern[p] == name[n]:
			p++
			n++
		case star >= 0:
			resume++
			p, n = star+1, resume
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}
