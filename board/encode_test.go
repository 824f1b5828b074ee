package board

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestSnapshotRoundTrip encodes boards of every configuration, with integer,
// fractional and extreme scores, and checks the decoded board reads the same.
func TestSnapshotRoundTrip(t *testing.T) {
	for _, cfg := range configs() {
		h := newHarness(t, cfg)
		for i := range uint32(200) {
			h.step(i * 2654435761)
		}
		for i, s := range []float64{0.5, -1e300, 1e300, math.MaxFloat64, 1 << 53, -(1 << 53), 1<<53 + 2} {
			h.submit(uint32(100+i), s, -s/3, false)
		}
		snap, err := h.b.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		got, err := Decode(snap, Config{CompareMembers: nameOrder, Seed: 7})
		if err != nil {
			t.Fatalf("%v: Decode: %v", cfg.Policy, err)
		}
		if err := got.Check(); err != nil {
			t.Fatalf("%v: decoded board: %v", cfg.Policy, err)
		}
		want := h.b.Range(0, 1000, nil)
		if rows := got.Range(0, 1000, nil); !slices.Equal(rows, want) {
			t.Fatalf("%v: decoded rows differ", cfg.Policy)
		}
		c := got.Config()
		if c.Policy != cfg.Policy || c.Order != cfg.Order || c.SubscoreOrder != cfg.SubscoreOrder || c.Tiebreak != cfg.Tiebreak {
			t.Errorf("decoded settings %+v, want %+v", c, cfg)
		}
		// The decoded board goes on taking submissions like the original.
		h.b = got
		for i := range uint32(50) {
			h.step(i * 40503)
		}
	}
}

func TestDecodeCorrupt(t *testing.T) {
	b := mustNew(t, Config{})
	for m := uint32(1); m <= 5; m++ {
		mustSubmit(t, b, Submission{Member: m, Score: float64(m), Seq: uint64(m)})
	}
	snap, _ := b.MarshalBinary()
	flip := slices.Clone(snap)
	flip[10] ^= 1
	tests := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"short", snap[:6]},
		{"bad magic", append([]byte("XYZ"), snap[3:]...)},
		{"bad version", append([]byte("RWB\x09"), snap[4:]...)},
		{"flipped bit", flip},
		{"truncated", snap[:len(snap)-3]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Decode(tt.data, Config{}); !errors.Is(err, ErrCorrupt) {
				t.Errorf("Decode: %v, want ErrCorrupt", err)
			}
		})
	}
}

func TestSnapshotIsCompact(t *testing.T) {
	b := mustNew(t, Config{})
	b.Grow(1000)
	for m := uint32(1); m <= 1000; m++ {
		mustSubmit(t, b, Submission{Member: m, Score: float64(m * 1000), Seq: uint64(m)})
	}
	snap, _ := b.MarshalBinary()
	if per := float64(len(snap)) / 1000; per > 10 {
		t.Errorf("%.1f bytes per entry for integer scores, want at most 10", per)
	}
}
