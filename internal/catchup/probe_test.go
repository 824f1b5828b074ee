package catchup

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
)

// asker is a stream that answers each question when the test says so,
// with the sequence the test gives, and counts the questions.
type asker struct {
	asked   chan struct{} // a question arrived
	answers chan uint64   // the answer to give
	mu      sync.Mutex
	n       int
}

func (a *asker) ask(ctx context.Context, tenant string) (uint64, error) {
	a.mu.Lock()
	a.n++
	a.mu.Unlock()
	a.asked <- struct{}{}
	select {
	case v := <-a.answers:
		return v, nil
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// Reads that ask while a question is on the wire share the next one, and
// never take the answer of the one sent before they asked (which may
// predate the board they look for): three reads, two questions.
func TestProbesShareTheNextQuestion(t *testing.T) {
	var ps probes
	a := &asker{asked: make(chan struct{}, 4), answers: make(chan uint64)}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	got := make(chan string, 3)
	read := func(name string) {
		last, err := ps.last(ctx, "t1", a.ask)
		got <- fmt.Sprintf("%s:%d:%v", name, last, err)
	}
	go read("first")
	<-a.asked // the first question is on the wire
	go read("second")
	go read("third")
	await.For(t, 10*time.Second, func() error {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if q := ps.t["t1"]; q == nil || q.next == nil || q.next.readers != 2 {
			return fmt.Errorf("the two later reads have not joined the next question")
		}
		return nil
	})
	a.answers <- 5
	if g := <-got; g != "first:5:<nil>" {
		t.Fatalf("the first read got %s", g)
	}
	<-a.asked // the second question, sent once the first was answered
	a.answers <- 7
	for range 2 {
		if g := <-got; g != "second:7:<nil>" && g != "third:7:<nil>" {
			t.Fatalf("a later read got %s, want the second question's 7", g)
		}
	}
	if a.n != 2 {
		t.Errorf("%d questions, want 2", a.n)
	}
	if len(ps.t) != 0 {
		t.Errorf("the queue of an idle tenant is kept: %v", ps.t)
	}
}

// A read that leads a question and gives up (its client went away) leaves
// the reads sharing that question their answer: the question is asked
// with the read's deadline, not its cancellation.
func TestProbeOutlivesAReadThatGaveUp(t *testing.T) {
	var ps probes
	a := &asker{asked: make(chan struct{}, 4), answers: make(chan uint64)}
	ctx, stop := context.WithTimeout(context.Background(), 30*time.Second)
	defer stop()
	first := make(chan uint64, 1)
	go func() { v, _ := ps.last(ctx, "t1", a.ask); first <- v }()
	<-a.asked // the first question is on the wire
	quitter, quit := context.WithCancel(ctx)
	quitErr := make(chan error, 1)
	go func() { _, err := ps.last(quitter, "t1", a.ask); quitErr <- err }() // leads the next question
	await.For(t, 10*time.Second, func() error {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if q := ps.t["t1"]; q == nil || q.next == nil {
			return fmt.Errorf("no next question yet")
		}
		return nil
	})
	stayed := make(chan string, 1)
	go func() { v, err := ps.last(ctx, "t1", a.ask); stayed <- fmt.Sprint(v, err) }()
	await.For(t, 10*time.Second, func() error {
		ps.mu.Lock()
		defer ps.mu.Unlock()
		if q := ps.t["t1"]; q.next.readers != 2 {
			return fmt.Errorf("the third read has not joined the next question")
		}
		return nil
	})
	quit()
	a.answers <- 3
	<-first
	<-a.asked // the next question goes out although the read that leads it quit
	a.answers <- 4
	if got := <-stayed; got != "4 <nil>" {
		t.Fatalf("the read that stayed got %s, want 4", got)
	}
	<-quitErr
}
