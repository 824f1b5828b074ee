package live

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/edgetest"
)

// BenchmarkFanout is the plane's whole push path to N watchers of one view
// over real loopback sockets: per op, one submission takes the lead of a
// top-10 board that N connections watch, and the op ends when every
// connection has read the diff of that seq. ns/op covers the submission
// (JetStream acknowledged and applied), the wait for the feed's next tick
// (push interval 1 ms), one recomputation and encoding of the view, N outbox
// offers, the writer pool's N writes and the N clients' reads, which share
// the machine's cores with the plane.
func BenchmarkFanout(b *testing.B) {
	for _, n := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) { benchFanout(b, n) })
	}
}

func benchFanout(b *testing.B, n int) {
	h, p, url, tok := fanoutPlane(b)
	st := &fanState{n: int64(n), done: make(chan struct{}, 1)}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	b.Cleanup(func() { cancel(); wg.Wait() })
	for range n {
		c, _, err := websocket.Dial(ctx, url+"?access_token="+tok, nil)
		if err != nil {
			b.Fatal(err)
		}
		sub := `{"type":"subscribe","id":"s","board":"fan","view":{"kind":"top","limit":10}}`
		if err := c.Write(ctx, websocket.MessageText, []byte(sub)); err != nil {
			b.Fatal(err)
		}
		wg.Go(func() { st.read(ctx, c) })
	}
	st.measure(b, ctx, h, p, "connections")
}

// fanState counts, per op, the connections that read a message of the
// op's seq or later; the one that completes the count signals done.
type fanState struct {
	n    int64
	want atomic.Uint64 // the op's first seq; 0 before the first op
	seen atomic.Int64
	done chan struct{} // capacity 1
}

// read reads c's messages until ctx ends, counting c once per op.
func (st *fanState) read(ctx context.Context, c *websocket.Conn) {
	defer c.CloseNow()
	var counted uint64 // the want c was last counted for
	for {
		_, data, err := c.Read(ctx)
		if err != nil {
			return
		}
		var m struct {
			Type string
			Seq  uint64
		}
		if json.Unmarshal(data, &m) != nil || m.Type == "heartbeat" { // a heartbeat's seq is the log's, not the view's
			continue
		}
		if w := st.want.Load(); w != 0 && m.Seq >= w && counted != w {
			counted = w
			if st.seen.Add(1) == st.n {
				st.done <- struct{}{}
			}
		}
	}
}

// fanoutPlane starts a hub (push interval 1 ms) and a plane wired to its
// feed on loopback, with casino-a's board "fan", and returns the plane's
// WebSocket URL and a read token of casino-a; o, if given, tunes the plane.
func fanoutPlane(b *testing.B, o ...Options) (*hub.Hub, *Plane, string, string) {
	keys := edgetest.KeysA(b, "", "")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{DataDir: b.TempDir(), PushInterval: time.Millisecond})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	cfg := Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{})}
	if len(o) > 0 {
		cfg.Options = o[0]
	}
	p := New(cfg)
	h.SetFeed(p.Feed())
	if _, err := h.PutBoard(ctx, "casino-a", "fan", hub.Settings{}); err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/ws", p)
	mux.HandleFunc("GET /v1/stream", p.ServeStream) // BenchmarkFanoutSSE
	srv := httptest.NewServer(mux)
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Close(ctx)
		srv.Close()
	})
	tok := edgetest.Mint(b, keys, "a", auth.Claims{Roles: auth.RoleRead, Expiry: time.Now().Add(time.Hour)})
	return h, p, "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/ws", tok
}

// measure waits until the st.n clients subscribed, then times b.N
// submissions, each taking the lead of board fan, until every client read
// its diff; what names the clients in a timeout's message. Shared by
// BenchmarkFanout and BenchmarkFanoutSSE, so that the two measure the same.
func (st *fanState) measure(b *testing.B, ctx context.Context, h *hub.Hub, p *Plane, what string) {
	n := int(st.n)
	await.For(b, 30*time.Second, func() error {
		if got := p.eng.Stats().Subscriptions; got[0]+got[1]+got[2]+got[3] < n {
			return fmt.Errorf("%v subscriptions, want %d", got, n)
		}
		return nil
	})
	page, err := h.Top(hub.Loc{Tenant: "casino-a", Board: "fan"}, 0, nil, 1)
	if err != nil {
		b.Fatal(err)
	}
	seq := page.Seq
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for i := range b.N {
		// Set before the submission: its diff may reach a client before
		// Submit returns. Every submission takes the lead, so its seq is
		// at least seq+1, and no earlier message reaches that.
		st.seen.Store(0)
		st.want.Store(seq + 1)
		rs, err := h.Submit(ctx, "casino-a", "fan", []hub.Item{{Member: fmt.Sprint("m", i), Score: float64(i + 1)}})
		if err != nil {
			b.Fatal(err)
		}
		seq = rs[0].Seq
		select {
		case <-st.done:
		case <-time.After(30 * time.Second):
			b.Fatalf("op %d: %d of %d %s read the diff", i, st.seen.Load(), n, what)
		}
	}
	reportCPUPerMessage(b, processCPU()-cpu0, n)
}
