package live

import (
	"bufio"
	"bytes"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// Bounds of what one idle connection with one top-10 subscription holds,
// measured over memConns connections (docs/BENCHMARKS.md, "Memory per
// connection"): 5.2 KiB of live heap, the raw client's few hundred bytes
// included (5.5 KiB before the connection's subscriptions became a slice
// instead of a map and its hijack lost an io.MultiReader it rarely needs),
// and one goroutine whose stack is 4 KiB. The heap bound sits between the
// two, above the noise of a loaded machine (a collection's leftovers over
// memConns connections: a few bytes each).
const (
	memConns        = 400
	maxHeapPerConn  = 5.45 * 1024
	maxStackPerConn = 4.5 * 1024
)

// TestIdleConnectionMemory opens memConns WebSockets, each subscribed to the
// same top-10 view, from clients that hold no goroutine and a 16-byte
// read buffer, and bounds the server's live heap, goroutines and goroutine
// stacks per connection after a collection: a field or buffer added to
// every connection fails it.
func TestIdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 400 connections")
	}
	e := newEnv(t, Options{})
	e.putBoard("a", "lobby", hub.Settings{})
	for i := range 20 {
		e.submit("a", "lobby", hub.Item{Member: fmt.Sprint("p", i), Score: float64(i)})
	}
	tok := e.token("a", auth.RoleRead)
	before, g0 := settledMemory()
	conns := make([]*rawWS, 0, memConns)
	for range memConns {
		conns = append(conns, e.rawSubscribed(tok))
	}
	after, g1 := settledMemory()
	heap := float64(after.HeapAlloc-before.HeapAlloc) / memConns
	stack := float64(after.StackInuse-before.StackInuse) / memConns
	goroutines := float64(g1-g0) / memConns
	t.Logf("per connection: %.0f B heap, %.0f B stack, %.2f goroutines", heap, stack, goroutines)
	if heap > maxHeapPerConn {
		t.Errorf("%.0f B of heap per idle connection, want at most %.0f", heap, maxHeapPerConn)
	}
	if stack > maxStackPerConn && !raceEnabled {
		t.Errorf("%.0f B of goroutine stack per idle connection, want at most %.0f", stack, maxStackPerConn)
	}
	if goroutines > 1.05 {
		t.Errorf("%.2f goroutines per idle connection, want 1", goroutines)
	}
	runtime.KeepAlive(conns)
}

// settledMemory collects twice (the second frees what the first's
// finalizers and pools let go) and returns the memory statistics and the
// goroutine count.
func settledMemory() (runtime.MemStats, int) {
	var m runtime.MemStats
	runtime.GC()
	runtime.GC()
	runtime.ReadMemStats(&m)
	return m, runtime.NumGoroutine()
}

// rawSubscribed dials a raw client with tok, subscribes it to the top 10
// of casino-a's lobby and reads up to its snapshot. The client keeps a
// 16-byte read buffer, so that the heap it adds per connection is small
// beside the server's.
func (e *env) rawSubscribed(tok string) *rawWS {
	e.t.Helper()
	r, status := e.rawDial("access_token="+tok, nil)
	if status != 101 || r.br.Buffered() != 0 {
		e.t.Fatalf("upgrade: status %d, %d bytes early", status, r.br.Buffered())
	}
	r.br = bufio.NewReaderSize(r.conn, 16)
	r.write(appendClientFrame(nil, opText, []byte(`{"type":"subscribe","id":"s1","board":"lobby","view":{"kind":"top"}}`)))
	for {
		op, p, err := r.frame()
		if err != nil {
			e.t.Fatalf("no snapshot: %v", err)
		}
		if op == opText && bytes.Contains(p, []byte(`"type":"snapshot"`)) {
			break
		}
	}
	r.conn.SetDeadline(time.Time{})
	return r
}
