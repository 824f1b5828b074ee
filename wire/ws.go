package wire

// Message types: the "type" of every WebSocket message.
const (
	TypeAuth        = "auth"        // client → server: the token
	TypeSubscribe   = "subscribe"   // client → server: start a live view
	TypeUnsubscribe = "unsubscribe" // client → server: end one
	TypeSnapshot    = "snapshot"    // server → client: a view's whole state
	TypeDiff        = "diff"        // server → client: a view's change since prev
	TypeError       = "error"       // server → client: a refused message or subscription
	TypeBoard       = "board"       // server → client: a tournament board's times and prizes
	TypeHeartbeat   = "heartbeat"   // server → client: how this gateway stands for the tenant, every HeartbeatInterval
)

// View kinds: a live view's "kind".
const (
	KindTop     = "top"
	KindAround  = "around"
	KindRank    = "rank"
	KindMembers = "members"
)

// Auth authenticates a connection (the first message, within AuthTimeout,
// where the URL has no access_token) or replaces its token (a refresh,
// which may narrow the scope of open subscriptions).
type Auth struct {
	Type  string `json:"type"` // TypeAuth
	Token string `json:"token"`
}

// Subscribe starts a live view named ID on the connection.
type Subscribe struct {
	Type   string `json:"type"`             // TypeSubscribe
	ID     string `json:"id"`               // 1..MaxSubID bytes, unique on the connection
	Board  string `json:"board"`            // a board the token reaches
	Window string `json:"window,omitempty"` // all (default), day, week, month
	At     string `json:"at,omitempty"`     // YYYY-MM-DD: a past window
	// Follow keeps the subscription on the current day, week or month
	// window: at each turnover it moves to the new window and its next
	// message is that window's snapshot. Not with At; Since is ignored
	// (a seq of one window means nothing in the next).
	Follow bool    `json:"follow,omitempty"`
	View   View    `json:"view"`
	Since  *uint64 `json:"since,omitempty"` // resume: the last seq applied; the first message is then a diff where possible
}

// View is a live view's spec; Kind says which other fields count: top
// (Limit, Offset), around (Member, Radius), rank (Rank), members
// (Members). Limit and Radius are pointers because 0 differs from
// absent: an around view of radius 0 is the member's row alone.
type View struct {
	Kind    string   `json:"kind"`
	Limit   *int     `json:"limit,omitempty"`   // top: 1..MaxViewLimit, default DefaultViewLimit
	Offset  int      `json:"offset,omitempty"`  // top: ≥ 0
	Member  string   `json:"member,omitempty"`  // around: default the token's sub
	Radius  *int     `json:"radius,omitempty"`  // around: 0..MaxViewRadius, default DefaultViewRadius
	Rank    int      `json:"rank,omitempty"`    // rank: ≥ 1
	Members []string `json:"members,omitempty"` // members: 1..MaxViewMembers ids or aliases
}

// Unsubscribe ends the live view named ID; its id is free again.
type Unsubscribe struct {
	Type string `json:"type"` // TypeUnsubscribe
	ID   string `json:"id"`
}

// Snapshot is a view's whole state: each subscription's first message,
// and any later one where a diff would not do.
type Snapshot struct {
	Type  string `json:"type"` // TypeSnapshot
	ID    string `json:"id"`
	Seq   uint64 `json:"seq"`   // the board-window's version when the view last changed
	Total int    `json:"total"` // the board-window's size at Seq
	Rows  []Row  `json:"rows"`  // in rank order
}

// Diff is a view's change: drop the ranks in Gone, then put each row at
// its rank. Prev is the seq of the subscription's message before it.
type Diff struct {
	Type  string `json:"type"` // TypeDiff
	ID    string `json:"id"`
	Seq   uint64 `json:"seq"`
	Prev  uint64 `json:"prev"`
	Total int    `json:"total"`
	Rows  []Row  `json:"rows"`
	Gone  []int  `json:"gone"`
}

// ErrorMessage refuses a client message or ends a subscription. ID is the
// subscription's id where the message had one of at most MaxSubID bytes,
// else null.
type ErrorMessage struct {
	Type    string  `json:"type"` // TypeError
	ID      *string `json:"id"`
	Code    Code    `json:"code"`
	Message string  `json:"message"` // starts with the field's JSON path (view.limit: ...)
}

// BoardMessage comes before the first snapshot of a subscription to a
// tournament board (one with starts_at, ends_at or prizes).
type BoardMessage struct {
	Type     string  `json:"type"` // TypeBoard
	ID       string  `json:"id"`
	Board    string  `json:"board"`
	StartsAt string  `json:"starts_at,omitempty"`
	EndsAt   string  `json:"ends_at,omitempty"`
	Prizes   []Prize `json:"prizes,omitempty"`
}

// Heartbeat tells every connection, every HeartbeatInterval, how the
// gateway it is connected to stands for the connection's tenant, so that a
// client can tell a gateway that fell behind or cannot take writes from a
// quiet board, and move (docs/PROTOCOL.md, "Heartbeats"): a client that
// sees no heartbeat for 3 intervals, a Seq that stops while another
// gateway's advances, or Writable false, reconnects to another gateway.
type Heartbeat struct {
	Type string `json:"type"` // TypeHeartbeat
	// Seq is the tenant's log position this gateway has applied: the
	// sequence of the last event of the tenant's stream it applied (0:
	// none yet). The same on every gateway once they caught up; not a
	// view's seq (those count each board-window's changes).
	Seq      uint64 `json:"seq"`
	Writable bool   `json:"writable"` // the gateway can acknowledge a write of the tenant now
	// Stale is true while this gateway's replica of the tenant trails the
	// tenant's stream by more than the gateway's lag bound (--max-lag), or
	// the gateway cannot vouch for it (it was paused): its reads may be
	// old. A client moves to another gateway.
	Stale bool   `json:"stale"`
	At    string `json:"at"` // the gateway's clock when it was sent: RFC 3339, UTC, milliseconds
}

// ServerMessage is any server → client message, decoded into one value:
// Type says which fields count (Snapshot, Diff, ErrorMessage, BoardMessage
// or Heartbeat). Clients ignore types they do not know. For decoding only:
// the gateway sends the specific types.
type ServerMessage struct {
	Type     string  `json:"type"`
	ID       *string `json:"id"`   // null in an error about a message without a usable id
	Seq      uint64  `json:"seq"`  // a view's seq; a heartbeat's log position
	Prev     *uint64 `json:"prev"` // diffs only
	Total    int     `json:"total"`
	Rows     []Row   `json:"rows"`
	Gone     []int   `json:"gone"`
	Code     Code    `json:"code"`
	Message  string  `json:"message"`
	Board    string  `json:"board"`
	StartsAt string  `json:"starts_at"`
	EndsAt   string  `json:"ends_at"`
	Prizes   []Prize `json:"prizes"`
	Writable bool    `json:"writable"` // heartbeats only
	Stale    bool    `json:"stale"`    // heartbeats only
	At       string  `json:"at"`       // heartbeats only
}
