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

// ErrDistrusted is Read's error while tenant's snapshot is distrusted.
var ErrDistrusted = errors.New("snapfile: this node's copy of the tenant diverged from the cluster's and was not rebuilt since: its snapshot file is not loaded")

// Read returns tenant's snapshot bytes; (nil, nil) where it has none, and
// ErrDistrusted while Distrust's mark stands.
func (f Files) Read(tenant string) ([]byte, error) {
	if _, err := os.Stat(f.markPath(tenant)); err == nil {
		return nil, ErrDistrusted
	}
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

// markPath is the file whose presence distrusts tenant's snapshot.
func (f Files) markPath(tenant string) string { return filepath.Join(f.Dir, tenant+".diverged") }

// Distrust marks tenant's snapshot file as not to be loaded, whatever is
// written to it after, until Trust: a node whose copy of the tenant
// diverged must not restart from it, and the saver may still be writing
// the diverged state. The mark is on disk before it returns (the file and
// the directory are synced), so a crash right after keeps it. A failure
// is logged to log and returned.
func (f Files) Distrust(tenant string, log *slog.Logger) error {
	err := os.MkdirAll(f.Dir, 0o755)
	var mark *os.File
	if err == nil {
		mark, err = os.Create(f.markPath(tenant))
	}
	if err == nil {
		err = errors.Join(mark.Close(), syncDir(f.Dir))
	}
	if err != nil {
		log.Error("hub: a diverged tenant's snapshot file could not be marked: a restart before its rebuild may load it", "tenant", tenant, "err", err)
	}
	return err
}

// Trust removes Distrust's mark: the snapshot file holds a state that may
// be loaded again (the rebuilt one, written before the call). Where there
// is no mark it does nothing. A failure is logged to log and returned
// (the file then stays distrusted: a restart replays the log instead).
func (f Files) Trust(tenant string, log *slog.Logger) error {
	err := os.Remove(f.markPath(tenant))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err == nil {
		err = syncDir(f.Dir)
	}
	if err != nil {
		log.Warn("hub: the rebuilt tenant's snapshot file stays distrusted: a restart replays its log", "tenant", tenant, "err", err)
	}
	return err
}

// syncDir makes the entries of dir durable (a created or removed file).
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
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
