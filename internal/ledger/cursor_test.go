package ledger

import (
	"errors"
	"testing"

	"github.com/rankwire/rankwire/board"
)

func TestCursorRoundTrip(t *testing.T) {
	for _, e := range []board.Entry{
		{},
		{Member: board.MaxMember, Score: -1.5e300, Subscore: 7, Seq: 1<<64 - 1},
		{Member: 42, Score: 0.1, Subscore: -0.25, Seq: 9},
	} {
		c := Cursor{e: e}
		b, _ := c.MarshalBinary()
		var got Cursor
		if err := got.UnmarshalBinary(b); err != nil || got != c || len(b) != CursorLen {
			t.Errorf("UnmarshalBinary(%x) = %+v, %v; want %+v", b, got, err, c)
		}
	}
}

// FuzzCursorBytes: any bytes either are refused as a bad request or read
// as a cursor that writes back to the same bytes.
func FuzzCursorBytes(f *testing.F) {
	b, _ := Cursor{e: board.Entry{Member: 3, Score: 10, Seq: 4}}.MarshalBinary()
	f.Add(b)
	f.Add([]byte{})
	f.Add([]byte("!!!"))
	f.Fuzz(func(t *testing.T, b []byte) {
		var c Cursor
		if err := c.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("UnmarshalBinary(%x): %v is not a bad request", b, err)
			}
			return
		}
		again, _ := c.MarshalBinary()
		if string(again) != string(b) {
			t.Fatalf("UnmarshalBinary(%x) = %+v: writes back as %x", b, c, again)
		}
	})
}
