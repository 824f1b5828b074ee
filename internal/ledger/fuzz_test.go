package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// script turns fuzz bytes into a sequence of events of every kind over a
// few boards and members, with acceptance times that mostly move forward
// (by minutes to weeks) and sometimes a little back, as clocks of
// different nodes do. Deterministic: the same bytes give the same events.
type script struct {
	b  []byte
	at int64
}

func (s *script) next() int {
	if len(s.b) == 0 {
		return 0
	}
	v := s.b[0]
	s.b = s.b[1:]
	return int(v)
}

func (s *script) events() []*Event {
	s.at = 1_767_225_600_000 // 2026-01-01
	var evs []*Event
	for len(s.b) > 0 && len(evs) < 200 {
		if ev := s.event(); ev != nil {
			ev.At = s.at
			planVoid(evs, ev)
			evs = append(evs, ev)
		}
	}
	return evs
}

func (s *script) event() *Event {
	board := fmt.Sprint("b", s.next()%3)
	switch op := s.next() % 17; {
	case op < 2:
		return &Event{Kind: EvSettings, Board: board, Settings: s.settings(), MaxBoards: s.next() % 4}
	case op < 7:
		return &Event{Kind: EvSubmit, Board: board, Items: s.items(), KeepIDs: int64(s.next()%3) * 3_600_000}
	case op < 9:
		ev := &Event{Kind: EvGroup, KeepIDs: int64(s.next()%3) * 3_600_000}
		for range 1 + s.next()%4 {
			ev.Groups = append(ev.Groups, Group{Board: fmt.Sprint("b", s.next()%4), Items: s.items()})
		}
		return ev
	case op == 9:
		return &Event{Kind: EvLink, Member: s.member(), Aliases: []string{s.member(), s.member()}, NoMerge: s.next()%2 == 0}
	case op == 10:
		return &Event{Kind: []EventKind{EvRemove, EvReset, EvDelete, EvRemove}[s.next()%4], Board: board, Member: s.member()}
	case op == 11:
		return &Event{Kind: []EventKind{EvApprove, EvReject}[s.next()%2], Board: board, QID: uint64(s.next() % 8)}
	case op == 12 && s.next()%4 == 0: // profile_erase.go
		return &Event{Kind: EvErase, Member: s.member()}
	case op == 12:
		return &Event{Kind: EvProfile, Member: s.member(), Profile: &Profile{Name: s.member(), Country: []string{"", "mt", "XX"}[s.next()%3]}}
	case op == 14: // dispute.go, dispute_void.go
		kinds := []EventKind{EvDisqualify, EvReinstate, EvSettle, EvDisqualify, EvVoid}
		ev := &Event{Kind: kinds[s.next()%5], Board: board, Member: s.member(), Reason: "r", Sub: "ops"}
		if ev.Kind == EvVoid {
			ev.Member, ev.Void = "", &Void{Seq: uint64(s.next() % 16)}
		}
		return ev
	case op == 16: // schedule_state.go: hourly-aligned occurrences of daily UTC schedules
		name := fmt.Sprint("s", s.next()%2)
		switch s.next() % 3 {
		case 0:
			sc := &Schedule{Every: "day", At: fmt.Sprintf("%02d:00", s.next()%24), Duration: "1h", Paused: s.next()%4 == 0}
			return &Event{Kind: EvSchedule, Name: name, Schedule: sc, MaxSchedules: 1 + s.next()%2}
		case 1:
			occ := s.at - s.at%3_600_000 + int64(s.next()%2)*3_600_000
			return &Event{Kind: EvFire, Name: name, Occ: occ, Board: BoardName(name, occ, time.UTC), MaxBoards: s.next() % 4}
		}
		return &Event{Kind: EvUnschedule, Name: name}
	case op == 13:
		s.at += int64(s.next()) * 3_600_000 // up to ten days
	default:
		s.at += int64(int8(s.next())) * 5_000 // seconds to minutes, either way
	}
	return nil
}

// planVoid makes ev, where it is an EvVoid, the void a planner computes
// from the events before it; where the plan fails it stays as drawn (no
// member: apply refuses it).
func planVoid(evs []*Event, ev *Event) {
	if ev.Kind != EvVoid {
		return
	}
	p := NewVoidPlanner(ev.Board, ev.Void.Seq)
	for p.Next() {
		for i, e := range evs {
			p.Apply(uint64(i+1), e)
		}
	}
	if v, err := p.Plan(); err == nil {
		ev.Void = v
	}
}

// checkPlanned fails where a void planned from the events just before it
// was refused for another reason than a settled board: the plan and the
// state it is applied to are the same.
func checkPlanned(t *testing.T, ev *Event, out Outcome) {
	if ev.Kind == EvVoid && ev.Void.Member != "" && out.Err != nil && !strings.HasPrefix(msgOf(out.Err), "settled:") {
		t.Fatalf("a planned void was refused: %v", out.Err)
	}
}

func (s *script) member() string { return fmt.Sprint("m", s.next()%12) }

func (s *script) items() []Item {
	items := make([]Item, 1+s.next()%6)
	for i := range items {
		items[i] = Item{Member: s.member(), Score: float64(int8(s.next())), Subscore: float64(s.next() % 3)}
		if s.next()%2 == 0 {
			items[i].ID = fmt.Sprint("id", s.next()%16)
		}
	}
	return items
}

