package shred

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/natstest"
)

// embedded starts a JetStream server storing under dir and connects.
func embedded(t *testing.T, dir string) jetstream.JetStream {
	t.Helper()
	_, js := natstest.Connect(t, natstest.ServerIn(t, dir))
	return js
}

// onDisk reports whether any file under dir holds needle.
func onDisk(t *testing.T, dir string, needle []byte) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		found = found || bytes.Contains(data, needle)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}

// TestDestroyLeavesNoKey: a value sealed for a member opens until its key
// is destroyed, then never, and the key's bytes are on no file; the same
// member id in another tenant keeps its key.
func TestDestroyLeavesNoKey(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	js := embedded(t, dir)
	k, err := Open(ctx, js, 1)
	if err != nil {
		t.Fatal(err)
	}
	a, err := k.Seal(ctx, "a", "ada", []byte("Ada Lovelace"))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := k.Seal(ctx, "b", "ada", []byte("Ada Lovelace"))
	if bytes.Contains(a, []byte("Ada")) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if _, ok, _ := k.Open(ctx, "b", "ada", a); ok {
		t.Fatal("tenant a's value opens in tenant b")
	}
	key, _ := k.key(ctx, "a", "ada", lookup, false)
	if !onDisk(t, dir, key) {
		t.Fatal("the key is on no file before it is destroyed: the search proves nothing")
	}
	if err := k.Destroy(ctx, "a", "ada"); err != nil {
		t.Fatal(err)
	}
	fresh, _ := Open(ctx, js, 1) // no cache
	for _, kk := range []*Keys{k, fresh} {
		if _, ok, err := kk.Open(ctx, "a", "ada", a); ok || err != nil {
			t.Fatalf("opens after destroy: %v %v", ok, err)
		}
		if pt, ok, err := kk.Open(ctx, "b", "ada", b); !ok || err != nil || string(pt) != "Ada Lovelace" {
			t.Fatalf("the twin tenant's value: %q %v %v", pt, ok, err)
		}
	}
	if onDisk(t, dir, key) {
		t.Fatal("the destroyed key's bytes are still on disk")
	}
	// A copy of the member's data sealed after the erasure (a name in a
	// notification built before it) gets no key, on any node; the twin
	// tenant's member keeps its own.
	for _, kk := range []*Keys{k, fresh} {
		if ct, ok, err := kk.SealKept(ctx, "a", "ada", []byte("Ada Lovelace")); ok || err != nil || ct != nil {
			t.Fatalf("sealed for an erased member: %v %v", ok, err)
		}
		if _, ok, err := kk.SealKept(ctx, "b", "ada", []byte("x")); !ok || err != nil {
			t.Fatalf("the twin tenant's seal: %v %v", ok, err)
		}
	}
	// A member never sealed for: SealKept makes its key; erased without a
	// key: none after.
	if _, ok, err := k.SealKept(ctx, "a", "old", []byte("x")); !ok || err != nil {
		t.Fatalf("a member without a key: %v %v", ok, err)
	}
	if err := k.Destroy(ctx, "a", "never", "ada"); err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := fresh.SealKept(ctx, "a", "never", []byte("x")); ok {
		t.Fatal("sealed for a member erased without a key")
	}
	// A new key after the erasure does not open the old value; a node
	// that still caches the destroyed key opens what the new one sealed.
	c, err := k.Seal(ctx, "a", "ada", []byte("new"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, _ := k.Open(ctx, "a", "ada", a); ok {
		t.Fatal("a new key opens a value sealed before the erasure")
	}
	stale := New(js, 1)
	stale.remember(entry("a", "ada"), key)
	if pt, ok, _ := stale.Open(ctx, "a", "ada", c); !ok || string(pt) != "new" {
		t.Fatal("a stale cache does not open a value sealed with the new key")
	}
	if pt, ok, _ := fresh.SealKept(ctx, "a", "ada", []byte("n")); !ok || pt == nil {
		t.Fatal("the member's new key does not seal")
	}
}

// TestScrubRewritesNotifications: a notification naming the member is
// published again without its name and the original overwritten on disk;
// one about another member is left alone.
func TestScrubRewritesNotifications(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	js := embedded(t, dir)
	if _, err := js.CreateStream(ctx, jetstream.StreamConfig{Name: "N", Subjects: []string{"n.>"}}); err != nil {
		t.Fatal(err)
	}
	for i, body := range []string{
		`{"id":"x1","rows":[{"member":"ada","name":"Ada Lovelace","rank":1},{"member":"bob","name":"Bob B","rank":2}]}`,
		`{"id":"x2","rows":[{"member":"bob","name":"Bob B","rank":1}]}`,
		`{"id":"x3","rows":[{"member":"ada","name":"Ada Lovelace"}]}`,
		`{"id":"x4","rows":[{"member":"ada","rank":1,"sealed":"AQIDBA=="}]}`, // a name sealed (internal/notify)
	} {
		subj := "n.a"
		if i == 2 {
			subj = "n.b" // another tenant
		}
		if _, err := js.Publish(ctx, subj, []byte(body), jetstream.WithMsgID(subj+body[7:9])); err != nil {
			t.Fatal(err)
		}
	}
	n, err := Scrub(ctx, js, "N", "n.a", []string{"ada"})
	if err != nil || n != 2 {
		t.Fatalf("scrubbed %d: %v", n, err)
	}
	s, _ := js.Stream(ctx, "N")
	m, err := s.GetLastMsgForSubject(ctx, "n.a")
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"x4","rows":[{"member":"ada","rank":1}]}`; string(m.Data) != want {
		t.Fatalf("rewritten %s, want %s", m.Data, want)
	}
	if m, err = s.GetMsg(ctx, m.Sequence-1); err != nil {
		t.Fatal(err)
	}
	if want := `{"id":"x1","rows":[{"member":"ada","rank":1},{"member":"bob","name":"Bob B","rank":2}]}`; string(m.Data) != want {
		t.Fatalf("rewritten %s, want %s", m.Data, want)
	}
	if m.Header.Get(jetstream.MsgIDHeader) != "n.ax1#erased.1" {
		t.Errorf("message id %q", m.Header.Get(jetstream.MsgIDHeader))
	}
	if m, _ := s.GetLastMsgForSubject(ctx, "n.b"); !bytes.Contains(m.Data, []byte("Ada Lovelace")) {
		t.Fatal("the other tenant's notification was rewritten")
	}
	// Only n.b's copy is left on disk.
	n, _ = Wipe(ctx, js, "N", "n.b")
	if n != 1 || onDisk(t, dir, []byte("Ada Lovelace")) {
		t.Fatalf("wiped %d; the name is still on disk", n)
	}
}
