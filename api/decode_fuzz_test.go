package api

import (
	"bytes"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"regexp"
	"testing"
)

// goTypeName matches text that would name a Go type, package or internal.
var goTypeName = regexp.MustCompile(`api\.|\bjson:|main\.|\*|jsonbody|hub:|RW_`)

// fieldStart: a refusal's message starts with a JSON path or "body".
var fieldStart = regexp.MustCompile(`^(body|[a-z_]+(\[\d+\])*(\.[a-z_]+|\[\d+\]|\["…"\])*|\["…"\](\.[a-z_]+|\[\d+\]|\["…"\])*|[A-Za-z_][A-Za-z0-9_-]*): `)

// fuzzLimit is the body limit of the fuzzed decoders: small, so the fuzzer
// reaches it.
const fuzzLimit = 512

// checkRefusal fails the test unless err is a bad_request or too_large whose
// message starts with a field path or body and names no Go type.
func checkRefusal(t *testing.T, data []byte, err error) {
	t.Helper()
	if err == nil {
		return
	}
	var logged bytes.Buffer
	e := toError(err, slog.New(slog.NewTextHandler(&logged, nil)))
	if e.Code != "bad_request" && e.Code != "too_large" {
		t.Fatalf("%q: %s %q, want bad_request or too_large", data, e.Code, e.Message)
	}
	if !fieldStart.MatchString(e.Message) {
		t.Fatalf("%q: %q does not start with a field path or body", data, e.Message)
	}
	if goTypeName.MatchString(e.Message) {
		t.Fatalf("%q: %q names a Go type or internal name", data, e.Message)
	}
}

// fuzzRequest is a request with data as its body, bounded like the server's.
func fuzzRequest(data []byte) *http.Request {
	r := httptest.NewRequest("POST", "/", bytes.NewReader(data))
	r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, fuzzLimit)
	return r
}

// seeds adds the seeds every body decoder starts from.
func seeds(f *testing.F, extra ...string) {
	for _, s := range append(extra, "", "{}", "[]", "null", `{"a":1}`, "{\"x\":\"\xff\"}", `{"x":"\udc00"}`, `{`, `{"x":1} 2`) {
		f.Add([]byte(s))
	}
}

// FuzzDecodeSubmit: the submit body (single or batch) never panics; every
// refusal is a bad_request or too_large naming a field.
func FuzzDecodeSubmit(f *testing.F) {
	seeds(f, `{"member":"a","score":1}`, `{"member":"a","score":1,"subscore":2,"id":"k"}`,
		`{"scores":[{"member":"a","score":1},{"member":"b","score":"2"}]}`, `{"scores":[{"member":"a","score":1,"x":1}]}`,
		`{"member":"a","score":1,"scores":[]}`, `{"scores":[]}`, `{"member":"a","score":1e999}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		items, err := decodeSubmit(fuzzRequest(data))
		checkRefusal(t, data, err)
		if err == nil && len(items) == 0 {
			t.Fatalf("%q: accepted with no items", data)
		}
	})
}

// FuzzDecodeSettings: the board settings body.
func FuzzDecodeSettings(f *testing.F) {
	seeds(f, `{"order":"asc","subscore_order":"desc","policy":"best","tiebreak":"earliest","windows":["all","day"],"retention":3}`,
		`{"windows":"all"}`, `{"retention":1.5}`, `{"retention":1e30}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fuzzRequest(data)
		r.ContentLength = int64(len(data))
		_, err := decodeSettings(r)
		checkRefusal(t, data, err)
	})
}

// FuzzDecodeLink: the identities (link) body.
func FuzzDecodeLink(f *testing.F) {
	seeds(f, `{"member":"m","aliases":["a","b"]}`, `{"member":"m","aliases":[1]}`, `{"member":{},"aliases":null}`)
	f.Fuzz(func(t *testing.T, data []byte) {
		_, err := decodeLink(fuzzRequest(data))
		checkRefusal(t, data, err)
	})
}

// TestDecodeBodyReadError: a body that fails mid-read is a bad request
// naming the body, not an internal error.
func TestDecodeBodyReadError(t *testing.T) {
	r := httptest.NewRequest("POST", "/", io.MultiReader(bytes.NewReader([]byte(`{"member":`)), errReader{}))
	var v identityJSON
	err := decodeBody(r, &v)
	var e *Error
	if !errors.As(err, &e) || e.Code != "bad_request" || e.Message != "body: could not be read" {
		t.Fatalf("decodeBody = %v", err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }
