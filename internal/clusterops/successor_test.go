package clusterops

import (
	"testing"
	"time"
)

func TestSuccessor(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	old, restarted := t0, t0.Add(time.Minute)
	cases := []struct {
		name string
		cs   []Candidate
		want string
	}{
		{"none", nil, ""},
		{"the restarted peer, caught up", []Candidate{{"n2", 0, 0, old}, {"n3", 0, 0, restarted}}, "n3"},
		{"the restarted peer first", []Candidate{{"n3", 0, 0, restarted}, {"n2", 0, 0, old}}, "n3"},
		{"the restarted peer, writes on their way", []Candidate{{"n2", 0, 0, old}, {"n3", MaxSuccessorLag, 0, restarted}}, "n3"},
		{"the restarted peer still behind", []Candidate{{"n2", 0, 0, old}, {"n3", MaxSuccessorLag + 1, 0, restarted}}, "n2"},
		{"the restarted peer silent", []Candidate{{"n2", 0, 0, old}, {"n3", 0, MaxSuccessorSilent + 1, restarted}}, "n2"},
		{"no route known", []Candidate{{"n2", 0, 0, time.Time{}}}, ""},
		{"nobody caught up: Raft's choice", []Candidate{{"n2", 0, time.Minute, old}, {"n3", 1000, 0, restarted}}, ""},
		{"a tie: the first", []Candidate{{"n2", 0, 0, old}, {"n3", 0, 0, old}}, "n2"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Successor(c.cs); got != c.want {
				t.Errorf("Successor(%v) = %q, want %q", c.cs, got, c.want)
			}
		})
	}
}
