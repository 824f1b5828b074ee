package client

import (
	"errors"
	"testing"

	"github.com/rankwire/rankwire/wire"
)

// TestGoldenHeartbeatIgnored: the golden heartbeat, a message type Watch
// has no use for yet, decodes as Watch decodes every message and leaves
// the view as it was, without an error (clients ignore types they do not
// act on).
func TestGoldenHeartbeatIgnored(t *testing.T) {
	st, err := apply(nil, serverMessage(t, "snapshot"), false)
	if err != nil || st == nil {
		t.Fatalf("snapshot: %v %v", st, err)
	}
	m := serverMessage(t, "heartbeat")
	if m.Type != "heartbeat" || m.Seq == 0 || !m.Writable || m.At == "" {
		t.Fatalf("heartbeat decoded as %+v", m)
	}
	if next, err := apply(st, m, false); err != nil || next != st {
		t.Fatalf("heartbeat: state %v (was %v), %v; want it unchanged", next, st, err)
	}
}

// TestResumeAtTheSameSeqYieldsNothing: a Watch that resumes from the seq
// it holds gets that seq back (an empty diff, or a snapshot from a gateway
// that does not keep the changes): the state is not yielded again, so a
// caller never sees a seq twice (TestWatchFailover once saw [1 1 2 3]).
func TestResumeAtTheSameSeqYieldsNothing(t *testing.T) {
	st, err := apply(nil, serverMessage(t, "snapshot"), false)
	if err != nil {
		t.Fatal(err)
	}
	again := serverMessage(t, "snapshot")
	if next, err := apply(st, again, false); err != nil || next != st {
		t.Fatalf("a snapshot at the seq held: %v, %v; want the state unchanged", next, err)
	}
	prev := st.seq
	empty := again
	empty.Type, empty.Prev, empty.Rows = "diff", &prev, nil
	if next, err := apply(st, empty, false); err != nil || next != st {
		t.Fatalf("an empty diff from the seq held: %v, %v; want the state unchanged", next, err)
	}
}

// TestJudgeHeartbeats: a stale gateway is left at once; one that cannot
// take writes is left until every gateway of the list has said so in a
// row (a cluster without a majority: Watch stays), and a writable
// heartbeat starts the count again; with one gateway Watch never moves.
func TestJudgeHeartbeats(t *testing.T) {
	beat := func(writable, stale bool) wire.ServerMessage {
		return wire.ServerMessage{Type: wire.TypeHeartbeat, Writable: writable, Stale: stale}
	}
	w := &watch{c: &Client{urls: []string{"http://a", "http://b", "http://c"}}}
	if err := w.judge(beat(true, false)); err != nil {
		t.Fatalf("a fresh, writable gateway: %v", err)
	}
	if err := w.judge(beat(true, true)); !errors.Is(err, errStale) {
		t.Fatalf("a stale gateway: %v, want errStale", err)
	}
	for i := range 3 {
		err := w.judge(beat(false, false))
		if !errors.Is(err, errUnwritable) {
			t.Fatalf("unwritable gateway %d of 3 in a row: %v, want errUnwritable", i+1, err)
		}
		w.countUnwritable(err)
	}
	if err := w.judge(beat(false, false)); err != nil {
		t.Fatalf("every gateway said unwritable: %v, want to stay", err)
	}
	w.countUnwritable(errStale) // a stale gateway's end keeps the count
	if err := w.judge(beat(true, false)); err != nil || w.unwritable != 0 {
		t.Fatalf("a writable heartbeat: %v, count %d; want the count reset", err, w.unwritable)
	}
	if err := w.judge(beat(false, false)); !errors.Is(err, errUnwritable) {
		t.Fatalf("unwritable after a writable heartbeat: %v, want errUnwritable", err)
	}
	one := &watch{c: &Client{urls: []string{"http://a"}}}
	if err := one.judge(beat(false, true)); err != nil {
		t.Fatalf("one gateway: %v, want to stay", err)
	}
}

// TestUnwritableCountOutlivesOtherEnds: the count of gateways that said
// writable false is reset by a heartbeat saying true only, as in the
// browser's RankwireClient. A gateway that is down between two that say
// unwritable (a cluster without a majority, one node gone) leaves it as
// it is, so Watch settles after one round instead of going round for
// ever; a stale gateway's end and a read timeout keep it too.
func TestUnwritableCountOutlivesOtherEnds(t *testing.T) {
	unwritable := wire.ServerMessage{Type: wire.TypeHeartbeat, Writable: false}
	w := &watch{c: &Client{urls: []string{"http://a", "http://b", "http://c"}}}
	down := errors.New("dial tcp 127.0.0.1:1: connect: connection refused")
	// a says unwritable, b is down, c says unwritable, a again, b down.
	for i, end := range []error{nil, down, nil, nil, down, errStale, errSilent} {
		if end == nil {
			end = w.judge(unwritable)
			if !errors.Is(end, errUnwritable) {
				t.Fatalf("step %d: unwritable gateway with a count of %d: %v, want to move", i, w.unwritable, end)
			}
		}
		w.countUnwritable(end)
	}
	if w.unwritable != 3 {
		t.Fatalf("count %d after three unwritable gateways and other ends between, want 3", w.unwritable)
	}
	if err := w.judge(unwritable); err != nil {
		t.Fatalf("every gateway said unwritable, one was down: %v, want to stay", err)
	}
	if err := w.judge(wire.ServerMessage{Type: wire.TypeHeartbeat, Writable: true}); err != nil || w.unwritable != 0 {
		t.Fatalf("a writable heartbeat: %v, count %d; want the count reset", err, w.unwritable)
	}
}

// TestHeldBackUnlessFollowing: a state at or below the seq yielded is held
// back (and the next yielded says Snapshot, Prev 0), except for a
// following view, whose seq starts over at a turnover.
func TestHeldBackUnlessFollowing(t *testing.T) {
	for _, follow := range []bool{false, true} {
		w := &watch{follow: follow}
		if w.behind(&state{seq: 0}) {
			t.Fatalf("follow %v: the first state held back", follow)
		}
		prev := uint64(449)
		w.yielded(&state{seq: 450}, wire.ServerMessage{Type: wire.TypeDiff, Prev: &prev}, false)
		if got := w.behind(&state{seq: 448}); got == follow {
			t.Fatalf("follow %v: a state below the seq yielded held back %v", follow, got)
		}
		if !follow && !w.behind(&state{seq: 450}) {
			t.Fatal("the seq yielded again not held back")
		}
		prev = 450
		vs := w.yielded(&state{seq: 451}, wire.ServerMessage{Type: wire.TypeDiff, Prev: &prev}, false)
		if vs.Snapshot != !follow || vs.Prev != map[bool]uint64{false: 0, true: 450}[follow] {
			t.Fatalf("follow %v: the state after: %+v", follow, vs)
		}
	}
}
