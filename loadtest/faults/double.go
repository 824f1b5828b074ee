package faults

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"
)

// doubleVictims picks the two nodes kill9-two kills: the stream's leader
// and its first other replica, so that the stream keeps one replica of
// three (no majority) until one of them returns. The survivors are the
// other nodes, the stream's last replica first.
func doubleVictims(nodes []*Node, leader *Node, followers []*Node) (victims, survivors []*Node, err error) {
	if len(followers) < 2 {
		return nil, nil, fmt.Errorf("faults: the stream has %d replicas besides its leader, want 2 (--replicas 3)", len(followers))
	}
	victims = []*Node{leader, followers[0]}
	survivors = append(survivors, followers[1:]...)
	for _, n := range nodes {
		if n != leader && !slices.Contains(followers, n) {
			survivors = append(survivors, n)
		}
	}
	return victims, survivors, nil
}

// killTwo is kill9-two: kill -9 of the stream's leader and one of its
// followers at once (five nodes, --replicas 3). No node can acknowledge a
// write of the tenant until one of them returns, so every node is exempt
// from the healthy /readyz count meanwhile; the survivors' answers are
// watched instead (readyTrack), until they are ready again, and go into
// the run's note with the time the majority came back. The follower
// returns after Hold, the leader once the follower is ready.
func (r *run) killTwo(ctx context.Context) error {
	leader, followers, err := r.c.StreamPeers(ctx, 20*time.Second)
	if err != nil {
		return err
	}
	victims, survivors, err := doubleVictims(r.c.Nodes, leader, followers)
	if err != nil {
		return err
	}
	for _, n := range r.c.Nodes {
		r.setExempt(n, true)
	}
	r.cfg.Log.Info("fault targets", "killed", []string{victims[0].Name, victims[1].Name}, "leader", leader.Name)
	killed := time.Now()
	for _, v := range victims {
		r.tl.mark(v, "SIGKILL")
		v.Stop(syscall.SIGKILL, 10*time.Second)
	}
	track := watchReady(ctx, survivors, killed)
	sleep(ctx, r.cfg.Hold)
	back := time.Now()
	err = r.restart(ctx, victims[1])
	ready := time.Now()
	if err == nil {
		if err = r.restart(ctx, victims[0]); err == nil {
			err = r.readyAgain(ctx, survivors)
		}
	}
	track.awaitReady(ctx, time.Second) // its own probes may trail readyAgain's by one period
	track.stop()
	r.note = fmt.Sprintf("killed %s (leader) and %s; %s returned %.1fs after, ready %.1fs after; %s; %s",
		victims[0].Name, victims[1].Name, victims[1].Name, back.Sub(killed).Seconds(), ready.Sub(killed).Seconds(),
		track.summary(), track.describe())
	return err
}

// readyAgain waits until every node in nodes is ready and counts it again.
func (r *run) readyAgain(ctx context.Context, nodes []*Node) error {
	for _, n := range nodes {
		if err := r.c.WaitReady(ctx, n, 60*time.Second); err != nil {
			return err
		}
		r.setExempt(n, false)
	}
	return nil
}

// readyTrack is what some nodes' /readyz answered from a fault's start:
// each change of each node's answer (200 or not, and why not), with its
// offset from the start. Safe for concurrent use.
type readyTrack struct {
	start   time.Time
	mu      sync.Mutex // guards changes
	nodes   []string   // in the order given
	changes map[string][]readyChange
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

// readyChange is one node's answer changing: at, its offset, and the
// reason of a non-200 answer (empty: ready).
type readyChange struct {
	at    time.Duration
	ready bool
	why   string
}

// watchReady starts asking every node's /readyz each 100 ms; stop ends it.
func watchReady(ctx context.Context, nodes []*Node, start time.Time) *readyTrack {
	ctx, cancel := context.WithCancel(ctx)
	t := &readyTrack{start: start, changes: map[string][]readyChange{}, cancel: cancel}
	hc := &http.Client{Timeout: time.Second}
	for _, n := range nodes {
		t.nodes = append(t.nodes, n.Name)
		t.wg.Go(func() {
			for ctx.Err() == nil {
				ready, why := askReady(ctx, hc, n)
				if ctx.Err() == nil {
					t.saw(n.Name, time.Now(), ready, why)
				}
				sleep(ctx, 100*time.Millisecond)
			}
		})
	}
	return t
}

// saw records node's answer at at where it differs from its last one (a
// reason of the same shape is no change).
func (t *readyTrack) saw(node string, at time.Time, ready bool, why string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	cs := t.changes[node]
	if n := len(cs); n > 0 && cs[n-1].ready == ready && shape(cs[n-1].why) == shape(why) {
		return
	}
	t.changes[node] = append(cs, readyChange{at.Sub(t.start), ready, why})
}

// allReady reports whether every node's last answer seen was 200.
func (t *readyTrack) allReady() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, name := range t.nodes {
		cs := t.changes[name]
		if len(cs) == 0 || !cs[len(cs)-1].ready {
			return false
		}
	}
	return true
}

// awaitReady waits up to limit until every node's last answer seen was
// 200.
func (t *readyTrack) awaitReady(ctx context.Context, limit time.Duration) {
	deadline := time.Now().Add(limit)
	for !t.allReady() && time.Now().Before(deadline) && ctx.Err() == nil {
		sleep(ctx, 20*time.Millisecond) // polling the probes' record: they report nothing else
	}
}

func (t *readyTrack) stop() {
	t.cancel()
	t.wg.Wait()
}

// describe is every node's changes on one line: "/readyz n3: 200 +0.0s,
// 503 +3.1s (why), 200 +9.4s; n4: ...".
func (t *readyTrack) describe() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var nodes []string
	for _, name := range t.nodes {
		var cs []string
		for _, c := range t.changes[name] {
			if c.ready {
				cs = append(cs, fmt.Sprintf("200 +%.1fs", c.at.Seconds()))
			} else {
				cs = append(cs, fmt.Sprintf("not 200 +%.1fs (%s)", c.at.Seconds(), c.why))
			}
		}
		nodes = append(nodes, name+": "+strings.Join(cs, ", "))
	}
	return "/readyz " + strings.Join(nodes, "; ")
}

// summary says how long after the start the last node still answered
// 200 ("the survivors said ready until +4.1s (the last of 3)"), or which
// nodes never said otherwise.
func (t *readyTrack) summary() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var last time.Duration
	var never []string
	for _, name := range t.nodes {
		i := slices.IndexFunc(t.changes[name], func(c readyChange) bool { return !c.ready })
		if i < 0 {
			never = append(never, name)
			continue
		}
		last = max(last, t.changes[name][i].at)
	}
	if len(never) > 0 {
		return "never not 200: " + strings.Join(never, ", ")
	}
	return fmt.Sprintf("every node watched said not 200 by +%.1fs", last.Seconds())
}
