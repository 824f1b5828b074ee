// Package clusterops holds the gateway's operations on a JetStream cluster
// that are not the hub's: handing this node's stream leaderships to the
// other replicas before a planned stop. It speaks the JetStream API of
// the account it is given (nats.go's jetstream), nothing of the hub, the
// API or HTTP; it may import nats.go only.
//
// A stream leader that stops without stepping down leaves its stream
// without a leader until the others' election timeout (about 1 s on the
// embedded server's settings, more under load): every write to it waits.
// A step-down hands the leadership over at once, to the replica Local's
// Successor names (successor.go) or else the one Raft picks, so a planned
// stop costs writes nothing but the hop.
// The single-replica consumers this node hosts for the stream are deleted
// then, so that their readers move at once rather than after missed
// heartbeats; Release does the same for the streams it only follows.
package clusterops

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/nats-io/nats.go/jetstream"
)

// pollEvery is how often StepDown asks a stream whether its new leader is
// elected.
const pollEvery = 20 * time.Millisecond

// pollTimeout bounds one such question: a stream between two leaders does
// not answer its info request at all (the leader answers it), and a wait
// for that answer bounded by the whole handover's deadline would miss the
// new leader elected meanwhile (seen: elected 54 ms after the step-down,
// not noticed in 1 s).
const pollTimeout = 250 * time.Millisecond

// Handoff is what StepDown did with one stream this node led.
type Handoff struct {
	Stream string
	// Leader is the stream's new leader, or "" where none was seen in
	// time (Err says why).
	Leader string
	// To is the successor StepDown named (Local.Successor), "" where it
	// left the choice to Raft.
	To   string
	Took time.Duration
	Err  error // the leadership was not handed over
	// Dropped counts the stream's single-replica consumers on this node
	// that StepDown deleted once the new leader was elected; DropErr says
	// why it stopped short (the leadership was handed over all the same).
	Dropped int
	DropErr error
}

// ErrNoNewLeader is Handoff.Err's class when the stream did not name
// another leader before StepDown's context ended.
var ErrNoNewLeader = errors.New("clusterops: no new leader elected")

// StepDown asks every stream of js's account that self leads to elect
// another leader, then waits for each to name one, until ctx ends. It
// returns a Handoff per stream self led, in the account's listing order,
// and an error only where the streams could not be listed. Cost: one
// STREAM.LIST, then per led stream, all at once, one STEPDOWN request and
// a STREAM.INFO every pollEvery; it returns once every stream is done.
// Safe for concurrent use (it keeps no state).
func StepDown(ctx context.Context, js jetstream.JetStream, self string) ([]Handoff, error) {
	led, err := Led(ctx, js, self)
	if err != nil {
		return nil, err
	}
	return StepDownLocal(ctx, js, self, Local{Led: led}), nil
}

// Local is what this node's own server says it holds, read in-process:
// it asks nothing of the meta leader (which answers STREAM.LIST and
// places consumer listings), and knows of every consumer it hosts where a
// cluster-wide listing may leave out one whose leader answered late.
type Local struct {
	Led []string // the replicated streams self leads
	// Followed are the replicated streams self holds a replica of but
	// does not lead: no leadership to hand over, but the consumers it
	// hosts for other nodes' readers go with it all the same.
	Followed []string
	// Consumers returns the single-replica consumers of stream that this
	// node hosts; nil: list them through the JetStream API.
	Consumers func(stream string) []string
	// Successor names the replica to hand stream's leadership to (see
	// Successor), "" for Raft's choice; nil: Raft's choice always.
	Successor func(stream string) string
}

// StepDownLocal is StepDown for the streams l.Led, dropping the consumers
// l.Consumers names.
func StepDownLocal(ctx context.Context, js jetstream.JetStream, self string, l Local) []Handoff {
	out := make([]Handoff, len(l.Led))
	start := time.Now()
	var wg sync.WaitGroup
	for i, stream := range l.Led { // one at a time would let a slow stream hold up the others' wait
		wg.Go(func() { out[i] = handOver(ctx, js, stream, self, l, start) })
	}
	wg.Wait()
	return out
}

