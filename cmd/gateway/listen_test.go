package main

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// assertHTTP1Only checks that the TLS listener at addr negotiates
// http/1.1 with a client that offers h2 first, refuses the handshake of a
// client that offers h2 alone, and answers Go's own client, made to try
// HTTP/2, in HTTP/1.1. Before http1Only and listenAPI,
// http.Server.ServeTLS added "h2" to the protocols: a client offering h2
// alone negotiated it and was served HTTP/2.
func assertHTTP1Only(t *testing.T, addr string, pool *x509.CertPool) {
	t.Helper()
	c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2", "http/1.1"}})
	if err != nil {
		t.Fatalf("TLS dial offering h2 then http/1.1: %v", err)
	}
	if p := c.ConnectionState().NegotiatedProtocol; p != "http/1.1" {
		t.Errorf("ALPN with h2 offered first: negotiated %q, want http/1.1", p)
	}
	c.Close()
	if c, err := tls.Dial("tcp", addr, &tls.Config{RootCAs: pool, NextProtos: []string{"h2"}}); err == nil {
		t.Errorf("a client offering h2 alone completed its handshake and negotiated %q", c.ConnectionState().NegotiatedProtocol)
		c.Close()
	}
	h2 := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	resp, err := h2.Get("https://" + addr + "/healthz")
	if err != nil {
		t.Fatalf("GET /healthz, trying HTTP/2: %v", err)
	}
	resp.Body.Close()
	if resp.Proto != "HTTP/1.1" {
		t.Errorf("a client trying HTTP/2 was answered in %s, want HTTP/1.1", resp.Proto)
	}
}

// TestConnectionCaps (issue 21 item 7): without --max-connections a
// tenant's WebSocket cap is half the connection budget, at most 20,000, so
// that one tenant's authenticated WebSockets (never evicted) cannot hold
// every connection; a cap that reaches the budget, from the flag or a
// tenant's key file entry, is logged at WARN with its name.
func TestConnectionCaps(t *testing.T) {
	keys := capsKeys(t, map[string]int{"small": 16, "greedy": 896, "default": 0})
	tests := []struct {
		name             string
		flag, budget     int
		want             int
		warnings, naming []string
	}{
		{"default at 1,024 files", 0, 896, 448, []string{"greedy"}, nil},
		{"default at a large limit", 0, 943_719, 20_000, nil, nil},
		{"default at the smallest budget", 0, 16, 8, []string{"small", "greedy"}, nil},
		{"flag below the budget", 500, 896, 500, []string{"greedy"}, nil},
		{"flag at the budget", 896, 896, 896, []string{"greedy"}, []string{"--max-connections"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			got := connectionCaps(tc.flag, tc.budget, keys, slog.New(slog.NewTextHandler(&buf, nil)))
			if got != tc.want {
				t.Errorf("cap %d, want %d", got, tc.want)
			}
			log := buf.String()
			for _, tenant := range tc.warnings {
				if !strings.Contains(log, "level=WARN") || !strings.Contains(log, "tenant="+tenant) {
					t.Errorf("no WARN naming tenant %s: %s", tenant, log)
				}
			}
			for _, s := range tc.naming {
				if !strings.Contains(log, s) {
					t.Errorf("no WARN naming %s: %s", s, log)
				}
			}
			if n := strings.Count(log, "level=WARN"); n != len(tc.warnings)+len(tc.naming) {
				t.Errorf("%d warnings, want %d: %s", n, len(tc.warnings)+len(tc.naming), log)
			}
		})
	}
}

// capsKeys writes and loads a key file of tenants with the given
// connection limits (0: none set).
func capsKeys(t *testing.T, limits map[string]int) *auth.Keyring {
	t.Helper()
	var b strings.Builder
	b.WriteString(`{"tenants":{`)
	i := 0
	for tenant, n := range limits {
		if i > 0 {
			b.WriteString(",")
		}
		i++
		b.WriteString(`"` + tenant + `":{"keys":[{"kid":"` + tenant + `1","alg":"HS256","secret":"` +
			base64.StdEncoding.EncodeToString([]byte(strings.Repeat(tenant, 32))) + `"}]`)
		if n > 0 {
			b.WriteString(`,"limits":{"connections":` + strconv.Itoa(n) + `}`)
		}
		b.WriteString("}")
	}
	b.WriteString("}}")
	path := filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	return keys
}
