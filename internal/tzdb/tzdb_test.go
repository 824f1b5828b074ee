package tzdb

import (
	"errors"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	for _, name := range []string{"UTC", "Europe/Malta", "America/Sao_Paulo", "Pacific/Chatham", "Etc/GMT+12"} {
		loc, err := Load(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if loc.String() != name {
			t.Errorf("%s: loaded as %q", name, loc.String())
		}
		again, _ := Load(name)
		if again != loc {
			t.Errorf("%s: a second load is another location", name)
		}
	}
}

// TestLoadRefuses checks that nothing but the database's own names
// resolves: not the host's zone, not a path, not a case variant.
func TestLoadRefuses(t *testing.T) {
	for _, name := range []string{"", "Local", "utc", "europe/malta", "/etc/localtime", "../zoneinfo.zip", "Europe/", "Mars/Olympus"} {
		if _, err := Load(name); !errors.Is(err, ErrUnknown) {
			t.Errorf("%q: %v, want ErrUnknown", name, err)
		}
	}
}

// TestOffsets pins the embedded data against known offsets, so that a
// copy of another release that moved them is noticed.
func TestOffsets(t *testing.T) {
	cases := []struct {
		zone string
		at   time.Time
		off  int // seconds east of UTC
	}{
		{"Europe/Malta", time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), 3600},
		{"Europe/Malta", time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC), 7200},
		{"Pacific/Chatham", time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), 13*3600 + 45*60},
		{"Pacific/Chatham", time.Date(2026, 7, 15, 12, 0, 0, 0, time.UTC), 12*3600 + 45*60},
		{"America/Sao_Paulo", time.Date(2026, 1, 15, 12, 0, 0, 0, time.UTC), -3 * 3600},
		{"America/Sao_Paulo", time.Date(2018, 1, 15, 12, 0, 0, 0, time.UTC), -2 * 3600}, // summer time until 2019
	}
	for _, c := range cases {
		loc, err := Load(c.zone)
		if err != nil {
			t.Fatal(err)
		}
		if _, off := c.at.In(loc).Zone(); off != c.off {
			t.Errorf("%s at %v: offset %d, want %d", c.zone, c.at, off, c.off)
		}
	}
}

// TestIgnoresHost: the host's zone settings do not reach a load.
func TestIgnoresHost(t *testing.T) {
	t.Setenv("ZONEINFO", t.TempDir()+"/missing.zip")
	t.Setenv("TZ", "America/New_York")
	loc, err := Load("Asia/Kathmandu")
	if err != nil {
		t.Fatal(err)
	}
	if _, off := time.Date(2026, 6, 1, 0, 0, 0, 0, time.UTC).In(loc).Zone(); off != 5*3600+45*60 {
		t.Errorf("Kathmandu at offset %d", off)
	}
}
