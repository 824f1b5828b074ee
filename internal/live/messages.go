package live

import (
	"encoding/json"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/wire"
)

// The messages of the protocol's live views are package wire's (PROTOCOL.md,
// "Live views over WebSocket"): what a client sends decodes into clientMsg,
// and the plane encodes wire.ErrorMessage, wire.BoardMessage and
// wire.Heartbeat itself (snapshots and diffs are encoded by subscriptions,
// whose test checks them against wire's golden messages).

// clientMsg is any message a client sends, decoded into one value: Type
// says which fields count (auth: Token; subscribe: the rest; unsubscribe:
// ID). wire.View is a value, not a pointer: an absent view decodes to the
// zero View, which subscription refuses as "view: required".
type clientMsg struct {
	wire.Subscribe
	Token string `json:"token"` // wire.Auth's
}

// encodeError encodes e as an error message; an empty id is sent as null.
func encodeError(id string, e *Error) []byte {
	m := wire.ErrorMessage{Type: wire.TypeError, Code: e.Code, Message: e.Message}
	if id != "" {
		m.ID = &id
	}
	b, _ := json.Marshal(m) // strings only: cannot fail
	return b
}

// encodeBoard encodes the board message of subscription id to board, a
// tournament board with settings s: it tells a widget the prize column,
// the countdown and the final state, once per subscription, before its
// first message.
func encodeBoard(id, board string, s hub.Settings) []byte {
	m := wire.BoardMessage{Type: wire.TypeBoard, ID: id, Board: board, StartsAt: s.StartsAt, EndsAt: s.EndsAt}
	if len(s.Prizes) > 0 {
		m.Prizes = make([]wire.Prize, len(s.Prizes))
		for i, p := range s.Prizes {
			m.Prizes[i] = wire.Prize(p)
		}
	}
	b, _ := json.Marshal(m) // strings and integers only: cannot fail
	return b
}
