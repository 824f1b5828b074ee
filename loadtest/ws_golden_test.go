package loadtest

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/rankwire/rankwire/wire"
)

// TestDecodeGolden: the subscriber's scanner decodes the protocol's golden
// server messages (wire/testdata, generated from wire.Examples) to what
// encoding/json makes of them, and to the values they were made from: a
// field renamed in wire fails here, not in a load run.
func TestDecodeGolden(t *testing.T) {
	var m wsMessage
	checked := 0
	for _, ex := range wire.Examples() {
		var want wsMessageJSON
		switch v := ex.Value.(type) {
		case wire.Snapshot:
			want = wsMessageJSON{Type: v.Type, ID: v.ID, Seq: v.Seq, Rows: rowsJSON(v.Rows)}
		case wire.Diff:
			want = wsMessageJSON{Type: v.Type, ID: v.ID, Seq: v.Seq, Prev: &v.Prev, Rows: rowsJSON(v.Rows)}
		case wire.ErrorMessage:
			want = wsMessageJSON{Type: v.Type, ID: *v.ID, Code: string(v.Code)}
		case wire.BoardMessage:
			want = wsMessageJSON{Type: v.Type, ID: v.ID}
		default:
			continue // not a server message
		}
		checked++
		t.Run(ex.Name, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join("..", "wire", "testdata", ex.Name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			if got := checkDecode(t, data, &m); got != "decoded" {
				t.Fatalf("%s: %s", ex.Name, got)
			}
			if got := fromWSMessage(&m).String(); got != want.String() {
				t.Fatalf("decoded %s\nwant    %s", got, want.String())
			}
		})
	}
	if checked < 4 { // snapshot, diff, error, board
		t.Fatalf("only %d of wire.Examples are server messages this test knows: a type changed in wire (a pointer?) would skip them all", checked)
	}
}

// rowsJSON is rows as wsMessageJSON holds them: member and score.
func rowsJSON(rows []wire.Row) []struct {
	Member string  `json:"member"`
	Score  float64 `json:"score"`
} {
	out := make([]struct {
		Member string  `json:"member"`
		Score  float64 `json:"score"`
	}, len(rows))
	for i, r := range rows {
		out[i].Member, out[i].Score = r.Member, r.Score
	}
	return out
}
