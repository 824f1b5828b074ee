package identity

import (
	"errors"
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest identifier in bytes.
const MaxLen = 128

// Sentinel errors. Callers test them with errors.Is; returned errors wrap
// them with the offending value, quoted and truncated, or with the field.
var (
	ErrEmpty   = errors.New("identity: empty identifier")
	ErrTooLong = errors.New("identity: identifier longer than 128 bytes")
	ErrInvalid = errors.New("identity: identifier is not valid UTF-8 or holds a control character")
	ErrCorrupt = errors.New("identity: corrupt snapshot")
	ErrFull    = errors.New("identity: too many identifiers")
)

// quoteMax is how many bytes of an offending value an error quotes.
const quoteMax = 32

// Validate reports whether s may be a member id or alias: 1 to MaxLen bytes
// of valid UTF-8 without control characters (Unicode category Cc: C0, DEL
// and C1). The error wraps ErrEmpty, ErrTooLong or ErrInvalid. O(len(s)),
// no allocation on success. Safe for concurrent use.
func Validate(s string) error {
	switch {
	case s == "":
		return ErrEmpty
	case len(s) > MaxLen:
		return fmt.Errorf("%w: %s", ErrTooLong, quote(s))
	case !clean(s):
		return fmt.Errorf("%w: %s", ErrInvalid, quote(s))
	}
	return nil
}

// Reason says in a few words what makes s unfit to be a member id or
// alias, for a message that a client reads after the field's name
// ("member: invalid UTF-8"), or "" where Validate accepts s. The words
// name no package or type. O(len(s)), no allocation. Safe for concurrent
// use.
func Reason(s string) string {
	switch {
	case s == "":
		return "empty"
	case len(s) > MaxLen:
		return "longer than 128 bytes"
	case !utf8.ValidString(s):
		return "invalid UTF-8"
	case !clean(s):
		return "holds a control character"
	}
	return ""
}

// clean reports whether s is valid UTF-8 without control characters.
func clean(s string) bool {
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || unicode.IsControl(r) {
			return false
		}
		i += n
	}
	return true
}

// quote renders s for an error message: Go-quoted, cut after quoteMax bytes
// (at a rune start where one is near) with its full length noted, so a
// hostile 1 MB id cannot bloat a log line.
func quote(s string) string {
	if len(s) <= quoteMax {
		return fmt.Sprintf("%q", s)
	}
	cut := quoteMax
	for cut > quoteMax-utf8.UTFMax && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%q... (%d bytes)", s[:cut], len(s))
}

// validateLink validates Link's arguments, naming the field that is wrong.
func validateLink(member string, aliases []string) error {
	if err := Validate(member); err != nil {
		return fmt.Errorf("member: %w", err)
	}
	for i, a := range aliases {
		if err := Validate(a); err != nil {
			return fmt.Errorf("aliases[%d]: %w", i, err)
		}
	}
	return nil
}
