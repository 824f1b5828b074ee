package ledger

import "testing"

// TestOldEventsReplayAsBefore: events without the new fields decode with
// merges allowed and no board limit.
func TestOldEventsReplayAsBefore(t *testing.T) {
	ev, err := DecodeEvent([]byte(`{"k":"link","t":1,"m":"ann","a":["bob"]}`))
	if err != nil || ev.NoMerge {
		t.Fatalf("old link event: %+v, %v", ev, err)
	}
	ev, err = DecodeEvent([]byte(`{"k":"settings","t":1,"b":"x","c":{}}`))
	if err != nil || ev.MaxBoards != 0 {
		t.Fatalf("old settings event: %+v, %v", ev, err)
	}
	data, _ := EncodeEvent(&Event{Kind: EvLink, At: 1, Member: "ann", Aliases: []string{"bob"}})
	if string(data) != `{"k":"link","t":1,"m":"ann","a":["bob"]}` {
		t.Fatalf("a link that may merge encodes as %s: old gateways would read it differently", data)
	}
	st := New()
	st.Apply(1, &Event{Kind: EvSettings, Board: "b", Settings: &Settings{}})
	st.Apply(2, &Event{Kind: EvSubmit, Board: "b", Items: []Item{{Member: "ann", Score: 1}, {Member: "bob", Score: 2}}})
	if out := st.Apply(3, ev0(t, `{"k":"link","t":1,"m":"ann","a":["bob"]}`)); out.Err != nil {
		t.Fatalf("old link: %v", out.Err)
	}
	if n := st.boards["b"].windows[windowKey{kindAll, 0}].b.Len(); n != 1 {
		t.Fatalf("old link did not merge: %d entries", n)
	}
}

func ev0(t *testing.T, s string) *Event {
	t.Helper()
	ev, err := DecodeEvent([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}
