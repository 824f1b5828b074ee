package wstest

import (
	"fmt"
	"testing"

	"github.com/rankwire/rankwire/wire"
)

// A snapshot sets a subscription's rows, a diff that follows its last seq
// changes them, and one that does not is a violation; errors and
// heartbeats are kept apart.
func TestApply(t *testing.T) {
	wc := &Client{t: t, state: map[string]map[int]wire.Row{}, seq: map[string]uint64{}}
	wc.Apply([]byte(`{"type":"snapshot","id":"s","seq":3,"rows":[{"rank":1,"member":"a","score":5,"subscore":0},{"rank":2,"member":"b","score":4,"subscore":0}]}`))
	wc.Apply([]byte(`{"type":"diff","id":"s","seq":4,"prev":3,"rows":[{"rank":1,"member":"b","score":9,"subscore":0}],"gone":[2]}`))
	wc.Apply([]byte(`{"type":"heartbeat","at":"2026-11-27T00:00:00.000Z","writable":true}`))
	wc.Apply([]byte(`{"type":"error","id":"x","code":"bad_request","message":"view.kind"}`))
	rows, ok := wc.Rows("s")
	if !ok || len(rows) != 1 || rows[1].Member != "b" || wc.LastSeq("s") != 4 {
		t.Fatalf("rows %v (%v), seq %d", rows, ok, wc.LastSeq("s"))
	}
	if len(wc.Heartbeats()) != 1 || len(wc.Errors()) != 1 || len(wc.Messages()) != 3 {
		t.Fatalf("%d heartbeats, %d errors, %d messages", len(wc.Heartbeats()), len(wc.Errors()), len(wc.Messages()))
	}
	wc.Apply([]byte(`{"type":"diff","id":"s","seq":6,"prev":5}`))
	if err := wc.Err(); err == nil {
		t.Fatal("a diff out of order was taken")
	}
	wc.Seed("s", nil, 1)
	if fmt.Sprint(wc.LastSeq("s")) != "1" {
		t.Fatal("Seed did not set the seq")
	}
}
