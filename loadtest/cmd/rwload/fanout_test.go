package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/loadtest"
)

// TestParseNodes reads -nodes and names a malformed entry.
func TestParseNodes(t *testing.T) {
	got, err := parseNodes("12@127.0.0.1:1,34")
	want := []loadtest.Node{{PID: 12, Pprof: "127.0.0.1:1"}, {PID: 34}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("parseNodes = %v, %v; want %v", got, err, want)
	}
	if got, err := parseNodes(""); got != nil || err != nil {
		t.Errorf("empty: %v, %v", got, err)
	}
	for _, bad := range []string{"x@127.0.0.1:1", "0", "12,,13", "-1@h:1"} {
		if _, err := parseNodes(bad); err == nil {
			t.Errorf("parseNodes(%q): no error", bad)
		}
	}
}

// TestCheckFanoutCentrifugoViews: the Centrifugo peer takes top views,
// around views, or rank and members views, and the flag at fault is named.
func TestCheckFanoutCentrifugoViews(t *testing.T) {
	base := loadtest.FanoutConfig{Shape: loadtest.Steady, PerConn: 1, Redis: "127.0.0.1:1", Centrifugo: "127.0.0.1:2"}
	for _, ok := range []loadtest.FanoutConfig{{Top: 1}, {Around: 1}, {}, {Rank: 1}, {MembersViews: 1}, {Rank: 1, MembersViews: 1}} {
		c := base
		c.Top, c.Around, c.Rank, c.MembersViews = ok.Top, ok.Around, ok.Rank, ok.MembersViews
		if err := checkFanout(c); err != nil {
			t.Errorf("top %d around %d rank %d members %d: %v", c.Top, c.Around, c.Rank, c.MembersViews, err)
		}
	}
	c := base
	c.Rank, c.PerConn = 1, 2
	if err := checkFanout(c); err == nil || !strings.Contains(err.Error(), "-per-conn") {
		t.Errorf("rank lines 2 a connection: %v", err)
	}
	for _, bad := range []loadtest.FanoutConfig{{Top: 1, Around: 1}, {Around: 1, Rank: 1}, {Top: 1, MembersViews: 1}} {
		c := base
		c.Top, c.Around, c.Rank, c.MembersViews = bad.Top, bad.Around, bad.Rank, bad.MembersViews
		if err := checkFanout(c); err == nil || !strings.Contains(err.Error(), "-centrifugo") {
			t.Errorf("top %d around %d rank %d members %d: %v", c.Top, c.Around, c.Rank, c.MembersViews, err)
		}
	}
}
