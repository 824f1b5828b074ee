package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
)

// decodeBody decodes one JSON object from the request body into v. Unknown
// fields, trailing data and wrong types are bad requests naming the field; a
// body over the limit is too large.
func decodeBody(r *http.Request, v any) error {
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return bodyError(err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		if err != nil {
			return bodyError(err)
		}
		return badRequest("body: data after the JSON object")
	}
	return nil
}

// bodyError turns a decoding error into a protocol error.
func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	var typeErr *json.UnmarshalTypeError
	var syntaxErr *json.SyntaxError
	switch {
	case errors.As(err, &tooBig):
		return err
	case errors.Is(err, io.EOF):
		return badRequest("body: empty, want a JSON object")
	case errors.As(err, &typeErr):
		field := typeErr.Field
		if field == "" {
			field = "body"
		}
		return badRequest("%s: want %s, got %s", field, typeErr.Type, typeErr.Value)
	case errors.As(err, &syntaxErr):
		return badRequest("body: invalid JSON at byte %d: %v", syntaxErr.Offset, syntaxErr)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("body: truncated JSON")
	}
	return badRequest("body: %s", trimJSON(err.Error()))
}

func trimJSON(msg string) string { return strings.TrimPrefix(msg, "json: ") }
