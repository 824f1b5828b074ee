package streamwatch

import (
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/natstest"
)

// Leader advisories reach the handlers by the name after the prefix, for
// kept streams only. (A lone server sends none: the test publishes them
// as a cluster's JetStream would.)
func TestLeaders(t *testing.T) {
	nc, _ := natstest.JetStream(t)
	got := make(chan string, 8)
	err := Leaders(nc, "RW_", func(name string) bool { return name != "skip" }, LeaderEvents{
		Elected: func(name, leader string) { got <- "elected " + name + " " + leader },
		Lost:    func(name string) { got <- "lost " + name },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := nc.Flush(); err != nil {
		t.Fatal(err)
	}
	for subject, data := range map[string]string{
		leaderElected + "OTHER": `{"leader":"n9"}`, leaderElected + "RW_skip": `{"leader":"n9"}`, quorumLost + "RW_skip": "{}",
	} {
		_ = nc.Publish(subject, []byte(data))
	}
	_ = nc.Publish(leaderElected+"RW_a", []byte(`{"leader":"n2"}`))
	_ = nc.Publish(quorumLost+"RW_b", []byte(`{}`))
	// Each subscription delivers in publish order, so an advisory that
	// should have been dropped arrives before the expected one of its kind.
	want := map[string]bool{"elected a n2": true, "lost b": true}
	for len(want) > 0 {
		select {
		case g := <-got:
			if !want[g] {
				t.Fatalf("got %q: an advisory of a stream not kept, or twice", g)
			}
			delete(want, g)
		case <-time.After(5 * time.Second):
			t.Fatalf("not heard: %v", want)
		}
	}
}
