package main

import (
	"reflect"
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
