package loadtest

import (
	"context"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestGapClock(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tests := []struct {
		name string
		acks []int
		end  int
		want time.Duration
	}{
		{"none: the whole run", nil, 500, 500 * time.Millisecond},
		{"from the start", []int{300, 310}, 320, 300 * time.Millisecond},
		{"between two", []int{10, 20, 2020, 2030}, 2040, 2 * time.Second},
		{"to the end", []int{10, 20}, 900, 880 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g := newGapClock(t0)
			for _, a := range tt.acks {
				g.ack(at(a))
			}
			if got := g.end(at(tt.end)); got != tt.want {
				t.Errorf("longest gap %v, want %v", got, tt.want)
			}
		})
	}
	if s := (WriteGaps{time.Second, 2 * time.Second, 10 * time.Millisecond}).String(); s != "max 2s, median writer 1s, 1 of 3 writers over 1 s" {
		t.Errorf("WriteGaps.String() = %q", s)
	}
}

// pausable forwards TCP to target until paused: then it forwards nothing
// more, on old connections and new, as a paused process.
type pausable struct {
	ln     net.Listener
	target string
	mu     sync.Mutex // guards the fields below
	paused chan struct{}
	conns  []net.Conn
	wg     sync.WaitGroup
}

func startPausable(t *testing.T, target string) *pausable {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &pausable{ln: ln, target: target, paused: make(chan struct{})}
	p.wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			g, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, g)
			p.mu.Unlock()
			p.wg.Go(func() { p.pipe(c, g) })
			p.wg.Go(func() { p.pipe(g, c) })
		}
	})
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *pausable) pause() { close(p.paused) }

func (p *pausable) pipe(src, dst net.Conn) {
	defer dst.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		select {
		case <-p.paused:
			n = 0 // read and dropped
		default:
		}
		if n > 0 {
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// progressTrigger calls f on the load's first progress line: the load is
// running.
type progressTrigger struct {
	once sync.Once
	f    func()
}

func (p *progressTrigger) Write(b []byte) (int, error) { p.once.Do(p.f); return len(b), nil }

// With Failover, writers whose gateway is paused mid-run go on through the
// other within the attempt deadline: their longest write gap is about one
// attempt, no write fails, and every acknowledged submission is on the
// board once.
func TestSubmitFailover(t *testing.T) {
	target := gatewayTarget(t, "fail")
	p := startPausable(t, strings.TrimPrefix(target.URL, "http://"))
	target.URL = "http://" + p.ln.Addr().String() + "," + target.URL // writers 0 and 2 start at the paused one
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const attempt = 300 * time.Millisecond
	rep, err := RunSubmit(ctx, SubmitConfig{Target: target, Clients: 4, Duration: 2500 * time.Millisecond,
		Failover: true, AttemptTimeout: attempt, Progress: &progressTrigger{f: p.pause}})
	if err != nil {
		t.Fatalf("RunSubmit: %v", err)
	}
	t.Log(rep)
	if len(rep.Errors) > 0 || rep.Submissions == 0 || rep.BoardAfter-rep.BoardBefore != rep.Submissions {
		t.Fatalf("errors %v, submissions %d, board %d -> %d", rep.Errors, rep.Submissions, rep.BoardBefore, rep.BoardAfter)
	}
	s := rep.WriteGaps
	if longest := max(s[0], s[1], s[2], s[3]); longest < attempt || longest > attempt+2*time.Second {
		t.Errorf("longest write gap %v, want one attempt (%v) and a little", longest, attempt)
	}
}
