package faults

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"sync"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
	"github.com/rankwire/rankwire/wire"
)

// StaleBound is the staleness a node answering /readyz 200 may serve
// (docs/CLUSTERING.md, "Fault suite"): a node turns 503 once a replica
// trails by --max-lag (3 s), seen by probing every 0.5 s with a 1 s
// timeout (up to 1.5 s late), plus the pollers' period (0.1 s). How long
// /readyz may be wrong is ReadyWrongBound's (truth.go).
const StaleBound = 5 * time.Second

// freshness records when each board version was first seen on any node,
// so that a read's age is known: a read of seq s is as old as the time
// since some node first served a seq above s. Shared by the pollers.
type freshness struct {
	mu    sync.Mutex
	seqs  []uint64    // increasing: every new maximum seen
	times []time.Time // when seqs[i] was first seen
}

// saw records seq seen at now and returns the age of a read of seq.
func (f *freshness) saw(seq uint64, now time.Time) time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n := len(f.seqs); n == 0 || seq > f.seqs[n-1] {
		f.seqs, f.times = append(f.seqs, seq), append(f.times, now)
		return 0
	}
	i := sort.Search(len(f.seqs), func(i int) bool { return f.seqs[i] > seq })
	if i == len(f.seqs) {
		return 0 // the newest seen
	}
	return now.Sub(f.times[i])
}

// readSeq reads the board's version on n: the seq of its top page, and
// whether a page came.
func readSeq(ctx context.Context, hc *http.Client, n *Node, token string) (seq uint64, readOK bool) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL()+"/v1/boards/"+Board+"/top?limit=1", nil)
	if err != nil {
		return 0, false
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := hc.Do(req)
	if err != nil {
		return 0, false
	}
	defer resp.Body.Close()
	var pg rwclient.Page
	if resp.StatusCode != http.StatusOK || json.NewDecoder(resp.Body).Decode(&pg) != nil {
		return 0, false
	}
	return pg.Seq, true
}

// askReady asks n's /readyz: whether it answered 200, and otherwise why
// not (the body's reason, or the status, or the request's error).
func askReady(ctx context.Context, hc *http.Client, n *Node) (bool, string) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, n.URL()+"/readyz", nil)
	if err != nil {
		return false, err.Error()
	}
	resp, err := hc.Do(req)
	if err != nil {
		return false, "no answer: " + err.Error()
	}
	defer resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		return true, ""
	}
	var body wire.Ready
	if err := json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&body); err != nil || body.Reason == "" {
		return false, resp.Status
	}
	return false, body.Reason
}
