package api

import (
	"errors"
	"io"
	"net/http"

	"github.com/rankwire/rankwire/internal/jsonbody"
)

// decodeBody decodes one JSON object from the request body into v, strictly
// (see internal/jsonbody): a refusal is a bad request whose message starts
// with the JSON path at fault (scores[7].score) or "body"; invalid UTF-8 in
// any string is refused, never replaced; a body over the limit is too large.
// Cost: O(body) time and memory, the body being bounded by Config.MaxBody.
func decodeBody(r *http.Request, v any) error {
	data, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			return err
		}
		return badRequest("body: could not be read")
	}
	if err := jsonbody.Decode(data, v); err != nil {
		var e *jsonbody.Error
		if errors.As(err, &e) {
			return badRequest("%s", e.Error())
		}
		return err // a target that is not a pointer: a bug, answered internal
	}
	return nil
}
