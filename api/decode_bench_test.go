package api

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// submissionBody is a POST .../scores body of n submissions, each with an
// idempotency id, as the Go SDK sends them (docs/PROTOCOL.md,
// "Submissions"); n == 1 is the single-submission shape.
func submissionBody(n int) string {
	item := func(i int) string {
		return fmt.Sprintf(`{"member":"player-%06d","score":%d,"id":"3f2a9c1e-%012d"}`, i, 1000+i*7, i)
	}
	if n == 1 {
		return item(0)
	}
	items := make([]string, n)
	for i := range items {
		items[i] = item(i)
	}
	return `{"scores":[` + strings.Join(items, ",") + `]}`
}

// rewound is a request body that can be read again: Close does nothing.
type rewound struct{ strings.Reader }

func (*rewound) Close() error { return nil }

// BenchmarkReadBody: readBody (one buffer of the declared length) against
// io.ReadAll (from 512 bytes, growing) on submission bodies of 1, 100 and
// 500 items (68 B, 6.9 KB, 34.5 KB; all declare their length, all under
// preallocMax). The body is read from memory: what is measured is the
// buffer's allocations and copies, not the network's.
func BenchmarkReadBody(b *testing.B) {
	for _, n := range []int{1, 100, 500} {
		body := submissionBody(n)
		r := httptest.NewRequest(http.MethodPost, "/v1/boards/b/scores", nil)
		r.ContentLength = int64(len(body))
		rd := &rewound{}
		for _, peer := range []struct {
			name string
			read func(*http.Request) ([]byte, error)
		}{
			{"readBody", readBody},
			{"io.ReadAll", func(r *http.Request) ([]byte, error) { return io.ReadAll(r.Body) }},
		} {
			b.Run(fmt.Sprintf("items=%d/%s", n, peer.name), func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					rd.Reset(body)
					r.Body = rd
					if data, err := peer.read(r); err != nil || len(data) != len(body) {
						b.Fatalf("%d bytes, %v; want %d", len(data), err, len(body))
					}
				}
			})
		}
	}
}
