package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

	"github.com/nats-io/nats.go"
	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/natstest"
	"github.com/rankwire/rankwire/internal/shred"
)

// TestSealedNamesDeliverAsBefore: a notification's names are stored
// sealed (no name in the stored bytes), and Body gives the notification's
// JSON byte for byte as it was before sealing; once a member's key is
// destroyed its row comes without its name, the others unchanged, also in
// a notification sealed after the erasure (no new key); the same member
// in a twin tenant keeps its name; a notification stored in
// clear (without the header, as before names were sealed) is delivered as
// stored.
func TestSealedNamesDeliverAsBefore(t *testing.T) {
	ctx := context.Background()
	_, js := natstest.JetStream(t)
	keys, err := shred.Open(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	note := func(tenant string) ledger.Notification {
		return ledger.Notification{ID: "board.ended:weekly:1", Type: "board.ended", Tenant: tenant, Board: "weekly",
			Window: "all", At: "2026-11-27T06:00:00Z", Seq: 3, Total: 3, Rows: []ledger.NotifyRow{
				{Rank: 1, Member: "p1", Score: 10.5, Name: "Qzxv Ann", Prize: "€50"},
				{Rank: 2, Member: "p2", Score: 7, Subscore: 1},
				{Rank: 3, Member: "p3", Score: 5, Name: "Bob B"},
			}}
	}
	stored := map[string][]byte{}
	for _, tn := range []string{"a", "b"} {
		data, sealed, err := seal(ctx, keys, note(tn))
		if err != nil || !sealed {
			t.Fatalf("seal: %v %v", sealed, err)
		}
		if bytes.Contains(data, []byte("Qzxv")) || bytes.Contains(data, []byte("Bob B")) || !bytes.Contains(data, []byte(`"member":"p1"`)) {
			t.Fatalf("stored: %s", data)
		}
		stored[tn] = data
	}
	header := nats.Header{HeaderSealed: []string{SealedV1}}
	body := func(tn string) string {
		t.Helper()
		got, err := Body(ctx, keys, tn, header, stored[tn])
		if err != nil {
			t.Fatal(err)
		}
		return string(got)
	}
	for _, tn := range []string{"a", "b"} {
		if want, _ := json.Marshal(note(tn)); body(tn) != string(want) {
			t.Fatalf("%s delivered\n%s\nwant\n%s", tn, body(tn), want)
		}
	}
	if got, _ := Body(ctx, keys, "b", header, stored["a"]); bytes.Contains(got, []byte("Qzxv")) {
		t.Fatalf("tenant a's names open as tenant b's: %s", got)
	}
	if err := keys.Destroy(ctx, "a", "p1"); err != nil {
		t.Fatal(err)
	}
	erased := note("a")
	erased.Rows[0].Name = ""
	if want, _ := json.Marshal(erased); body("a") != string(want) {
		t.Fatalf("after the erasure a delivered\n%s\nwant\n%s", body("a"), want)
	}
	if want, _ := json.Marshal(note("b")); body("b") != string(want) {
		t.Fatalf("the twin tenant delivered\n%s", body("b"))
	}
	// A note built before the erasure applied here, stored after it: the
	// erased name gets no new key; it is stored and delivered without it.
	late, _, err := seal(ctx, keys, note("a"))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := Body(ctx, keys, "a", header, late); err != nil || string(got) != body("a") {
		t.Fatalf("stored after the erasure, delivered as %s (%v), want %s", got, err, body("a"))
	}
	if bytes.Count(late, []byte(`"sealed"`)) != 1 {
		t.Fatalf("stored after the erasure as %s: want p3's name only", late)
	}

	// Without names, or as stored before names were sealed: as it is.
	plain := note("a")
	for i := range plain.Rows {
		plain.Rows[i].Name = ""
	}
	data, sealed, err := seal(ctx, keys, plain)
	if want, _ := json.Marshal(plain); err != nil || sealed || string(data) != string(want) {
		t.Fatalf("a note without names stored as %s (sealed %v, %v)", data, sealed, err)
	}
	old := []byte(`{"id":"x","rows":[{"member":"p1","name":"Old Name","rank":1}]}`)
	if got, err := Body(ctx, keys, "a", nats.Header{}, old); err != nil || string(got) != string(old) {
		t.Fatalf("a clear stored notification delivered as %s, %v", got, err)
	}
	if _, err := Body(ctx, keys, "a", nats.Header{HeaderSealed: []string{"2"}}, stored["a"]); err == nil {
		t.Fatal("a layout of a newer gateway is opened")
	}
}
