// Package jsonbody decodes a JSON request body strictly into a Go value and,
// when it refuses one, says where in the document's own terms: a JSON path
// with indexes (scores[7].score), never a Go type or field name.
//
// Strict means: exactly one JSON value; object keys that match a field's
// json name exactly (no case folding), each at most once; no unknown keys;
// every string (keys too) valid UTF-8 with no lone surrogate escape, so two
// different byte strings never decode to the same text; numbers that fit
// the field's type. Null is accepted for any field and leaves it unchanged,
// as encoding/json does.
//
// Targets are plain data: structs (embedded structs are flattened), slices,
// arrays, maps with string keys, strings, bools, numbers, pointers to these,
// and empty interfaces. Types with their own UnmarshalJSON or ",string"
// options are not inspected specially.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// MaxDepth bounds the nesting of objects and arrays in a body.
const MaxDepth = 32

// Error is a refusal: Path is "body" for the document as a whole or the
// JSON path of the value at fault; Msg says what is wrong with it.
type Error struct {
	Path string
	Msg  string
}

// Error returns "<path>: <msg>".
func (e *Error) Error() string { return e.Path + ": " + e.Msg }

// Decode checks data against v's type and decodes it into v, a non-nil
// pointer. A refusal is an *Error. Cost: O(len(data)) time, two passes (a
// token walk, then encoding/json); memory O(len(data)) for the decoded value
// plus O(keys) per object for the repeat check. Safe for concurrent use.
func Decode(data []byte, v any) error {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return fmt.Errorf("jsonbody: Decode needs a non-nil pointer, got %T", v)
	}
	t := rv.Type().Elem()
	if len(bytes.TrimLeft(data, " \t\r\n")) == 0 {
		return &Error{"body", "empty, want " + want(t)}
	}
	w := &walker{data: data, dec: json.NewDecoder(bytes.NewReader(data))}
	w.dec.UseNumber()
	if !json.Valid(data) {
		// Walk as far as the fault to learn where it is, whatever the types.
		w.badAt, t = syntaxOffset(data), anyType
	}
	if err := w.value(t); err != nil {
		return err
	}
	if _, err := w.dec.Token(); !errors.Is(err, io.EOF) {
		return &Error{"body", fmt.Sprintf("data after the JSON value at byte %d", w.badAt)}
	}
	if w.badAt != 0 {
		return &Error{"body", fmt.Sprintf("invalid JSON at byte %d", w.badAt)}
	}
	if err := json.Unmarshal(data, v); err != nil {
		// The walk accepted what encoding/json refuses: a gap in the walk.
		return &Error{"body", "not a value this request takes"}
	}
	return nil
}

// walker walks the tokens of data alongside a Go type, keeping the JSON
// path of the value being read.
type walker struct {
	data  []byte
	dec   *json.Decoder
	path  []segment
	badAt int64 // where data is not JSON (counting from 1), or 0
}

var anyType = reflect.TypeFor[any]()

// syntaxOffset returns the position (counting from 1) of the byte where
// data, known not to be valid JSON, goes wrong: encoding/json's offsets are
// exact for a whole document, unlike a Decoder's within a value.
func syntaxOffset(data []byte) int64 {
	var raw json.RawMessage
	var se *json.SyntaxError
	if err := json.Unmarshal(data, &raw); errors.As(err, &se) {
		return se.Offset
	}
	return int64(len(data))
}

// segment is one step of a JSON path: an object key or an array index.
type segment struct {
	key   string
	index int // used where isIdx
	isIdx bool
}

