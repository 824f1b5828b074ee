package hub

import (
	"context"
	"errors"
	"math"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/natstest"
)

// clock is a settable Config.Now.
type clock struct{ ms atomic.Int64 }

func newClock(t time.Time) *clock {
	c := new(clock)
	c.set(t)
	return c
}

func (c *clock) set(t time.Time) { c.ms.Store(t.UnixMilli()) }
func (c *clock) now() time.Time  { return time.UnixMilli(c.ms.Load()).UTC() }
func date(y, m, d int) time.Time { return time.Date(y, time.Month(m), d, 12, 0, 0, 0, time.UTC) }
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// startHub starts a Hub with an embedded server on dir, closed at cleanup.
func startHub(t *testing.T, cfg Config) *Hub {
	t.Helper()
	if cfg.DataDir == "" {
		cfg.DataDir = t.TempDir()
	}
	h, err := Start(testCtx(t), cfg)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

// startNATS starts a standalone nats-server with JetStream on a free
// loopback port, shut down at cleanup, and returns its URL: the way two
// hubs share one NATS in a test, since the embedded server listens on no
// port.
func startNATS(t testing.TB) string {
	t.Helper()
	return natstest.Server(t).ClientURL()
}

// checkFor waits for cond: internal/await.For.
func checkFor(t *testing.T, total time.Duration, cond func() error) {
	t.Helper()
	await.For(t, total, cond)
}

func mustPut(t *testing.T, h *Hub, tenant, board string, s Settings) {
	t.Helper()
	if _, err := h.PutBoard(testCtx(t), tenant, board, s); err != nil {
		t.Fatalf("PutBoard %s/%s: %v", tenant, board, err)
	}
}

func mustSubmit(t *testing.T, h *Hub, tenant, board string, items ...Item) []Result {
	t.Helper()
	res, err := h.Submit(testCtx(t), tenant, board, items)
	if err != nil {
		t.Fatalf("Submit: %v", err)
	}
	return res
}

// top returns "member:score" strings of the whole window, for compact checks.
func top(t *testing.T, h *Hub, l Loc) []string {
	t.Helper()
	p, err := h.Top(l, 0, nil, 1000)
	if err != nil {
		t.Fatalf("Top %+v: %v", l, err)
	}
	out := make([]string, len(p.Rows))
	for i, r := range p.Rows {
		out[i] = r.Member + ":" + ftoa(r.Score)
	}
	return out
}

func ftoa(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func wantErr(t *testing.T, err, target error) {
	t.Helper()
	if !errors.Is(err, target) {
		t.Fatalf("err = %v, want %v", err, target)
	}
}

func nan() float64 { return math.NaN() }

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// openReplica returns tenant's replica on h, failing t where h has not
// opened it.
func openReplica(t *testing.T, h *Hub, tenant string) *replica {
	t.Helper()
	r := h.reg.lookup(tenant)
	if r == nil {
		t.Fatalf("tenant %s not open", tenant)
	}
	return r
}
