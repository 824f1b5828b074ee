package loadtest

import (
	"fmt"
	"slices"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

// failoverClients returns one SDK client per writer, each with every
// gateway of t and the SDK's failover (attempt deadlines, retries with
// generated ids), writer i starting at gateway i mod n so that the writers
// spread over the gateways as in the plain load, and stay there until one
// fails them.
func failoverClients(t Target, c *client, writers int, attempt time.Duration) ([]*rwclient.Client, error) {
	bases, err := t.baseURLs()
	if err != nil {
		return nil, err
	}
	out := make([]*rwclient.Client, writers)
	for i := range out {
		k := i % len(bases)
		urls := append(slices.Clone(bases[k:]), bases[:k]...)
		if out[i], err = rwclient.New(urls, rwclient.WithToken(t.Token), rwclient.WithHTTPClient(c.http),
			rwclient.WithAttemptTimeouts(attempt, attempt)); err != nil {
			return nil, fmt.Errorf("loadtest: %w", err)
		}
	}
	return out, nil
}

// gapClock measures one writer's longest write gap: the longest time in
// the run without an acknowledged write, from the start to the first
// acknowledgement, between two, and from the last to the end. Under a
// fault it is what the writer's user waited. Owned by one goroutine.
type gapClock struct {
	last    time.Time
	longest time.Duration
}

func newGapClock(start time.Time) gapClock { return gapClock{last: start} }

// ack records an acknowledgement at now.
func (g *gapClock) ack(now time.Time) {
	g.longest = max(g.longest, now.Sub(g.last))
	g.last = now
}

// end closes the run at now and returns the longest gap.
func (g *gapClock) end(now time.Time) time.Duration {
	g.ack(now)
	return g.longest
}

// WriteGaps are the writers' longest write gaps, one per writer.
type WriteGaps []time.Duration

// String summarises the gaps: the longest, the median writer's, and how
// many writers waited over a second.
func (w WriteGaps) String() string {
	if len(w) == 0 {
		return "none"
	}
	s := slices.Sorted(slices.Values(w))
	over := len(s) - func() int { i, _ := slices.BinarySearch(s, time.Second+1); return i }()
	return fmt.Sprintf("max %v, median writer %v, %d of %d writers over 1 s",
		round(s[len(s)-1]), round(Percentile(s, 50)), over, len(s))
}
