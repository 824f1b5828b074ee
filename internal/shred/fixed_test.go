package shred

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"strings"
	"testing"
)

// TestRingSealsAlike: a snapshot's seal is the same bytes on every node
// holding the key (two Keys on one stream) and for the same value only;
// it opens like Seal's, not in another tenant, and not once the key is
// destroyed, after which sealing the member's data again is refused.
func TestRingSealsAlike(t *testing.T) {
	ctx := context.Background()
	js := embedded(t, t.TempDir())
	a, _ := Open(ctx, js, 1)
	b, _ := Open(ctx, js, 1) // another node: no cache yet
	x, err := a.Ring("t").Seal("ada", []byte("Ada Lovelace"))
	if err != nil {
		t.Fatal(err)
	}
	y, err := b.Ring("t").Seal("ada", []byte("Ada Lovelace"))
	if err != nil || !bytes.Equal(x, y) {
		t.Fatalf("two nodes seal differently: %v", err)
	}
	if z, _ := a.Ring("t").Seal("ada", []byte("Ada Lovelacf")); bytes.Equal(z[:13], x[:13]) {
		t.Fatal("another value has the same nonce")
	}
	if bytes.Contains(x, []byte("Ada")) {
		t.Fatal("the sealed value holds the plaintext")
	}
	if pt, ok, err := a.Open(ctx, "t", "ada", x); !ok || err != nil || string(pt) != "Ada Lovelace" {
		t.Fatalf("Open: %q %v %v", pt, ok, err)
	}
	if _, ok, _ := b.Ring("u").Open("ada", x); ok {
		t.Fatal("opens in another tenant")
	}
	if err := a.Destroy(ctx, "t", "ada"); err != nil {
		t.Fatal(err)
	}
	b.Forget("t", "ada") // as every node does when it applies the erasure
	for _, k := range []*Keys{a, b} {
		if _, ok, err := k.Ring("t").Open("ada", x); ok || err != nil {
			t.Fatalf("opens after destroy: %v %v", ok, err)
		}
		if _, err := k.Ring("t").Seal("ada", []byte("Ada Lovelace")); !errors.Is(err, ErrDestroyed) {
			t.Fatalf("sealing an erased member's data: %v", err)
		}
	}
	if (*Keys)(nil).Ring("t") != nil {
		t.Fatal("a nil Keys' ring is not nil")
	}
}

// TestNonceOfIsHMAC: the nonce from the precomputed HMAC states is
// crypto/hmac's, so snapshots seal to the bytes they sealed to before.
func TestNonceOfIsHMAC(t *testing.T) {
	raw := bytes.Repeat([]byte{7}, keyLen)
	p, err := prepare(raw, 0)
	if err != nil {
		t.Fatal(err)
	}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(nonceLabel))
	for _, pt := range []string{"", "Ada", strings.Repeat("long profile ", 20)} {
		ad := associated("t", "ada")
		h := hmac.New(sha256.New, m.Sum(nil))
		h.Write([]byte{byte(len(ad))})
		h.Write(ad)
		h.Write([]byte(pt))
		got := make([]byte, 12)
		if err := p.nonceOf(got, ad, []byte(pt)); err != nil {
			t.Fatal(err)
		}
		if want := h.Sum(nil)[:12]; !bytes.Equal(got, want) {
			t.Errorf("plaintext %q: nonce %x, HMAC %x", pt, got, want)
		}
	}
}
