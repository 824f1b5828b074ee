package hub

import (
	"context"
	"strconv"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/ledger"
)

// BenchmarkPublishFloor is the floor under the committer: a bare
// JetStream publish to the embedded server, one in flight as the committer
// keeps one per tenant, of group events shaped as group commit sends them
// (groups of one item, as 64 single writers fill an event, and groups of
// 100, as batches do), with and without an fsync before each ack
// (Config.Sync). No replica consumes them, no HTTP: what is left when
// everything but the store's round trip is taken away. events/s times the
// items per event the gateway reaches is the most it could acknowledge;
// the ratio of the two Sync settings at the same bytes is what the fsync
// alone costs.
//
//	go test ./hub -run '^$' -bench 'PublishFloor' -benchtime 2s
func BenchmarkPublishFloor(b *testing.B) {
	for _, shape := range []struct{ groups, items int }{{20, 1}, {10, 100}} {
		for _, sync := range []struct {
			name string
			d    time.Duration
		}{{"always", SyncAlways}, {"lazy", SyncLazy}} {
			name := "items=" + strconv.Itoa(shape.groups*shape.items) + "/sync=" + sync.name
			b.Run(name, func(b *testing.B) { publishFloor(b, sync.d, shape.groups, shape.items) })
		}
	}
}

func publishFloor(b *testing.B, sync time.Duration, groups, items int) {
	h := benchStream(b, sync, "FLOOR", "floor")
	ctx := context.Background()
	data := floorEvent(b, h, groups, items)
	b.ResetTimer()
	start := time.Now()
	for i := range b.N {
		if _, err := h.js.Publish(ctx, "floor", data, jetstream.WithMsgID(h.streams.id+strconv.Itoa(i))); err != nil {
			b.Fatal(err)
		}
	}
	s := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N)/s, "events/s")
	b.ReportMetric(float64(b.N*groups*items)/s, "items/s")
	b.ReportMetric(float64(len(data)), "B/event")
}

// benchStream starts a hub in a temp dir, its discovery off and its
// Config.Sync sync, closed when b ends, and creates on its JetStream a file
// stream name of subject, with the tenants' duplicate window, that no
// replica consumes: the store alone, for the publish benchmarks.
func benchStream(b *testing.B, sync time.Duration, name, subject string) *Hub {
	h, err := Start(context.Background(), Config{DataDir: b.TempDir(), DiscoverInterval: -1, Sync: sync})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close() })
	if _, err := h.js.CreateStream(context.Background(), jetstream.StreamConfig{Name: name, Subjects: []string{subject},
		Storage: jetstream.FileStorage, Duplicates: dupWindow}); err != nil {
		b.Fatal(err)
	}
	return h
}

// floorEvent encodes a group event as the committer does: groups of
// items, each encoded apart, joined.
func floorEvent(b *testing.B, h *Hub, groups, items int) []byte {
	head := &ledger.Event{Kind: ledger.EvGroup, At: time.Now().UnixMilli(), Waiter: h.streams.waiterKey()}
	var enc [][]byte
	for g := range groups {
		grp := ledger.Group{Board: "load"}
		for i := range items {
			grp.Items = append(grp.Items, Item{Member: "player-" + strconv.Itoa(100000*g+i), Score: 12345, ID: "match-" + strconv.Itoa(i)})
		}
		e, err := ledger.EncodeGroup(grp)
		if err != nil {
			b.Fatal(err)
		}
		enc = append(enc, e)
	}
	data, err := ledger.EncodeGroupEvent(head, enc)
	if err != nil {
		b.Fatal(err)
	}
	return data
}
