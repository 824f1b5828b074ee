package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// Every cluster flag combination that cannot work is refused with an
// error naming the flag.
func TestClusterFlagsRefused(t *testing.T) {
	sec := []string{"--cluster", "c", "--cluster-secret-file", "/s", "--routes", "nats://127.0.0.1:6222"}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"routes without cluster", []string{"--routes", "nats://a:1"}, "--routes: needs --cluster"},
		{"cluster without secret", []string{"--cluster", "c"}, "--cluster: needs --cluster-secret-file"},
		{"cluster without routes", []string{"--cluster", "c", "--cluster-secret-file", "/s"}, "--cluster: needs --routes"},
		{"cluster with nats", append([]string{"--nats", "nats://a:1"}, sec...), "--cluster"},
		{"nats-listen without secret", []string{"--nats-listen", "127.0.0.1:4222"}, "--nats-listen: needs --cluster-secret-file"},
		{"nats-listen with nats", []string{"--nats", "nats://a:1", "--nats-listen", "127.0.0.1:4222", "--cluster-secret-file", "/s"}, "--nats-listen"},
		{"replicas 2", append([]string{"--replicas", "2"}, sec...), "--replicas 2: want 1, 3 or 5"},
		{"replicas 3 alone", []string{"--replicas", "3"}, "--replicas 3: needs --cluster"},
		{"bad sync", []string{"--sync", "sometimes"}, "sync"},
		{"negative sync", []string{"--sync", "-1s"}, "sync"},
		{"sync with nats", []string{"--nats", "nats://a:1", "--sync", "always"}, "--sync"},
		{"route scheme", []string{"--cluster", "c", "--cluster-secret-file", "/s", "--routes", "http://a:1"}, "--routes \"http://a:1\""},
		{"route with credentials", []string{"--cluster", "c", "--cluster-secret-file", "/s", "--routes", "nats://u:p@a:1"}, "without credentials"},
		{"cluster-listen no port", append([]string{"--cluster-listen", "somehost"}, sec...), "--cluster-listen"},
		{"creds without nats", []string{"--nats-creds", "/c"}, "--nats-creds: needs --nats"},
		{"creds with nats-listen", []string{"--nats-listen", "127.0.0.1:4222", "--cluster-secret-file", "/s", "--nats-creds", "/c"}, "--nats-creds: needs --nats"},
		{"nats TLS alone", []string{"--nats-tls-cert", "/c", "--nats-tls-key", "/k"}, "--nats-tls-*: need --nats"},
		{"nats-listen TLS without key", []string{"--nats-listen", "127.0.0.1:4222", "--cluster-secret-file", "/s", "--nats-tls-cert", "/c"}, "--nats-tls-key"},
		{"nats-listen CA alone", []string{"--nats-listen", "127.0.0.1:4222", "--cluster-secret-file", "/s", "--nats-tls-ca", "/ca"}, "--nats-tls-ca: with --nats-listen"},
		{"domain without nats", []string{"--nats-domain", "hub"}, "--nats-domain: needs --nats"},
		{"cert without key", []string{"--nats", "nats://a:1", "--nats-tls-cert", "/c"}, "--nats-tls-key"},
		{"empty node", append([]string{"--node", " "}, sec...), "--node"},
		{"route TLS without cluster", []string{"--cluster-tls-cert", "/c", "--cluster-tls-key", "/k", "--cluster-tls-ca", "/ca"}, "--cluster-tls-*: need --cluster"},
		{"route TLS without CA", append([]string{"--cluster-tls-cert", "/c", "--cluster-tls-key", "/k"}, sec...), "give all three"},
		{"route TLS CA alone", append([]string{"--cluster-tls-ca", "/ca"}, sec...), "give all three"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.args, func(string) string { return "" }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

// The cluster flags read from RANKWIRE_* variables; --sync takes always or
// lazy or an interval (0 or less is refused); --nats takes a list.
func TestClusterFlagsFromEnv(t *testing.T) {
	env := map[string]string{"RANKWIRE_CLUSTER": "c", "RANKWIRE_NODE": "n2", "RANKWIRE_CLUSTER_SECRET_FILE": "/s",
		"RANKWIRE_ROUTES": "nats://127.0.0.1:1, nats://127.0.0.1:2", "RANKWIRE_CLUSTER_LISTEN": "127.0.0.1:3",
		"RANKWIRE_NATS_LISTEN": "127.0.0.1:4", "RANKWIRE_REPLICAS": "5", "RANKWIRE_SYNC": "always"}
	c, err := parseConfig(nil, func(k string) string { return env[k] }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Node != "n2" || c.Cluster != "c" || len(c.Routes) != 2 || c.ClusterListen != "127.0.0.1:3" ||
		c.NATSListen != "127.0.0.1:4" || c.Replicas != 5 || c.Sync != hub.SyncAlways {
		t.Fatalf("config %+v", c)
	}
	for arg, want := range map[string]time.Duration{"250ms": 250 * time.Millisecond, "lazy": hub.SyncLazy} {
		c, err = parseConfig([]string{"--sync", arg}, func(string) string { return "" }, io.Discard)
		if err != nil || c.Sync != want {
			t.Fatalf("--sync %s: %v, %v", arg, c.Sync, err)
		}
	}
	for _, arg := range []string{"0s", "-1s", "sometimes"} {
		if _, err = parseConfig([]string{"--sync", arg}, func(string) string { return "" }, io.Discard); err == nil {
			t.Errorf("--sync %s: accepted", arg)
		}
	}
}

// A short, missing or empty secret file is refused, and the error never
// holds the secret.
func TestClusterSecretFile(t *testing.T) {
	dir := t.TempDir()
	short := filepath.Join(dir, "short")
	if err := os.WriteFile(short, []byte("tooshort\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := readSecret(short); err == nil || strings.Contains(err.Error(), "tooshort") {
		t.Fatalf("short secret: %v", err)
	}
	if _, err := readSecret(filepath.Join(dir, "none")); err == nil {
		t.Fatal("missing secret file accepted")
	}
	good := filepath.Join(dir, "good")
	if err := os.WriteFile(good, []byte("  0123456789abcdef0123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := readSecret(good); err != nil || s != "0123456789abcdef0123" {
		t.Fatalf("good secret: %q, %v", s, err)
	}
}

// Without cluster flags the hub gets no cluster settings at all (so the
// embedded server opens no port and keeps its name); with them it gets
// every one.
func TestHubClusterSettings(t *testing.T) {
	c, err := parseConfig([]string{"--node", "x"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if hc, _ := c.hubCluster(""); hc.Node != "" || hc.Name != "" || hc.Listen != "" || hc.ClientListen != "" {
		t.Fatalf("cluster settings without cluster flags: %+v", hc)
	}
	c, err = parseConfig([]string{"--node", "x", "--cluster", "c", "--cluster-secret-file", "/s", "--routes", "nats://a:1",
		"--cluster-listen", "127.0.0.1:7"}, func(string) string { return "" }, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if hc, _ := c.hubCluster("sec"); hc.Node != "x" || hc.Name != "c" || hc.Listen != "127.0.0.1:7" || hc.Secret != "sec" || len(hc.Routes) != 1 {
		t.Fatalf("cluster settings: %+v", hc)
	}
}
