package ledger

// MaxBatch is the most items one Submit takes.
const MaxBatch = 1000

// MaxIDLen is the longest idempotency id in bytes.
const MaxIDLen = 128

// Item is one submission of a batch.
type Item struct {
	Member   string  `json:"m"`           // member id or alias
	Score    float64 `json:"s"`           // finite
	Subscore float64 `json:"u,omitempty"` // finite
	ID       string  `json:"i,omitempty"` // optional idempotency id, up to MaxIDLen bytes
}

// Result is what one Item did, as the primary window (all, or the board's
// first window kind) shows it right after the item was applied.
type Result struct {
	Member    string  // the member's canonical id (an alias resolves to it)
	Score     float64 // the member's entry after the item
	Subscore  float64
	Rank      int    // 1-based; 0 where the item could not be applied
	Applied   bool   // the policy took the item
	Duplicate bool   // the ID was seen before: this is the original result
	Seq       uint64 // the primary window's seq after the item
	// Reason, where not ReasonNone, is the rule the item broke: it was
	// quarantined (held under QID) instead of ranked (rules.go); with
	// ReasonFull it was refused, the quarantine being full.
	Reason Reason
	QID    uint64
}

// Row is one ranked entry with its external member id.
type Row struct {
	Rank     int
	Member   string
	Score    float64
	Subscore float64
	Profile  Profile // the member's public profile; zero where it has none
	Review   bool    // the member has a submission in the board's quarantine
}

// Page is the answer to a read: the board-window's seq and total, and rows.
type Page struct {
	Seq   uint64
	Total int
	Rows  []Row
	Next  *Cursor // where a paged read has more rows: read on from here
}

// BoardInfo describes one board: its settings and the size of its current
// primary window.
type BoardInfo struct {
	Name     string
	Settings Settings
	Members  int
}

// Identity is a member id with the aliases that resolve to it.
type Identity struct {
	Member  string
	Aliases []string
}
