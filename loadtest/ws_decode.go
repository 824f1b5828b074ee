package loadtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"unicode/utf8"
)

// A subscriber decodes every message it receives, thousands of times a
// second per worker, so it does not use json.Unmarshal (reflection, a
// string per row member: most of its CPU per message) but this scanner
// for the one shape it reads. The scanner is strict: it accepts exactly
// the JSON documents encoding/json accepts and decodes them as
// json.Unmarshal decodes them into wsMessageJSON (ws_decode_test.go checks
// this against encoding/json on random and fuzzed input), with one
// exception: a message with two "rows" members is refused with
// errRowsTwice, where encoding/json would decode the second into the
// first's elements.

// Errors of decodeWSMessage. Sentinels, so that refusing a message costs
// no allocation.
var (
	errJSONSyntax = errors.New("loadtest: message is not valid JSON")
	errJSONShape  = errors.New("loadtest: message field of the wrong JSON type")
	errRowsTwice  = errors.New("loadtest: message has rows twice")
)

// maxJSONDepth is encoding/json's nesting limit: 10,000 objects and
// arrays deep parse, one more is a syntax error.
const maxJSONDepth = 10000

// wsMessage is what a subscriber decodes of a server message. Its byte
// slices point into the decoded input (or, for a string with escapes,
// into a copy), so they are valid until that input is reused; Rows keeps
// its capacity from one decode to the next.
type wsMessage struct {
	Type, Code []byte
	ID         []byte // the subscription's id; nil where absent or null
	Seq        uint64
	Prev       uint64 // meaningful where HasPrev
	HasPrev    bool   // prev present and not null
	Rows       []wsRow
}

// wsRow is one row of a view: the rest of it (rank, subscore) is skipped.
type wsRow struct {
	Member []byte
	Score  float64
}

// Field names, by the object they belong to.
var (
	messageFields = []string{"type", "id", "seq", "prev", "rows", "code"}
	rowFields     = []string{"member", "score"}
)

// decodeWSMessage decodes data into m, reusing m's rows. O(len(data));
// allocates only to grow m.Rows and for a string with escapes or invalid
// UTF-8 (the gateway escapes only a member id's quotes, backslashes and
// control characters). On error m holds a partial decode.
func decodeWSMessage(data []byte, m *wsMessage) error {
	*m = wsMessage{Rows: m.Rows[:0]}
	d := jsonScanner{data: data}
	d.space()
	var err error
	switch d.peek() {
	case '{':
		err = d.message(m)
	case 'n':
		err = d.literal("null") // encoding/json leaves m as it was: zero
	default:
		if err = d.skip(0); err == nil {
			err = errJSONShape
		}
	}
	if err != nil {
		return err
	}
	if d.space(); d.off != len(d.data) {
		return errJSONSyntax
	}
	return nil
}

// jsonScanner reads one JSON document from data, validating as it goes.
// Each method reads one value from off, leaving off after it. It returns
// errJSONSyntax where the input is not JSON, and errJSONShape as soon as
// a field's value has a type encoding/json would refuse for it (the rest
// unchecked: the message is refused either way).
type jsonScanner struct {
	data []byte
	off  int
}

// message reads the top-level object at depth 1.
func (d *jsonScanner) message(m *wsMessage) error {
	d.off++ // '{'
	rows := false
	for i := 0; ; i++ {
		key, more, err := d.next(i)
		if err != nil || !more {
			return err
		}
		switch fieldName(key.value(), messageFields) {
		case "type":
			err = d.stringField(&m.Type)
		case "code":
			err = d.stringField(&m.Code)
		case "id":
			err = d.stringField(&m.ID)
		case "seq":
			_, err = d.uintField(&m.Seq)
		case "prev":
			m.HasPrev, err = d.uintField(&m.Prev)
		case "rows":
			if rows {
				return errRowsTwice
			}
			rows, err = true, d.rows(m)
		default:
			err = d.skip(1)
		}
		if err != nil {
			return err
		}
	}
}

// rows reads the rows array (depth 2), appending a row per element. A
// null element is a zero row, as encoding/json decodes it.
func (d *jsonScanner) rows(m *wsMessage) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '[':
	default:
		return errJSONShape
	}
	d.off++
	for i := 0; ; i++ {
		more, err := d.nextElem(i, ']')
		if err != nil || !more {
			return err
		}
		m.Rows = append(m.Rows, wsRow{})
		switch d.peek() {
		case 'n':
			err = d.literal("null")
		case '{':
			err = d.row(&m.Rows[len(m.Rows)-1])
		default:
			err = errJSONShape
		}
		if err != nil {
			return err
		}
	}
}

