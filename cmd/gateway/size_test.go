package main

import (
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"": 0, "1048576": 1 << 20, "1MiB": 1 << 20, "1 mib": 1 << 20, "50GB": 50e9, "50gb": 50e9,
		"1.5GiB": 3 << 29, "2TB": 2e12, "512KiB": 512 << 10, "10B": 10, " 3 MB ": 3e6,
	} {
		if got, err := parseSize(in); err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"GB", "-1GB", "1e9", "0x10", "NaN", "Inf", "1 2GB", "1GBB", "ten", "1_000", "9999999TB", "1PB"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// TestMaxStoreFlag: --max-store and RANKWIRE_MAX_STORE read sizes; too
// small, malformed, or with an external NATS server they are refused.
func TestMaxStoreFlag(t *testing.T) {
	none := func(string) string { return "" }
	c, err := parseConfig([]string{"--max-store", "50GB"}, none, io.Discard)
	if err != nil || c.MaxStore != 50e9 {
		t.Fatalf("--max-store 50GB: %d %v", c.MaxStore, err)
	}
	c, err = parseConfig(nil, func(k string) string { return map[string]string{"RANKWIRE_MAX_STORE": "2MiB"}[k] }, io.Discard)
	if err != nil || c.MaxStore != 2<<20 {
		t.Fatalf("RANKWIRE_MAX_STORE 2MiB: %d %v", c.MaxStore, err)
	}
	if c, err := parseConfig(nil, none, io.Discard); err != nil || c.MaxStore != 0 {
		t.Fatalf("default: %d %v", c.MaxStore, err)
	}
	for _, args := range [][]string{{"--max-store", "1KB"}, {"--max-store", "lots"}, {"--max-store", "1GB", "--nats", "nats://127.0.0.1:4222"}} {
		if _, err := parseConfig(args, none, io.Discard); err == nil || !strings.Contains(err.Error(), "max-store") {
			t.Errorf("%v: %v, want an error naming max-store", args, err)
		}
	}
}

// TestMaxStoreGateway runs the gateway binary with a 1 MiB store and fills
// it: writes answer 503 saying the store is full, /readyz answers 503 with
// the reason, and reads go on.
func TestMaxStoreGateway(t *testing.T) {
	keys, sk := keyFile(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_MAX_STORE=1MiB")
	tok := adminToken(t, sk)
	if status, err := call("PUT", p.url("/v1/boards/b"), tok, "", nil); status != 200 {
		t.Fatalf("PUT board: %d %v", status, err)
	}
	var out struct {
		Error struct{ Code, Message string }
	}
	status := 200
	for round := 0; round < 200 && status == 200; round++ {
		var b strings.Builder
		b.WriteString(`{"scores":[`)
		for i := range 500 {
			if i > 0 {
				b.WriteString(",")
			}
			fmt.Fprintf(&b, `{"member":"m%03d-%04d","score":%d,"id":"%03d-%04d-xxxxxxxxxxxxxxxx"}`, round, i, i, round, i)
		}
		b.WriteString(`]}`)
		status, _ = call("POST", p.url("/v1/boards/b/scores"), tok, b.String(), &out)
	}
	if status != 503 || out.Error.Code != "unavailable" || !strings.Contains(out.Error.Message, "store is full") {
		t.Fatalf("filling: %d %+v", status, out)
	}
	var ready struct {
		Ready  bool
		Reason string
	}
	await.For(t, 5*time.Second, func() error { // the next readiness observation, within 500 ms
		if status, err := call("GET", p.url("/readyz"), "", "", &ready); status != 503 || ready.Ready || !strings.Contains(ready.Reason, "store is full") {
			return fmt.Errorf("readyz: %d %+v %v", status, ready, err)
		}
		return nil
	})
	if status, err := call("GET", p.url("/v1/boards/b/top?limit=1"), tok, "", nil); status != 200 {
		t.Fatalf("read on a full store: %d %v", status, err)
	}
}
