package wire

// Row is a ranked entry of a board-window, with the member's profile where
// it has one. Every read and every live view shows rows this way.
type Row struct {
	Rank     int     `json:"rank"`              // 1-based
	Member   string  `json:"member"`            // the canonical member id
	Score    float64 `json:"score"`             // finite
	Subscore float64 `json:"subscore"`          // finite; 0 where the board has none
	Name     string  `json:"name,omitempty"`    // the profile's name, where the member has a profile
	Avatar   string  `json:"avatar,omitempty"`  // the profile's https URL, where set
	Country  string  `json:"country,omitempty"` // ISO 3166-1 alpha-2, upper case, where set
	Review   bool    `json:"review,omitempty"`  // a submission of the member is in the board's quarantine
}

// Page answers GET .../top, .../scores, .../members and .../around.
type Page struct {
	Seq   uint64 `json:"seq"`             // the board-window's version; 0 for a window with no entries
	Total int    `json:"total"`           // entries of the board-window
	Count *int   `json:"count,omitempty"` // GET .../scores only: the entries in the score range
	Rows  []Row  `json:"rows"`
	Next  string `json:"next,omitempty"` // a cursor (pass it as after) where more rows follow
}

// MemberRow answers GET .../members/{member} (with TopPercent) and
// GET .../ranks/{rank} (without): one row with its board-window's seq and
// total, the row's fields inline.
type MemberRow struct {
	Seq   uint64 `json:"seq"`
	Total int    `json:"total"`
	Row
	TopPercent *float64 `json:"top_percent,omitempty"` // 100 × rank / total
}

// Prize labels a range of ranks From..To (1..MaxPrizeRank) of a tournament.
type Prize struct {
	From  int    `json:"from"`
	To    int    `json:"to"`
	Prize string `json:"prize"` // 1..MaxPrizeLabel bytes of UTF-8 without control characters
}

// Rules hold a submission in the board's quarantine instead of ranking
// it; a nil field checks nothing.
type Rules struct {
	MinScore     *float64 `json:"min_score,omitempty"`      // a score below it is held
	MaxScore     *float64 `json:"max_score,omitempty"`      // a score above it is held
	MaxStep      *float64 `json:"max_step,omitempty"`       // an improvement by more than it is held; > 0
	MaxPerMinute int      `json:"max_per_minute,omitempty"` // a member's submissions past it in a UTC minute are held; 0: no limit
}

// Settings is the body of PUT /v1/boards/{board}: every field optional, a
// zero field the gateway's default. It replaces the board's settings.
type Settings struct {
	Order         string   `json:"order,omitempty"`          // desc (default) or asc
	SubscoreOrder string   `json:"subscore_order,omitempty"` // desc (default) or asc
	Policy        string   `json:"policy,omitempty"`         // best (default), latest, sum, first
	Tiebreak      string   `json:"tiebreak,omitempty"`       // earliest (default) or latest
	Windows       []string `json:"windows,omitempty"`        // all, day, week, month; default [all]
	Retention     int      `json:"retention,omitempty"`      // past windows kept per kind, 0..MaxRetention; 0 means 8
	TimeZone      string   `json:"time_zone,omitempty"`      // IANA name; day, week and month windows turn over at its midnight; default UTC
	WeekStarts    string   `json:"week_starts,omitempty"`    // monday (default) or sunday: a week window's first day
	StartsAt      string   `json:"starts_at,omitempty"`      // RFC 3339: submissions before it are refused
	EndsAt        string   `json:"ends_at,omitempty"`        // RFC 3339: submissions at or after it are refused
	Prizes        []Prize  `json:"prizes,omitempty"`         // up to MaxPrizes ranges, not overlapping
	Rules         *Rules   `json:"rules,omitempty"`
}

