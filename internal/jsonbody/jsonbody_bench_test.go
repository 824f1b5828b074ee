package jsonbody

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchItem has the shape of a submission; benchBatch that of a batch.
type benchItem struct {
	Member   *string  `json:"member"`
	Score    *float64 `json:"score"`
	Subscore float64  `json:"subscore"`
	ID       string   `json:"id"`
}

type benchBatch struct {
	Scores []benchItem `json:"scores"`
}

// batchBody is a batch of n submissions as clients send them.
func batchBody(n int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = fmt.Sprintf(`{"member":"player-%06d","score":%d.5,"subscore":%d,"id":"match-%09d"}`, i, 1000+i*7, i%3, i)
	}
	return []byte(`{"scores":[` + strings.Join(items, ",") + `]}`)
}

// BenchmarkDecode compares Decode (the strict walk, then encoding/json)
// with encoding/json alone, the peer, on batches of 1 and 1,000 items:
// the strict checks' price per request body.
func BenchmarkDecode(b *testing.B) {
	for _, n := range []int{1, 1000} {
		body := batchBody(n)
		b.Run(fmt.Sprintf("items=%d/impl=jsonbody", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v benchBatch
				if err := Decode(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("items=%d/impl=encoding-json", n), func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				var v benchBatch
				if err := json.Unmarshal(body, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
