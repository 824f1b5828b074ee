package live

import (
	"context"
	"encoding/json"
	"time"

	"github.com/rankwire/rankwire/wire"
)

// Heartbeats (PROTOCOL.md, "Heartbeats"): every Options.HeartbeatInterval
// each authenticated WebSocket and each event stream gets a wire.Heartbeat
// saying how this gateway stands for its tenant: the tenant's log position
// applied here, whether a write of the tenant could be acknowledged now and
// whether this node's replica is stale (Options.Status). One
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

// beat queues one heartbeat on every authenticated connection that is
// reading. Cost: one Writable (a pass over the embedded store's counters,
// or one bounded round trip to an external NATS), asked only when some
// connection gets a heartbeat (the goroutine keeps ticking once every
// connection has gone), one hub.Beat, one Status and one encoding per
// tenant with connections, one outbox put per connection.
func (p *Plane) beat(now time.Time) {
	r := beatRound{p: p, at: now.UTC().Format(timeLayout), encoded: map[string][]byte{}}
	for _, lc := range p.connections() {
		switch c := lc.(type) {
		case *wsConn:
			sc, authed := c.current()
			if !authed || c.flow.Busy() {
				// No tenant yet: nothing to tell. Or the socket holds bytes the
				// client has not taken: it is not reading, and a heartbeat would
				// only wait in its outbox (its drain closes it, 4008).
				continue
			}
			// Refused only where the outbox is full of control messages (the
			// client stopped reading: its drain closes it) or closed.
			c.out.Send(r.encode(sc.Tenant))
		case *sseConn:
			if c.opened.Load() && !c.ending() && !c.flow.Busy() {
				c.send(appendChunk(nil, sseHeartbeat(r.encode(c.sc.Tenant))))
			}
		}
	}
}

// beatRound is one heartbeat round: the store asked at most once, each
// tenant's heartbeat encoded once.
type beatRound struct {
	p              *Plane
	at             string
	storeOK, asked bool
	encoded        map[string][]byte
}

// encode returns tenant's heartbeat of this round.
func (r *beatRound) encode(tenant string) []byte {
	if raw, ok := r.encoded[tenant]; ok {
		return raw
	}
	if !r.asked {
		r.storeOK, r.asked = r.p.storeWritable(), true
	}
	b := r.p.hub.Beat(tenant)
	writable, stale := true, false
	if r.p.status != nil {
		writable, stale = r.p.status(tenant)
	}
	raw := encodeHeartbeat(wire.Heartbeat{Seq: b.Applied, Writable: r.storeOK && b.Writable && writable, Stale: stale, At: r.at})
	r.encoded[tenant] = raw
	return raw
}

// sseHeartbeat is a heartbeat as an event stream's event: no id, so that
// the stream's last id stays its view's seq.
func sseHeartbeat(raw []byte) []byte {
	return append(append([]byte("event: heartbeat\ndata: "), raw...), "\n\n"...)
}

// storeWritable reports whether the store takes writes now, asking for at
// most half an interval: a store that cannot say in time is not writable.
func (p *Plane) storeWritable() bool {
	ctx, cancel := context.WithTimeout(context.Background(), p.beatEvery/2)
	defer cancel()
	return p.hub.Writable(ctx) == nil
}

// encodeHeartbeat encodes h as a heartbeat message.
func encodeHeartbeat(h wire.Heartbeat) []byte {
	h.Type = wire.TypeHeartbeat
	b, _ := json.Marshal(h) // numbers, booleans and a string: cannot fail
	return b
}
