package identity

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// model is the reference: a map of sets, rewritten eagerly on every merge.
// It shares no code with Index.
type model struct {
	owner   map[string]uint32          // identifier → live handle
	names   []string                   // names[h]; names[0] unused
	members map[uint32]map[string]bool // live handle → all its identifiers, its own id included
	merges  int                        // merges so far, to log that the test reaches them
}

func newModel() *model {
	return &model{owner: map[string]uint32{}, names: []string{""}, members: map[uint32]map[string]bool{}}
}

func (m *model) handleOf(id string) uint32 {
	if h, ok := m.owner[id]; ok {
		return h
	}
	h := uint32(len(m.names))
	m.names = append(m.names, id)
	m.owner[id] = h
	m.members[h] = map[string]bool{id: true}
	return h
}

func (m *model) link(member string, aliases []string) LinkResult {
	res := LinkResult{Handle: m.handleOf(member)}
	for _, a := range aliases {
		o, ok := m.owner[a]
		switch {
		case !ok:
			m.owner[a] = res.Handle
			m.members[res.Handle][a] = true
		case o != res.Handle:
			for id := range m.members[o] {
				m.owner[id] = res.Handle
				m.members[res.Handle][id] = true
			}
			delete(m.members, o)
			res.Merges = append(res.Merges, Merge{From: o, Into: res.Handle})
			m.merges++
		}
	}
	return res
}

// verify compares every lookup of ix with the model.
func (m *model) verify(t *testing.T, ix *Index, pool []string) {
	t.Helper()
	for _, id := range pool {
		want, wantOK := m.owner[id]
		if h, ok := ix.Resolve(id); h != want || ok != wantOK {
			t.Fatalf("Resolve(%q) = %d, %v; want %d, %v", id, h, ok, want, wantOK)
		}
	}
	for h := range uint32(len(m.names)) + 2 {
		m.verifyHandle(t, ix, h)
	}
	if ix.Len() != len(m.members) || int(ix.MaxHandle()) != len(m.names)-1 {
		t.Fatalf("Len, MaxHandle = %d, %d; want %d, %d", ix.Len(), ix.MaxHandle(), len(m.members), len(m.names)-1)
	}
	mustCheck(t, ix)
}

func (m *model) verifyHandle(t *testing.T, ix *Index, h uint32) {
	t.Helper()
	set, live := m.members[h]
	name, ok := ix.Name(h)
	if ok != live || live && name != m.names[h] {
		t.Fatalf("Name(%d) = %q, %v; want live=%v", h, name, ok, live)
	}
	var want []string
	for _, id := range slices.Sorted(maps.Keys(set)) {
		if id != m.names[h] {
			want = append(want, id)
		}
	}
	if got := ix.Aliases(h); !slices.Equal(got, want) {
		t.Fatalf("Aliases(%d) = %q, want %q", h, got, want)
	}
	known := h != 0 && int(h) < len(m.names)
	c, ok := ix.Canonical(h)
	if ok != known || known && c != m.owner[m.names[h]] {
		t.Fatalf("Canonical(%d) = %d, %v; want known=%v", h, c, ok, known)
	}
	if known && int(h) < len(m.names)-1 {
		if got, want := ix.Compare(h, h+1), strings.Compare(m.names[h], m.names[h+1]); got != want {
			t.Fatalf("Compare(%d, %d) = %d, want %d", h, h+1, got, want)
		}
	}
}

// modelPool is the identifiers the model test draws from: few enough that
// links collide and merge often. The last two are never valid.
func modelPool(n int) []string {
	pool := make([]string, 0, n+2)
	for i := range n {
		pool = append(pool, fmt.Sprintf("%c%d", "uaeü"[i%4], i))
	}
	return append(pool, "", "bad\x00id")
}

// step applies one operation chosen by op and the picks to both ix and m.
func step(t *testing.T, ix *Index, m *model, op byte, pick func() string) *Index {
	switch op % 8 {
	case 0, 1, 2:
		id := pick()
		h, err := ix.Intern(id)
		if Validate(id) != nil {
			return expectErr(t, ix, err)
		}
		if want := m.handleOf(id); h != want || err != nil {
			t.Fatalf("Intern(%q) = %d, %v; want %d", id, h, err, want)
		}
	case 3, 4, 5, 6:
		member, aliases := pick(), []string{pick(), pick(), pick()}[:int(op/8)%4]
		res, err := ix.Link(member, aliases)
		if validateLink(member, aliases) != nil {
			return expectErr(t, ix, err)
		}
		if want := m.link(member, aliases); err != nil || res.Handle != want.Handle || !slices.Equal(res.Merges, want.Merges) {
			t.Fatalf("Link(%q, %q) = %+v, %v; want %+v", member, aliases, res, err, want)
		}
	case 7:
		return roundTrip(t, ix)
	}
	return ix
}

func expectErr(t *testing.T, ix *Index, err error) *Index {
	t.Helper()
	if err == nil {
		t.Fatal("invalid input accepted")
	}
	return ix
}

// roundTrip replaces ix with its decoded snapshot, so later steps also test
// that a decoded Index goes on exactly like the original.
func roundTrip(t *testing.T, ix *Index) *Index {
	t.Helper()
	got, err := Decode(mustMarshal(t, ix))
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// modelSeed is RANKWIRE_SEED when set, else a fresh seed; either is logged.
func modelSeed(t *testing.T) uint64 {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("RANKWIRE_SEED"); s != "" {
		var err error
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("RANKWIRE_SEED: %v", err)
		}
	}
	t.Logf("seed %d (rerun with RANKWIRE_SEED=%d)", seed, seed)
	return seed
}

// TestModel runs seeded random operations against the model and compares
// every lookup after every step. Pools of 8 to 256 identifiers range from
// everything merging into one member to mostly separate members.
func TestModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(modelSeed(t), 0))
	for round := range 12 {
		pool := modelPool(8 << (round % 6))
		pick := func() string { return pool[rng.IntN(len(pool))] }
		ix, m := New(), newModel()
		for range 250 {
			ix = step(t, ix, m, byte(rng.Uint32()), pick)
			m.verify(t, ix, pool)
		}
		t.Logf("pool %3d: %3d handles, %3d live, %3d merges", len(pool)-2, ix.MaxHandle(), ix.Len(), m.merges)
	}
}

// FuzzModel drives the same comparison from fuzzer bytes: each operation
// byte is followed by the bytes that pick its identifiers.
func FuzzModel(f *testing.F) {
	f.Add([]byte{0, 1, 0, 2, 3 + 24, 1, 2, 3, 4, 7, 4 + 16, 5, 6, 7})
	f.Add([]byte{11, 0, 1, 19, 2, 0, 27, 3, 1, 2, 7, 35, 4, 3, 15})
	f.Add([]byte{3 + 8, 9, 9, 3 + 8, 8, 9, 0, 8})
	f.Fuzz(func(t *testing.T, data []byte) {
		// Each step verifies the whole Index: cap the steps so that one
		// input stays fast enough for the fuzzer to minimise.
		data = data[:min(len(data), 2048)]
		pool := modelPool(10)
		next := func() byte {
			if len(data) == 0 {
				return 0
			}
			b := data[0]
			data = data[1:]
			return b
		}
		pick := func() string { return pool[int(next())%len(pool)] }
		ix, m := New(), newModel()
		for len(data) > 0 {
			ix = step(t, ix, m, next(), pick)
			m.verify(t, ix, pool)
		}
	})
}
