package api

import (
	"bytes"
	"strconv"

	"github.com/rankwire/rankwire/hub"
)

// FillJSON decodes a submission body that jsonbody has checked against
// submitJSON (jsonbody.Filler): the hot path of every submission, without
// encoding/json's reflection, its allocation per field and its second scan
// state machine. The check has established one object with no field but
// these, none twice, each of its type or null, valid UTF-8 and numbers
// that fit, so this walk only reads values; it leaves b as json.Unmarshal
// would into a zero b (null leaves a field zero, an empty "scores" is an
// empty slice, not nil). A body with a backslash anywhere (an escape), or
// a b not zero, is left to encoding/json: false, b untouched. Cost:
// O(len(data)), one allocation per string and per pointer field, one for
// the batch.
func (b *submitJSON) FillJSON(data []byte) bool {
	if b.Member != nil || b.Score != nil || b.Subscore != 0 || b.ID != "" || b.Scores != nil ||
		bytes.IndexByte(data, '\\') >= 0 {
		return false
	}
	f := filler{data: data}
	var out submitJSON
	ok := f.object(func(key []byte) bool {
		if string(key) == "scores" {
			return f.scores(&out.Scores)
		}
		return f.scoreField(&out.scoreJSON, key)
	})
	if ok {
		*b = out
	}
	return ok
}

// filler walks a checked body without escapes. Each method returns false
// on anything it does not expect, which a checked body never holds: the
// caller then leaves the body to encoding/json.
type filler struct {
	data []byte
	pos  int
}

// scores reads the "scores" array (or null) into dst.
func (f *filler) scores(dst *[]scoreJSON) bool {
	if f.null() {
		*dst = nil
		return true
	}
	if !f.eat('[') {
		return false
	}
	// Room for every object left in the body, up to the most a batch may
	// hold (a longer one is refused after the decode, by items).
	out := make([]scoreJSON, 0, min(bytes.Count(f.data[f.pos:], []byte{'{'}), hub.MaxBatch))
	if f.eat(']') {
		*dst = out
		return true
	}
	for {
		var sc scoreJSON
		if !f.null() && !f.object(func(key []byte) bool { return f.scoreField(&sc, key) }) {
			return false
		}
		out = append(out, sc)
		if f.eat(']') {
			*dst = out
			return true
		}
		if !f.eat(',') {
			return false
		}
	}
}

// scoreField reads the value of one of scoreJSON's fields, named key.
func (f *filler) scoreField(sc *scoreJSON, key []byte) bool {
	if f.null() {
		switch string(key) {
		case "member":
			sc.Member = nil
		case "score":
			sc.Score = nil
		}
		return true
	}
	switch string(key) {
	case "member":
		s, ok := f.str()
		sc.Member = &s
		return ok
	case "id":
		s, ok := f.str()
		sc.ID = s
		return ok
	case "score":
		x, ok := f.number()
		sc.Score = &x
		return ok
	case "subscore":
		x, ok := f.number()
		sc.Subscore = x
		return ok
	}
	return false
}

// object reads an object, calling field with each key, f past its colon.
func (f *filler) object(field func(key []byte) bool) bool {
	if !f.eat('{') {
		return false
	}
	if f.eat('}') {
		return true
	}
	for {
		f.space()
		key, ok := f.raw()
		if !ok || !f.eat(':') || !field(key) {
			return false
		}
		if f.eat('}') {
			return true
		}
		if !f.eat(',') {
			return false
		}
	}
}

func (f *filler) space() {
	for f.pos < len(f.data) {
		switch f.data[f.pos] {
		case ' ', '\t', '\n', '\r':
			f.pos++
		default:
			return
		}
	}
}

// eat moves past c, after white space, where it comes next.
func (f *filler) eat(c byte) bool {
	f.space()
	if f.pos < len(f.data) && f.data[f.pos] == c {
		f.pos++
		return true
	}
	return false
}

func (f *filler) null() bool {
	f.space()
	if bytes.HasPrefix(f.data[f.pos:], []byte("null")) {
		f.pos += 4
		return true
	}
	return false
}

// raw returns the bytes of the string at f.pos, which holds no escape.
func (f *filler) raw() ([]byte, bool) {
	if f.pos >= len(f.data) || f.data[f.pos] != '"' {
		return nil, false
	}
	n := bytes.IndexByte(f.data[f.pos+1:], '"')
	if n < 0 {
		return nil, false
	}
	s := f.data[f.pos+1 : f.pos+1+n]
	f.pos += n + 2
	return s, true
}

func (f *filler) str() (string, bool) {
	s, ok := f.raw()
	return string(s), ok
}

// number reads a number as encoding/json reads one into a float64.
func (f *filler) number() (float64, bool) {
	start := f.pos
	for f.pos < len(f.data) && numberByte(f.data[f.pos]) {
		f.pos++
	}
	x, err := strconv.ParseFloat(string(f.data[start:f.pos]), 64)
	return x, err == nil && f.pos > start
}

func numberByte(c byte) bool {
	return '0' <= c && c <= '9' || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E'
}
