package api

import (
	"bytes"
	"errors"
	"io"
	"net/http"

	"github.com/rankwire/rankwire/internal/jsonbody"
)

// decodeBody reads the request body (bounded by Config.MaxBody) and
// decodes it into v, a pointer to the handler's body struct, strictly (see
// package jsonbody): one JSON object, no unknown or repeated field, every
// string valid UTF-8, numbers that fit. A refusal is bad_request naming the
// JSON path (`scores[7].score: want a number, got string`); a body over
// the limit is too_large. Cost: O(body) twice, the body held in memory once.
func decodeBody(r *http.Request, v any) error {
	data, err := readBody(r)
	return decodeRead(data, err, v)
}

// preallocMax is the most readBody sets aside before reading on the word
// of the request's Content-Length, which the client chooses: past it the
// buffer grows with what actually arrives.
const preallocMax = 64 << 10

// readBody reads the whole body as io.ReadAll does, into one buffer of
// the declared length where the request declares one (up to preallocMax):
// io.ReadAll starts at 512 bytes and grows, copying what it read at each
// step. BenchmarkReadBody (go test ./api -run '^$' -bench
// 'BenchmarkReadBody$' -count 5), on submission bodies read from memory:
// one allocation against io.ReadAll's 1 (68 B: 80 B held against 512), 10
// (100 items, 6.9 KB: 8 KiB against 16 KiB) and 15 (500 items, 34.5 KB:
// 40 KiB against 87 KiB), the same in every run. The time is too noisy on
// a loaded 2-core machine for one figure: medians of 5 in two sittings put
// readBody at 0.07× and 0.19× io.ReadAll's for one submission, 0.66× and
// 1.05× for 100 items, 0.57× and 0.43× for 500.
func readBody(r *http.Request) ([]byte, error) {
	n := r.ContentLength
	if n <= 0 || n > preallocMax {
		return io.ReadAll(r.Body)
	}
	buf := make([]byte, 0, n+1) // one byte more, so that the read meeting EOF has room
	for {
		m, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+m]
		switch {
		case err == io.EOF:
			return buf, nil
		case err != nil:
			return buf, err
		case len(buf) == cap(buf): // more than declared: grow as io.ReadAll would
			buf = append(buf, 0)[:len(buf)]
		}
	}
}

// decodeOptional is decodeBody for a body that may be absent or empty
// (nothing but white space): v is then left as it is.
func decodeOptional(r *http.Request, v any) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	data, err := readBody(r)
	if err == nil && len(bytes.TrimSpace(data)) == 0 {
		return nil
	}
	return decodeRead(data, err, v)
}

// decodeRead decodes data, read with err, as decodeBody says.
func decodeRead(data []byte, err error, v any) error {
	var tooBig *http.MaxBytesError
	switch {
	case errors.As(err, &tooBig):
		return err
	case err != nil:
		return badRequest("body: not received whole")
	}
	var je *jsonbody.Error
	if err := jsonbody.Decode(data, v); errors.As(err, &je) {
		return badRequest("%s", je.Error())
	} else if err != nil {
		return err
	}
	return nil
}
