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

// Bounds of what one idle subscribed connection holds, measured over
// memConns connections (docs/BENCHMARKS.md, "Memory per connection"), the
// raw client's few hundred bytes included: on a shared top 10, 5.2 KiB of
// live heap (5.5 KiB before the connection's subscriptions became a slice
// instead of a map and its hijack lost an io.MultiReader it rarely needs);
// on an around view of its own, 6.2 KiB (7.7 KiB before the member index
// held a key's one view inline and a lone watcher's snapshot stopped being
// kept by its view); one goroutine, whose stack is 4 KiB. Each heap bound
// sits between the two, above the noise of a loaded machine (what two
// collections leave over memConns connections: tens of bytes each).
const (
	memConns          = 400
	maxHeapPerConn    = 5.6 * 1024
	maxHeapPerConnOwn = 6.9 * 1024
	maxStackPerConn   = 4.5 * 1024
)

// TestIdleConnectionMemory opens memConns WebSockets from clients that
// hold no goroutine and a 16-byte read buffer, and bounds the server's
// live heap, goroutines and goroutine stacks per connection after a
// collection: a field or buffer added to every connection, or to every
// per-player view, fails it. "shared": every connection watches the same
// top 10; "own": each watches its own member's around view (radius 5), a
// view of its own, as a lobby's players do.
func TestIdleConnectionMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("opens 400 connections")
	}
	for _, c := range []struct {
		name    string
		maxHeap float64
		view    func(i int) string
	}{
		{"shared", maxHeapPerConn, func(int) string { return `{"kind":"top"}` }},
		{"own", maxHeapPerConnOwn, func(i int) string { return fmt.Sprintf(`{"kind":"around","member":"p%d","radius":5}`, i) }},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Options{})
			e.putBoard("a", "lobby", hub.Settings{})
			items := make([]hub.Item, memConns)
			for i := range items {
				items[i] = hub.Item{Member: fmt.Sprint("p", i), Score: float64(i)}
			}
			e.submit("a", "lobby", items...)
			tok := e.token("a", auth.RoleRead)
			before, g0 := settledMemory()
			conns := make([]*rawWS, 0, memConns)
			for i := range memConns {
				conns = append(conns, e.rawSubscribed(tok, c.view(i)))
			}
			after, g1 := settledMemory()
			checkPerConn(t, before, after, g1-g0, c.maxHeap)
			runtime.KeepAlive(conns)
		})
	}
}

// checkPerConn bounds the heap, stack and goroutines memConns connections
// added between before and after.
func checkPerConn(t *testing.T, before, after runtime.MemStats, goroutines int, maxHeap float64) {
	t.Helper()
	heap := float64(after.HeapAlloc-before.HeapAlloc) / memConns
	stack := float64(after.StackInuse-before.StackInuse) / memConns
	per := float64(goroutines) / memConns
	t.Logf("per connection: %.0f B heap, %.0f B stack, %.2f goroutines", heap, stack, per)
	if heap > maxHeap {
		t.Errorf("%.0f B of heap per idle connection, want at most %.0f", heap, maxHeap)
	}
	if stack > maxStackPerConn && !raceEnabled {
		t.Errorf("%.0f B of goroutine stack per idle connection, want at most %.0f", stack, maxStackPerConn)
	}
	if per > 1.05 {
		t.Errorf("%.2f goroutines per idle connection, want 1", per)
	}
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

// rawSubscribed dials a raw client with tok, subscribes it to view (its
// JSON) of casino-a's lobby and reads up to its snapshot. The client keeps a
// 16-byte read buffer, so that the heap it adds per connection is small
// beside the server's.
func (e *env) rawSubscribed(tok, view string) *rawWS {
	e.t.Helper()
	r, status := e.rawDial("access_token="+tok, nil)
	if status != 101 || r.br.Buffered() != 0 {
		e.t.Fatalf("upgrade: status %d, %d bytes early", status, r.br.Buffered())
	}
	r.br = bufio.NewReaderSize(r.conn, 16)
	r.write(appendClientFrame(nil, opText, []byte(`{"type":"subscribe","id":"s1","board":"lobby","view":`+view+`}`)))
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
