package ledger

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"strings"
	"testing"
)

// disputeBoard returns a state with board "t" ending at end (unix ms),
// prizes for ranks 1..3 and a max_step rule of 1000, where a (500), b (400),
// c (300) and d (200) submitted before the end, and seq the next sequence.
func disputeBoard(t *testing.T, end int64) (*State, uint64) {
	t.Helper()
	st := New()
	evs := disputeEvents(end)
	for i, ev := range evs {
		if out := st.Apply(uint64(i+1), ev); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	return st, uint64(len(evs) + 1)
}

// disputeEvents are the events disputeBoard applies.
func disputeEvents(end int64) []*Event {
	step := 1000.0
	set := Settings{EndsAt: FormatTime(end), Rules: &Rules{MaxStep: &step},
		Prizes: []Prize{{From: 1, To: 1, Prize: "€100"}, {From: 2, To: 2, Prize: "€50"}, {From: 3, To: 3, Prize: "€25"}}}
	items := []Item{{Member: "a", Score: 500}, {Member: "b", Score: 400}, {Member: "c", Score: 300}, {Member: "d", Score: 200}}
	return []*Event{{Kind: EvSettings, At: end - 10_000, Board: "t", Settings: &set},
		{Kind: EvSubmit, At: end - 5000, Board: "t", Items: items}}
}

// prizes renders standings as "member:rank:prize[!]" (! where held).
func prizes(t *testing.T, st *State, now int64) string {
	t.Helper()
	s, err := st.Standings("t", now, 0, 10)
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, r := range s.Rows {
		b.WriteString(r.Member + ":" + string(rune('0'+r.Rank)) + ":" + r.Prize)
		if r.PrizeHeld {
			b.WriteString("!")
		}
		b.WriteString(" ")
	}
	return strings.TrimSpace(b.String())
}

// TestDisqualifyReinstateSettle: a disqualified member leaves the
// standings and the prizes pass down; reinstating restores them; settle
// waits for final standings, then refuses every amendment naming settled.
func TestDisqualifyReinstateSettle(t *testing.T) {
	end := int64(1_800_000_000_000)
	st, seq := disputeBoard(t, end)
	after := end + 1000
	dq := &Event{Kind: EvDisqualify, At: after, Board: "t", Member: "b", Reason: "bot play", Sub: "ops"}
	out := st.Apply(seq, dq)
	if out.Err != nil {
		t.Fatal(out.Err)
	}
	if len(out.Notes) != 1 || out.Notes[0].Type != "standings.amended" || out.Notes[0].Member != "b" ||
		out.Notes[0].Reason != "disqualify: bot play" || len(out.Notes[0].Rows) != 3 || out.Notes[0].Rows[1].Prize != "€50" {
		t.Fatalf("standings.amended: %+v", out.Notes)
	}
	if got, want := prizes(t, st, after), "a:1:€100 c:2:€50 d:3:€25"; got != want {
		t.Fatalf("after disqualify: %s, want %s", got, want)
	}
	if s, _ := st.Standings("t", after, 1, 1); s.Total != 3 || s.Revision != 1 || s.Rows[0].Member != "c" || s.Rows[0].Rank != 2 {
		t.Fatalf("page from offset 1: %+v", s)
	}
	if out := st.Apply(seq+1, dq); !errors.Is(out.Err, ErrConflict) {
		t.Fatalf("second disqualify: %v, want a conflict", out.Err)
	}
	re := &Event{Kind: EvReinstate, At: after, Board: "t", Member: "b", Reason: "appeal upheld", Sub: "ops"}
	if out := st.Apply(seq+2, re); out.Err != nil {
		t.Fatal(out.Err)
	}
	if got, want := prizes(t, st, after), "a:1:€100 b:2:€50 c:3:€25 d:4:"; got != want {
		t.Fatalf("after reinstate: %s, want %s", got, want)
	}
	settle := &Event{Kind: EvSettle, At: after, Board: "t", Reason: "paid", Sub: "ops"}
	if out := st.Apply(seq+3, settle); !errors.Is(out.Err, ErrConflict) || !strings.HasPrefix(msgOf(out.Err), "ends_at:") {
		t.Fatalf("settle before final: %v, want a conflict naming ends_at", out.Err)
	}
	settle.At = end + FinalAfter.Milliseconds()
	if out := st.Apply(seq+4, settle); out.Err != nil {
		t.Fatal(out.Err)
	}
	for _, ev := range []*Event{dq, re, settle} {
		if out := st.Apply(seq+5, ev); !errors.Is(out.Err, ErrConflict) || !strings.HasPrefix(msgOf(out.Err), "settled:") {
			t.Fatalf("%s after settle: %v, want a conflict naming settled", ev.Kind, out.Err)
		}
	}
	acts, more, _ := st.AdminActions("t", 0, 10)
	if more || len(acts) != 3 || acts[0].Action != ActionDisqualify || acts[0].Sub != "ops" || acts[0].Reason != "bot play" ||
		acts[2].Action != ActionSettle || acts[2].Revision != 2 {
		t.Fatalf("admin actions: %+v", acts)
	}
	if s, _ := st.Standings("t", settle.At, 0, 10); !s.Settled || !s.Final || s.Revision != 2 {
		t.Fatalf("settled standings: %+v", s)
	}
}

// TestHeldPrize: a member with a submission in quarantine keeps rank and
// prize, marked held; the members below do not move up into it.
func TestHeldPrize(t *testing.T) {
	end := int64(1_800_000_000_000)
	st, seq := disputeBoard(t, end)
	out := st.Apply(seq, &Event{Kind: EvSubmit, At: end - 1000, Board: "t", Items: []Item{{Member: "b", Score: 90_000}}})
	if out.Err != nil || out.Results[0].QID == 0 {
		t.Fatalf("not held: %+v", out)
	}
	if got, want := prizes(t, st, end+1), "a:1:€100 b:2:€50! c:3:€25 d:4:"; got != want {
		t.Fatalf("held: %s, want %s", got, want)
	}
}

// TestDisputeValidation: the reason and the member are named.
func TestDisputeValidation(t *testing.T) {
	st, seq := disputeBoard(t, 1_800_000_000_000)
	for ev, field := range map[*Event]string{
		{Kind: EvDisqualify, Board: "t", Member: "b"}:                                              "reason",
		{Kind: EvDisqualify, Board: "t", Member: "b", Reason: "a\nb"}:                              "reason",
		{Kind: EvDisqualify, Board: "t", Member: "zz", Reason: "x"}:                                "member",
		{Kind: EvReinstate, Board: "t", Member: "b", Reason: "x"}:                                  "member",
		{Kind: EvDisqualify, Board: "t", Member: "b", Reason: strings.Repeat("x", MaxReasonLen+1)}: "reason",
	} {
		if out := st.Apply(seq, ev); out.Err == nil || !strings.HasPrefix(msgOf(out.Err), field+":") {
			t.Errorf("%+v: %v, want an error naming %s", ev, out.Err, field)
		}
	}
}

// TestSnapshotDisputes: the disputes survive a snapshot byte for byte, and
// an RWSNAP3 snapshot (no disputes block) still reads.
func TestSnapshotDisputes(t *testing.T) {
	end := int64(1_800_000_000_000)
	st, seq := disputeBoard(t, end)
	st.Apply(seq, &Event{Kind: EvDisqualify, At: end + 1, Board: "t", Member: "c", Reason: "collusion", Sub: "ops"})
	back, data := reencoded(t, st)
	again, _ := back.Encode(nil)
	if !bytes.Equal(data, again) || prizes(t, back, end+1) != prizes(t, st, end+1) {
		t.Fatal("the disputes do not survive a snapshot")
	}
	plain, _ := disputeBoard(t, end)
	v6, _ := plain.Encode(nil)
	v4, _ := plain.encode(&snapWriter{buf: []byte(snapMagicV5), v5: true})
	// No profiles: the body ends with the empty disputes block (5 zero
	// bytes), the profile count and the final profiles' count (one zero
	// byte each).
	body := v4[:len(v4)-4]
	v3 := append([]byte(snapMagicV3), body[len(snapMagic):len(body)-7]...)
	v3 = append(v3, 0)
	v3 = binary.LittleEndian.AppendUint32(v3, crc32.Checksum(v3, castagnoli))
	old, err := Decode(v3, nil)
	if err != nil {
		t.Fatalf("RWSNAP3: %v", err)
	}
	if got, _ := old.Encode(nil); !bytes.Equal(got, v6) {
		t.Fatal("an RWSNAP3 snapshot does not read as the same state")
	}
}

// msgOf is the message of a ledger error, as the edge shows it.
func msgOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Msg
	}
	return ""
}

