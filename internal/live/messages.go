package live

import (
	"encoding/json"

	"github.com/rankwire/rankwire/hub"
)

// The messages of the protocol's live views (PROTOCOL.md, "Live views over
// WebSocket") as this package decodes and encodes them: what a client
// sends (clientMsg) and the error and board messages the plane writes
// itself (snapshots and diffs are encoded by subscriptions). Kept in this
// one file so that one set of message types can replace them.

// clientMsg is any message a client sends; Type says which fields count.
type clientMsg struct {
	Type   string   `json:"type"`
	ID     string   `json:"id"`
	Board  string   `json:"board"`
	Window string   `json:"window"`
	At     string   `json:"at"`
	View   *viewMsg `json:"view"`
	Since  *uint64  `json:"since"`
	Token  string   `json:"token"`
}

type viewMsg struct {
	Kind    string   `json:"kind"`
	Limit   *int     `json:"limit"`
	Offset  int      `json:"offset"`
	Member  string   `json:"member"`
	Radius  *int     `json:"radius"`
	Rank    int      `json:"rank"`
	Members []string `json:"members"`
}

// errorMsg is the server's error message.
type errorMsg struct {
	Type    string  `json:"type"`
	ID      *string `json:"id"`
	Code    string  `json:"code"`
	Message string  `json:"message"`
}

func encodeError(id string, e *Error) []byte {
	m := errorMsg{Type: "error", Code: e.Code, Message: e.Message}
	if id != "" {
		m.ID = &id
	}
	b, _ := json.Marshal(m) // strings only: cannot fail
	return b
}

// boardMsg tells a subscriber of a tournament board its times and prizes,
// so that a widget can show the prize column, the countdown and the final
// state: sent once per subscription, before its first message, for boards
// with starts_at, ends_at or prizes only.
type boardMsg struct {
	Type     string      `json:"type"` // "board"
	ID       string      `json:"id"`
	Board    string      `json:"board"`
	StartsAt string      `json:"starts_at,omitempty"`
	EndsAt   string      `json:"ends_at,omitempty"`
	Prizes   []hub.Prize `json:"prizes,omitempty"`
}
