package live

import (
	"net/http"
	"net/url"
	"strconv"

	"github.com/rankwire/rankwire/wire"
)

// streamParams are the query parameters of GET /v1/stream: a subscribe
// message's fields, its view's flattened (PROTOCOL.md, "Live views over
// Server-Sent Events").
var streamParams = map[string]bool{
	"board": true, "window": true, "at": true, "follow": true, "id": true, "since": true, "access_token": true,
	"kind": true, "limit": true, "offset": true, "member": true, "radius": true, "rank": true, "members": true,
}

// defaultStreamID is the subscription id of a stream's messages when the
// query names none.
const defaultStreamID = "stream"

// streamQuery reads a stream request's view as the subscribe message it
// stands for: one view per stream, members repeated (members=a&members=b).
// A Last-Event-ID header (an EventSource's reconnection) is since, before
// the query's. It names a wrong field as the query spells it; the view
// itself is checked by the join, as a WebSocket's.
func streamQuery(r *http.Request) (clientMsg, error) {
	q := r.URL.Query()
	for k, vs := range q {
		switch {
		case !streamParams[k]:
			return clientMsg{}, badRequest("%s: not a parameter of /v1/stream", truncate(k))
		case len(vs) > 1 && k != "members":
			return clientMsg{}, badRequest("%s: given more than once", k)
		}
	}
	m := clientMsg{Subscribe: wire.Subscribe{Type: wire.TypeSubscribe, ID: q.Get("id"), Board: q.Get("board"),
		Window: q.Get("window"), At: q.Get("at"),
		View: wire.View{Kind: q.Get("kind"), Member: q.Get("member"), Members: q["members"]}}}
	if m.ID == "" {
		m.ID = defaultStreamID
	}
	var err error
	if m.View.Limit, err = optInt(q, "limit"); err != nil {
		return m, err
	}
	if m.View.Radius, err = optInt(q, "radius"); err != nil {
		return m, err
	}
	var offset, rank *int
	if offset, err = optInt(q, "offset"); err != nil {
		return m, err
	}
	if rank, err = optInt(q, "rank"); err != nil {
		return m, err
	}
	m.View.Offset, m.View.Rank = deref(offset), deref(rank)
	if m.Follow, err = optBool(q, "follow"); err != nil {
		return m, err
	}
	m.Since, err = streamSince(r, q)
	return m, err
}

// streamSince is the Last-Event-ID header's seq, else the since parameter's.
func streamSince(r *http.Request, q url.Values) (*uint64, error) {
	name, v := "Last-Event-ID", r.Header.Get("Last-Event-ID")
	if v == "" {
		name, v = "since", q.Get("since")
	}
	if v == "" {
		return nil, nil
	}
	n, err := strconv.ParseUint(v, 10, 64)
	if err != nil {
		return nil, badRequest("%s: %q is not a seq (a non-negative integer)", name, truncate(v))
	}
	return &n, nil
}

// optInt returns the integer parameter k, or nil where it is absent.
func optInt(q url.Values, k string) (*int, error) {
	v := q.Get(k)
	if v == "" {
		return nil, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return nil, badRequest("%s: %q is not an integer", k, truncate(v))
	}
	return &n, nil
}

// optBool returns the boolean parameter k ("true" or "false"), false
// where it is absent.
func optBool(q url.Values, k string) (bool, error) {
	switch v := q.Get(k); v {
	case "", "false":
		return false, nil
	case "true":
		return true, nil
	default:
		return false, badRequest("%s: %q is neither true nor false", k, truncate(v))
	}
}

func deref(n *int) int {
	if n == nil {
		return 0
	}
	return *n
}
