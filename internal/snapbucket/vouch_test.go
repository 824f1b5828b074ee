package snapbucket

import (
	"context"
	"log/slog"
	"sync/atomic"
	"testing"

	"github.com/nats-io/nats.go"

	"github.com/rankwire/rankwire/internal/ledger"
	"github.com/rankwire/rankwire/internal/natstest"
)

// TestVouchedAsksForTheInfoOnce: Vouched asks the bucket for the
// object's info once, whether the file is vouched for or not, counted on
// the wire (every request for an object's info is a JetStream get of its
// stream's last message on the object's meta subject, direct or not):
// one where the file is vouched for or nothing is shared, two where the
// shared snapshot is downloaded (the second is nats.go's Get's own look).
// Before, the vouching and the download each asked: 2 where nothing was
// shared, 3 where it was downloaded: a round trip more per tenant at a
// clustered node's start.
func TestVouchedAsksForTheInfoOnce(t *testing.T) {
	good := boardAt(t, 9, "ann")
	for _, tc := range []struct {
		name   string
		shared bool
		local  *ledger.State
		want   int // requests for the object's info
		opened string
	}{
		{"the file vouched for", true, good, 1, "local"},
		{"a score flipped in the file: the shared one downloaded", true, flipScore(t, good), 2, "shared"},
		{"nothing shared", false, good, 1, "none"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := natstest.Server(t)
			_, js := natstest.Connect(t, srv)
			b, err := Open(t.Context(), js, nil, 1, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			if tc.shared {
				b.Save("a", snapOf(t, good, true))
			}
			watch, _ := natstest.Connect(t, srv)
			direct, err := watch.SubscribeSync("$JS.API.DIRECT.GET." + stream + ".>")
			if err != nil {
				t.Fatal(err)
			}
			get, err := watch.SubscribeSync("$JS.API.STREAM.MSG.GET." + stream)
			if err != nil {
				t.Fatal(err)
			}
			if err := watch.Flush(); err != nil {
				t.Fatal(err)
			}
			got, err := b.Vouched(t.Context(), "a", tc.local, nil, nil)
			switch {
			case tc.opened == "local" && (err != nil || got != tc.local),
				tc.opened == "shared" && (err != nil || got == tc.local || !sameState(t, got, good)),
				tc.opened == "none" && err == nil:
				t.Fatalf("Vouched: %v, %v; want %s", got, err, tc.opened)
			}
			// The server forwarded every request to watch before it
			// answered it: after a round trip of watch's own, they are
			// all queued on its subscriptions.
			if err := watch.Flush(); err != nil {
				t.Fatal(err)
			}
			if n := pending(t, direct) + pending(t, get); n != tc.want {
				t.Fatalf("%d requests for the object's info, want %d", n, tc.want)
			}
		})
	}
}

func pending(t *testing.T, sub *nats.Subscription) int {
	t.Helper()
	n, _, err := sub.Pending()
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestVouchedAsksAgainAfterNoAnswer: where the one request for the
// object's info got no answer (a replica that dropped it), the download
// asks again rather than take the silence for "nothing shared": the
// agreed shared snapshot is still opened from, as when the vouching and
// the download each asked.
func TestVouchedAsksAgainAfterNoAnswer(t *testing.T) {
	good := boardAt(t, 9, "ann")
	_, js := natstest.JetStream(t)
	var drop atomic.Int32 // requests to fail as unanswered, from now on
	gate := func(request func() error) error {
		if drop.Add(-1) >= 0 {
			return context.DeadlineExceeded
		}
		return request()
	}
	b, err := Open(t.Context(), js, gate, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	b.Save("a", snapOf(t, good, true))
	drop.Store(1)
	got, err := b.Vouched(t.Context(), "a", flipScore(t, good), nil, nil)
	if err != nil || got == nil || !sameState(t, got, good) {
		t.Fatalf("Vouched after an unanswered info request: %v, %v; want the agreed shared snapshot", got, err)
	}
}