// value reads one JSON value that must fit t.
func (w *walker) value(t reflect.Type) error {
	if len(w.path) > MaxDepth {
		return w.fail("nesting deeper than %d", MaxDepth)
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	start := w.dec.InputOffset()
	tok, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	switch tok := tok.(type) {
	case json.Delim:
		if tok == '{' {
			return w.object(t)
		}
		return w.array(t) // '[': Token never returns a closing delimiter here
	case string:
		if msg := checkString(w.data[start:w.dec.InputOffset()]); msg != "" {
			return w.fail("%s", msg)
		}
		return w.fits(t, "string", reflect.String)
	case json.Number:
		return w.number(t, string(tok))
	case bool:
		return w.fits(t, "boolean", reflect.Bool)
	}
	return nil // null: accepted anywhere, leaves the field unchanged
}

// fits accepts a scalar token of kind k where t is k or an empty interface.
func (w *walker) fits(t reflect.Type, got string, k reflect.Kind) error {
	if t.Kind() == k || isAny(t) {
		return nil
	}
	return w.mismatch(t, got)
}

// number accepts a number that t's kind can hold.
func (w *walker) number(t reflect.Type, s string) error {
	var err error
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(s, t.Bits())
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(s, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(s, 10, t.Bits())
	case reflect.Interface:
		if isAny(t) {
			return nil
		}
		return w.mismatch(t, "number")
	default:
		return w.mismatch(t, "number")
	}
	if err != nil {
		return w.fail("want %s, got %s", inRange(t), clip(s))
	}
	return nil
}

// object reads the members of an object (after its '{') into a struct, a
// map with string keys or an empty interface.
func (w *walker) object(t reflect.Type) error {
	var fields map[string]reflect.Type
	switch {
	case t.Kind() == reflect.Struct:
		fields = fieldsOf(t)
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String:
	case isAny(t):
	default:
		return w.mismatch(t, "object")
	}
	seen := map[string]bool{}
	for w.dec.More() {
		start := w.dec.InputOffset()
		tok, err := w.dec.Token()
		if err != nil {
			return w.syntax(err)
		}
		key, _ := tok.(string) // More and Token guarantee a key here
		if msg := checkString(w.data[start:w.dec.InputOffset()]); msg != "" {
			return w.fail("%s in a key", msg)
		}
		w.path = append(w.path, segment{key: key})
		ft, err := w.member(t, fields, key, seen)
		if err == nil {
			err = w.value(ft)
		}
		if err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	return w.close()
}

// member returns the type of the value under key, refusing unknown and
// repeated keys. The path already ends with key.
func (w *walker) member(t reflect.Type, fields map[string]reflect.Type, key string, seen map[string]bool) (reflect.Type, error) {
	if seen[key] {
		return nil, w.fail("appears more than once")
	}
	seen[key] = true
	switch {
	case fields != nil:
		ft, ok := fields[key]
		if !ok {
			return nil, w.fail("unknown field")
		}
		return ft, nil
	case t.Kind() == reflect.Map:
		return t.Elem(), nil
	}
	return t, nil // an empty interface holds anything
}

// array reads the elements of an array (after its '[') into a slice, an
// array or an empty interface.
func (w *walker) array(t reflect.Type) error {
	elem := t
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		elem = t.Elem()
	default:
		if !isAny(t) {
			return w.mismatch(t, "array")
		}
	}
	for i := 0; w.dec.More(); i++ {
		w.path = append(w.path, segment{index: i, isIdx: true})
		if err := w.value(elem); err != nil {
			return err
		}
		w.path = w.path[:len(w.path)-1]
	}
	return w.close()
}

// close reads the closing delimiter of an object or array.
func (w *walker) close() error {
	if _, err := w.dec.Token(); err != nil {
		return w.syntax(err)
	}
	return nil
}

// syntax turns a tokenizer error into a refusal: the byte offset and where
// in the document it was, never the tokenizer's own words.
func (w *walker) syntax(err error) error {
	what, off := "invalid JSON", w.badAt
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		what, off = "truncated JSON", int64(len(w.data))
	}
	msg := fmt.Sprintf("%s at byte %d", what, off)
	if len(w.path) > 0 {
		msg += ", in " + w.where()
	}
	return &Error{"body", msg}
}

func (w *walker) mismatch(t reflect.Type, got string) error {
	return w.fail("want %s, got %s", want(t), got)
}

func (w *walker) fail(format string, args ...any) error {
	return &Error{w.where(), fmt.Sprintf(format, args...)}
}

// plainKey is a key shown bare in a path; others are shown quoted.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]{0,63}$`)

