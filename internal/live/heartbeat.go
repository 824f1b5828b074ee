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
// whether this node's replica is stale (Options.Status). A wheel
// (keepalive.go, owned by the Plane: started with the first connection,
// stopped by Close) visits one slot of the connections every ~200 ms, so
// that each gets its heartbeat once per interval at its own offset, instead
// of every connection's write landing at one moment on top of pushes. The
// store is asked at most once a round (hub.Writable, at the round's first
// slot that needs it); a slot asks the hub once per tenant it holds
// (hub.Beat, no NATS call) and encodes once per tenant: every connection of
// the tenant in the slot gets the same bytes in its outbox (Outbox.Send
// keeps the slice, the writer copies it into the connection's frame and
// never changes it).

// timeLayout is the heartbeat's "at": RFC 3339 in UTC with milliseconds,
// as the protocol's other times.
const timeLayout = "2006-01-02T15:04:05.000Z"

// newBeatWheel returns the plane's heartbeat wheel, or nil where
// heartbeats are off.
func (p *Plane) newBeatWheel() *wheel {
	if p.beatEvery <= 0 {
		return nil
	}
	b := &beater{p: p, encoded: map[string][]byte{}}
	return newWheel(p.beatEvery, beatPos, b.slot)
}

// beatPos is a connection's place in the heartbeat wheel.
func beatPos(lc liveConn) *wheelPos {
	switch c := lc.(type) {
	case *wsConn:
		return &c.ka.beat
	case *sseConn:
		return &c.beat
	}
	return nil // no other transport: never in the wheel
}

// startBeats starts the heartbeat wheel unless it runs or heartbeats are
// off, and puts c in it. p.mu held (track), so that Close, which sets
// closing under it, sees the goroutine to stop.
func (p *Plane) startBeats(c liveConn) {
	if p.beats == nil {
		return
	}
	p.beats.add(c)
	p.beats.start()
}

// stopBeats stops the heartbeat wheel, if it runs, and waits for it.
// Called by Close once closing is set: track starts it no more.
func (p *Plane) stopBeats() {
	if p.beats != nil {
		p.beats.stopWait()
	}
}

// leaveBeats takes c, which has ended, out of the heartbeat wheel.
func (p *Plane) leaveBeats(c liveConn) {
	if p.beats != nil {
		p.beats.remove(c)
	}
}

// beater is the heartbeat wheel's state between its visits, touched by
// the wheel's goroutine only.
type beater struct {
	p              *Plane
	at             string            // this slot's time
	storeOK, asked bool              // the store's answer, asked at most once a round
	encoded        map[string][]byte // this slot's heartbeat per tenant
}

// slot queues one heartbeat on every authenticated connection of members
// that is reading. Cost: one Writable per round (a pass over the embedded
// store's counters, or one bounded round trip to an external NATS), asked
// only when some connection gets a heartbeat; one hub.Beat, one Status
// and one encoding per tenant in the slot, one outbox put per connection.
func (b *beater) slot(now time.Time, slot int, members []liveConn) {
	if slot == 0 {
		b.asked = false // a new round: ask the store afresh
	}
	b.at = now.UTC().Format(timeLayout)
	clear(b.encoded)
	for _, lc := range members {
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
			c.out.Send(b.encode(sc.Tenant))
		case *sseConn:
			if c.opened.Load() && !c.ending() && !c.flow.Busy() {
				c.send(appendChunk(nil, sseHeartbeat(b.encode(c.sc.Tenant))))
			}
		}
	}
}

// encode returns tenant's heartbeat of this slot.
func (b *beater) encode(tenant string) []byte {
	if raw, ok := b.encoded[tenant]; ok {
		return raw
	}
	if !b.asked {
		b.storeOK, b.asked = b.p.storeWritable(), true
	}
	h := b.p.hub.Beat(tenant)
	writable, stale := true, false
	if b.p.status != nil {
		writable, stale = b.p.status(tenant)
	}
	raw := encodeHeartbeat(wire.Heartbeat{Seq: h.Applied, Writable: b.storeOK && h.Writable && writable, Stale: stale, At: b.at})
	b.encoded[tenant] = raw
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
