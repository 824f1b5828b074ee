package shred

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"fmt"
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
	k := cachedKeys(b, st, n)
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

// cachedKeys returns Keys (no stream) caching a key for each of st's n
// members, prepared by a first snapshot, as a running node's are.
func cachedKeys(b *testing.B, st *ledger.State, n int) *Keys {
	k := New(nil, 1)
	for m := range n {
		key := make([]byte, keyLen)
		_, _ = rand.Read(key)
		k.cache[entry("t", "m"+strconv.Itoa(m))] = key
	}
	if _, err := st.Encode(k.Ring("t")); err != nil {
		b.Fatal(err)
	}
	return k
}

// BenchmarkSnapshotApplyBlocking times what a tenant's replica waits for
// when it snapshots a state whose N members all have a profile and an
// alias, before and after the seals left the apply path: encode-sealed is
// State.Encode with the Ring (what apply waited for), prepare is
// State.Prepare (what it waits for now, the first snapshot after a start
// and every later one alike: nothing is cached between snapshots), and
// saver-seal is Prepared.Seal with the Ring (the saver goroutine's part).
// N=1e6 needs some GB and minutes of setup: -bench 'ApplyBlocking/N=1e6'.
//
//	go test ./internal/shred -run '^$' -bench SnapshotApplyBlocking -benchtime 3x -count 5
func BenchmarkSnapshotApplyBlocking(b *testing.B) {
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("N=1e%d", len(strconv.Itoa(n))-1), func(b *testing.B) {
			st := personalState(b, n)
			ring := cachedKeys(b, st, n).Ring("t")
			p, err := st.Prepare()
			if err != nil {
				b.Fatal(err)
			}
			for _, c := range []struct {
				name string
				run  func() error
			}{
				{"encode-sealed", func() error { _, err := st.Encode(ring); return err }},
				{"prepare", func() error { _, err := st.Prepare(); return err }},
				{"saver-seal", func() error { _, err := p.Seal(ring); return err }},
			} {
				b.Run(c.name, func(b *testing.B) {
					b.ReportAllocs()
					for b.Loop() {
						if err := c.run(); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// oldNonce is how a seal derived its nonce before its HMAC states were
// precomputed: the member's entry name hashed (the prepared key's lookup),
// then hmac.New per seal. The peer of BenchmarkSealNonce.
func oldNonce(nk, nonce []byte, tenant, owner string, plaintext []byte) {
	_ = entry(tenant, owner)
	ad := associated(tenant, owner)
	m := hmac.New(sha256.New, nk)
	var n [binary.MaxVarintLen64]byte
	m.Write(n[:binary.PutUvarint(n[:], uint64(len(ad)))])
	m.Write(ad)
	m.Write(plaintext)
	var sum [sha256.Size]byte
	copy(nonce, m.Sum(sum[:0]))
}

// BenchmarkSealNonce times one record's nonce, as a seal derived it
// before (hmac.New and the entry name's SHA-256) and now (precomputed
// HMAC states), and a whole seal now (Ring.Seal, key cached).
//
//	go test ./internal/shred -run '^$' -bench SealNonce -count 5
func BenchmarkSealNonce(b *testing.B) {
	raw := make([]byte, keyLen)
	_, _ = rand.Read(raw)
	p, err := prepare(raw, 0)
	if err != nil {
		b.Fatal(err)
	}
	m := hmac.New(sha256.New, raw)
	m.Write([]byte(nonceLabel))
	nk := m.Sum(nil)
	pt := []byte("\x0bPlayer m42\x00\x02MT\x14email:m42@mail.example")
	nonce := make([]byte, 12)
	b.Run("before=hmac.New", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			oldNonce(nk, nonce, "t", "m42", pt)
		}
	})
	b.Run("after=precomputed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_ = p.nonceOf(nonce, associated("t", "m42"), pt)
		}
	})
	k := New(nil, 1)
	k.cache[entry("t", "m42")] = raw
	ring := k.Ring("t")
	b.Run("after=whole-seal", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := ring.Seal("m42", pt); err != nil {
				b.Fatal(err)
			}
		}
	})
}
