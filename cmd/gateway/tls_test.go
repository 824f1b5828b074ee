package main

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/internal/certtest"
)

// With --tls-cert and --tls-key the gateway serves HTTPS and WSS on --addr
// (HTTP/1.1 only, whatever the client offers), and refuses plain HTTP there.
func TestDirectTLS(t *testing.T) {
	keys, sk := keyFile(t)
	cert, key, pool := certtest.SelfSigned(t, t.TempDir())
	cfg := Config{Addr: "127.0.0.1:0", DataDir: t.TempDir(), KeysFile: keys, PushInterval: 20 * time.Millisecond,
		TLSCert: cert, TLSKey: key, MaxConns: 100, SlowTimeout: 10 * time.Second, PingInterval: 30 * time.Second,
		IdleTimeout: time.Minute, ReadTimeout: time.Minute, WriteTimeout: 10 * time.Second, LogFormat: "text", DemoRound: 5 * time.Minute}
	ctx, cancel := context.WithCancel(context.Background())
	ready, errc := make(chan string, 1), make(chan error, 1)
	go func() { errc <- run(ctx, cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), io.Discard, ready) }()
	var addr string
	select {
	case addr = <-ready:
	case err := <-errc:
		cancel()
		t.Fatal(err)
	}
	defer func() {
		cancel()
		<-errc
	}()
	client := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	admin := adminToken(t, sk)
	req, _ := http.NewRequest("PUT", "https://"+addr+"/v1/boards/b", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := client.Do(req)
	if err != nil || resp.StatusCode != 200 || resp.TLS == nil || resp.ProtoMajor != 1 {
		t.Fatalf("PUT over TLS: %v %v", resp, err)
	}
	resp.Body.Close()
	assertHTTP1Only(t, addr, pool)

	// A WebSocket over TLS gets its snapshot.
	dctx, dcancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer dcancel()
	c, _, err := websocket.Dial(dctx, "wss://"+addr+"/v1/ws?access_token="+admin, &websocket.DialOptions{HTTPClient: client})
	if err != nil {
		t.Fatalf("wss: %v", err)
	}
	defer c.CloseNow()
	if err := c.Write(dctx, websocket.MessageText, []byte(`{"type":"subscribe","id":"s","board":"b","view":{"kind":"top"}}`)); err != nil {
		t.Fatal(err)
	}
	_, data, err := c.Read(dctx)
	var m struct{ Type string }
	if err != nil || json.Unmarshal(data, &m) != nil || m.Type != "snapshot" {
		t.Fatalf("over wss: %s %v", data, err)
	}

	// Plain HTTP on the TLS port is refused.
	resp, err = (&http.Client{Timeout: 5 * time.Second}).Get("http://" + addr + "/healthz")
	if err == nil {
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "HTTPS") {
			t.Fatalf("plain HTTP on the TLS port: %d %s", resp.StatusCode, body)
		}
	}
}

func TestTLSFlagsGoTogether(t *testing.T) {
	for _, args := range [][]string{{"--tls-cert", "c.pem"}, {"--tls-key", "k.pem"}} {
		if _, err := parseConfig(args, func(string) string { return "" }, io.Discard); err == nil || !strings.Contains(err.Error(), "--tls-cert and --tls-key") {
			t.Errorf("%v: %v", args, err)
		}
	}
	cfg, err := parseConfig([]string{"--tls-cert", "/nonexistent/c.pem", "--tls-key", "/nonexistent/k.pem", "--keys", "x"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := serverTLS(cfg); err == nil || !strings.Contains(err.Error(), "--tls-cert/--tls-key") {
		t.Fatalf("unreadable files: %v", err)
	}
}