func (s *script) settings() *Settings {
	f := s.next()
	set := &Settings{
		Policy:    []string{"best", "latest", "sum", "first"}[f%4],
		Order:     []string{"desc", "asc"}[f/4%2],
		Tiebreak:  []string{"earliest", "latest"}[f/8%2],
		Windows:   [][]string{{"all"}, {"day", "all"}, {"week"}, {"month", "day"}}[f/16%4],
		Retention: s.next() % 3,
	}
	if f/64%2 == 1 {
		lo, step := float64(-s.next()), float64(1+s.next()%100)
		set.Rules = &Rules{MinScore: &lo, MaxStep: &step, MaxPerMinute: s.next() % 4}
	}
	if f >= 224 {
		set.EndsAt = FormatTime(s.at + int64(s.next())*600_000)
		set.Prizes = []Prize{{From: 1, To: 1 + s.next()%3, Prize: "€10"}}
	}
	return set
}

// FuzzApply: a random sequence of events never panics, leaves every
// board-window's invariants intact, and a replica that starts from a
// snapshot taken halfway and applies the rest holds the same bytes as the
// one that applied everything (its lanes on goroutines, the other's
// groups one after another). go test runs the seeds only.
func FuzzApply(f *testing.F) {
	f.Add([]byte{})
	f.Add([]byte{0, 0, 0, 0, 1, 1, 0, 5, 1, 9, 3, 2, 2, 1, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})
	f.Add([]byte("\x00\x00\xc1\x02\x05\x01\x01\x01\x04\x09\x05\x07\x11\x00\x02\x01\x01\x00\x01\x07\x01\x0a\x30\x00\x07\x01\x00\x08\x02"))
	f.Add(bytes.Repeat([]byte{1, 0, 0, 2, 3, 0, 7, 1, 1, 0, 2, 0, 1, 9, 10, 11, 0, 3, 4}, 20))
	for seed := range uint64(3) { // random bytes: about 100 events of every kind
		f.Add(randomBytes(seed, 1500))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		evs := (&script{b: data}).events()
		again := (&script{b: data}).events() // the other replica's own copies
		whole := New()
		whole.SetLanes(goLanes)
		half := len(evs) / 2
		for i, ev := range evs[:half] {
			checkPlanned(t, ev, whole.Apply(uint64(i+1), ev))
		}
		snap, err := whole.Encode(nil)
		if err != nil {
			t.Fatal(err)
		}
		resumed, err := Decode(snap, nil)
		if err != nil {
			t.Fatalf("a snapshot of applied events does not decode: %v", err)
		}
		for i := half; i < len(evs); i++ {
			a, b := whole.Apply(uint64(i+1), evs[i]), resumed.Apply(uint64(i+1), again[i])
			checkPlanned(t, evs[i], a)
			if fmt.Sprint(a) != fmt.Sprint(b) {
				t.Fatalf("event %d: outcome %+v, from the snapshot %+v", i, a, b)
			}
		}
		if err := whole.Check(); err != nil {
			t.Fatal(err)
		}
		x, _ := whole.Encode(nil)
		y, _ := resumed.Encode(nil)
		if !bytes.Equal(x, y) {
			t.Fatalf("from the snapshot: %d bytes, applied whole: %d bytes; diff %v", len(y), len(x), Diff(whole, resumed))
		}
	})
}

// FuzzDecode: arbitrary bytes never make Decode panic, and fail with
// ErrCorrupt where they do not decode; bytes that decode encode to a
// snapshot that decodes and encodes to itself. The fuzz bytes are tried
// as they are and with the magic and a valid checksum around them, so
// that the fuzzer reaches the decoder behind the checksum. go test runs
// the seeds only: snapshots of small states, and damaged ones.
func FuzzDecode(f *testing.F) {
	for _, n := range []int{0, 3, 40} {
		data, err := buildState(n).Encode(nil)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[len(snapMagic) : len(data)-4]) // the body: checked with a valid checksum
		f.Add(data[:len(data)/2])
	}
	rich := New()
	for i, ev := range (&script{b: randomBytes(1, 1500)}).events() {
		rich.Apply(uint64(i+1), ev)
	}
	data, _ := rich.Encode(nil)
	f.Add(data[len(snapMagic) : len(data)-4])
	f.Add([]byte("RWSNAP3\n"))
	personal, _ := personalState(3).Encode(&fakeRing{}) // sealed records
	f.Add(personal[len(snapMagic) : len(personal)-4])
	f.Fuzz(func(t *testing.T, data []byte) {
		roundTrip(t, data)
		body := append([]byte(snapMagic), data...)
		roundTrip(t, binary.LittleEndian.AppendUint32(body, crc32.Checksum(body, castagnoli)))
	})
}

// randomBytes returns n bytes drawn from seed.
func randomBytes(seed uint64, n int) []byte {
	rng := rand.New(rand.NewPCG(seed, 7))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(rng.UintN(256))
	}
	return b
}

func roundTrip(t *testing.T, data []byte) {
	st, err := Decode(data, &fakeRing{})
	if err != nil {
		if !errors.Is(err, ErrCorrupt) {
			t.Fatalf("Decode: %v is not ErrCorrupt", err)
		}
		return
	}
	if err := st.Check(); err != nil {
		t.Fatalf("a decoded state breaks an invariant: %v", err)
	}
	enc, err := st.Encode(&fakeRing{})
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(enc, &fakeRing{})
	if err != nil {
		t.Fatalf("the encoding of a decoded state does not decode: %v", err)
	}
	if again, _ := back.Encode(&fakeRing{}); !bytes.Equal(again, enc) {
		t.Fatal("the encoding of a decoded state does not round-trip")
	}
}

// TestSnapshotRoundTrip: a snapshot Encode wrote decodes to a state that
// encodes to the very same bytes.
func TestSnapshotRoundTrip(t *testing.T) {
	data, _ := buildState(500).Encode(nil)
	st, err := Decode(data, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := st.Encode(nil); !bytes.Equal(again, data) {
		t.Fatal("a snapshot does not round-trip")
	}
}
