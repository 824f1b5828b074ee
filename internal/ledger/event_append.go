package ledger

import (
	"math"
	"strconv"
)

// appendGroup appends g as encoding/json encodes it (json.Marshal(g), the
// log's format: {"b":…,"i":[{"m":…,"s":…,"u":…,"i":…}…]}, "u" and "i"
// omitted where zero), and reports true; or appends nothing and reports
// false where a value is one it does not write byte for byte as
// encoding/json would: a string with a byte that encoding/json escapes
// or validates (a control byte, '"', '\\', '<', '>', '&', any byte past
// 0x7e), a score that is not finite or needs an exponent (below 1e-6 or
// from 1e21 in magnitude), a nil Items. EncodeGroup then calls
// json.Marshal. Why: a submission's group is encoded on every Submit
// call, and reflection cost about twice this walk (BenchmarkEncodeGroup:
// 2.0–2.5 µs and 2 allocations against 0.7–1.5 µs and 1, docs/BENCHMARKS.md
// "Around-me: issue 24's framing of the CPU"); the bytes go into the
// log for ever, so they must not change (TestAppendGroupMatchesJSON and
// FuzzAppendGroup hold them to encoding/json's).
func appendGroup(dst []byte, g Group) ([]byte, bool) {
	if g.Items == nil || !plainJSON(g.Board) {
		return dst, false
	}
	for _, it := range g.Items {
		if !plainJSON(it.Member) || !plainJSON(it.ID) || !plainFloat(it.Score) || !plainFloat(it.Subscore) {
			return dst, false
		}
	}
	dst = append(dst, `{"b":"`...)
	dst = append(dst, g.Board...)
	dst = append(dst, `","i":[`...)
	for i, it := range g.Items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"m":"`...)
		dst = append(dst, it.Member...)
		dst = append(dst, `","s":`...)
		dst = appendFloat(dst, it.Score)
		if it.Subscore != 0 { // omitempty: -0 is omitted too
			dst = append(dst, `,"u":`...)
			dst = appendFloat(dst, it.Subscore)
		}
		if it.ID != "" {
			dst = append(dst, `,"i":"`...)
			dst = append(dst, it.ID...)
			dst = append(dst, '"')
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...), true
}

// plainJSON reports whether encoding/json writes s as it is between
// quotes: printable ASCII with none of the bytes it escapes ('"', '\\',
// and, HTML-safe, '<', '>', '&').
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

// plainFloat reports whether encoding/json writes f as
// strconv.AppendFloat(f, 'f', -1, 64) does: f is finite and zero or of a
// magnitude in [1e-6, 1e21), where encoding/json uses no exponent.
func plainFloat(f float64) bool {
	a := math.Abs(f)
	return a == 0 || (a >= 1e-6 && a < 1e21)
}

// appendFloat appends f, a plainFloat, as encoding/json writes it. A
// whole f of magnitude under 2⁵³ goes through strconv.AppendInt, which
// writes the same digits several times faster: every integer there is a
// float64 of its own, so the shortest decimal that reads back as f is f's
// integer itself (-0 keeps its sign: AppendFloat writes it).
func appendFloat(dst []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return strconv.AppendFloat(dst, f, 'f', -1, 64)
}

// groupSize is a first guess at g's encoded length, for one allocation:
// its strings and 32 bytes of keys, punctuation and digits an item.
func groupSize(g Group) int {
	n := 16 + len(g.Board)
	for _, it := range g.Items {
		n += 32 + len(it.Member) + len(it.ID)
	}
	return n
}
