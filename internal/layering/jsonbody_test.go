package layering

// internal/jsonbody is standard library only (docs/ARCHITECTURE.md). Kept
// apart from the table in layering_test.go so that rows added by separate
// changes do not realign each other.
func init() { allowed["internal/jsonbody"] = nil }
