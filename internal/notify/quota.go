package notify

import (
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

// Notification bytes. The notifications' stream is shared by every tenant
// (JetStream has no byte limit per subject), so the notifier accounts
// what each tenant's notifications take in it: every node counts every
// notification the stream acknowledged to it (stored, or a duplicate of
// what another node stored) and, at start, what the stream holds (seed),
// by hour over the stream's MaxAge. A submission.quarantined notification
// that would take its tenant past its quota (the key file's
// notification_bytes) is not published: it is counted
// (rankwire_notifications_dropped_total{reason="quota"}) and logged at
// most once a minute per tenant. board.ended and window.closed are never
// refused (they trigger payouts, and the tenant's board limit bounds
// them); they count, so a tenant past its quota with them gets no
// quarantine notifications until old ones age out. The accounting is the
// stream's own record size (storedSize), so it matches the stream's
// bytes; a node counts what it learns of, so two nodes agree
// to within what one of them missed while down.

// DefaultBytes is a tenant's notification quota where SetQuota gives
// none: 16 MiB, some 50,000 quarantine notifications
// or 1,600 board.ended ones of 100 rows.
const DefaultBytes = 16 << 20

// DropQuota: a quarantine's notification would have taken its tenant past
// its notification bytes; it is not published.
const DropQuota = "quota"

// notifyHours is the slots of a byteWindow: one per hour the stream keeps
// a message, and one for the hour under way.
const notifyHours = int(maxAge/time.Hour) + 1

// byteWindow is a tenant's bytes stored, by the hour they were stored in.
type byteWindow [notifyHours]struct{ hour, bytes int64 }

func (w *byteWindow) add(at time.Time, b int64) {
	h := at.Unix() / 3600
	slot := &w[h%int64(notifyHours)]
	if slot.hour != h {
		slot.hour, slot.bytes = h, 0
	}
	slot.bytes += b
}

// total returns the bytes stored in the hours the stream still keeps at now.
func (w *byteWindow) total(now time.Time) int64 {
	h := now.Unix() / 3600
	var sum int64
	for _, slot := range w {
		if slot.hour > h-int64(notifyHours) {
			sum += slot.bytes
		}
	}
	return sum
}

// storedSize returns the bytes the stream takes for a notification on
// subject with message id id and a body of body bytes (filestore's record:
// 22 bytes, the subject, 4 bytes of the headers' length, the headers
// "NATS/1.0\r\nNats-Msg-Id: <id>\r\n\r\n" and, where its names are sealed,
// "Rankwire-Sealed: 1\r\n", the body, 8 bytes of hash). TestNotifyQuota
// checks it against the stream's own count.
func storedSize(subject, id string, sealed bool, body int) int64 {
	n := 22 + len(subject) + 4 + len("NATS/1.0\r\nNats-Msg-Id: \r\n\r\n") + len(id) + body + 8
	if sealed {
		n += len(HeaderSealed + ": " + SealedV1 + "\r\n")
	}
	return int64(n)
}

// SetQuota sets the function that gives a tenant's quota of notification
// bytes (the key file's notification_bytes, read at each use so that a
// reload takes effect). A result of zero or less means DefaultBytes. Safe
// for concurrent use.
func (n *Notifier) SetQuota(f func(tenant string) int64) { n.quota.Store(&f) }

// quotaOf returns tenant's quota of notification bytes.
func (n *Notifier) quotaOf(tenant string) int64 {
	if f := n.quota.Load(); f != nil {
		if q := (*f)(tenant); q > 0 {
			return q
		}
	}
	return DefaultBytes
}

// account counts b bytes of tenant's stored at at.
func (n *Notifier) account(tenant string, b int64, at time.Time) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.stored == nil {
		n.stored = map[string]*byteWindow{}
	}
	w := n.stored[tenant]
	if w == nil {
		w = new(byteWindow)
		n.stored[tenant] = w
	}
	w.add(at, b)
}

// StoredBytes returns the bytes tenant's notifications take in the
// notifications' stream, as this node accounts them.
func (n *Notifier) StoredBytes(tenant string) int64 {
	n.mu.Lock()
	defer n.mu.Unlock()
	if w := n.stored[tenant]; w != nil {
		return w.total(time.Now())
	}
	return 0
}

// overQuota reports whether note is a quarantine's notification that its
// tenant's quota refuses (its tenant's notifications take their quota or
// more already); it then counts it as dropped, marks it published
// (neither retried nor derived again) and logs at most once a minute per
// tenant. Notifier goroutine only.
func (n *Notifier) overQuota(note ledger.Notification, now int64) bool {
	if note.Type != "submission.quarantined" {
		return false
	}
	quota, have := n.quotaOf(note.Tenant), n.StoredBytes(note.Tenant)
	if have < quota { // so a tenant may pass its quota by one notification
		return false
	}
	n.markSent(note.DedupID(), now)
	n.mu.Lock()
	logNow := n.dropLocked(note.Tenant, DropQuota, now)
	n.mu.Unlock()
	if logNow {
		n.cfg.Log.Warn("hub: a tenant's notifications fill its notification_bytes; quarantine notifications are dropped",
			"tenant", note.Tenant, "stored", have, "quota", quota)
	}
	return true
}
