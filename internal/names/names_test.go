package names

import (
	"regexp"
	"strings"
	"testing"
)

var re = regexp.MustCompile(Pattern)

func TestValid(t *testing.T) {
	for _, s := range []string{"a", "0", "weekly", "poker-final_2", strings.Repeat("a", 64)} {
		if !Valid(s) {
			t.Errorf("%q refused", s)
		}
	}
	for _, s := range []string{"", "-a", "_a", "A", "a.b", "a*", "a>", "a b", "é", strings.Repeat("a", 65), "a\x00"} {
		if Valid(s) {
			t.Errorf("%q accepted", s)
		}
	}
}

// Valid and Pattern agree on every input.
func FuzzValid(f *testing.F) {
	for _, s := range []string{"a", "-a", "a.b", "weekly", strings.Repeat("z", 64), strings.Repeat("z", 65), "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if Valid(s) != re.MatchString(s) {
			t.Fatalf("%q: Valid %v, Pattern %v", s, Valid(s), re.MatchString(s))
		}
	})
}