// Release deletes, for every stream of l.Followed at once, the
// single-replica consumers l.Consumers names on self, as StepDownLocal does
// for the streams it leads once their new leaders are elected: a stopping
// node that leads nothing still hosts consumers of other nodes' replicas
// (the meta leader places each on any of the stream's peers), and their
// readers would notice its exit only after two missed heartbeats (about
// 1 s, every write through them waiting: the fault suite's rolling
// restart saw 1.03–1.10 s). Deleted, they make new ones at once. It
// returns a Handoff per stream with Leader empty, Dropped and DropErr
// set; without l.Consumers it has nothing to look at.
func Release(ctx context.Context, js jetstream.JetStream, self string, l Local) []Handoff {
	if l.Consumers == nil {
		return nil
	}
	out := make([]Handoff, len(l.Followed))
	start := time.Now()
	var wg sync.WaitGroup
	for i, stream := range l.Followed {
		wg.Go(func() {
			out[i] = Handoff{Stream: stream}
			out[i].Dropped, out[i].DropErr = dropConsumers(ctx, js, stream, self, l.Consumers)
			out[i].Took = time.Since(start)
		})
	}
	wg.Wait()
	return out
}

// handOver steps stream's leader (self) down, to l's successor where it
// names one, and waits for another leader.
func handOver(ctx context.Context, js jetstream.JetStream, stream, self string, l Local, start time.Time) Handoff {
	h := Handoff{Stream: stream}
	if l.Successor != nil {
		h.To = l.Successor(stream)
	}
	if h.Err = StepDownStreamTo(ctx, js.Conn(), stream, h.To); h.Err == nil {
		h.Leader, h.Err = awaitLeader(ctx, js, stream, self)
	}
	if h.Err == nil {
		h.Dropped, h.DropErr = dropConsumers(ctx, js, stream, self, l.Consumers)
	}
	h.Took = time.Since(start)
	return h
}

// Led returns the names of the streams of js's account whose leader is
// self. One STREAM.LIST request (paged by nats.go).
func Led(ctx context.Context, js jetstream.JetStream, self string) ([]string, error) {
	var led []string
	l := js.ListStreams(ctx)
	for info := range l.Info() {
		if info.Cluster != nil && info.Cluster.Leader == self && len(info.Cluster.Replicas) > 0 {
			led = append(led, info.Config.Name)
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("clusterops: listing streams: %w", err)
	}
	return led, nil
}

// apiResponse is the part of a JetStream API answer apiAnswer reads.
type apiResponse struct {
	Error *struct {
		Code        int    `json:"code"`
		Description string `json:"description"`
	} `json:"error"`
}

// awaitLeader polls stream's info until it names a leader other than
// self, or ctx ends.
func awaitLeader(ctx context.Context, js jetstream.JetStream, stream, self string) (string, error) {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		pctx, cancel := context.WithTimeout(ctx, pollTimeout)
		s, err := js.Stream(pctx, stream)
		cancel()
		if err == nil {
			if c := s.CachedInfo().Cluster; c != nil && c.Leader != "" && c.Leader != self {
				return c.Leader, nil
			}
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w for %s: %w", ErrNoNewLeader, stream, ctx.Err())
		case <-t.C:
		}
	}
}