// TestAuditReplaysAmendments: the audit replay of the events, amendments
// included, equals a snapshot taken after them byte for byte, and reports
// a snapshot whose disqualification was undone.
func TestAuditReplaysAmendments(t *testing.T) {
	end := int64(1_800_000_000_000)
	evs := append(disputeEvents(end),
		&Event{Kind: EvDisqualify, At: end + 1, Board: "t", Member: "a", Reason: "bot", Sub: "ops"},
		&Event{Kind: EvDisqualify, At: end + 2, Board: "t", Member: "c", Reason: "collusion", Sub: "ops"},
		&Event{Kind: EvReinstate, At: end + 3, Board: "t", Member: "c", Reason: "appeal", Sub: "lead"},
		&Event{Kind: EvSettle, At: end + FinalAfter.Milliseconds(), Board: "t", Reason: "paid", Sub: "lead"})
	st := New()
	for i, ev := range evs {
		if out := st.Apply(uint64(i+1), ev); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	good, _ := st.Encode(nil)
	h, _ := st.ix.Resolve("a")
	st.boards["t"].disputes.revision = 1
	delete(st.boards["t"].disputes.disq, h)
	bad, _ := st.Encode(nil)

	a := NewAudit(nil)
	a.AddSnapshot("good", good)
	a.AddSnapshot("bad", bad)
	for i, ev := range evs {
		a.Apply(uint64(i+1), ev)
	}
	res := a.Result("t1", uint64(len(evs)))
	if len(res.Snapshots) != 2 || !res.Snapshots[0].Equal || res.Snapshots[1].Equal ||
		!strings.Contains(strings.Join(res.Snapshots[1].Diffs, "\n"), "revision 3 (1 disqualified) in the replay, 1 (0 disqualified)") {
		t.Fatalf("audit: %+v", res.Snapshots)
	}
}

// TestStandingRowsPaged: every page of the standings with members
// disqualified is the page of the full standings with them filtered out
// and the rest ranked 1..N.
func TestStandingRowsPaged(t *testing.T) {
	st := buildState(60)
	for i, m := range []string{"m0", "m7", "m8", "m31", "m59", "m44"} {
		if out := st.Apply(uint64(100+i), &Event{Kind: EvDisqualify, Board: "s", Member: m, Reason: "x"}); out.Err != nil {
			t.Fatal(out.Err)
		}
	}
	all, _ := st.Standings("s", 0, 0, 100)
	if all.Total != 54 || len(all.Rows) != 54 {
		t.Fatalf("total %d, %d rows", all.Total, len(all.Rows))
	}
	for i, r := range all.Rows {
		if r.Rank != i+1 || strings.Contains(" m0 m7 m8 m31 m59 m44 ", " "+r.Member+" ") {
			t.Fatalf("row %d: %+v", i, r)
		}
	}
	for offset := 0; offset <= 56; offset++ {
		for _, limit := range []int{1, 3, 10} {
			p, _ := st.Standings("s", 0, offset, limit)
			want := all.Rows[min(offset, 54):min(offset+limit, 54)]
			if len(p.Rows) != len(want) {
				t.Fatalf("offset %d limit %d: %d rows, want %d", offset, limit, len(p.Rows), len(want))
			}
			for i := range want {
				if p.Rows[i].Member != want[i].Member || p.Rows[i].Rank != want[i].Rank {
					t.Fatalf("offset %d limit %d row %d: %+v, want %+v", offset, limit, i, p.Rows[i], want[i])
				}
			}
		}
	}
}

// TestDisqualifiedMerge: a disqualified member linked into another on a
// live board takes the disqualification along.
func TestDisqualifiedMerge(t *testing.T) {
	st, seq := disputeBoard(t, 1_800_000_000_000)
	at := int64(1_799_999_999_000)
	if out := st.Apply(seq, &Event{Kind: EvDisqualify, At: at, Board: "t", Member: "a", Reason: "bot"}); out.Err != nil {
		t.Fatal(out.Err)
	}
	if out := st.Apply(seq+1, &Event{Kind: EvLink, At: at, Member: "d", Aliases: []string{"a"}}); out.Err != nil {
		t.Fatal(out.Err)
	}
	if got, want := prizes(t, st, at), "b:1:€100 c:2:€50"; got != want {
		t.Fatalf("after the merge: %s, want %s", got, want)
	}
}

// TestRecordKeepsAmendments: at the cap, a quarantine decision goes before
// any action that changed the standings; without decisions, the oldest.
func TestRecordKeepsAmendments(t *testing.T) {
	var d disputes
	d.record(AdminAction{Action: ActionDisqualify, Reason: "first"})
	for range MaxAdminActions - 1 {
		d.record(AdminAction{Action: ActionApprove})
	}
	d.record(AdminAction{Action: ActionReject})
	if len(d.actions) != MaxAdminActions || d.actions[0].Action != ActionDisqualify {
		t.Fatalf("%d actions, first %q: the disqualification was dropped before a decision", len(d.actions), d.actions[0].Action)
	}
	var e disputes
	for i := range MaxAdminActions + 1 {
		e.record(AdminAction{Action: ActionVoid, Reason: fmt.Sprint(i)})
	}
	if len(e.actions) != MaxAdminActions || e.actions[0].Reason != "1" {
		t.Fatalf("%d actions, first %q: want the oldest dropped", len(e.actions), e.actions[0].Reason)
	}
}
