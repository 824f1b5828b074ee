// Package names holds the one rule for tenant and board names, which the
// key file, the HTTP API, the WebSocket protocol and the hub all apply:
// 1 to 64 bytes of a-z, 0-9, '_' and '-', not starting with '_' or '-'.
// The names become parts of NATS subjects and stream names, so '.', '*',
// '>' and white space must never pass.
package names

// Pattern is the rule as a regular expression, for messages and docs.
const Pattern = `^[a-z0-9][a-z0-9_-]{0,63}$`

// MaxLen is the longest name in bytes.
const MaxLen = 64

// Valid reports whether s matches Pattern. O(len(s)), no allocation.
func Valid(s string) bool {
	if len(s) == 0 || len(s) > MaxLen || s[0] == '-' || s[0] == '_' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}
