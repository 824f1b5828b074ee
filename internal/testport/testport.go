// Package testport hands tests loopback TCP ports for servers they start by
// port number (a NATS route or client listener, a gateway process's
// --listen). Test helper: only tests import it; the standard library only.
//
// Why not a listener on port 0: such a port comes from the ephemeral range,
// and once the picker closes it any outgoing connection on the machine, or
// another test's own port-0 listener, may take it before the server binds
// it. Under a CI run of every package at once that happened now and then
// (a node that cannot bind its route listener never becomes ready). Below
// the ephemeral range only a process that names a port takes it, so a port
// that was free a moment ago stays free unless another picker drew the
// same number: one process never hands a port out twice, and a port taken
// by another process is tried and skipped.
package testport

import (
	"math/rand/v2"
	"net"
	"strconv"
	"sync"
	"testing"
)

// The ports handed out: [from, ephemeralLow), below Linux's default
// ephemeral range (net.ipv4.ip_local_port_range starts at 32768).
const from, ephemeralLow = 20000, 32768

var (
	mu    sync.Mutex
	given = map[int]bool{} // every port this process handed out
)

// Free returns one port on 127.0.0.1 that nothing listened on a moment ago.
func Free(t testing.TB) int {
	t.Helper()
	return FreeN(t, 1)[0]
}

// FreeN returns k distinct such ports, each free at once (all are held open
// together while picking, so none is counted twice).
func FreeN(t testing.TB, k int) []int {
	t.Helper()
	mu.Lock()
	defer mu.Unlock()
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	out := make([]int, 0, k)
	for tries := 0; len(out) < k; tries++ {
		if tries == 1000 {
			t.Fatalf("testport: no free port below %d after 1,000 tries", ephemeralLow)
		}
		port := from + rand.IntN(ephemeralLow-from)
		if given[port] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err != nil {
			continue // another process holds it
		}
		held = append(held, l)
		given[port] = true
		out = append(out, port)
	}
	return out
}
