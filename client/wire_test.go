package client

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/wire"
)

// golden returns wire/testdata/name.json, the protocol's golden message
// of that kind (generated from wire.Examples).
func golden(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "wire", "testdata", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenAnswers: every golden HTTP answer decodes through the SDK's
// own path (decode, as every call does) into the value it was made from,
// and the golden error answer becomes the *Error its body says.
func TestGoldenAnswers(t *testing.T) {
	for _, ex := range wire.Examples() {
		if !strings.HasPrefix(ex.Name, "http_") {
			continue
		}
		t.Run(ex.Name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			status := 200
			if ex.Name == "http_error" {
				status = 400
			}
			rec.WriteHeader(status)
			rec.Body.Write(golden(t, ex.Name))
			out := reflect.New(reflect.TypeOf(ex.Value))
			err := decode(rec.Result(), out.Interface())
			if ex.Name == "http_error" {
				e := ex.Value.(wire.ErrorBody).Error
				if !IsCode(err, string(e.Code)) || err.(*Error).Message != e.Message || err.(*Error).Status != 400 {
					t.Fatalf("decode: %v, want %+v", err, e)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := out.Elem().Interface(); !reflect.DeepEqual(got, ex.Value) {
				t.Fatalf("decoded %+v\nwant    %+v", got, ex.Value)
			}
		})
	}
}

// serverMessage decodes a golden server message as Watch does.
func serverMessage(t *testing.T, name string) wire.ServerMessage {
	t.Helper()
	var m wire.ServerMessage
	if err := json.Unmarshal(golden(t, name), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestGoldenLiveView applies the golden board, snapshot and diff as Watch
// does and checks the view they make; the golden error ends the view with
// its code, and the golden close is final.
func TestGoldenLiveView(t *testing.T) {
	st, err := apply(nil, serverMessage(t, "board"), false)
	if err != nil || st != nil {
		t.Fatalf("board: %v %v, want no state", st, err)
	}
	if st, err = apply(nil, serverMessage(t, "snapshot"), false); err != nil {
		t.Fatal(err)
	}
	var snap wire.Snapshot
	exampleOf(t, "snapshot", &snap)
	if got := st.snapshot(); got.Seq != snap.Seq || got.Total != snap.Total || !reflect.DeepEqual(got.Rows, snap.Rows) {
		t.Fatalf("after the snapshot %+v, want %+v", got, snap)
	}
	if st, err = apply(st, serverMessage(t, "diff"), false); err != nil {
		t.Fatal(err)
	}
	var diff wire.Diff
	exampleOf(t, "diff", &diff)
	if got := st.snapshot(); got.Seq != diff.Seq || got.Total != diff.Total || !reflect.DeepEqual(got.Rows, diff.Rows) {
		t.Fatalf("after the diff %+v, want the diff's rows %+v (it replaces every row of the snapshot)", got, diff.Rows)
	}
	var e wire.ErrorMessage
	exampleOf(t, "error", &e)
	if _, err := apply(st, serverMessage(t, "error"), false); !IsCode(err, string(e.Code)) || !isFatal(err) {
		t.Fatalf("error: %v, want a final %s", err, e.Code)
	}
	var c wire.Close
	exampleOf(t, "close", &c)
	if !isFatal(&closeError{code: 4003}) || c.Code != wire.CloseForbidden {
		t.Fatalf("close %d is not final", c.Code)
	}
}

// exampleOf sets *v to wire's example named name.
func exampleOf(t *testing.T, name string, v any) {
	t.Helper()
	for _, ex := range wire.Examples() {
		if ex.Name == name {
			reflect.ValueOf(v).Elem().Set(reflect.ValueOf(ex.Value))
			return
		}
	}
	t.Fatalf("no example %s", name)
}

// TestGoldenSubscribe: the SDK's subscribe messages are the golden ones.
func TestGoldenSubscribe(t *testing.T) {
	for _, tt := range []struct {
		name string
		msg  wire.Subscribe
	}{
		{"subscribe_around", followMsg("s2", "weekly", "day", Around("p42", 0))},
		{"subscribe_rank", subscribeMsg("s3", "weekly", "", AtRank(100), 0)},
		{"subscribe_members", subscribeMsg("s4", "weekly", "", Members("p1", "p2", "p3"), 0)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := json.Marshal(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			if err := json.Compact(&want, golden(t, tt.name)); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want.Bytes()) {
				t.Fatalf("sent %s\nwant %s", got, want.Bytes())
			}
		})
	}
	top := subscribeMsg("s1", "weekly", "week", Top(10), 1234)
	if top.View.Limit == nil || *top.View.Limit != 10 || *top.Since != 1234 || top.Window != "week" {
		t.Fatalf("top: %+v", top)
	}
}

// TestApplyFollow: a following view applies a snapshot that carries the
// seq it holds (the new window's, at a turnover), where a resumed view
// skips it as the answer to its since.
func TestApplyFollow(t *testing.T) {
	held := &state{seq: 5, rows: map[int]Row{1: {Rank: 1, Member: "old"}}}
	snap := wire.ServerMessage{Type: wire.TypeSnapshot, Seq: 5, Rows: []Row{{Rank: 1, Member: "new"}}}
	if next, _ := apply(held, snap, false); next != held {
		t.Error("a resumed view applied the snapshot answering its since")
	}
	next, err := apply(held, snap, true)
	if err != nil || next == held || next.rows[1].Member != "new" {
		t.Errorf("a following view kept %+v (%v)", next, err)
	}
}
