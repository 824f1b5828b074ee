package ledger

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
)

func TestProfileRefused(t *testing.T) {
	for _, tt := range []struct {
		p    Profile
		want string
	}{
		{Profile{}, "name: 0 bytes, want 1..64"},
		{Profile{Name: strings.Repeat("x", 65)}, "name: 65 bytes"},
		{Profile{Name: "a\x00b"}, "name: invalid UTF-8 or a control character"},
		{Profile{Name: "a\xff"}, "name: invalid UTF-8"},
		{Profile{Name: "a", Avatar: "http://cdn.example/a.png"}, "avatar: \"http://cdn.example/a.png\" is not an https URL"},
		{Profile{Name: "a", Avatar: "https://"}, "avatar: "},
		{Profile{Name: "a", Avatar: "https://u:p@cdn.example/a.png"}, "avatar: "},
		{Profile{Name: "a", Avatar: "https://cdn.example/" + strings.Repeat("a", 500)}, "avatar: 520 bytes, at most 512"},
		{Profile{Name: "a", Country: "XX"}, "country: \"XX\" is not an ISO 3166-1 alpha-2 code"},
		{Profile{Name: "a", Country: "M"}, "country: "},
		{Profile{Name: "a", Country: " M"}, "country: "},
	} {
		_, err := tt.p.normalize()
		var he *Error
		if !errors.As(err, &he) || !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(he.Msg, tt.want) {
			t.Errorf("%+v: %v, want a bad request %q", tt.p, err, tt.want)
		}
	}
	if n := strings.Count(countryCodes, " ") - 1; n != 249 {
		t.Errorf("%d country codes, ISO 3166-1 assigns 249", n)
	}
}

// BenchmarkProfiles reports the heap one profile costs in a tenant of
// 100,000 profiled members (a 12-byte name, a 40-byte avatar URL, a
// country), beyond its member id.
func BenchmarkProfiles(b *testing.B) {
	const n = 100_000
	for range b.N {
		s := New()
		for i := range n {
			if _, err := s.ix.Intern(fmt.Sprintf("member-%07d", i)); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		for i := range n {
			ev := &Event{Kind: EvProfile, Member: fmt.Sprintf("member-%07d", i), At: 1,
				Profile: &Profile{Name: fmt.Sprintf("Player %06d", i), Avatar: fmt.Sprintf("https://cdn.example.com/a/%013d.png", i), Country: "MT"}}
			if err := s.applyProfile(uint64(i+1), ev); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&m1)
		b.ReportMetric(float64(m1.HeapAlloc-m0.HeapAlloc)/n, "B/profile")
		runtime.KeepAlive(s)
	}
}