// dropConsumers deletes the consumers of stream that have one replica,
// on self (local's, where not nil): they would vanish with this node, and
// their readers (other nodes' replicas) would notice only when heartbeats
// stop; deleted, their readers are told at once (409 Consumer Deleted) and
// make new ones on the nodes that stay. A reader's new consumer may be
// placed on this node again (it is still a peer, and the meta leader
// places a single-replica consumer on any of the stream's peers: seen
// three times in a row): with local, it looks again every dropRecheck,
// deleting those too, until two looks in a row find none, dropRounds
// looks or ctx's end. A deletion not answered within dropAsk is tried
// again at the next look: the meta leader answers it, and one elected a
// moment ago (this node's meta step-down) answers nothing until it has
// applied its log; a single request bounded by ctx alone waited out the
// whole handover there (the rolling restart's 1 s gaps, twice in 15
// stops). It returns how many it deleted, and the last failure where
// the last look's deletions did not all succeed.
func dropConsumers(ctx context.Context, js jetstream.JetStream, stream, self string, local func(string) []string) (int, error) {
	if local == nil {
		return dropListed(ctx, js, stream, self)
	}
	n, empty := 0, 0
	var failed error
	for round := 0; round < dropRounds && empty < 2; round++ {
		names := local(stream)
		if len(names) == 0 {
			empty++ // twice in a row: a reader told of a deletion has had time to make its new consumer
		} else {
			empty = 0
		}
		failed = nil
		for _, name := range names { // by name: no STREAM.INFO, which a stream between leaders leaves unanswered
			if err := deleteConsumer(ctx, js, stream, name); err != nil {
				failed = err
				continue
			}
			n++
		}
		select {
		case <-ctx.Done():
			return n, failed
		case <-time.After(dropRecheck):
		}
	}
	return n, failed
}

// deleteConsumer deletes stream's consumer name, waiting at most dropAsk
// for the answer; one already gone counts as deleted.
func deleteConsumer(ctx context.Context, js jetstream.JetStream, stream, name string) error {
	ctx, cancel := context.WithTimeout(ctx, dropAsk)
	defer cancel()
	if err := js.DeleteConsumer(ctx, stream, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
		return fmt.Errorf("clusterops: deleting consumer %s of %s: %w", name, stream, err)
	}
	return nil
}

// dropListed deletes the single-replica consumers of stream on self that
// the stream's consumer listing names, once.
func dropListed(ctx context.Context, js jetstream.JetStream, stream, self string) (int, error) {
	s, err := js.Stream(ctx, stream)
	if err != nil {
		return 0, fmt.Errorf("clusterops: consumers of %s: %w", stream, err)
	}
	names, err := hosted(ctx, s, stream, self)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, name := range names {
		if err := s.DeleteConsumer(ctx, name); err != nil && !errors.Is(err, jetstream.ErrConsumerNotFound) {
			return n, fmt.Errorf("clusterops: deleting consumer %s of %s: %w", name, stream, err)
		}
		n++
	}
	return n, nil
}

// How often and how long after dropConsumers looks for readers' new
// consumers placed on the stopping node.
const (
	dropRounds  = 10
	dropRecheck = 60 * time.Millisecond
	dropAsk     = 250 * time.Millisecond // one deletion's wait for its answer
)

// hosted names the single-replica consumers of stream on self that the
// stream's consumer listing names.
func hosted(ctx context.Context, s jetstream.Stream, stream, self string) ([]string, error) {
	var names []string
	l := s.ListConsumers(ctx)
	for info := range l.Info() {
		if c := info.Cluster; c != nil && c.Leader == self && len(c.Replicas) == 0 {
			names = append(names, info.Name)
		}
	}
	if err := l.Err(); err != nil {
		return nil, fmt.Errorf("clusterops: consumers of %s: %w", stream, err)
	}
	return names, nil
}

// KeepDropping deletes, every dropRecheck until ctx ends, the
// single-replica consumers l.Consumers names of the streams l.Led and
// l.Followed: after the handover a stopping node is still one of those
// streams' peers until it exits, and a reader's new consumer placed on it after
// dropConsumers' last look would go silent when it does, its reader's
// writes then answered only after the missed heartbeats (TestPlannedLeaderStop
// saw 845 ms). It returns how many it deleted; a failed deletion is tried
// again at the next look. A Local without Consumers has nothing to look at.
func KeepDropping(ctx context.Context, js jetstream.JetStream, l Local) int {
	if l.Consumers == nil {
		return 0
	}
	n := 0
	t := time.NewTicker(dropRecheck)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return n
		case <-t.C:
		}
		for _, stream := range slices.Concat(l.Led, l.Followed) {
			for _, name := range l.Consumers(stream) {
				if deleteConsumer(ctx, js, stream, name) == nil {
					n++
				}
			}
		}
	}
}