// Board answers PUT and GET /v1/boards/{board}, and is each item of
// BoardList: the board's normalized settings and its size.
type Board struct {
	Name          string   `json:"name"`
	Order         string   `json:"order"`
	SubscoreOrder string   `json:"subscore_order"`
	Policy        string   `json:"policy"`
	Tiebreak      string   `json:"tiebreak"`
	Windows       []string `json:"windows"`
	Retention     int      `json:"retention"`
	TimeZone      string   `json:"time_zone"`
	WeekStarts    string   `json:"week_starts"`
	StartsAt      string   `json:"starts_at,omitempty"` // UTC with milliseconds
	EndsAt        string   `json:"ends_at,omitempty"`   // UTC with milliseconds
	Prizes        []Prize  `json:"prizes,omitempty"`    // sorted by rank
	Rules         *Rules   `json:"rules,omitempty"`
	Members       int      `json:"members"` // entries of the board's primary window now
}

// BoardList answers GET /v1/boards: a page of the boards the token
// reaches, in name order.
type BoardList struct {
	Boards []Board `json:"boards"`
	Next   string  `json:"next,omitempty"` // the last board's name (pass it as after) where more follow
}

// Deleted answers DELETE /v1/boards/{board}.
type Deleted struct {
	Deleted string `json:"deleted"` // the board
}

// ResetDone answers POST /v1/boards/{board}/reset.
type ResetDone struct {
	Reset string `json:"reset"` // the board
}

// Removed answers DELETE /v1/boards/{board}/members/{member}.
type Removed struct {
	Removed string `json:"removed"` // the member as given
}

// Score is one submission: the body of POST .../scores, or an item of
// Submission.Scores. Member and score are required; ID, where set, makes
// a retry safe (a repeat answers the original result).
type Score struct {
	Member   string  `json:"member"`             // a member id or alias
	Score    float64 `json:"score"`              // finite
	Subscore float64 `json:"subscore,omitempty"` // finite
	ID       string  `json:"id,omitempty"`       // at most MaxScoreID bytes
}

// Submission is the batch form of POST .../scores: 1..MaxBatch scores.
type Submission struct {
	Scores []Score `json:"scores"`
}

// Result is one submission's outcome, and the answer of an approval.
type Result struct {
	Member      string  `json:"member"` // the canonical id (an alias resolved)
	Score       float64 `json:"score"`  // the member's entry after the item
	Subscore    float64 `json:"subscore"`
	Rank        int     `json:"rank"`
	Applied     bool    `json:"applied"`   // false where the policy kept the old entry
	Duplicate   bool    `json:"duplicate"` // a repeated id: the original result
	Seq         uint64  `json:"seq"`       // the primary window's seq after the item
	Quarantined bool    `json:"quarantined,omitempty"`
	Reason      string  `json:"reason,omitempty"` // the rule broken, or quarantine_full
	QID         string  `json:"qid,omitempty"`    // the quarantine id of a held item
}

// Results answers POST .../scores: one result per submission, in order.
type Results struct {
	Results []Result `json:"results"`
}

// ScoreRank answers GET .../score-rank: the rank a new entry would take.
type ScoreRank struct {
	Rank  int `json:"rank"`
	Total int `json:"total"`
}

// StandingRow is a row of the standings with its prize, where its rank is
// in a prize range.
type StandingRow struct {
	Row
	Prize string `json:"prize,omitempty"`
	// PrizeHeld: the member has a submission in quarantine; the prize is
	// reserved for them, not paid, until it is decided.
	PrizeHeld bool `json:"prize_held,omitempty"`
}

// Standings answers GET .../standings.
type Standings struct {
	Final    bool          `json:"final"`    // no write changes them any more; only an admin's amendment
	Settled  bool          `json:"settled"`  // an admin settled the board: they never change again
	Revision int           `json:"revision"` // admin amendments applied (disqualify, reinstate)
	EndedAt  *string       `json:"ended_at"` // null until the board's end passed
	Seq      uint64        `json:"seq"`
	Total    int           `json:"total"`
	Rows     []StandingRow `json:"rows"`
}

