package hub

import "github.com/rankwire/rankwire/internal/ledger"

// One tenant's state lives in internal/ledger; these names keep the hub's
// API, which its callers use, unchanged.

// The hub's types that are the ledger's.
type (
	Item         = ledger.Item         // one submission of a batch
	Result       = ledger.Result       // what one Item did
	Row          = ledger.Row          // one ranked entry with its external member id
	Page         = ledger.Page         // the answer to a read
	BoardInfo    = ledger.BoardInfo    // one board's settings and size
	Identity     = ledger.Identity     // a member id with its aliases
	Settings     = ledger.Settings     // a board's settings
	Prize        = ledger.Prize        // one prize range of a board
	Rules        = ledger.Rules        // a board's anti-cheat limits
	Reason       = ledger.Reason       // the rule a held item broke
	Held         = ledger.Held         // one quarantined submission
	Profile      = ledger.Profile      // a member's public profile
	Reach        = ledger.Reach        // a token's board reach, for effects on members
	HistoryPoint = ledger.HistoryPoint // one point of a member's rank history
	Cursor       = ledger.Cursor       // a position in a board-window's order
	Standings    = ledger.Standings    // a board's standings with prizes
	StandingRow  = ledger.StandingRow  // a row of the standings with its prize
	Notification = ledger.Notification // one notification, as published
	NotifyRow    = ledger.NotifyRow    // a ranked row of a notification
	FeedChange   = ledger.FeedChange   // one applied mutation of a board-window
	Window       = ledger.Window       // a board-window as the change feed's consumer reads it
	View         = ledger.View         // a board-window inside Read
	Error        = ledger.Error        // an error that crosses to the edge
	Code         = ledger.Code         // the class of an Error
)

// The ledger's limits that callers of the hub use (the others: package
// internal/ledger).
const (
	MaxBatch                = ledger.MaxBatch
	MaxIDLen                = ledger.MaxIDLen
	MaxRetention            = ledger.MaxRetention
	MaxPerMinuteLimit       = ledger.MaxPerMinuteLimit
	MaxHeldPage             = ledger.MaxHeldPage
	MaxPrizes               = ledger.MaxPrizes
	MaxPrizeRank            = ledger.MaxPrizeRank
	MaxPrizeLen             = ledger.MaxPrizeLen
	MaxProfileName          = ledger.MaxProfileName
	MaxAvatarLen            = ledger.MaxAvatarLen
	MaxHistoryPoints        = ledger.MaxHistoryPoints
	MinIdempotencyRetention = ledger.MinIdempotencyRetention
	MaxWriteTimeout         = ledger.MaxWriteTimeout // the longest Config.WriteTimeout
)

// The reasons an item is held, in the order the rules are checked.
const (
	ReasonNone         = ledger.ReasonNone
	ReasonMinScore     = ledger.ReasonMinScore
	ReasonMaxScore     = ledger.ReasonMaxScore
	ReasonMaxStep      = ledger.ReasonMaxStep
	ReasonMaxPerMinute = ledger.ReasonMaxPerMinute
	ReasonFull         = ledger.ReasonFull
)

// Reasons lists every reason an item may be held for, for metrics.
var Reasons = ledger.Reasons

// The codes an Error carries.
const (
	CodeBadRequest  = ledger.CodeBadRequest
	CodeForbidden   = ledger.CodeForbidden
	CodeNotFound    = ledger.CodeNotFound
	CodeConflict    = ledger.CodeConflict
	CodeRateLimited = ledger.CodeRateLimited
	CodeUnavailable = ledger.CodeUnavailable
	CodeInternal    = ledger.CodeInternal
)

// FormatTime writes unix ms as the gateway writes every time: RFC 3339 in
// UTC with milliseconds.
func FormatTime(ms int64) string { return ledger.FormatTime(ms) }

// errorf returns an error of class whose client message is format applied
// to args: ledger.Errorf.
func errorf(class *Error, format string, args ...any) error {
	return ledger.Errorf(class, format, args...)
}

// clip shortens a value a client sent before a message quotes it.
func clip(s string) string { return ledger.Clip(s) }
