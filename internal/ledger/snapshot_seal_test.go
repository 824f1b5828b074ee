package ledger

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"
)

// TestPreparedSealModel: a snapshot prepared at one sequence and sealed
// later, after random profile changes, links, submissions and erasures,
// is byte for byte the snapshot Encode sealed at that sequence, reads back
// as the state prepared, and holds no personal data in clear; where an
// erasure destroyed a key since it was prepared, it is refused, never
// written under the old key or in clear. The seed is logged; set
// RANKWIRE_SEED to replay one.
func TestPreparedSealModel(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s, err := strconv.ParseUint(os.Getenv("RANKWIRE_SEED"), 10, 64); err == nil {
		seed = s
	}
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 0))
	st, after := personalScene(t)
	kr := &fakeRing{gone: map[string]bool{}}
	type pending struct {
		p     *Prepared
		want  []byte
		names map[string]bool // whose records it seals
	}
	var queue []pending
	for step := range 400 {
		ev := randomPersonalEvent(rng, after+int64(step))
		if out := st.Apply(st.Seq()+1, ev); out.Err == nil && ev.Kind == EvErase {
			kr.gone[ev.Member] = true // Privacy.Erase destroys the keys first
		} else if out.Err == nil && ev.Kind != EvSubmit {
			delete(kr.gone, ev.Member) // new personal data after an erasure gets a new key
		}
		if rng.IntN(4) == 0 {
			p, err := st.Prepare()
			if err != nil {
				t.Fatal(err)
			}
			want, err := st.Encode(kr)
			queue = append(queue, pending{p, want, sealedOwners(p)})
			if err != nil { // a key destroyed, the erasure not applied: never here
				t.Fatalf("step %d: %v", step, err)
			}
		}
		for len(queue) > 0 && rng.IntN(3) == 0 {
			checkSealLater(t, queue[0].p, queue[0].want, queue[0].names, kr)
			queue = queue[1:]
		}
	}
}

// sealedOwners returns the members whose records p seals.
func sealedOwners(p *Prepared) map[string]bool {
	m := map[string]bool{}
	for _, sp := range p.spots {
		m[sp.owner] = true
	}
	return m
}

// checkSealLater seals p now with kr and compares it with want, Encode's
// bytes when p was prepared.
func checkSealLater(t *testing.T, p *Prepared, want []byte, owners map[string]bool, kr *fakeRing) {
	t.Helper()
	got, err := p.Seal(kr)
	for o := range owners {
		if kr.gone[o] {
			if !errors.Is(err, errGone) {
				t.Fatalf("%s's key destroyed since: sealed anyway (%v)", o, err)
			}
			return
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("sealed later, the snapshot differs from the one sealed at once")
	}
	back, err := Decode(got, kr)
	if err != nil {
		t.Fatal(err)
	}
	if clear, _ := back.Encode(nil); !bytes.Equal(clear, p.Clear()) {
		t.Fatal("the snapshot sealed later reads back as another state")
	}
	if bytes.Contains(got, []byte("Player")) || bytes.Contains(got, []byte("@mail")) {
		t.Fatal("a sealed snapshot holds personal data in clear")
	}
}

// randomPersonalEvent is a submission, a profile, a link or an erasure of
// one of six members.
func randomPersonalEvent(rng *rand.Rand, at int64) *Event {
	m := "p" + strconv.Itoa(rng.IntN(6))
	switch rng.IntN(5) {
	case 0:
		return &Event{Kind: EvSubmit, Board: "plain", Items: []Item{{Member: m, Score: float64(rng.IntN(100))}}, At: at}
	case 1:
		return &Event{Kind: EvLink, Member: m, Aliases: []string{fmt.Sprintf("email:%s-%d@mail.example", m, rng.IntN(3))}, At: at}
	case 2:
		return &Event{Kind: EvErase, Member: m, At: at}
	default:
		return &Event{Kind: EvProfile, Member: m, Profile: &Profile{Name: fmt.Sprintf("Player %s %d", m, rng.IntN(4))}, At: at}
	}
}
