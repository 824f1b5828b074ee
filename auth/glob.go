package auth

import "github.com/rankwire/rankwire/internal/names"

// matchGlob reports whether name matches the board pattern pattern
// (names.MatchGlob: '*' matches any run of bytes). The ledger's apply-time
// reach check uses the same function, so a token and its events agree.
func matchGlob(pattern, name string) bool { return names.MatchGlob(pattern, name) }
