package hub

import (
	"testing"
)

func TestIdempotency(t *testing.T) {
	dir := t.TempDir()
	h := startHub(t, Config{DataDir: dir})
	mustPut(t, h, "t1", "b", Settings{Policy: "sum"})
	first := mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 5, ID: "m1"})[0]
	mustSubmit(t, h, "t1", "b", Item{Member: "z", Score: 50})
	again := mustSubmit(t, h, "t1", "b", Item{Member: "a", Score: 5, ID: "m1"}, Item{Member: "a", Score: 1, ID: "m2"}, Item{Member: "a", Score: 1, ID: "m2"})
	want := first
	want.Duplicate = true
	if again[0] != want {
		t.Fatalf("repeat = %+v, want %+v", again[0], want)
	}
	if !again[2].Duplicate || again[2].Score != 6 || again[1].Duplicate {
		t.Fatalf("repeat within a batch = %+v", again[1:])
	}
	h.Close()

	h2 := startHub(t, Config{DataDir: dir})
	res := mustSubmit(t, h2, "t1", "b", Item{Member: "a", Score: 5, ID: "m1"})
	if res[0] != want {
		t.Fatalf("after restart = %+v, want %+v", res[0], want)
	}
	p, err := h2.Member(Loc{Tenant: "t1", Board: "b"}, "a")
	if err != nil || p.Rows[0].Score != 6 {
		t.Fatalf("after restart a = %+v, %v", p, err)
	}
}
