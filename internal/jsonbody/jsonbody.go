// Package jsonbody decodes a JSON request body strictly, into the Go value
// a handler declares, and says what is wrong in a client's terms: the JSON
// path of the field with array indexes (`scores[7].score: want a number,
// got string`), never a Go type, a struct name or encoding/json's text.
//
// Strict means: exactly one JSON value, which must be an object; field names
// matched exactly (not case-insensitively), each at most once; no field the
// target type does not declare; every string valid UTF-8, also after its
// escapes are applied (a lone surrogate escape such as \ud800 is refused,
// where encoding/json would quietly put U+FFFD in its place); numbers that
// fit their field.
//
// The package imports only the standard library.
package jsonbody

import (
	"encoding/json"
	"reflect"
	"strconv"
)

// Error is a body that Decode refuses. Path is the JSON path of the value
// concerned, such as `scores[7].score`, or "body" for the body as a whole;
// Msg says what is wrong with it; Offset is the byte of the body where the
// problem starts.
type Error struct {
	Path   string
	Msg    string
	Offset int
}

// Error returns "path: msg", the text a client is shown.
func (e *Error) Error() string { return e.Path + ": " + e.Msg }

// Decode checks that data is one JSON object that v, a non-nil pointer to a
// struct, can hold under the strict rules of the package doc, and then
// decodes it into v with encoding/json. A refusal is an *Error. Cost:
// O(len(data)) twice (the check, then encoding/json); the check allocates
// little beside encoding/json: its path stack, number literals as they are
// parsed, escaped field names and the message of a refusal. Safe for
// concurrent use; v is not touched when data is refused. It panics if v is
// not a non-nil pointer (programmer misuse), never on data. Where v is a
// Filler, the second pass is its FillJSON, unless that declines.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		panic("jsonbody: Decode needs a non-nil pointer")
	}
	c := checker{data: data}
	if err := c.document(rv.Type().Elem()); err != nil {
		return err
	}
	if f, ok := v.(Filler); ok && f.FillJSON(data) {
		return nil
	}
	if err := json.Unmarshal(data, v); err != nil {
		// The check accepts only what encoding/json accepts (the fuzz test
		// holds it to that); should the two ever disagree, the client still
		// gets a message without Go text.
		return &Error{Path: "body", Msg: "not accepted"}
	}
	return nil
}

// Filler is a body type that decodes itself from a body Decode has
// checked against it, faster than encoding/json's reflection: a hot
// request's body. FillJSON may rely on every rule of the package doc
// holding for data and must leave the value exactly as json.Unmarshal
// would; it returns false, having touched nothing, to leave data to
// encoding/json (a body with escapes, say). Its tests hold it to
// encoding/json with a fuzz test.
type Filler interface {
	FillJSON(data []byte) bool
}

// document checks the whole body: one value of type t, an object, and
// nothing after it but white space.
func (c *checker) document(t reflect.Type) error {
	c.space()
	if c.pos == len(c.data) {
		return &Error{Path: "body", Msg: "empty, want a JSON object"}
	}
	if got, ok := c.kindAt(); !ok {
		return c.syntax("want a JSON object")
	} else if got != "object" {
		return &Error{Path: "body", Msg: "want an object, got " + got, Offset: c.pos}
	}
	if err := c.value(t); err != nil {
		return err
	}
	c.space()
	if c.pos != len(c.data) {
		return &Error{Path: "body", Msg: "data after the JSON value at byte " + strconv.Itoa(c.pos), Offset: c.pos}
	}
	return nil
}
