// Package tzdb resolves IANA time zone names from a copy of the tz
// database embedded in the binary (zoneinfo.zip, tzdata Version), never
// from the host's zoneinfo, the ZONEINFO variable or Go's own embedded copy.
//
// A board's day, week and month windows turn over at its local midnight,
// and every node of a cluster must decide those turnovers alike, replaying
// the same events into the same windows: the answer for a zone may depend
// only on the binary, never on the machine it runs on. time.LoadLocation
// reads the host's files first (and ZONEINFO before them), so two nodes
// with different tzdata packages would cut a day differently; time/tzdata
// is only its last resort and cannot be asked alone. Hence this copy, read
// from memory only. Its version is pinned in the repository, not by the Go
// toolchain: a rebuild with a newer Go does not move a turnover. To update
// it, copy $(go env GOROOT)/lib/time/zoneinfo.zip here and change Version
// (docs/OPERATIONS.md, "Time zones", says when that is safe).
//
// It imports the standard library only. Load is safe for concurrent use.
package tzdb

import (
	"archive/zip"
	"bytes"
	_ "embed" // zoneinfo.zip
	"errors"
	"fmt"
	"io"
	"sync"
	"time"
)

// Version is the tz database release of the embedded copy.
const Version = "2025c"

// MaxName bounds a zone name's length: the longest IANA name has 30 bytes.
const MaxName = 64

// ErrUnknown reports a name that is not a zone of the embedded database.
var ErrUnknown = errors.New("tzdb: not an IANA time zone")

//go:embed zoneinfo.zip
var zoneinfo []byte

var (
	mu    sync.Mutex // guards the fields below
	files map[string]*zip.File
	zones = map[string]*time.Location{}
)

// Load returns the zone named name ("UTC" is time.UTC) from the embedded
// database, cached: equal names give the same *time.Location. A name the
// database does not hold ("Local", "", a path) fails with ErrUnknown.
// O(1) after a zone's first load, which parses its few hundred bytes.
func Load(name string) (*time.Location, error) {
	if name == "UTC" {
		return time.UTC, nil
	}
	mu.Lock()
	defer mu.Unlock()
	if loc := zones[name]; loc != nil {
		return loc, nil
	}
	if err := indexLocked(); err != nil {
		return nil, err
	}
	f := files[name]
	if f == nil || len(name) > MaxName {
		return nil, fmt.Errorf("%w: %q", ErrUnknown, name)
	}
	loc, err := parse(name, f)
	if err != nil {
		return nil, err
	}
	zones[name] = loc
	return loc, nil
}

// indexLocked reads the embedded archive's directory, once.
func indexLocked() error {
	if files != nil {
		return nil
	}
	r, err := zip.NewReader(bytes.NewReader(zoneinfo), int64(len(zoneinfo)))
	if err != nil {
		return fmt.Errorf("tzdb: embedded database: %w", err)
	}
	files = make(map[string]*zip.File, len(r.File))
	for _, f := range r.File {
		files[f.Name] = f
	}
	return nil
}

func parse(name string, f *zip.File) (*time.Location, error) {
	rc, err := f.Open()
	if err != nil {
		return nil, fmt.Errorf("tzdb: %s: %w", name, err)
	}
	defer rc.Close()
	data, err := io.ReadAll(rc)
	if err != nil {
		return nil, fmt.Errorf("tzdb: %s: %w", name, err)
	}
	loc, err := time.LoadLocationFromTZData(name, data)
	if err != nil {
		return nil, fmt.Errorf("tzdb: %s: %w", name, err)
	}
	return loc, nil
}
