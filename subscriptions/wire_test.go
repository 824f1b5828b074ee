package subscriptions

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rankwire/rankwire/wire"
)

// TestEncodeMatchesWire: what the hot path's encoder (appendBody, shared
// by every watcher, and Message.AppendTo) writes for the golden snapshot
// and diff decodes strictly into wire's types as the values the golden
// files (wire/testdata) were made from, and into the same JSON values as
// those files: the same members, none more, none fewer. The bytes may
// differ in a number's spelling only: appendFloat writes -1e-07 where
// encoding/json writes -1e-7.
func TestEncodeMatchesWire(t *testing.T) {
	var snap wire.Snapshot
	var diff wire.Diff
	for _, ex := range wire.Examples() {
		switch v := ex.Value.(type) {
		case wire.Snapshot:
			snap = v
		case wire.Diff:
			diff = v
		}
	}
	msgs := []struct {
		name string
		typ  string
		id   string
		b    body
		want any
	}{
		{"snapshot", snap.Type, snap.ID, body{seq: snap.Seq, total: snap.Total, rows: fromWire(snap.Rows)}, snap},
		{"diff", diff.Type, diff.ID, body{diff: true, seq: diff.Seq, prev: diff.Prev, total: diff.Total,
			rows: fromWire(diff.Rows), gone: diff.Gone}, diff},
	}
	for _, m := range msgs {
		t.Run(m.name, func(t *testing.T) {
			idJSON, _ := json.Marshal(m.id)
			msg := Message{sub: &Sub{id: m.id, idJSON: idJSON}, sh: &shared{typ: m.typ, body: appendBody(nil, m.b)}}
			got := msg.AppendTo(nil)
			if len(got) != msg.Size() {
				t.Errorf("Size %d, AppendTo wrote %d bytes", msg.Size(), len(got))
			}
			file, err := os.ReadFile(filepath.Join("..", "wire", "testdata", m.name+".json"))
			if err != nil {
				t.Fatal(err)
			}
			var gotAny, wantAny any
			if err := json.Unmarshal(got, &gotAny); err != nil {
				t.Fatalf("%s: %v", got, err)
			}
			if err := json.Unmarshal(file, &wantAny); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(gotAny, wantAny) {
				t.Errorf("encoded %s\ngolden  %s", got, file)
			}
			decoded := reflect.New(reflect.TypeOf(m.want))
			dec := json.NewDecoder(bytes.NewReader(got))
			dec.DisallowUnknownFields()
			if err := dec.Decode(decoded.Interface()); err != nil {
				t.Fatalf("decode into wire.%T: %v", m.want, err)
			}
			if !reflect.DeepEqual(decoded.Elem().Interface(), m.want) {
				t.Fatalf("decoded %+v\nwant    %+v", decoded.Elem().Interface(), m.want)
			}
		})
	}
}

// fromWire is rows as a view holds them.
func fromWire(rows []wire.Row) []Row {
	out := make([]Row, len(rows))
	for i, r := range rows {
		out[i] = Row{Rank: r.Rank, Member: r.Member, Score: r.Score, Subscore: r.Subscore,
			Profile: Profile{Name: r.Name, Avatar: r.Avatar, Country: r.Country}, Review: r.Review}
	}
	return out
}
