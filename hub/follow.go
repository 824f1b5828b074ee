package hub

import (
	"context"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/streamfollow"
)

// Following a tenant's stream. A replica reads its stream through a
// consumer of its own, replaced whenever it breaks or stalls
// (internal/streamfollow); the hub decodes each event ahead of apply, its
// personal data opened (members.go), and hands it to the replica
// goroutine.

// follower returns r's follower of its stream, standing at r.follow.
func (sl *streamLog) follower(r *replica) *streamfollow.Follower {
	return &streamfollow.Follower{JS: sl.js, Gate: sl.api.do, Stream: r.stream, Server: sl.nc.ConnectedServerName,
		Prefix: "rw_" + sl.id + "_" + r.tenant + "_", Pos: &r.follow, Log: r.log, Resets: &sl.nstats.ConsumerResets,
		Attempt: callTimeout}
}

// deliver returns the follower's Deliver for r: it decodes one event
// ahead of apply (one in r's snapshot already goes on undecoded) and
// sends it on evs.
func (sl *streamLog) deliver(r *replica, evs chan<- delivery) streamfollow.Deliver {
	return func(ctx context.Context, seq uint64, stored time.Time, data []byte) error {
		d := delivery{seq: seq, stored: stored}
		if seq > r.applied.Load() {
			d.ev, d.err = ledger.DecodeEvent(data)
			if d.err == nil {
				if err := sl.keys.Unseal(ctx, r.tenant, d.ev); err != nil { // members.go
					return err
				}
				d.ev.Prepare() // digests off the replica goroutine
			}
		}
		select {
		case evs <- d:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// NoteStreamLast tells tenant's replica, if open here, that its stream
// holds seq (cmd/gateway's prober reads it every 0.5 s), so that its
// watchdog replaces a consumer that delivers nothing behind it. O(1).
func NoteStreamLast(h *Hub, tenant string, seq uint64) {
	if r := h.reg.lookup(tenant); r != nil {
		r.follow.NoteStored(seq)
	}
}
