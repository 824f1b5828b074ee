package notify

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/nats-io/nats.go"
	"github.com/rankwire/rankwire/internal/ledger"
)

// Sealed names. A notification's rows may show members' profile names,
// which are personal data: the stream (and, on a cluster, each replica's
// Raft log of it, which erasure cannot reach before JetStream compacts
// it) must not hold them in clear. So the notifier stores each name sealed
// under its member's key (the key of the member's profile: Sealer is
// internal/shred.Keys), in the row's "sealed" field instead of "name",
// and marks the message with HeaderSealed; whoever reads the stream for a
// receiver (package webhook) opens the names with Body, which gives the
// notification's JSON exactly as it was before it was sealed. Once the
// member is erased its key is gone and Body gives the row without a name,
// as the notification would have been built after the erasure.
//
// A notification without names is stored as it is delivered, without the
// header, as every notification was before names were sealed: Body gives
// a message without the header as it is stored (compatibility).

// HeaderSealed is the header of a stored notification whose names are
// sealed; its value is the layout's version, SealedV1.
const HeaderSealed = "Rankwire-Sealed"

// SealedV1 is HeaderSealed's value: rows carry "sealed" (the name sealed
// under the row's member's key) instead of "name".
const SealedV1 = "1"

// Sealer seals and opens members' personal data under each member's key
// (internal/shred.Keys).
type Sealer interface {
	// SealKept encrypts plaintext under owner's key in tenant: false
	// where owner was erased since (a name built from the state before the
	// erasure applied here must not get a new key).
	SealKept(ctx context.Context, tenant, owner string, plaintext []byte) ([]byte, bool, error)
	// Open decrypts what Seal returned: false where owner's key is gone
	// (erased); an error only where the keys cannot be read now.
	Open(ctx context.Context, tenant, owner string, sealed []byte) ([]byte, bool, error)
}

// storedRow is a notification's row as stored: its name sealed.
type storedRow struct {
	ledger.NotifyRow
	Sealed []byte `json:"sealed,omitempty"` // the name, sealed under Member's key
}

// storedNote is a notification as stored with HeaderSealed: its Rows
// stand for the notification's.
type storedNote struct {
	ledger.Notification
	Rows []storedRow `json:"rows,omitempty"`
}

// seal returns the body note is stored as, and whether it has a row with
// a name (then it is stored with HeaderSealed). A member erased since the
// note was built gets no name. Without keys (nil) it is the notification's
// JSON.
func seal(ctx context.Context, keys Sealer, note ledger.Notification) ([]byte, bool, error) {
	named := false
	for _, r := range note.Rows {
		named = named || r.Name != ""
	}
	if !named || keys == nil {
		data, err := json.Marshal(note)
		return data, false, err
	}
	st := storedNote{Notification: note, Rows: make([]storedRow, len(note.Rows))}
	for i, r := range note.Rows {
		st.Rows[i].NotifyRow = r
		if r.Name == "" {
			continue
		}
		ct, _, err := keys.SealKept(ctx, note.Tenant, r.Member, []byte(r.Name))
		if err != nil {
			return nil, false, fmt.Errorf("seal a name: %w", err)
		}
		st.Rows[i].Name, st.Rows[i].Sealed = "", ct // none where erased: the row as after the erasure
	}
	st.Notification.Rows = nil
	data, err := json.Marshal(st)
	return data, true, err
}

// Body returns the notification a message of tenant's subject stored (its
// headers and data), as receivers get it: the data itself where it has no
// HeaderSealed; else the notification's JSON with each sealed name opened
// by keys, and left out where its member's key is gone (or keys is nil).
// An *OpenError where the keys cannot be read now (try again: delivering
// without a name on a passing failure would send a receiver a body the
// notification never had); another error where the data is not a sealed
// notification this gateway can read.
func Body(ctx context.Context, keys Sealer, tenant string, header nats.Header, data []byte) ([]byte, error) {
	switch v := header.Get(HeaderSealed); v {
	case "":
		return data, nil
	case SealedV1:
	default:
		return nil, fmt.Errorf("notification sealed as %q, not %q: written by a newer gateway", v, SealedV1)
	}
	var st storedNote
	if err := json.Unmarshal(data, &st); err != nil {
		return nil, fmt.Errorf("decode a sealed notification: %w", err)
	}
	note := st.Notification
	note.Rows = make([]ledger.NotifyRow, len(st.Rows))
	for i, r := range st.Rows {
		note.Rows[i] = r.NotifyRow
		if r.Sealed == nil || keys == nil {
			continue
		}
		name, ok, err := keys.Open(ctx, tenant, r.Member, r.Sealed)
		if err != nil {
			return nil, &OpenError{Err: err}
		}
		if ok {
			note.Rows[i].Name = string(name)
		}
	}
	if len(note.Rows) == 0 {
		note.Rows = nil
	}
	return json.Marshal(note)
}

// OpenError reports that the members' keys could not be read, so that a
// sealed name was neither opened nor known to be erased: worth another
// try.
type OpenError struct{ Err error }

func (e *OpenError) Error() string { return "open a sealed name: " + e.Err.Error() }

// Unwrap returns the keys' error.
func (e *OpenError) Unwrap() error { return e.Err }
