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
	data, err := io.ReadAll(r.Body)
	return decodeRead(data, err, v)
}

// decodeOptional is decodeBody for a body that may be absent or empty
// (nothing but white space): v is then left as it is.
func decodeOptional(r *http.Request, v any) error {
	if r.Body == nil || r.Body == http.NoBody {
		return nil
	}
	data, err := io.ReadAll(r.Body)
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
