package shred

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// Wipe overwrites every message of stream on subject (secure delete), for
// data that is to be replaced (a snapshot object's chunks). It returns how
// many it wiped. O(messages on the subject) requests.
func Wipe(ctx context.Context, js jetstream.JetStream, stream, subject string) (int, error) {
	return visit(ctx, js, stream, subject, func(s jetstream.Stream, m *jetstream.RawStreamMsg) error {
		return s.SecureDeleteMsg(ctx, m.Sequence)
	})
}

// visit calls f for each message of stream on subject, in order.
func visit(ctx context.Context, js jetstream.JetStream, stream, subject string, f func(jetstream.Stream, *jetstream.RawStreamMsg) error) (int, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("shred: stream %s: %w", stream, err)
	}
	n := 0
	for seq := uint64(1); ; {
		m, err := s.GetMsg(ctx, seq, jetstream.WithGetMsgSubject(subject))
		if errors.Is(err, jetstream.ErrMsgNotFound) {
			return n, nil
		}
		if err != nil {
			return n, fmt.Errorf("shred: read %s: %w", stream, err)
		}
		if err := f(s, m); err != nil && !errors.Is(err, jetstream.ErrMsgNotFound) {
			return n, fmt.Errorf("shred: %s seq %d: %w", stream, m.Sequence, err)
		}
		n++
		seq = m.Sequence + 1
	}
}

// Scrub rewrites the JSON messages of stream on subject that show one of
// members' profiles: every object whose "member" is one of members loses
// its "name", "avatar" and "country", and "sealed" (a name sealed under
// the member's key, internal/notify: unreadable once the key is
// destroyed, removed so that the copy says what receivers now get). Each
// such message is published again
// without them (same subject and headers, the JetStream message id
// suffixed "#erased.<seq>", which webhook delivery strips: the webhook-id
// stays), then the original is overwritten (secure delete).
// The copy comes later in the stream: a reader that deduplicates on an id
// inside the body (webhook receivers, on webhook-id) sees it once. It
// returns how many messages it rewrote.
func Scrub(ctx context.Context, js jetstream.JetStream, stream, subject string, members []string) (int, error) {
	rewrote := 0
	_, err := visit(ctx, js, stream, subject, func(s jetstream.Stream, m *jetstream.RawStreamMsg) error {
		data, changed := redact(m.Data, members)
		if !changed {
			return nil
		}
		msg := nats.NewMsg(m.Subject)
		msg.Data = data
		for k, v := range m.Header {
			msg.Header[k] = v
		}
		msg.Header.Set(jetstream.MsgIDHeader, m.Header.Get(jetstream.MsgIDHeader)+"#erased."+strconv.FormatUint(m.Sequence, 10))
		if _, err := js.PublishMsg(ctx, msg); err != nil {
			return err
		}
		rewrote++
		return s.SecureDeleteMsg(ctx, m.Sequence)
	})
	return rewrote, err
}

// redact returns data without the profile fields of members' objects,
// and whether it changed anything. Data that is not JSON is left alone.
func redact(data []byte, members []string) ([]byte, bool) {
	var v any
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if dec.Decode(&v) != nil {
		return data, false
	}
	if !strip(v, members) {
		return data, false
	}
	out, err := json.Marshal(v)
	if err != nil {
		return data, false
	}
	return out, true
}

// strip deletes the profile fields of members' objects within v.
func strip(v any, members []string) bool {
	changed := false
	switch x := v.(type) {
	case map[string]any:
		if id, ok := x["member"].(string); ok && slices.Contains(members, id) {
			for _, f := range []string{"name", "avatar", "country", "sealed"} {
				if _, has := x[f]; has {
					delete(x, f)
					changed = true
				}
			}
		}
		for _, e := range x {
			changed = strip(e, members) || changed
		}
	case []any:
		for _, e := range x {
			changed = strip(e, members) || changed
		}
	}
	return changed
}
