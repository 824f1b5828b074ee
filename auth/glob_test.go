package auth

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestMatchGlob(t *testing.T) {
	tests := []struct {
		name    string
		pattern string
		board   string
		want    bool
	}{
		{"empty matches empty", "", "", true},
		{"empty pattern, non-empty name", "", "a", false},
		{"literal", "weekly", "weekly", true},
		{"literal, longer name", "weekly", "weekly2", false},
		{"literal, shorter name", "weekly", "week", false},
		{"star matches empty", "*", "", true},
		{"star matches all", "*", "slots-daily", true},
		{"prefix", "slots-*", "slots-daily", true},
		{"prefix, empty run", "slots-*", "slots-", true},
		{"prefix, mismatch", "slots-*", "poker-daily", false},
		{"suffix", "*-weekly", "poker-weekly", true},
		{"suffix, mismatch", "*-weekly", "poker-weekly-2", false},
		{"infix", "a*z", "abcz", true},
		{"infix, missing end", "a*z", "abc", false},
		{"two stars", "*-*", "slots-daily", true},
		{"two stars, no dash", "*-*", "slots", false},
		{"adjacent stars", "a**b", "ab", true},
		{"backtrack", "*ab", "aab", true},
		{"backtrack across repeats", "a*abc", "aababc", true},
		{"backtrack fails", "a*abc", "aababd", false},
		{"star crosses slash", "a*b", "a/x/b", true},
		{"question mark is literal", "a?", "ab", false},
		{"question mark matches itself", "a?", "a?", true},
		{"brackets are literal", "[ab]", "a", false},
		{"backslash is literal", `a\*`, `a\xyz`, true},
		{"UTF-8", "é*ü", "é-ö-ü", true},
		{"many stars, long name", "*a*a*a*a*b", strings.Repeat("a", 64), false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := matchGlob(tc.pattern, tc.board); got != tc.want {
				t.Errorf("matchGlob(%q, %q) = %v, want %v", tc.pattern, tc.board, got, tc.want)
			}
		})
	}
}

// globRegexp is the reference matcher: each '*' becomes ".*", everything else
// is quoted.
func globRegexp(pattern string) *regexp.Regexp {
	parts := strings.Split(pattern, "*")
	for i, p := range parts {
		parts[i] = regexp.QuoteMeta(p)
	}
	return regexp.MustCompile(`(?s)\A` + strings.Join(parts, ".*") + `\z`)
}

func FuzzGlob(f *testing.F) {
	seeds := [][2]string{
		{"slots-*", "slots-daily"}, {"*-weekly", "poker-weekly"}, {"a*abc", "aababc"},
		{"*", ""}, {"", ""}, {"a**b", "ab"}, {"*a*a*b", "aaaaab"}, {"é*", "éa"}, {"?", "?"},
		{"a.b", "axb"}, {"*x", "\n\nx"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, name string) {
		if len(pattern) > 256 || len(name) > 256 || !utf8.ValidString(pattern) || !utf8.ValidString(name) {
			t.Skip("the reference works on valid UTF-8; board names and claims are")
		}
		want := globRegexp(pattern).MatchString(name)
		if got := matchGlob(pattern, name); got != want {
			t.Fatalf("matchGlob(%q, %q) = %v, regexp says %v", pattern, name, got, want)
		}
	})
}
