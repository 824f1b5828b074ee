package wire

import "time"

// Limits of the HTTP API (docs/PROTOCOL.md). One past a limit is a 400
// bad_request naming the field, unless its doc says otherwise.
const (
	MaxBody            = 1 << 20 // bytes of a request body (413 too_large past it; api.Config.MaxBody when embedding)
	MaxBatch           = 1000    // submissions of one POST .../scores
	MaxScoreID         = 128     // bytes of a submission's id
	MaxAliases         = 100     // aliases of one POST /v1/identities
	MaxReadLimit       = 1000    // rows of one top, scores or standings read
	DefaultReadLimit   = 10      // rows of a top or scores read without limit
	MaxReadRadius      = 100     // rows each side of an around read
	DefaultReadRadius  = 5       // rows each side without radius
	MaxReadIDs         = 100     // ids of one members read
	MaxBoardsLimit     = 1000    // boards of one GET /v1/boards page
	DefaultBoardsLimit = 100     // boards of a page without limit
	MaxQuarantinePage  = 1000    // held submissions of one quarantine read
	MaxRetention       = 1000    // a board's retention (0 means 8)
	DefaultRetention   = 8       // past windows kept per kind where retention is 0
	MaxPrizes          = 100     // prize ranges of a board
	MaxPrizeRank       = 1 << 20 // the last rank a prize range may reach
	MaxPrizeLabel      = 128     // bytes of a prize label
	MaxPerMinute       = 1000000 // the largest rules.max_per_minute
	MaxProfileName     = 64      // bytes of a profile's name
	MaxAvatarURL       = 512     // bytes of a profile's avatar URL
	MaxHistoryPoints   = 100     // points of a window=all history
)

// Limits of the WebSocket protocol (docs/PROTOCOL.md, "Live views").
const (
	MaxMessage        = 64 << 10 // bytes of a client message (close 1009 past it)
	MaxSubID          = 128      // bytes of a subscription id
	MaxSubscriptions  = 100      // subscriptions of one connection
	MaxViewLimit      = 100      // rows of a top view
	DefaultViewLimit  = 10       // rows of a top view without limit
	MaxViewRadius     = 50       // rows each side of an around view
	DefaultViewRadius = 5        // rows each side without radius
	MaxViewMembers    = 100      // ids of a members view
	MessageBurst      = 200      // client messages at once (close 4029 past it)
	MessageRate       = 50       // client messages a second after the burst
	MaxCloseReason    = 120      // bytes of a close frame's reason
	SinceChanges      = 4096     // changes of a watched board-window a since resume can bridge
)

// Times of the WebSocket protocol: the gateway's defaults.
const (
	AuthTimeout  = 5 * time.Second  // for the first auth message of a connection without access_token
	PingInterval = 30 * time.Second // between pings; no pong within it closes 4008
	SlowTimeout  = 10 * time.Second // unsent bytes older than this close 4008
	PushInterval = 100 * time.Millisecond
	// HeartbeatInterval is how often every connection gets a Heartbeat. A
	// client that sees none for 3 intervals moves to another gateway.
	HeartbeatInterval = 2 * time.Second
)
