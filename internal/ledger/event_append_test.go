package ledger

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
	"testing"
)

// TestAppendGroupMatchesJSON: EncodeGroup writes what json.Marshal writes,
// on the fast path and on every case that leaves it (escapes, HTML-unsafe
// bytes, UTF-8, exponents, a nil Items, omitted zeros and -0), so that no
// log entry changes by a byte.
func TestAppendGroupMatchesJSON(t *testing.T) {
	cases := []struct {
		g    Group
		fast bool
	}{
		{Group{Board: "b", Items: []Item{{Member: "m1", Score: 12.5}}}, true},
		{Group{Board: "weekly", Items: []Item{{Member: "a", Score: 1, Subscore: 2, ID: "id-1"}, {Member: "b", Score: -3.25, ID: "x"}}}, true},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 0, Subscore: math.Copysign(0, -1)}}}, true},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 1e-6}, {Member: "n", Score: 9.99e20}}}, true},
		{Group{Board: "b", Items: []Item{}}, true},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 40000123456789, Subscore: -7}, {Member: "n", Score: 1 << 53, Subscore: 1<<53 - 1}, {Member: "o", Score: -(1<<53 + 2), Subscore: 1e20}}}, true},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: math.Copysign(0, -1)}}}, true},
		{Group{Board: "", Items: []Item{{Member: "", Score: 1}}}, true},
		{Group{Board: "b", Items: nil}, false},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 1e21}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 1, Subscore: 1e-7}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: -2.5e-9}}}, false},
		{Group{Board: "a<b", Items: []Item{{Member: "m", Score: 1}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "q\"uote", Score: 1}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 1, ID: "back\\slash"}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "tab\t", Score: 1}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "é", Score: 1}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "bad\xff", Score: 1}}}, false},
		{Group{Board: "b", Items: []Item{{Member: "m", Score: 1, ID: "a&b"}}}, false},
	}
	for i, c := range cases {
		want, err := json.Marshal(c.g)
		if err != nil {
			t.Fatal(err)
		}
		_, fast := appendGroup(nil, c.g)
		got, err := EncodeGroup(c.g)
		if err != nil || !bytes.Equal(got, want) || fast != c.fast {
			t.Errorf("case %d: %s (fast path %v), want %s (fast path %v), err %v", i, got, fast, want, c.fast, err)
		}
	}
}

// TestEncodeGroupRefusesNaN: a score that is not finite is still refused,
// as json.Marshal refuses it.
func TestEncodeGroupRefusesNaN(t *testing.T) {
	for _, f := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := EncodeGroup(Group{Board: "b", Items: []Item{{Member: "m", Score: f}}}); err == nil {
			t.Errorf("score %v encoded", f)
		}
	}
}

// FuzzAppendGroup holds EncodeGroup to json.Marshal's bytes for any
// strings and scores.
func FuzzAppendGroup(f *testing.F) {
	f.Add("b", "m", "", 1.5, 0.0)
	f.Add("w<", "m\u2028", "i\x00", 1e21, -1e-7)
	f.Add("b", "m", "id", 123456789.125, -0.5)
	f.Add("b", "m", "", 9007199254740993.0, -4.0e15)
	f.Fuzz(func(t *testing.T, board, member, id string, score, sub float64) {
		g := Group{Board: board, Items: []Item{{Member: member, Score: score, Subscore: sub, ID: id}, {Member: id, Score: sub}}}
		want, werr := json.Marshal(g)
		got, gerr := EncodeGroup(g)
		if (werr == nil) != (gerr == nil) || !bytes.Equal(got, want) {
			t.Fatalf("EncodeGroup = %q, %v; json.Marshal = %q, %v", got, gerr, want, werr)
		}
	})
}

// BenchmarkEncodeGroup: a batch of 10 as the around-me load test sends
// it (rwload: member ids m<n>, scores n·10⁹ + a time offset), through
// EncodeGroup and through json.Marshal.
func BenchmarkEncodeGroup(b *testing.B) {
	g := Group{Board: "around", Items: make([]Item, 10)}
	for i := range g.Items {
		g.Items[i] = Item{Member: "m" + strconv.Itoa(40000+i*977), Score: float64(40000+i*977)*1e9 + 123456}
	}
	b.Run("append", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := EncodeGroup(g); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := json.Marshal(g); err != nil {
				b.Fatal(err)
			}
		}
	})
}
