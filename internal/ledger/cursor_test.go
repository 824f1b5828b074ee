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
		got, err := ParseCursor(c.String())
		if err != nil || got != c {
			t.Errorf("ParseCursor(%q) = %+v, %v; want %+v", c.String(), got, err, c)
		}
	}
}

// FuzzParseCursor: any text either is refused as a bad request or parses
// to a cursor that writes back to the same text.
func FuzzParseCursor(f *testing.F) {
	f.Add(Cursor{e: board.Entry{Member: 3, Score: 10, Seq: 4}}.String())
	f.Add("")
	f.Add("AUAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAgAAAAM")
	f.Add("!!!")
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCursor(s)
		if err != nil {
			if !errors.Is(err, ErrBadRequest) {
				t.Fatalf("ParseCursor(%q): %v is not a bad request", s, err)
			}
			return
		}
		if again, err := ParseCursor(c.String()); err != nil || again != c {
			t.Fatalf("ParseCursor(%q) = %+v: its text %q reads back as %+v, %v", s, c, c.String(), again, err)
		}
	})
}
