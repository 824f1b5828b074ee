package live

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// TestWireLimits: the one limit of wire the plane does not read from wire
// is the engine's: a since resume bridges wire.SinceChanges changes.
func TestWireLimits(t *testing.T) {
	if wire.SinceChanges != subscriptions.DefaultRingSize {
		t.Errorf("wire.SinceChanges = %d, the engine's ring holds %d", wire.SinceChanges, subscriptions.DefaultRingSize)
	}
}

// goldenCompact returns wire/testdata/name.json without its indentation:
// the bytes a server message is on the wire.
func goldenCompact(t *testing.T, name string) []byte {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "wire", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestWireGoldenServer: the messages the plane encodes itself are, byte
// for byte, the golden messages of their kind (wire/testdata).
func TestWireGoldenServer(t *testing.T) {
	n := 0
	for _, ex := range wire.Examples() {
		var got []byte
		switch v := ex.Value.(type) {
		case wire.ErrorMessage:
			got = encodeError(*v.ID, &Error{v.Code, v.Message})
		case wire.BoardMessage:
			s := hub.Settings{StartsAt: v.StartsAt, EndsAt: v.EndsAt}
			for _, p := range v.Prizes {
				s.Prizes = append(s.Prizes, hub.Prize(p))
			}
			got = encodeBoard(v.ID, v.Board, s)
		case wire.Heartbeat:
			got = encodeHeartbeat(v)
		default:
			continue
		}
		n++
		if want := goldenCompact(t, ex.Name); !bytes.Equal(got, want) {
			t.Errorf("%s: the plane encodes\n%s\nthe golden message is\n%s", ex.Name, got, want)
		}
	}
	if n != 4 {
		t.Fatalf("checked %d golden messages, want the error, the board and the two heartbeats", n)
	}
}

// TestWireGoldenClient: every golden client message decodes as the plane
// decodes a client's (decodeMsg) into the value it was made from.
func TestWireGoldenClient(t *testing.T) {
	n := 0
	for _, ex := range wire.Examples() {
		var want clientMsg
		switch v := ex.Value.(type) {
		case wire.Auth:
			want.Type, want.Token = v.Type, v.Token
		case wire.Subscribe:
			want.Subscribe = v
		case wire.Unsubscribe:
			want.Type, want.ID = v.Type, v.ID
		default:
			continue
		}
		n++
		got, err := decodeMsg(goldenCompact(t, ex.Name))
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s: decoded %+v, %v\nwant %+v", ex.Name, got, err, want)
		}
	}
	if n < 3 {
		t.Fatalf("checked %d golden client messages", n)
	}
}