// row reads one row object at depth 3.
func (d *jsonScanner) row(r *wsRow) error {
	d.off++ // '{'
	for i := 0; ; i++ {
		key, more, err := d.next(i)
		if err != nil || !more {
			return err
		}
		switch fieldName(key.value(), rowFields) {
		case "member":
			err = d.stringField(&r.Member)
		case "score":
			err = d.floatField(&r.Score)
		default:
			err = d.skip(3)
		}
		if err != nil {
			return err
		}
	}
}

// fieldName returns the name in names that key selects, the way
// encoding/json picks a struct field: an exact match, else one equal
// under Unicode case folding. "" if none. Names are ASCII.
func fieldName(key []byte, names []string) string {
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	// Folding matches rune by rune, so an ASCII key can match only a name
	// of its length; a longer key needs a rune such as ſ (U+017F), which
	// folds to s. The test spares the other keys the gateway sends (total,
	// gone, rank, subscore, message) most EqualFold calls.
	ascii := !slices.ContainsFunc(key, func(c byte) bool { return c >= utf8.RuneSelf })
	for _, n := range names {
		if (len(key) == len(n) || !ascii && len(key) > len(n)) && bytes.EqualFold(key, []byte(n)) {
			return n
		}
	}
	return ""
}

// stringField reads a string into dst; null leaves dst as it is.
func (d *jsonScanner) stringField(dst *[]byte) error {
	switch d.peek() {
	case 'n':
		return d.literal("null")
	case '"':
		s, err := d.str()
		if err == nil {
			*dst = s.value()
		}
		return err
	}
	return errJSONShape
}

// uintField reads a uint64 into dst and reports true; null leaves dst as
// it is and reports false (for prev, a *uint64 to encoding/json, null is
// nil).
func (d *jsonScanner) uintField(dst *uint64) (bool, error) {
	if d.peek() == 'n' {
		return false, d.literal("null")
	}
	lit, err := d.number()
	if err != nil {
		return false, err
	}
	if *dst, err = strconv.ParseUint(string(lit), 10, 64); err != nil {
		return false, errJSONShape // a sign, fraction, exponent or overflow
	}
	return true, nil
}

// floatField reads a float64 into dst; null leaves dst as it is.
func (d *jsonScanner) floatField(dst *float64) error {
	if d.peek() == 'n' {
		return d.literal("null")
	}
	lit, err := d.number()
	if err != nil {
		return err
	}
	if *dst, err = parseFloat(lit); err != nil {
		return errJSONShape // out of range
	}
	return nil
}

// parseFloat is strconv.ParseFloat(string(lit), 64) for a JSON number,
// with a fast path for integers of up to 15 digits (every probe score):
// they are below 2^53, so float64 holds them exactly and the conversion
// rounds as ParseFloat does. -0 stays -0.
func parseFloat(lit []byte) (float64, error) {
	digits := bytes.TrimPrefix(lit, []byte("-"))
	if len(digits) > 15 || slices.ContainsFunc(digits, func(c byte) bool { return c < '0' || c > '9' }) {
		return strconv.ParseFloat(string(lit), 64)
	}
	var n int64
	for _, c := range digits {
		n = n*10 + int64(c-'0')
	}
	f := float64(n)
	if len(digits) < len(lit) {
		f = -f
	}
	return f, nil
}

// next moves to the value of an object's i-th member and returns its key,
// or more == false after the object's closing brace. The object's opening
// brace has been read, and the values of members 0 … i-1.
func (d *jsonScanner) next(i int) (key jsonString, more bool, err error) {
	if more, err = d.nextElem(i, '}'); err != nil || !more {
		return key, more, err
	}
	if d.peek() != '"' {
		return key, false, errJSONSyntax
	}
	if key, err = d.str(); err != nil {
		return key, false, err
	}
	if d.space(); d.peek() != ':' {
		return key, false, errJSONSyntax
	}
	d.off++
	d.space()
	return key, true, nil
}

// nextElem moves to a container's i-th element (an object's: its key)
// or, reporting more == false, past its closing byte. The opening byte
// has been read, and elements 0 … i-1.
func (d *jsonScanner) nextElem(i int, closing byte) (more bool, err error) {
	d.space()
	c := d.peek()
	if c == closing {
		d.off++
		return false, nil
	}
	if i > 0 {
		if c != ',' {
			return false, errJSONSyntax
		}
		d.off++
		d.space()
	}
	return true, nil
}

