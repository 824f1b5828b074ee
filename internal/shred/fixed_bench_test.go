package shred

import (
	"crypto/rand"
	"strconv"
	"testing"

	"github.com/rankwire/rankwire/internal/ledger"
)

// personalState returns a tenant state of one board of n members, each
// with a profile and a linked e-mail alias: the most personal data a
// snapshot can hold per member.
func personalState(b *testing.B, n int) *ledger.State {
	st := ledger.New()
	set, err := ledger.Settings{}.Normalize()
	if err != nil {
		b.Fatal(err)
	}
	seq := uint64(1)
	st.Apply(seq, &ledger.Event{Kind: ledger.EvSettings, Board: "s", Settings: &set})
	items := make([]ledger.Item, 0, ledger.MaxBatch)
	for i := 0; i < n; i += ledger.MaxBatch {
		items = items[:0]
		for m := i; m < min(i+ledger.MaxBatch, n); m++ {
			items = append(items, ledger.Item{Member: "m" + strconv.Itoa(m), Score: float64((m * 7919) % 1_000_003)})
		}
		seq++
		st.Apply(seq, &ledger.Event{Kind: ledger.EvSubmit, Board: "s", Items: items})
	}
	for m := range n {
		id := "m" + strconv.Itoa(m)
		seq++
		st.Apply(seq, &ledger.Event{Kind: ledger.EvProfile, Member: id, Profile: &ledger.Profile{Name: "Player " + id, Country: "MT"}})
		seq++
		st.Apply(seq, &ledger.Event{Kind: ledger.EvLink, Member: id, Aliases: []string{"email:" + id + "@mail.example"}})
	}
	return st
}

// BenchmarkSnapshotRing times a snapshot's encoding and decoding with the
// members' personal data in clear (a nil Keyring: what a snapshot cost
// before it was sealed, in the same layout) and sealed with a Ring whose
// keys are all cached (a running node's case: no request), at N members
// that all have a profile and an alias: the worst case, one seal and one
// open per member. The layout's own cost against RWSNAP7 is
// internal/ledger's BenchmarkSnapshotPersonal. The state and the keys are
// made outside the timer, without NATS.
//
//	go test ./internal/shred -run '^$' -bench SnapshotRing -count 5
func BenchmarkSnapshotRing(b *testing.B) {
	const n = 100_000
	st := personalState(b, n)
	k := New(nil, 1) // no stream: every key is cached
	for m := range n {
		key := make([]byte, keyLen)
		_, _ = rand.Read(key)
		k.cache[entry("t", "m"+strconv.Itoa(m))] = key
	}
	if _, err := st.Encode(k.Ring("t")); err != nil { // prepares the keys, as a running node has
		b.Fatal(err)
	}
	for _, c := range []struct {
		name string
		kr   ledger.Keyring
	}{{"clear", nil}, {"sealed", k.Ring("t")}} {
		b.Run("N=1e5/encode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := st.Encode(c.kr); err != nil {
					b.Fatal(err)
				}
			}
		})
		data, err := st.Encode(c.kr)
		if err != nil {
			b.Fatal(err)
		}
		b.Run("N=1e5/decode/"+c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ledger.Decode(data, c.kr); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
