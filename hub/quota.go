package hub

import (
	"context"
	"sync/atomic"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/notify"
)

// Quota is a tenant's limits that apply enforces (ledger.Quota): the hub
// stamps them on the events that could exceed them, so that every node
// decides alike. Zero fields mean no limit.
type Quota = ledger.Quota

// Usage is what a tenant's state holds against its limits, with an
// estimate of its memory (ledger.Usage).
type Usage = ledger.Usage

// quotas holds the function that gives each tenant's Quota (SetQuota).
type quotas struct {
	f atomic.Pointer[func(tenant string) Quota]
}

// of returns tenant's Quota, or none where no function is set.
func (q *quotas) of(tenant string) Quota {
	if f := q.f.Load(); f != nil {
		return (*f)(tenant)
	}
	return Quota{}
}

// Quotas is what the Hub counts against each tenant's limits from the key
// file: the limits stamped on its events, the use of them, its store and
// notification bytes, and the notifications it could not keep. It is the
// Hub's, got with Hub.Quotas; its methods are safe for concurrent use.
type Quotas struct{ h *Hub }

// Quotas returns what the Hub counts against tenants' limits.
func (h *Hub) Quotas() Quotas { return Quotas{h} }

// SetQuota sets the function that gives each tenant's Quota, read at each
// write (so a reloaded key file takes effect on the next one): the api's
// Server sets it from the key file. Until then no limit applies. Safe for
// concurrent use.
func (q Quotas) SetQuota(f func(tenant string) Quota) { q.h.quota.f.Store(&f) }

// Usage returns tenant's Usage; false where the tenant is not open here.
// O(members' alias sets + boards × windows) under the replica's read lock.
func (q Quotas) Usage(tenant string) (u Usage, ok bool) {
	h := q.h
	_ = h.reg.readTenant(tenant, nil, func(st *ledger.State) error {
		u, ok = st.Usage(), true
		return nil
	})
	return u, ok
}

// StoreBytes returns the bytes of each open tenant's stream as JetStream
// reports them (StreamInfo's state, from the stream's leader): one paged
// JetStream API request for every stream, bounded by ctx. A tenant whose
// stream is not listed is absent.
func (q Quotas) StoreBytes(ctx context.Context) (map[string]uint64, error) {
	h := q.h
	if h.streams == nil {
		return nil, nil
	}
	tenants := map[string]string{} // stream → tenant
	for _, r := range h.reg.openReplicas() {
		tenants[r.stream] = r.tenant
	}
	out := make(map[string]uint64, len(tenants))
	err := h.api.do(func() error {
		l := h.js.ListStreams(ctx)
		for info := range l.Info() {
			if t, ok := tenants[info.Config.Name]; ok {
				out[t] = info.State.Bytes
			}
		}
		return l.Err()
	})
	return out, err
}

// SetNotifyQuota sets the function that gives a tenant's quota of
// notification bytes (the key file's notification_bytes, read at each use
// so that a reload takes effect): notify.Notifier.SetQuota.
func (q Quotas) SetNotifyQuota(f func(tenant string) int64) { q.h.note.SetQuota(f) }

// NotifyBytes returns the bytes tenant's notifications take in the
// notifications' stream, as this node accounts them.
func (q Quotas) NotifyBytes(tenant string) int64 { return q.h.note.StoredBytes(tenant) }

// NotificationsDropped returns the counts of notifications not queued or
// not published, by tenant and reason (rankwire_notifications_dropped_total).
func (q Quotas) NotificationsDropped() []notify.Drop { return q.h.note.Dropped() }
