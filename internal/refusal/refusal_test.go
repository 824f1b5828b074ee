package refusal

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

func lines(b *bytes.Buffer) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(b.String()), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// TestRate: at most Lines lines a second per reason; the next line written
// for that reason says how many were dropped; reasons do not share a
// budget.
func TestRate(t *testing.T) {
	var logs bytes.Buffer
	r := New(slog.New(slog.NewJSONHandler(&logs, nil)), "websocket refused")
	now := time.Unix(1000, 0)
	r.now = func() time.Time { return now }
	for i := range 20 {
		r.Refused(Origin, "origin", fmt.Sprint("https://o", i))
	}
	r.Refused(Rate)
	if n := len(lines(&logs)); n != Lines+1 {
		t.Fatalf("%d lines in one second, want %d", n, Lines+1)
	}
	now = now.Add(time.Second)
	r.Refused(Origin, "origin", "https://late")
	ls := lines(&logs)
	last := ls[len(ls)-1]
	if last["dropped"] != float64(20-Lines) || last["origin"] != "https://late" {
		t.Fatalf("the next second's line %v, want dropped %d", last, 20-Lines)
	}
}

// TestKeyTenant: a token's kid names its tenant where the keyring holds
// the key; anything else names none.
func TestKeyTenant(t *testing.T) {
	keys, err := auth.ParseKeys([]byte(`{"tenants":{"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":"` +
		strings.Repeat("QUFB", 11) + `"}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := keys.SigningKey("a1")
	tok, err := auth.Mint(key, auth.Claims{Tenant: "casino-a", Roles: auth.RoleRead, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ name, token, want string }{
		{"a minted token", tok, "casino-a"},
		{"its signature spoilt", tok + "x", "casino-a"},
		{"no dot", "garbage", ""},
		{"a header not base64", "%%%.x.y", ""},
		{"an unknown kid", "eyJraWQiOiJ6OSJ9.x.y", ""},
		{"a header over 1 KiB", strings.Repeat("A", 2<<10) + ".x.y", ""},
	} {
		if got := KeyTenant(keys, c.token); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if got := KeyTenant(nil, tok); got != "" {
		t.Errorf("no keyring: %q, want none", got)
	}
}
