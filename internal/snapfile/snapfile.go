// Package snapfile keeps each tenant's latest snapshot as one file in a
// node's data directory, DataDir/snapshots/<tenant>.snap, replaced
// atomically (write a temporary file, fsync, rename) so that a crash
// leaves the old snapshot or the new one, never half of one. What the bytes
// hold is package internal/ledger's (the snapshot codec); when to take a
// snapshot is package hub's, and the cluster's shared copy is
// internal/snapbucket's.
//
// It imports the standard library only.
package snapfile

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// Files is the snapshot files under Dir. Safe for concurrent use by
// different tenants: each reads and writes its own file. Tenant names are
// valid names (internal/names): no separator, no dot.
type Files struct{ Dir string }

// In returns the Files of a node whose data directory is dataDir.
func In(dataDir string) Files { return Files{filepath.Join(dataDir, "snapshots")} }

// Path returns the file of tenant's snapshot.
func (f Files) Path(tenant string) string { return filepath.Join(f.Dir, tenant+".snap") }

// Read returns tenant's snapshot bytes; (nil, nil) where it has none.
func (f Files) Read(tenant string) ([]byte, error) {
	data, err := os.ReadFile(f.Path(tenant))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("hub: read snapshot: %w", err)
	}
	return data, nil
}

// Save writes data as tenant's snapshot, atomically: the file holds the
// old bytes or data, whatever happens meanwhile. One fsync.
func (f Files) Save(tenant string, data []byte) error {
	if err := os.MkdirAll(f.Dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(f.Dir, tenant+".snap.*") // tempPattern
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name()) // fails harmlessly after the rename
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), f.Path(tenant))
}

// tempPattern matches the temporary files Save creates (tenant names hold
// no dot, so no snapshot itself matches).
const tempPattern = "*.snap.*"

// RemoveStale deletes the temporary files a Save interrupted by a crash
// (kill -9 between CreateTemp and the rename) left in the directory. Call
// it before any Save of this process. O(files in the directory). A file
// it cannot remove is logged, not fatal: it costs disk space, not
// correctness.
func (f Files) RemoveStale(log *slog.Logger) {
	names, _ := filepath.Glob(filepath.Join(f.Dir, tempPattern)) // the only error is a bad pattern
	for _, name := range names {
		if err := os.Remove(name); err != nil {
			log.Warn("hub: stale snapshot temp file", "file", name, "err", err)
			continue
		}
		log.Info("hub: removed stale snapshot temp file", "file", name)
	}
}
