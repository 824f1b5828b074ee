package streamwatch

import (
	"context"
	"testing"
	"time"
)

// TestElectionEndsAttempt: an election of the stream ends an attempt in
// flight at once; another stream's does not; an attempt that ends first
// leaves no goroutine waiting; a later attempt waits for the next
// election, not the one already past.
func TestElectionEndsAttempt(t *testing.T) {
	var e Elections
	ended := make(chan string, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	stopA := EndAtElection(ctx, e.Next("a"), func() { ended <- "a" })
	stopB := EndAtElection(ctx, e.Next("b"), func() { ended <- "b" })
	e.Elected("a")
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
	stopC := EndAtElection(ctx, e.Next("a"), func() { ended <- "a again" })
	stopC()
	e.Elected("a") // after the attempt: nobody to end
	select {
	case got := <-ended:
		t.Fatalf("ended %q after its attempt", got)
	default:
	}
}

func TestHeld(t *testing.T) {
	var e Elections
	c := e.Next("a")
	if Held(c) {
		t.Fatal("Held before any election")
	}
	e.Elected("b")
	if Held(c) {
		t.Fatal("Held after another stream's election")
	}
	e.Elected("a")
	if !Held(c) {
		t.Fatal("not Held after the stream's election")
	}
	if Held(e.Next("a")) {
		t.Fatal("the next channel Held before the next election")
	}
}
