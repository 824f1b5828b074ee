package hub

import (
	"context"
	"testing"
	"time"
)

// TestElectionEndsAttempt: an election of the tenant's stream ends an
// attempt in flight at once; another tenant's does not; an attempt that
// ends first leaves no goroutine waiting; a later attempt waits for the
// next election, not the one already past.
func TestElectionEndsAttempt(t *testing.T) {
	var e elections
	ended := make(chan string, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopA := endAtElection(ctx, e.next("a"), func() { ended <- "a" })
	stopB := endAtElection(ctx, e.next("b"), func() { ended <- "b" })
	e.elected("a")
	select {
	case got := <-ended:
		if got != "a" {
			t.Fatalf("ended %q, want a", got)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a's election did not end its attempt")
	}
	stopA()
	stopB() // b's attempt ends without an election: end not called
	stopC := endAtElection(ctx, e.next("a"), func() { ended <- "a again" })
	stopC()
	e.elected("a") // after the attempt: nobody to end
	select {
	case got := <-ended:
		t.Fatalf("ended %q after its attempt", got)
	default:
	}
}
