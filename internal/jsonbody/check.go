package jsonbody

import (
	"reflect"
	"strconv"
	"strings"
)

// maxDepth bounds nesting, so a body of a million '[' is refused at the
// 65th instead of recursing a million frames deep.
const maxDepth = 64

// checker walks a body once, against the Go type that will hold it. It
// stops at the first problem. Not safe for concurrent use; Decode makes one
// per call.
type checker struct {
	data  []byte
	pos   int    // the next byte to read
	path  []step // where the walk is, for messages
	depth int
}

// step is one element of a JSON path: a field name, or an array index
// where index >= 0.
type step struct {
	key   string
	index int
}

// value checks the value at c.pos against t and moves past it. null fits
// every type (encoding/json leaves the Go value as it was).
func (c *checker) value(t reflect.Type) error {
	c.space()
	got, ok := c.kindAt()
	if !ok {
		return c.syntax(c.wantValue())
	}
	if got == "null" {
		return c.literal("null")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	w := wantOf(t)
	if w.kind != "" && w.kind != got {
		return c.fail("want " + w.name + ", got " + got)
	}
	if c.depth >= maxDepth {
		return c.fail("nested deeper than " + strconv.Itoa(maxDepth))
	}
	c.depth++
	defer func() { c.depth-- }()
	return c.typed(t, got)
}

// typed checks a value whose JSON kind already fits t.
func (c *checker) typed(t reflect.Type, got string) error {
	switch {
	case t.Kind() == reflect.Struct:
		return c.object(fieldsOf(t))
	case got == "array" && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		return c.array(t.Elem())
	case got == "string":
		return c.str(false)
	case got == "number":
		return c.numberFor(t)
	}
	return c.anyValue()
}

// object checks an object against the fields of a struct: each name known
// and given once.
func (c *checker) object(fs *fields) error {
	c.pos++ // '{'
	var seen seenSet
	if c.space(); c.peek() == '}' {
		c.pos++
		return nil
	}
	for {
		f, err := c.field(fs)
		if err != nil {
			return err
		}
		if seen.repeat(f.index) {
			return c.fail("field repeats")
		}
		if err := c.value(f.typ); err != nil {
			return err
		}
		c.pop()
		if done, err := c.next('}'); done || err != nil {
			return err
		}
	}
}

// seenSet records the fields of one object given so far: a word of bits,
// and a map only for a struct of more than 64 fields.
type seenSet struct {
	small uint64
	big   map[int]bool
}

// repeat records field i and reports whether it was recorded before.
func (s *seenSet) repeat(i int) bool {
	if i < 64 {
		bit := uint64(1) << i
		was := s.small&bit != 0
		s.small |= bit
		return was
	}
	if s.big == nil {
		s.big = map[int]bool{}
	}
	was := s.big[i]
	s.big[i] = true
	return was
}

// field reads `"name":` and returns the struct field it names, pushed on
// the path. An unknown name is refused at its first byte.
func (c *checker) field(fs *fields) (*field, error) {
	c.space()
	if c.peek() != '"' {
		return nil, c.syntax(c.want(`want a field name in ""`))
	}
	start := c.pos
	name, err := c.key()
	if err != nil {
		return nil, err
	}
	f, ok := fs.byName[string(name)]
	if !ok {
		c.push(step{key: string(name), index: -1})
		c.pos = start
		return nil, c.fail("unknown field")
	}
	c.push(step{key: f.name, index: -1})
	if c.space(); c.peek() != ':' {
		return nil, c.syntax(c.want("want ':' after the field name"))
	}
	c.pos++
	return f, nil
}

// array checks an array whose elements are of type elem.
func (c *checker) array(elem reflect.Type) error {
	c.pos++ // '['
	if c.space(); c.peek() == ']' {
		c.pos++
		return nil
	}
	for i := 0; ; i++ {
		c.push(step{index: i})
		if err := c.value(elem); err != nil {
			return err
		}
		c.pop()
		if done, err := c.next(']'); done || err != nil {
			return err
		}
	}
}

// next reads the ',' between members or the closing byte after the last:
// done is true after the closing byte.
func (c *checker) next(closing byte) (done bool, err error) {
	c.space()
	switch c.peek() {
	case ',':
		c.pos++
		return false, nil
	case closing:
		c.pos++
		return true, nil
	}
	return false, c.syntax(c.want("want ',' or '" + string(closing) + "'"))
}

// numberFor checks a number against a numeric field: it must fit, and an
// integer field takes only integer literals.
func (c *checker) numberFor(t reflect.Type) error {
	start := c.pos
	if err := c.number(); err != nil {
		return err
	}
	lit := string(c.data[start:c.pos])
	var err error
	switch t.Kind() {
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(lit, t.Bits())
		return c.failIf(err, start, "want a finite number")
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(lit, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		_, err = strconv.ParseUint(lit, 10, t.Bits())
	}
	if strings.ContainsAny(lit, ".eE") {
		return c.failIf(err, start, "want an integer")
	}
	return c.failIf(err, start, "want an integer in range")
}

// failIf is a refusal at byte at saying msg where err is set, else nil.
func (c *checker) failIf(err error, at int, msg string) error {
	if err == nil {
		return nil
	}
	c.pos = at
	return c.fail(msg)
}

// want is the JSON kind a Go type takes ("" for any) and how a message
// names it.
type want struct{ kind, name string }

func wantOf(t reflect.Type) want {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return want{"object", "an object"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return want{"string", "a string"} // encoding/json takes []byte as base64
		}
		return want{"array", "an array"}
	case reflect.String:
		return want{"string", "a string"}
	case reflect.Float32, reflect.Float64:
		return want{"number", "a number"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return want{"number", "an integer"}
	case reflect.Bool:
		return want{"boolean", "true or false"}
	}
	return want{}
}

func (c *checker) push(s step) { c.path = append(c.path, s) }
func (c *checker) pop()        { c.path = c.path[:len(c.path)-1] }

// fail is a refusal at c.pos of the value at c.path.
func (c *checker) fail(msg string) error {
	return &Error{Path: c.pathString(), Msg: msg, Offset: c.pos}
}

// syntax is a refusal of JSON that is not well formed, at c.pos.
func (c *checker) syntax(msg string) error {
	return c.fail("invalid JSON at byte " + strconv.Itoa(c.pos) + ": " + msg)
}

// wantValue is the syntax message where a value should start.
func (c *checker) wantValue() string { return c.want("want a value") }

// want is msg, or "the body ends early" where it does.
func (c *checker) want(msg string) string {
	if c.pos >= len(c.data) {
		return "the body ends early"
	}
	return msg
}

// pathString renders c.path as `scores[7].score`; "body" where it is
// empty. A name that is not plain letters, digits, '_' and '-' is quoted:
// `body["a b"]`.
func (c *checker) pathString() string {
	var b strings.Builder
	for i, s := range c.path {
		switch {
		case s.index >= 0:
			if i == 0 {
				b.WriteString("body")
			}
			b.WriteString("[" + strconv.Itoa(s.index) + "]")
		case plain(s.key):
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.key)
		default:
			if i == 0 {
				b.WriteString("body")
			}
			b.WriteString("[" + strconv.QuoteToASCII(clip(s.key)) + "]")
		}
	}
	if b.Len() == 0 {
		return "body"
	}
	return b.String()
}

// plain reports whether a field name can stand in a path unquoted.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// clip shortens a name a client sent before a message quotes it.
func clip(s string) string {
	const max = 64
	if len(s) <= max {
		return s
	}
	return s[:max] + "…"
}
