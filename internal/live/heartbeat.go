package live

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rankwire/rankwire/wire"
)

// Heartbeats (PROTOCOL.md, "Heartbeats"): every Options.HeartbeatInterval
// each authenticated WebSocket gets a wire.Heartbeat saying how this
// gateway stands for its tenant: the tenant's log position applied here
// and whether a write of the tenant could be acknowledged now. One
// goroutine (runBeats, owned by the Plane: started with the first
// connection, stopped by Close) ticks for all connections; a tick asks the
// store once (hub.Writable), asks the hub once per tenant (hub.Beat, no
// NATS call) and encodes once per tenant: every connection of the tenant
// gets the same bytes in its outbox (Outbox.Send keeps the slice, the
// writer copies it into the connection's frame and never changes it).

// timeLayout is the heartbeat's "at": RFC 3339 in UTC with milliseconds,
// as the protocol's other times.
const timeLayout = "2006-01-02T15:04:05.000Z"

// startBeats starts the heartbeat goroutine unless it runs or heartbeats
// are off. p.mu held (track), so that Close, which sets closing under it,
// sees the goroutine to stop.
func (p *Plane) startBeats() {
	if p.beatEvery <= 0 || p.beatStop != nil {
		return
	}
	p.beatStop, p.beatDone = make(chan struct{}), make(chan struct{})
	go p.runBeats(p.beatStop, p.beatDone)
}

// stopBeats stops the heartbeat goroutine, if it runs, and waits for it.
// Called by Close once closing is set: track starts no other.
func (p *Plane) stopBeats() {
	p.mu.Lock()
	stop, done := p.beatStop, p.beatDone
	p.beatStop = nil
	p.mu.Unlock()
	if stop != nil {
		close(stop)
		<-done
	}
}

// runBeats sends a heartbeat round every beatEvery until stop is closed.
func (p *Plane) runBeats(stop <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(p.beatEvery)
	defer t.Stop()
	for {
		select {
		case <-stop:
			return
		case now := <-t.C:
			p.beat(now)
		}
	}
}

// beat queues one heartbeat on every authenticated connection. Cost: one
// Writable (a pass over the embedded store's counters, or one bounded
// round trip to an external NATS), asked only when some connection gets a
// heartbeat (the goroutine keeps ticking once every connection has gone),
// one hub.Beat and one encoding per tenant with connections, one outbox
// put per connection.
func (p *Plane) beat(now time.Time) {
	var storeOK, asked bool
	at := now.UTC().Format(timeLayout)
	encoded := map[string][]byte{}
	for _, lc := range p.connections() {
		c, ok := lc.(*wsConn)
		if !ok {
			continue // an event stream: one view, its own keep-alive comments
		}
		sc, authed := c.current()
		if !authed || c.flow.Busy() {
			// No tenant yet: nothing to tell. Or the socket holds bytes the
			// client has not taken: it is not reading, and a heartbeat would
			// only wait in its outbox (its drain closes it, 4008).
			continue
		}
		raw, ok := encoded[sc.Tenant]
		if !ok {
			if !asked {
				storeOK, asked = p.storeWritable(), true
			}
			b := p.hub.Beat(sc.Tenant)
			raw = encodeHeartbeat(b.Applied, storeOK && b.Writable, at)
			encoded[sc.Tenant] = raw
		}
		// Refused only where the outbox is full of control messages (the
		// client stopped reading: its drain closes it) or closed.
		c.out.Send(raw)
	}
}

// storeWritable reports whether the store takes writes now, asking for at
// most half an interval: a store that cannot say in time is not writable.
func (p *Plane) storeWritable() bool {
	ctx, cancel := context.WithTimeout(context.Background(), p.beatEvery/2)
	defer cancel()
	return p.hub.Writable(ctx) == nil
}

// encodeHeartbeat encodes a heartbeat.
func encodeHeartbeat(seq uint64, writable bool, at string) []byte {
	b, _ := json.Marshal(wire.Heartbeat{Type: wire.TypeHeartbeat, Seq: seq, Writable: writable, At: at}) // cannot fail
	return b
}
