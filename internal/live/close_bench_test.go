package live

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	rtmetrics "runtime/metrics"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/connguard"
)

// BenchmarkMassClose is a lobby's mass disconnect (a network blip, a
// front end's deploy) as one gateway sees it: conns WebSockets over
// loopback, each watching 4 views of one board (a lobby's mix), behind a
// connection budget (internal/connguard) as the gateway's are, all dropped
// by their clients at once. One op is the whole crowd, from the drop until
// every subscription, tenant slot and budget place is given back. It
// reports the process's CPU for that (the clients' closes included),
// and mutex-wait-ms, the time goroutines spent queued on sync mutexes
// (runtime/metrics): what starves a node's other work. Run it with
// -benchtime 1x; each process may hold 20,000 files here, two a connection.
func BenchmarkMassClose(b *testing.B) {
	for _, n := range []int{2000, 8000} {
		b.Run(fmt.Sprintf("conns=%d", n), func(b *testing.B) {
			for range b.N {
				benchMassClose(b, n)
			}
		})
	}
}

var closeViews = []string{
	`{"kind":"top","limit":10}`, `{"kind":"top","limit":3}`,
	`{"kind":"top","limit":50}`, `{"kind":"rank","rank":1}`,
}

func benchMassClose(b *testing.B, n int) {
	b.StopTimer()
	_, p, _, tok := fanoutPlane(b)
	g := connguard.New(connguard.Options{Budget: n + 100})
	url := guardedServer(b, g, p)
	ctx := context.Background()
	clients := make([]*websocket.Conn, n)
	for i := range clients {
		c, _, err := websocket.Dial(ctx, url+"?access_token="+tok, nil)
		if err != nil {
			b.Fatal(err)
		}
		for j, v := range closeViews {
			m := fmt.Sprintf(`{"type":"subscribe","id":"s%d","board":"fan","view":%s}`, j, v)
			if err := c.Write(ctx, websocket.MessageText, []byte(m)); err != nil {
				b.Fatal(err)
			}
		}
		clients[i] = c
	}
	awaitCrowd(b, p, g, len(closeViews)*n, n)
	probe := startProbe()
	wait0, cpu0, t0 := mutexWait(), processCPU(), time.Now()
	b.StartTimer()
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() { c.CloseNow() })
	}
	wg.Wait()
	awaitCrowd(b, p, g, 0, 0)
	b.StopTimer()
	b.ReportMetric(float64(time.Since(t0).Milliseconds()), "wall-ms")
	b.ReportMetric(float64((processCPU() - cpu0).Milliseconds()), "cpu-ms")
	b.ReportMetric((mutexWait()-wait0)*1000, "mutex-wait-ms")
	b.ReportMetric(float64(probe.stop().Microseconds())/1000, "probe-late-ms")
}

// probe is a goroutine that wakes every probeEvery, as a Raft node's
// heartbeat timer does, and keeps the latest it woke: how long the node's
// other work waited for a processor while the crowd closed.
type probe struct {
	done chan struct{}
	late chan time.Duration
}

const probeEvery = 5 * time.Millisecond

func startProbe() *probe {
	p := &probe{done: make(chan struct{}), late: make(chan time.Duration, 1)}
	go func() {
		var worst time.Duration
		for {
			select {
			case <-p.done:
				p.late <- worst
				return
			default:
			}
			t0 := time.Now()
			time.Sleep(probeEvery)
			worst = max(worst, time.Since(t0)-probeEvery)
		}
	}()
	return p
}

// stop ends the probe and returns the most it woke late.
func (p *probe) stop() time.Duration {
	close(p.done)
	return <-p.late
}

// awaitCrowd waits until p has subs subscriptions and conns connections,
// and g as many places taken.
func awaitCrowd(b *testing.B, p *Plane, g *connguard.Guard, subs, conns int) {
	await.For(b, 120*time.Second, func() error { // no p.connections here: it holds Plane.mu for O(conns)
		st := p.eng.Stats()
		got := 0
		for _, k := range st.Subscriptions {
			got += k
		}
		if got != subs || g.Open() != conns {
			return fmt.Errorf("%d subscriptions, %d budget places; want %d, %d", got, g.Open(), subs, conns)
		}
		return nil
	})
	await.For(b, 120*time.Second, func() error {
		if got := len(p.connections()); got != conns {
			return fmt.Errorf("%d connections tracked, want %d", got, conns)
		}
		return nil
	})
}

// guardedServer serves p's /v1/ws on a loopback listener behind g, and
// returns its URL.
func guardedServer(b *testing.B, g *connguard.Guard, p *Plane) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /v1/ws", p)
	srv := httptest.NewUnstartedServer(mux)
	srv.Listener.Close()
	srv.Listener = g.Listener(ln)
	srv.Config.ConnState = g.ConnState
	srv.Start()
	b.Cleanup(srv.Close)
	return "ws" + strings.TrimPrefix(srv.URL, "http") + "/v1/ws"
}

// mutexWait returns the seconds goroutines have spent blocked on a
// sync.Mutex or RWMutex in this process so far.
func mutexWait() float64 {
	s := []rtmetrics.Sample{{Name: "/sync/mutex/wait/total:seconds"}}
	rtmetrics.Read(s)
	if s[0].Value.Kind() != rtmetrics.KindFloat64 {
		return 0
	}
	return s[0].Value.Float64()
}
