package main

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	env := map[string]string{"RANKWIRE_ADDR": "127.0.0.1:9000", "RANKWIRE_PUSH_INTERVAL": "250ms"}
	getenv := func(k string) string { return env[k] }
	c, err := parseConfig([]string{"--addr", "127.0.0.1:9100", "--data", "/tmp/x", "--allowed-origins", "lobby.example.com, *.casino.io,"}, getenv, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if c.Addr != "127.0.0.1:9100" || c.PushInterval != 250*time.Millisecond || c.DataDir != "/tmp/x" ||
		!slices.Equal(c.Origins, []string{"lobby.example.com", "*.casino.io"}) {
		t.Errorf("flags over env over defaults: %+v", c)
	}
	d, err := parseConfig(nil, func(string) string { return "" }, io.Discard)
	if err != nil || d.Addr != "127.0.0.1:8080" || d.DataDir != "./data" || d.PushInterval != 100*time.Millisecond || d.NATSURL != "" || d.KeysFile != "" ||
		d.SlowTimeout != 10*time.Second || d.PingInterval != 30*time.Second || d.MaxConns != 0 ||
		d.MetricsAddr != "127.0.0.1:9464" || d.IdleTimeout != time.Minute || d.ReadTimeout != 30*time.Second ||
		d.WriteTimeout != 10*time.Second {
		t.Errorf("defaults: %+v %v", d, err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		name string
		args []string
		env  map[string]string
		want string
	}{
		{"bad duration", []string{"--push-interval", "fast"}, nil, "push-interval"},
		{"duration too small", []string{"--push-interval", "0s"}, nil, "push-interval"},
		{"bad env", nil, map[string]string{"RANKWIRE_PUSH_INTERVAL": "soon"}, "RANKWIRE_PUSH_INTERVAL"},
		{"unknown flag", []string{"--nope"}, nil, "nope"},
		{"stray argument", []string{"serve"}, nil, "serve"},
		{"bad log format", []string{"--log-format", "xml"}, nil, "log-format"},
		{"empty data", []string{"--data", ""}, nil, "data"},
		{"slow timeout too short", []string{"--slow-timeout", "10ms"}, nil, "slow-timeout"},
		{"ping interval too long", []string{"--ping-interval", "1h"}, nil, "ping-interval"},
		{"negative connections", []string{"--max-connections", "-1"}, nil, "max-connections"},
		{"bad connections env", nil, map[string]string{"RANKWIRE_MAX_CONNECTIONS": "many"}, "RANKWIRE_MAX_CONNECTIONS"},
		{"idle timeout zero", []string{"--idle-timeout", "0s"}, nil, "--idle-timeout 0s: want 1s..1h"},
		{"idle timeout too long", []string{"--idle-timeout", "2h"}, nil, "--idle-timeout"},
		{"read timeout too short", []string{"--read-timeout", "500ms"}, nil, "--read-timeout 500ms: want 1s..10m"},
		{"read timeout negative", nil, map[string]string{"RANKWIRE_READ_TIMEOUT": "-1s"}, "--read-timeout"},
		{"write timeout too short", []string{"--write-timeout", "999ms"}, nil, "--write-timeout 999ms: want 1s..1m0s"},
		{"write timeout past the duplicate window", []string{"--write-timeout", "61s"}, nil, "--write-timeout 1m1s"},
		{"write timeout negative env", nil, map[string]string{"RANKWIRE_WRITE_TIMEOUT": "-1s"}, "--write-timeout"},
		{"idempotency retention under an hour", []string{"--idempotency-retention", "10m"}, nil, "--idempotency-retention 10m0s: want 0 (for ever) or at least 1h0m0s"},
		{"idempotency retention negative", nil, map[string]string{"RANKWIRE_IDEMPOTENCY_RETENTION": "-1h"}, "--idempotency-retention"},
		{"write timeout not a duration", nil, map[string]string{"RANKWIRE_WRITE_TIMEOUT": "10"}, "RANKWIRE_WRITE_TIMEOUT"},
		{"metrics addr without port", []string{"--metrics-addr", "localhost"}, nil, "--metrics-addr \"localhost\": want host:port"},
		{"metrics on the API port", []string{"--addr", "127.0.0.1:8080", "--metrics-addr", "127.0.0.1:8080"}, nil, "must differ from --addr"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseConfig(tt.args, func(k string) string { return tt.env[k] }, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %v, want one naming %q", err, tt.want)
			}
		})
	}
}

func TestHelpListsEveryFlagAndVariable(t *testing.T) {
	var out strings.Builder
	_, err := parseConfig([]string{"--help"}, func(string) string { return "" }, &out)
	if !errors.Is(err, flag.ErrHelp) {
		t.Fatalf("--help: %v", err)
	}
	for _, want := range []string{"-addr", "-data", "-nats", "-keys", "-push-interval", "-allowed-origins", "RANKWIRE_PUSH_INTERVAL",
		"-metrics-addr", "-idle-timeout", "-read-timeout", "-write-timeout"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help lacks %s", want)
		}
	}
}
