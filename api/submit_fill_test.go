package api

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/internal/jsonbody"
)

// plainSubmit is submitJSON without FillJSON: jsonbody decodes it with
// encoding/json, the reference.
type plainSubmit submitJSON

// submitBodies are bodies FillJSON must read as encoding/json does, and
// the fuzz test's seeds.
var submitBodies = []string{
	`{"member":"a","score":1}`,
	`{"member":"a","score":-1.5e3,"subscore":2,"id":"x"}`,
	` { "member" : null , "score" : null , "subscore" : null , "id" : null } `,
	`{"scores":[]}`,
	`{"scores":null}`,
	`{"scores":[null,{"member":"b","score":0}]}`,
	"{\"scores\":[{\"member\":\"é{}\",\"score\":1E2},\n\t{\"id\":\"i\",\"subscore\":-0}]}",
	`{"member":"a","scores":[{}]}`,
	`{"member":"a\"b","score":1}`,
	`{"member":"\u00e9","score":1}`,
	`{}`,
}

// TestFillJSONAsEncodingJSON decodes each body both ways and wants the
// same value, and FillJSON itself used where the body has no escape.
func TestFillJSONAsEncodingJSON(t *testing.T) {
	for _, body := range submitBodies {
		got, want := decodeBoth(t, []byte(body))
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: FillJSON %+v, encoding/json %+v", body, got, want)
		}
		var direct submitJSON
		if used := direct.FillJSON([]byte(body)); used == strings.Contains(body, `\`) {
			t.Errorf("%s: FillJSON answered %v", body, used)
		}
	}
	prefilled := submitJSON{scoreJSON: scoreJSON{ID: "kept"}}
	if prefilled.FillJSON([]byte(`{"member":"a"}`)) || prefilled.ID != "kept" || prefilled.Member != nil {
		t.Errorf("FillJSON filled a body that was not zero: %+v", prefilled)
	}
}

// decodeBoth decodes data through jsonbody into submitJSON (FillJSON) and
// into plainSubmit (encoding/json); both must accept it.
func decodeBoth(t *testing.T, data []byte) (got, want submitJSON) {
	t.Helper()
	if err := jsonbody.Decode(data, &got); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	var plain plainSubmit
	if err := jsonbody.Decode(data, &plain); err != nil {
		t.Fatalf("%s: plain: %v", data, err)
	}
	return got, submitJSON(plain)
}

// FuzzFillJSON holds FillJSON to encoding/json: every body jsonbody
// accepts decodes to the same value both ways, and one refused is refused
// both ways alike.
func FuzzFillJSON(f *testing.F) {
	for _, b := range submitBodies {
		f.Add([]byte(b))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		var got submitJSON
		err := jsonbody.Decode(data, &got)
		var plain plainSubmit
		perr := jsonbody.Decode(data, &plain)
		if (err == nil) != (perr == nil) || err != nil && err.Error() != perr.Error() {
			t.Fatalf("%q: FillJSON's decode %v, encoding/json's %v", data, err, perr)
		}
		if err == nil && !reflect.DeepEqual(got, submitJSON(plain)) {
			t.Fatalf("%q: FillJSON %+v, encoding/json %+v", data, got, plain)
		}
	})
}

// batchOf is a batch of n submissions as the load test sends them.
func batchOf(n int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"member":"m%d","score":%d.%03d,"id":"w1-%d"}`, i*7919%100000, 1_000_000-i, i, i)
	}
	return []byte(`{"scores":[` + strings.Join(items, ",") + `]}`)
}

// BenchmarkSubmitDecode is a batch's strict decode with FillJSON as the
// second pass against encoding/json's.
func BenchmarkSubmitDecode(b *testing.B) {
	for _, n := range []int{1, 10, 100} {
		body := batchOf(n)
		b.Run(fmt.Sprintf("items=%d/second=fill", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v submitJSON
				if err := jsonbody.Decode(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("items=%d/second=encoding-json", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v plainSubmit
				if err := jsonbody.Decode(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
