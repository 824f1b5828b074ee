package snapbucket

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/internal/fingerprint"
	"github.com/rankwire/rankwire/internal/natstest"
)

// sharedMeta returns the metadata of tenant's object in b, nil where none.
func sharedMeta(t *testing.T, b *Bucket, tenant string) map[string]string {
	t.Helper()
	info, err := b.store.GetInfo(t.Context(), tenant)
	if errors.Is(err, jetstream.ErrObjectNotFound) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	return info.Metadata
}

// A clustered node shares a snapshot only at a checkpoint the cluster
// agreed with, whichever of the verdict and the offer comes first; one
// whose checkpoint differs from the majority's, one at a sequence where
// it diverged, one at no checkpoint, one without a verdict, or one offered
// while the node stops, stays local. Without the cluster's comparison (a
// nil Agreement) every snapshot is shared at once, marked not agreed.
func TestAgreementSharesOnlyAgreed(t *testing.T) {
	good := snapOf(t, boardAt(t, 10, "ann"), false)
	wrong := snapOf(t, boardAt(t, 10, "cheat"), false)
	majority := fingerprint.Checkpoint{Seq: 10, Sum: good.Sum}
	stopped := make(chan struct{})
	close(stopped)
	for _, tc := range []struct {
		name    string
		offer   Snapshot
		before  func(a *Agreement) // verdicts before the offer
		during  func(a *Agreement) // verdicts while it waits
		done    <-chan struct{}
		nilA    bool
		want    string // the stored object's "agreed"; "none": nothing stored
		waitsMs int    // the longest the offer may take
	}{
		{name: "agreed first", offer: good, before: func(a *Agreement) { a.Agree(majority) }, want: agreedMajority},
		{name: "agreed while it waits", offer: good, during: func(a *Agreement) { a.Agree(majority) }, want: agreedMajority},
		{name: "the majority has another sum", offer: wrong, during: func(a *Agreement) { a.Agree(majority) }, want: "none"},
		{name: "diverged while it waits", offer: wrong, during: func(a *Agreement) { a.Diverge(10) }, want: "none"},
		{name: "diverged later than it", offer: good, before: func(a *Agreement) { a.Diverge(20) }, want: "none"},
		{name: "a later checkpoint agreed", offer: good, before: func(a *Agreement) { a.Agree(fingerprint.Checkpoint{Seq: 20}) }, want: "none"},
		{name: "no checkpoint at its sequence", offer: snapOf(t, boardAt(t, 9, "ann"), false), before: func(a *Agreement) { a.Agree(majority) }, want: "none"},
		{name: "the node stops", offer: good, done: stopped, want: "none"},
		{name: "no comparison", offer: wrong, nilA: true, want: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, js := natstest.JetStream(t)
			b, err := Open(t.Context(), js, nil, 1, slog.New(slog.DiscardHandler))
			if err != nil {
				t.Fatal(err)
			}
			done := tc.done
			if done == nil {
				done = t.Context().Done()
			}
			a := NewAgreement(5, done)
			if tc.nilA {
				a = nil
			}
			if tc.before != nil {
				tc.before(a)
			}
			if tc.during != nil {
				go tc.during(a) // before Offer waits or while it does: either order must work
			}
			start := time.Now()
			a.Offer(b, "t1", tc.offer.Seq, nil, tc.offer.Data, tc.offer.Data, false) // no personal data: sealed is clear
			if took := time.Since(start); took > AgreeWait/2 {
				t.Fatalf("Offer took %v: a verdict should end its wait", took)
			}
			meta := sharedMeta(t, b, "t1")
			switch {
			case tc.want == "none" && meta != nil:
				t.Fatalf("shared %v, want nothing", meta)
			case tc.want != "none" && (meta == nil || meta[metaAgreed] != tc.want):
				t.Fatalf("shared %v, want agreed %q", meta, tc.want)
			}
		})
	}
}

// With no verdict at all, Offer gives up after AgreeWait, sharing nothing.
func TestAgreementWaitIsBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: waits AgreeWait")
	}
	_, js := natstest.JetStream(t)
	b, err := Open(t.Context(), js, nil, 1, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	good := snapOf(t, boardAt(t, 10, "ann"), false)
	start := time.Now()
	NewAgreement(5, t.Context().Done()).Offer(b, "t1", 10, nil, good.Data, good.Data, false)
	if took := time.Since(start); took < AgreeWait || took > 3*AgreeWait {
		t.Fatalf("Offer without a verdict took %v, want about %v", took, AgreeWait)
	}
	if meta := sharedMeta(t, b, "t1"); meta != nil {
		t.Fatalf("shared %v without a verdict", meta)
	}
}
