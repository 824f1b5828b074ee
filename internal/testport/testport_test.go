package testport

import (
	"net"
	"strconv"
	"testing"
)

// Ports are distinct, below the ephemeral range, never handed out twice,
// and bindable once returned.
func TestFreeN(t *testing.T) {
	seen := map[int]bool{}
	for range 20 {
		for _, p := range FreeN(t, 5) {
			if p < from || p >= ephemeralLow {
				t.Fatalf("port %d outside [%d, %d)", p, from, ephemeralLow)
			}
			if seen[p] {
				t.Fatalf("port %d handed out twice", p)
			}
			seen[p] = true
		}
	}
	p := Free(t)
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
	if err != nil {
		t.Fatalf("port %d not bindable: %v", p, err)
	}
	l.Close()
}

// A port another listener holds is skipped.
func TestFreeSkipsHeld(t *testing.T) {
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	taken := map[int]bool{}
	for _, p := range FreeN(t, 50) {
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatal(err)
		}
		held = append(held, l)
		taken[p] = true
	}
	mu.Lock()
	for p := range taken { // forget them, so only the bind decides
		delete(given, p)
	}
	mu.Unlock()
	for _, p := range FreeN(t, 200) {
		if taken[p] {
			t.Fatalf("port %d is held by a listener, yet handed out", p)
		}
	}
}