// where renders the current path: "body" at the top, else like
// scores[7].score. A key that is not a plain name (letters, digits, _ and
// -, up to 64 bytes) shows as ["…"]: what a client sent there is not
// echoed.
func (w *walker) where() string {
	if len(w.path) == 0 {
		return "body"
	}
	var b strings.Builder
	for i, s := range w.path {
		switch {
		case s.isIdx:
			fmt.Fprintf(&b, "[%d]", s.index)
		case plainKey.MatchString(s.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			b.WriteString(`["…"]`) // not echoed: it could say anything
		}
	}
	return b.String()
}

// checkString returns what is wrong with the raw bytes of a JSON string
// token (with any separator before it), or "". The tokenizer would replace
// invalid UTF-8 and lone surrogate escapes with U+FFFD, so that different
// inputs decode alike; they are refused instead. O(len(raw)).
func checkString(raw []byte) string {
	if !utf8.Valid(raw) {
		return "invalid UTF-8"
	}
	for i := bytes.IndexByte(raw, '\\'); i >= 0 && i+1 < len(raw); {
		if raw[i+1] != 'u' {
			i = next(raw, i+2)
			continue
		}
		r := hex4(raw, i+2)
		switch {
		case r >= 0xDC00 && r <= 0xDFFF:
			return "invalid UTF-8 (a lone surrogate escape)"
		case r >= 0xD800 && r <= 0xDBFF:
			lo := -1
			if i+7 < len(raw) && raw[i+6] == '\\' && raw[i+7] == 'u' {
				lo = hex4(raw, i+8)
			}
			if lo < 0xDC00 || lo > 0xDFFF {
				return "invalid UTF-8 (a lone surrogate escape)"
			}
			i = next(raw, i+12)
		default:
			i = next(raw, i+6)
		}
	}
	return ""
}

// next returns the index of the first backslash at or after i, or -1.
func next(raw []byte, i int) int {
	if i >= len(raw) {
		return -1
	}
	j := bytes.IndexByte(raw[i:], '\\')
	if j < 0 {
		return -1
	}
	return i + j
}

// hex4 parses the four hex digits at raw[i:], or returns -1.
func hex4(raw []byte, i int) int {
	if i+4 > len(raw) {
		return -1
	}
	v, err := strconv.ParseUint(string(raw[i:i+4]), 16, 16)
	if err != nil {
		return -1
	}
	return int(v)
}

// fieldCache holds fieldsOf's answer per struct type.
var fieldCache sync.Map // reflect.Type -> map[string]reflect.Type

// fieldsOf maps the json names of t's fields to their types, with embedded
// structs without a json name flattened (outer fields win). O(fields) the
// first time per type, then a lookup.
func fieldsOf(t reflect.Type) map[string]reflect.Type {
	if m, ok := fieldCache.Load(t); ok {
		return m.(map[string]reflect.Type)
	}
	m := map[string]reflect.Type{}
	addFields(m, t, 0)
	fieldCache.Store(t, m)
	return m
}

func addFields(m map[string]reflect.Type, t reflect.Type, depth int) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		for ft.Kind() == reflect.Pointer {
			ft = ft.Elem()
		}
		if f.Anonymous && name == "" && ft.Kind() == reflect.Struct {
			embedded = append(embedded, ft)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, taken := m[name]; !taken {
			m[name] = f.Type
		}
	}
	if depth < 8 {
		for _, et := range embedded {
			addFields(m, et, depth+1)
		}
	}
}

func isAny(t reflect.Type) bool { return t.Kind() == reflect.Interface && t.NumMethod() == 0 }

// want names what a value of t must be, in JSON's terms.
func want(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	}
	return "a JSON value"
}

// inRange names the numbers t holds, for a number it cannot.
func inRange(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		return "a finite number in range"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return fmt.Sprintf("an integer in 0..%d", uint64(1)<<t.Bits()-1)
	}
	return fmt.Sprintf("an integer in %d..%d", -(int64(1) << (t.Bits() - 1)), int64(1)<<(t.Bits()-1)-1)
}

// clip shortens what a client sent before it is echoed.
func clip(s string) string {
	if len(s) <= 32 {
		return s
	}
	cut := 32
	for cut > 28 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
