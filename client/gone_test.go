package client_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/client"
)

// TestWatchEndsWhenBoardDeleted: a Watch of a board that is deleted ends
// with the gateway's not_found error, once and final (the loop ends; no
// other gateway, no resubscribe), after the states before the delete; a
// Watch of another board of the same client goes on.
func TestWatchEndsWhenBoardDeleted(t *testing.T) {
	g := startGateway(t)
	admin := g.client(t, "t1", "k1", auth.RoleAdmin)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, b := range []string{"weekly", "daily"} {
		if _, err := admin.PutBoard(ctx, b, client.Settings{}); err != nil {
			t.Fatal(err)
		}
		if _, err := admin.Submit(ctx, b, client.Score{Member: "a", Score: 1}); err != nil {
			t.Fatal(err)
		}
	}
	reader, err := client.New([]string{g.URL(), g.URL()}, client.WithToken(g.token("t1", "k1", auth.RoleRead)))
	if err != nil {
		t.Fatal(err)
	}
	type step struct {
		st  client.ViewState
		err error
	}
	watch := func(board string) <-chan step {
		out := make(chan step, 100)
		go func() {
			defer close(out)
			for st, err := range reader.Watch(ctx, board, client.Top(10), client.WatchBackoff(20*time.Millisecond, 200*time.Millisecond)) {
				out <- step{st, err}
			}
		}()
		return out
	}
	weekly, daily := watch("weekly"), watch("daily")
	next := func(c <-chan step, what string) (step, bool) {
		t.Helper()
		select {
		case s, ok := <-c:
			return s, ok
		case <-ctx.Done():
			t.Fatalf("%s: nothing came", what)
		}
		return step{}, false
	}
	for _, c := range []<-chan step{weekly, daily} {
		if s, _ := next(c, "first state"); s.err != nil || len(s.st.Rows) != 1 {
			t.Fatalf("first state: %+v", s)
		}
	}
	if err := admin.DeleteBoard(ctx, "weekly"); err != nil {
		t.Fatal(err)
	}
	s, _ := next(weekly, "the delete's error")
	var ce *client.Error
	if !client.IsCode(s.err, "not_found") || !errors.As(s.err, &ce) || ce.Message != `board: "weekly" was deleted` {
		t.Fatalf("after the delete: %+v, want the not_found error naming the board", s)
	}
	if s, ok := next(weekly, "the watch's end"); ok {
		t.Fatalf("the watch went on after its board's delete: %+v", s)
	}
	if _, err := admin.Submit(ctx, "daily", client.Score{Member: "b", Score: 2}); err != nil {
		t.Fatal(err)
	}
	if s, _ := next(daily, "daily's next state"); s.err != nil || len(s.st.Rows) != 2 {
		t.Fatalf("the other watch after the delete: %+v", s)
	}
}