// Held is one quarantined submission.
type Held struct {
	QID      string  `json:"qid"`
	Member   string  `json:"member"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
	Reason   string  `json:"reason"` // the rule it broke
	At       string  `json:"at"`     // the acceptance time, RFC 3339 UTC
}

// Quarantine answers GET .../quarantine, oldest first.
type Quarantine struct {
	Rows []Held `json:"rows"`
	Next string `json:"next,omitempty"` // the last qid (pass it as after) where more follow
}

// Decision is the optional body of POST .../quarantine/{qid}/approve and
// .../reject: why, recorded in the board's audit with the token's sub.
type Decision struct {
	Reason string `json:"reason,omitempty"` // 1..256 bytes of printable UTF-8; empty: none
}

// Rejected answers POST .../quarantine/{qid}/reject.
type Rejected struct {
	QID      string `json:"qid"`
	Rejected bool   `json:"rejected"` // always true
}

// Profile is a member's public profile: the body and answer of PUT and the
// answer of GET /v1/members/{member}/profile.
type Profile struct {
	Name    string `json:"name"`              // 1..MaxProfileName bytes
	Avatar  string `json:"avatar,omitempty"`  // an https URL of at most MaxAvatarURL bytes
	Country string `json:"country,omitempty"` // ISO 3166-1 alpha-2 (stored upper case)
}

// Identity is a member and its aliases: the body of POST /v1/identities
// and the answer of it and of GET /v1/identities/{id} (aliases sorted,
// never null).
type Identity struct {
	Member  string   `json:"member"`
	Aliases []string `json:"aliases"`
}

// PersonalData answers GET /v1/members/{member}/personal-data: what the
// tenant holds about one member (a data subject's access request). After an
// erasure it shows no profile and the aliases' pseudonyms; entries stay.
type PersonalData struct {
	Member  string          `json:"member"`            // the member's id
	Aliases []string        `json:"aliases"`           // sorted, never null
	Profile *Profile        `json:"profile,omitempty"` // absent: none
	Entries []PersonalEntry `json:"entries"`           // by board, then window; never null
}

// PersonalEntry is one board-window that ranks the member.
type PersonalEntry struct {
	Board    string  `json:"board"`
	Window   string  `json:"window"` // "all", or "day:2026-11-27", "week:…", "month:…" (its first day)
	Rank     int     `json:"rank"`
	Score    float64 `json:"score"`
	Subscore float64 `json:"subscore"`
}

// Erasure answers DELETE /v1/members/{member}/personal-data: what was
// erased. The member id, entries and scores stay.
type Erasure struct {
	Member  string `json:"member"`  // the member's id (an alias given resolves to it)
	Profile bool   `json:"profile"` // it had a profile, now erased
	Aliases int    `json:"aliases"` // linked aliases renamed to pseudonyms
}

// History answers GET .../members/{member}/history, newest first.
type History struct {
	Member string         `json:"member"`
	Points []HistoryPoint `json:"points"`
}

// HistoryPoint is a past window's final standing (Window set: its first
// day) or one of the member's own changes (At set: its acceptance time).
type HistoryPoint struct {
	Window string  `json:"window,omitempty"`
	At     string  `json:"at,omitempty"`
	Rank   int     `json:"rank"`
	Score  float64 `json:"score"`
	Total  int     `json:"total"`
}

// Tenant answers GET /v1/tenant: the tenant's limits in force and what it
// uses of them on the gateway asked.
type Tenant struct {
	Tenant        string         `json:"tenant"`
	Limits        TenantLimits   `json:"limits"`
	Boards        int            `json:"boards"`
	Connections   int            `json:"connections"`   // this gateway's WebSockets of the tenant
	Subscriptions map[string]int `json:"subscriptions"` // this gateway's live subscriptions by board
	Usage         TenantUsage    `json:"usage"`
}

// TenantLimits are a tenant's limits in force.
type TenantLimits struct {
	SubmissionsPerSecond    float64 `json:"submissions_per_second"`
	Connections             int     `json:"connections"`
	Boards                  int     `json:"boards"`
	Schedules               int     `json:"schedules"`
	Profiles                int     `json:"profiles"`
	Aliases                 int     `json:"aliases"`
	Quarantine              int     `json:"quarantine"`
	BoardWritesPerSecond    float64 `json:"board_writes_per_second"`
	IdentityWritesPerSecond float64 `json:"identity_writes_per_second"`
	TokenMintsPerMinute     int     `json:"token_mints_per_minute"` // POST /v1/tokens, per gateway
}

// TenantUsage is what the tenant holds against each limit that counts
// things: the ledger's (every node alike) and this gateway's connections.
type TenantUsage struct {
	Boards      Use `json:"boards"`
	Schedules   Use `json:"schedules"`   // schedules of tournament boards
	Profiles    Use `json:"profiles"`    // members with a profile
	Aliases     Use `json:"aliases"`     // of the member that has the most
	Quarantine  Use `json:"quarantine"`  // items held by the board that holds the most
	Connections Use `json:"connections"` // this gateway's WebSockets of the tenant
	Members     int `json:"members"`     // member ids held (no limit of its own but the ledger's)
}

// Use is a count against its limit.
type Use struct {
	Used  int `json:"used"`
	Limit int `json:"limit"`
}

// Ready answers GET /readyz: 200 with ready true, or 503 with the reason.
// Warnings say what still works but needs an operator, such as a tenant's
// key set (jwks_url) that could not be fetched; they name no tenant, since
// /readyz needs no token.
type Ready struct {
	Ready    bool     `json:"ready"`
	Reason   string   `json:"reason,omitempty"`
	Warnings []string `json:"warnings,omitempty"`
}

// Amendment is the body of POST .../disqualify, .../reinstate (member and
// reason) and .../settle (reason only).
type Amendment struct {
	Member string `json:"member,omitempty"` // an id or alias
	Reason string `json:"reason"`           // why, 1..256 bytes: kept in the audit log
}

// Void is the body of POST .../void: the submission to void, named by the
// seq its result carried, and why.
type Void struct {
	Seq    uint64 `json:"seq"`    // the seq a submission's result carried (its primary window's seq after it)
	Reason string `json:"reason"` // why, 1..256 bytes: kept in the audit log
}

// AdminAction is one admin action on a board: who, what, when and why.
// It answers an amendment, and GET /v1/audit lists them.
type AdminAction struct {
	Seq      uint64 `json:"seq"` // its place in the tenant's stream: pass it as after to read on
	At       string `json:"at"`  // acceptance time, RFC 3339 UTC
	Board    string `json:"board"`
	Action   string `json:"action"`           // disqualify, reinstate, settle, void, approve, reject
	Member   string `json:"member,omitempty"` // the member's canonical id; none for settle
	Sub      string `json:"sub"`              // the acting token's sub claim
	Reason   string `json:"reason"`
	Revision int    `json:"revision"`         // the board's revision after it
	Voided   uint64 `json:"voided,omitempty"` // void: the seq the voided submission's result carried
	QID      string `json:"qid,omitempty"`    // approve, reject: the quarantine id decided
}

// Audit answers GET /v1/audit: a board's admin actions, oldest first.
type Audit struct {
	Actions []AdminAction `json:"actions"`
	Next    uint64        `json:"next,omitempty"` // the last seq (pass it as after) where more follow
}

// MintRequest is the body of POST /v1/tokens: the token an admin asks the
// gateway to mint for its own tenant.
type MintRequest struct {
	Role string `json:"role"` // read, submit or admin
	// Boards are board names or '*' patterns, each within the caller's
	// reach. Absent: the caller's reach; [] no board.
	Boards []string `json:"boards,omitzero"`
	Sub    string   `json:"sub,omitempty"` // the token's subject: a player's member id; empty: none
	TTL    string   `json:"ttl,omitempty"` // a Go duration, 1m..8784h (366 days); empty: 24h
}

// MintedToken answers POST /v1/tokens: the token, shown once (the gateway
// keeps no copy), and the claims it carries.
type MintedToken struct {
	Token     string   `json:"token"`
	Tenant    string   `json:"tenant"`
	Kid       string   `json:"kid"` // the key that signed it
	Role      string   `json:"role"`
	Boards    []string `json:"boards,omitzero"` // absent: every board; []: none
	Sub       string   `json:"sub,omitempty"`
	ExpiresAt string   `json:"expires_at"` // RFC 3339 UTC, whole seconds
}
