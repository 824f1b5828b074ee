package subscriptions

import (
	"math"
	"strconv"
	"unicode/utf8"
)

// appendBody appends the part of a snapshot or diff message after its type
// and id: `"seq":S[,"prev":P],"total":T,"rows":[...][,"gone":[...]]}`.
// A diff has a prev and gone; a snapshot has neither. This part is encoded
// once per distinct view per tick and shared by every watcher.
func appendBody(dst []byte, m body) []byte {
	dst = append(dst, `"seq":`...)
	dst = strconv.AppendUint(dst, m.seq, 10)
	if m.diff {
		dst = append(dst, `,"prev":`...)
		dst = strconv.AppendUint(dst, m.prev, 10)
	}
	dst = append(dst, `,"total":`...)
	dst = strconv.AppendInt(dst, int64(m.total), 10)
	dst = append(dst, `,"rows":[`...)
	for i, r := range m.rows {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendRow(dst, r)
	}
	dst = append(dst, ']')
	if m.diff {
		dst = append(dst, `,"gone":[`...)
		for i, g := range m.gone {
			if i > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(g), 10)
		}
		dst = append(dst, ']')
	}
	return append(dst, '}')
}

// bodySize is about the length of appendBody's encoding of m, a little
// more for most rows, so that the encoding takes one allocation instead
// of growing from nothing (four or five for a diff of a few rows).
func bodySize(m body) int {
	n := 64 + 12*len(m.gone)
	for _, r := range m.rows {
		n += 96 + len(r.Member)
		if r.Profile != (Profile{}) {
			n += 40 + len(r.Profile.Name) + len(r.Profile.Avatar) + len(r.Profile.Country)
		}
	}
	return n
}

// body is the content of a snapshot (diff false) or diff message.
type body struct {
	diff      bool
	seq, prev uint64
	total     int
	rows      []Row
	gone      []int
}

func appendRow(dst []byte, r Row) []byte {
	dst = append(dst, `{"rank":`...)
	dst = strconv.AppendInt(dst, int64(r.Rank), 10)
	dst = append(dst, `,"member":`...)
	dst = appendString(dst, r.Member)
	dst = append(dst, `,"score":`...)
	dst = appendFloat(dst, r.Score)
	dst = append(dst, `,"subscore":`...)
	dst = appendFloat(dst, r.Subscore)
	if r.Profile != (Profile{}) { // most rows have none: one comparison
		for _, f := range [...]struct{ key, v string }{{`,"name":`, r.Profile.Name}, {`,"avatar":`, r.Profile.Avatar}, {`,"country":`, r.Profile.Country}} {
			if f.v != "" {
				dst = append(dst, f.key...)
				dst = appendString(dst, f.v)
			}
		}
	}
	if r.Review {
		dst = append(dst, `,"review":true`...)
	}
	return append(dst, '}')
}

// appendFloat writes f as encoding/json does: the shortest representation
// that round-trips, exponent form outside [1e-6, 1e21). Scores are finite.
func appendFloat(dst []byte, f float64) []byte {
	abs := math.Abs(f)
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		return strconv.AppendFloat(dst, f, 'e', -1, 64)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

const hex = "0123456789abcdef"

// appendString writes s as a JSON string. Member ids are valid UTF-8 without
// control characters (checked at the edge); the escapes are belt and braces.
func appendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' && c < utf8.RuneSelf {
			dst = append(dst, c)
			i++
			continue
		}
		if c < utf8.RuneSelf {
			dst = appendEscape(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, `\ufffd`...)
		} else {
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return append(dst, '"')
}

func appendEscape(dst []byte, c byte) []byte {
	switch c {
	case '"', '\\':
		return append(dst, '\\', c)
	case '\n':
		return append(dst, '\\', 'n')
	case '\t':
		return append(dst, '\\', 't')
	case '\r':
		return append(dst, '\\', 'r')
	}
	return append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
}
