package identity

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want error
	}{
		{"empty", "", ErrEmpty},
		{"one byte", "a", nil},
		{"typical member", "p42", nil},
		{"typical alias", "email:ann@x.io", nil},
		{"128 bytes", strings.Repeat("x", 128), nil},
		{"129 bytes", strings.Repeat("x", 129), ErrTooLong},
		{"128 bytes of multibyte runes", strings.Repeat("€", 42) + "ab", nil},
		{"129 bytes of multibyte runes", strings.Repeat("€", 43), ErrTooLong},
		{"space inside", "Ann Smith", nil},
		{"no-break space", "a\u00a0b", nil},
		{"zero-width joiner (format, not control)", "👩\u200d💻", nil},
		{"replacement character itself", "\ufffd", nil},
		{"invalid byte", "a\xffb", ErrInvalid},
		{"truncated rune", "\xe2\x82", ErrInvalid},
		{"overlong encoding", "\xc0\xaf", ErrInvalid},
		{"surrogate half", "\xed\xa0\x80", ErrInvalid},
		{"NUL", "a\x00b", ErrInvalid},
		{"tab", "a\tb", ErrInvalid},
		{"newline", "a\n", ErrInvalid},
		{"escape", "\x1b[31m", ErrInvalid},
		{"DEL", "a\x7f", ErrInvalid},
		{"C1 next line", "a\u0085b", ErrInvalid},
		{"C1 last", "\u009f", ErrInvalid},
		{"too long beats invalid", strings.Repeat("\x00", 200), ErrTooLong},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := Validate(tt.in)
			if !errors.Is(err, tt.want) || (tt.want == nil) != (err == nil) {
				t.Fatalf("Validate(%q) = %v, want %v", tt.in, err, tt.want)
			}
		})
	}
}

func TestValidateErrorQuotesValue(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"short value quoted whole", "a\x00", `identity: identifier is not valid UTF-8 or holds a control character: "a\x00"`},
		{"long value truncated with its length", strings.Repeat("y", 300), `identity: identifier longer than 128 bytes: "` + strings.Repeat("y", 32) + `"... (300 bytes)`},
		{"cut at a rune start", "a" + strings.Repeat("€", 60), `identity: identifier longer than 128 bytes: "a` + strings.Repeat("€", 10) + `"... (181 bytes)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Validate(tt.in).Error(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestValidateAllocs(t *testing.T) {
	if n := testing.AllocsPerRun(100, func() { _ = Validate("email:ann@x.io") }); n != 0 {
		t.Fatalf("Validate of a good id allocates %v times", n)
	}
}

// FuzzValidate checks Validate against its definition, spelled out with the
// standard library's slower building blocks.
func FuzzValidate(f *testing.F) {
	for _, s := range []string{"", "a", "p42", "a\x00", "\xff", "\u0085", "\u00a0", "€", strings.Repeat("z", 129)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ok := s != "" && len(s) <= MaxLen && utf8.ValidString(s) && strings.IndexFunc(s, unicode.IsControl) < 0
		if err := Validate(s); (err == nil) != ok {
			t.Fatalf("Validate(%q) = %v, want ok=%v", s, err, ok)
		}
	})
}
