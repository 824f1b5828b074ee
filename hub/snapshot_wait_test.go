package hub

import (
	"context"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/snapbucket"
)

// TestLoadWaitsForTheOpeningBucket: a load while the bucket is still
// opening returns once it opens, not at the window's end; past the window
// a load does not wait at all.
func TestLoadWaitsForTheOpeningBucket(t *testing.T) {
	s := &snapshotter{}
	s.expectBucket(time.Minute)
	b := &snapbucket.Bucket{} // a marker only: awaitBucket never uses it
	go func() { s.openedBucket(b) }()
	start := time.Now()
	s.awaitBucket(context.Background())
	if s.shared.Load() != b {
		t.Fatalf("awaitBucket returned after %v without the bucket", time.Since(start))
	}
	if d := time.Since(start); d > 30*time.Second {
		t.Fatalf("awaitBucket waited %v for a bucket that opened at once", d)
	}

	late := &snapshotter{}
	late.expectBucket(-time.Second) // the start's window is over
	done := make(chan struct{})
	go func() { late.awaitBucket(context.Background()); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("a load after the window waited for a bucket that never opens")
	}
}
