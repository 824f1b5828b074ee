package jsonbody

import (
	"bytes"
	"unicode/utf16"
	"unicode/utf8"
)

// The lexical half of the checker: RFC 8259's grammar for white space,
// literals, numbers and strings, and a value of any shape.

func (c *checker) space() {
	for c.pos < len(c.data) {
		switch c.data[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

// peek returns the byte at c.pos, or 0 at the end.
func (c *checker) peek() byte {
	if c.pos < len(c.data) {
		return c.data[c.pos]
	}
	return 0
}

// kindAt names the JSON kind of the value starting at c.pos, as messages
// say it, or false where no value can start.
func (c *checker) kindAt() (string, bool) {
	switch b := c.peek(); {
	case b == '{':
		return "object", true
	case b == '[':
		return "array", true
	case b == '"':
		return "string", true
	case b == '-' || '0' <= b && b <= '9':
		return "number", true
	case b == 't' || b == 'f':
		return "boolean", true
	case b == 'n':
		return "null", true
	}
	return "", false
}

// literal reads true, false or null.
func (c *checker) literal(word string) error {
	if !bytes.HasPrefix(c.data[c.pos:], []byte(word)) {
		return c.syntax("want a value")
	}
	c.pos += len(word)
	return nil
}

// number reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func (c *checker) number() error {
	if c.peek() == '-' {
		c.pos++
	}
	switch b := c.peek(); {
	case b == '0':
		c.pos++
	case '1' <= b && b <= '9':
		c.digits()
	default:
		return c.syntax("invalid number")
	}
	if c.peek() == '.' {
		c.pos++
		if c.digits() == 0 {
			return c.syntax("invalid number")
		}
	}
	if b := c.peek(); b == 'e' || b == 'E' {
		c.pos++
		if b := c.peek(); b == '+' || b == '-' {
			c.pos++
		}
		if c.digits() == 0 {
			return c.syntax("invalid number")
		}
	}
	return nil
}

func (c *checker) digits() int {
	n := 0
	for ; c.pos < len(c.data) && '0' <= c.data[c.pos] && c.data[c.pos] <= '9'; n++ {
		c.pos++
	}
	return n
}

// key reads a field name and returns it unescaped: a slice of the body
// where it holds no escape (no allocation), a new slice where it does.
func (c *checker) key() ([]byte, error) {
	start := c.pos
	escaped, err := c.scanString(true)
	if err != nil {
		return nil, err
	}
	raw := c.data[start+1 : c.pos-1]
	if !escaped {
		return raw, nil
	}
	return unescape(raw), nil
}

// str reads a string value.
func (c *checker) str(isKey bool) error {
	_, err := c.scanString(isKey)
	return err
}

// scanString reads a string from its opening quote to past its closing
// one, checking its escapes and that it is valid UTF-8 both as bytes and
// once escapes are applied (a surrogate escape must be one half of a
// pair). A state machine over bytes, so longer than most functions here.
func (c *checker) scanString(isKey bool) (escaped bool, err error) {
	c.pos++ // '"'
	for c.pos < len(c.data) {
		b := c.data[c.pos]
		switch {
		case b == '"':
			c.pos++
			return escaped, nil
		case b == '\\':
			escaped = true
			if err := c.escape(isKey); err != nil {
				return escaped, err
			}
		case b < 0x20:
			return escaped, c.syntax("a control character in a string must be escaped")
		case b < utf8.RuneSelf:
			c.pos++
		default:
			r, n := utf8.DecodeRune(c.data[c.pos:])
			if r == utf8.RuneError && n == 1 {
				return escaped, c.badUTF8(isKey)
			}
			c.pos += n
		}
	}
	return escaped, c.syntax("the body ends inside a string")
}

// escape reads one escape sequence at c.pos ('\\' and what follows).
func (c *checker) escape(isKey bool) error {
	if c.pos+1 >= len(c.data) {
		c.pos = len(c.data)
		return c.syntax("the body ends inside a string")
	}
	switch c.data[c.pos+1] {
	case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
		c.pos += 2
		return nil
	case 'u':
	default:
		c.pos++
		return c.syntax("invalid escape in a string")
	}
	r, ok := c.hex4(c.pos + 2)
	if !ok {
		return c.syntax(`invalid \u escape in a string`)
	}
	c.pos += 6
	if !utf16.IsSurrogate(r) {
		return nil
	}
	if r >= 0xdc00 { // a low surrogate with no high one before it
		c.pos -= 6
		return c.badUTF8(isKey)
	}
	if !c.lowSurrogate() {
		c.pos -= 6
		return c.badUTF8(isKey)
	}
	c.pos += 6
	return nil
}

// lowSurrogate reports whether a \u escape of a low surrogate follows at
// c.pos, completing a pair.
func (c *checker) lowSurrogate() bool {
	if c.pos+1 >= len(c.data) || c.data[c.pos] != '\\' || c.data[c.pos+1] != 'u' {
		return false
	}
	r, ok := c.hex4(c.pos + 2)
	return ok && 0xdc00 <= r && r <= 0xdfff
}

// hex4 decodes the four hex digits at i.
func (c *checker) hex4(i int) (rune, bool) {
	if i+4 > len(c.data) {
		return 0, false
	}
	var r rune
	for _, b := range c.data[i : i+4] {
		switch {
		case '0' <= b && b <= '9':
			r = r<<4 | rune(b-'0')
		case 'a' <= b && b <= 'f':
			r = r<<4 | rune(b-'a'+10)
		case 'A' <= b && b <= 'F':
			r = r<<4 | rune(b-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// badUTF8 refuses a string that is not valid UTF-8: the field's value, or
// (isKey) the name of a field of the object at c.path.
func (c *checker) badUTF8(isKey bool) error {
	if isKey {
		return c.fail("invalid UTF-8 in a field name")
	}
	return c.fail("invalid UTF-8")
}

// anyValue checks a value of any shape: well formed, strings valid UTF-8,
// nesting within maxDepth.
func (c *checker) anyValue() error {
	switch got, _ := c.kindAt(); got {
	case "object":
		return c.anyObject()
	case "array":
		return c.anyArray()
	case "string":
		return c.str(false)
	case "number":
		return c.number()
	case "boolean":
		if c.peek() == 't' {
			return c.literal("true")
		}
		return c.literal("false")
	}
	return c.literal("null")
}

// anyObject checks an object of any fields.
func (c *checker) anyObject() error {
	c.pos++ // '{'
	if c.space(); c.peek() == '}' {
		c.pos++
		return nil
	}
	for {
		if c.space(); c.peek() != '"' {
			return c.syntax(c.want(`want a field name in ""`))
		}
		name, err := c.key()
		if err != nil {
			return err
		}
		c.push(step{key: string(name), index: -1})
		if c.space(); c.peek() != ':' {
			return c.syntax(c.want("want ':' after the field name"))
		}
		c.pos++
		if err := c.value(anyType); err != nil {
			return err
		}
		c.pop()
		if done, err := c.next('}'); done || err != nil {
			return err
		}
	}
}

// anyArray checks an array of any elements.
func (c *checker) anyArray() error {
	return c.array(anyType)
}

// unescape applies the escapes of a string's bytes that scanString
// accepted. Allocates the result.
func unescape(raw []byte) []byte {
	out := make([]byte, 0, len(raw))
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			out = append(out, raw[i])
			i++
			continue
		}
		switch e := raw[i+1]; e {
		case 'u':
			c := checker{data: raw}
			r, _ := c.hex4(i + 2)
			i += 6
			if utf16.IsSurrogate(r) {
				low, _ := c.hex4(i + 2)
				r = utf16.DecodeRune(r, low)
				i += 6
			}
			out = utf8.AppendRune(out, r)
		default:
			out = append(out, unescapes[e])
			i += 2
		}
	}
	return out
}

// unescapes maps the byte after '\\' to what it stands for.
var unescapes = [256]byte{'"': '"', '\\': '\\', '/': '/', 'b': '\b', 'f': '\f', 'n': '\n', 'r': '\r', 't': '\t'}