// skip reads any value inside a container at depth, checking it.
func (d *jsonScanner) skip(depth int) error {
	switch d.peek() {
	case '{', '[':
		return d.skipContainer(depth + 1)
	case '"':
		_, err := d.str()
		return err
	case 't':
		return d.literal("true")
	case 'f':
		return d.literal("false")
	case 'n':
		return d.literal("null")
	}
	_, err := d.number()
	return err
}

// skipContainer reads an object or array at depth.
func (d *jsonScanner) skipContainer(depth int) error {
	if depth > maxJSONDepth {
		return errJSONSyntax
	}
	obj := d.data[d.off] == '{'
	d.off++
	for i := 0; ; i++ {
		var more bool
		var err error
		if obj {
			_, more, err = d.next(i)
		} else {
			more, err = d.nextElem(i, ']')
		}
		if err != nil || !more {
			return err
		}
		if err := d.skip(depth); err != nil {
			return err
		}
	}
}

// jsonString is a string as it appears in the input, quotes included.
type jsonString struct {
	quoted []byte
	plain  bool // no escapes and valid UTF-8: the bytes between the quotes are its value
}

// value returns s's value: a slice of the input where s is plain, else a
// copy decoded by encoding/json (escapes resolved, invalid UTF-8 replaced
// by U+FFFD), which allocates.
func (s jsonString) value() []byte {
	if s.plain {
		return s.quoted[1 : len(s.quoted)-1]
	}
	var v string
	if json.Unmarshal(s.quoted, &v) != nil {
		return nil // cannot happen: str checked s
	}
	return []byte(v)
}

// str reads a string, checking its escapes and that it has no control
// characters. Invalid UTF-8 is allowed, as encoding/json allows it.
func (d *jsonScanner) str() (jsonString, error) {
	start := d.off
	d.off++ // '"'
	escaped, high := false, false
	for d.off < len(d.data) {
		c := d.data[d.off]
		d.off++
		switch {
		case c == '"':
			q := d.data[start:d.off]
			plain := !escaped && (!high || utf8.Valid(q))
			return jsonString{quoted: q, plain: plain}, nil
		case c == '\\':
			escaped = true
			if !d.escape() {
				return jsonString{}, errJSONSyntax
			}
		case c < 0x20:
			return jsonString{}, errJSONSyntax
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return jsonString{}, errJSONSyntax
}

// escape reads the rest of an escape sequence after its backslash.
func (d *jsonScanner) escape() bool {
	if d.off >= len(d.data) {
		return false
	}
	c := d.data[d.off]
	d.off++
	switch c {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		return true
	case 'u':
		if len(d.data)-d.off < 4 {
			return false
		}
		for _, h := range d.data[d.off : d.off+4] {
			if !isHex(h) {
				return false
			}
		}
		d.off += 4
		return true
	}
	return false
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

// number reads a number and returns its literal. The grammar is JSON's:
// -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func (d *jsonScanner) number() ([]byte, error) {
	start := d.off
	if d.peek() == '-' {
		d.off++
	}
	switch c := d.peek(); {
	case c == '0':
		d.off++
	case '1' <= c && c <= '9':
		d.digits()
	default:
		return nil, errJSONSyntax
	}
	if d.peek() == '.' {
		d.off++
		if d.digits() == 0 {
			return nil, errJSONSyntax
		}
	}
	if c := d.peek(); c == 'e' || c == 'E' {
		d.off++
		if c := d.peek(); c == '+' || c == '-' {
			d.off++
		}
		if d.digits() == 0 {
			return nil, errJSONSyntax
		}
	}
	return d.data[start:d.off], nil
}

// digits reads a run of decimal digits and returns its length.
func (d *jsonScanner) digits() int {
	start := d.off
	for d.off < len(d.data) && '0' <= d.data[d.off] && d.data[d.off] <= '9' {
		d.off++
	}
	return d.off - start
}

// literal reads word (true, false or null).
func (d *jsonScanner) literal(word string) error {
	if len(d.data)-d.off < len(word) || string(d.data[d.off:d.off+len(word)]) != word {
		return errJSONSyntax
	}
	d.off += len(word)
	return nil
}

// space skips JSON whitespace.
func (d *jsonScanner) space() {
	for d.off < len(d.data) {
		switch d.data[d.off] {
		case ' ', '\t', '\n', '\r':
			d.off++
		default:
			return
		}
	}
}

// peek returns the byte at off, or 0 at the end.
func (d *jsonScanner) peek() byte {
	if d.off < len(d.data) {
		return d.data[d.off]
	}
	return 0
}
