package api

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestReadBody reads bodies whose declared length is right, short, long,
// absent or past the preallocation, and one over the body limit: each
// read whole, as io.ReadAll would, and the limit's error kept.
func TestReadBody(t *testing.T) {
	big := strings.Repeat("x", preallocMax+10)
	for _, c := range []struct {
		name     string
		body     string
		declared int64
	}{
		{"exact", `{"member":"a"}`, 14},
		{"declared short", `{"member":"a"}`, 3},
		{"declared long", `{"member":"a"}`, 100},
		{"undeclared", `{"member":"a"}`, -1},
		{"past the preallocation", big, int64(len(big))},
		{"empty", "", 0},
	} {
		r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(c.body))
		r.ContentLength = c.declared
		got, err := readBody(r)
		if err != nil || string(got) != c.body {
			t.Errorf("%s: %d bytes, %v; want %d", c.name, len(got), err, len(c.body))
		}
	}
	r := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(`{"member":"a"}`))
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 5)
	var tooBig *http.MaxBytesError
	if _, err := readBody(r); !errors.As(err, &tooBig) {
		t.Errorf("over the limit: %v, want *http.MaxBytesError", err)
	}
}
