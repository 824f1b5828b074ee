package main

import (
	"slices"
	"testing"
)

// Up to probeBatch tenants every one is asked at every observation; past
// it they take turns, every tenant asked within ceil(n/probeBatch)
// observations.
func TestProbeBatch(t *testing.T) {
	p := &prober{}
	if got := p.batch(3); !slices.Equal(got, []int{0, 1, 2}) {
		t.Fatalf("3 tenants: %v", got)
	}
	n := 2*probeBatch + 10
	asked := map[int]int{}
	for range 3 {
		b := p.batch(n)
		if len(b) != probeBatch {
			t.Fatalf("a batch of %d, want %d", len(b), probeBatch)
		}
		for _, i := range b {
			asked[i]++
		}
	}
	if len(asked) != n {
		t.Fatalf("%d of %d tenants asked in 3 observations", len(asked), n)
	}
}
