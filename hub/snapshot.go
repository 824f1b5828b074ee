package hub

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
)

// A snapshot is one tenant's state at a stream sequence, in one file
// DataDir/snapshots/<tenant>.snap, replaced atomically (write a temporary
// file, fsync, rename). Layout, all integers uvarints unless noted:
//
//	magic "RWSNAP1\n"  seq  len+identity.Index bytes  nboards
//	per board, by name: name  len+settings JSON  nseen
//	  per seen id, by id: id  member  score f64  subscore f64  rank  applied  seq
//	  nwindows; per window, by kind then start: kind  start (varint)  seq  len+board bytes
//	CRC-32C of everything before, 4 bytes little-endian
//
// Strings are length-prefixed. The encoding is deterministic: equal states
// give equal files.

const snapMagic = "RWSNAP1\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func snapshotDir(dataDir string) string { return filepath.Join(dataDir, "snapshots") }

// snapshotter writes and loads tenant snapshots under dir. Safe for
// concurrent use by different tenants' replicas: each writes its own file.
type snapshotter struct {
	dir   string
	every int // events between snapshots; < 0: only at Close
	log   *slog.Logger
}

func (s *snapshotter) path(tenant string) string {
	return filepath.Join(s.dir, tenant+".snap")
}

// load returns the tenant's snapshotted state, or an empty state where there
// is no snapshot. O(snapshot size).
func (s *snapshotter) load(tenant string) (*state, error) {
	data, err := os.ReadFile(s.path(tenant))
	if errors.Is(err, fs.ErrNotExist) {
		return newState(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("hub: read snapshot: %w", err)
	}
	return decodeState(data)
}

// save writes data as the tenant's snapshot, atomically.
func (s *snapshotter) save(tenant string, data []byte) error {
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(s.dir, tenant+".snap.*")
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
	return os.Rename(tmp.Name(), s.path(tenant))
}

// maybeSnapshot writes a snapshot every s.every events. Called by the
// replica goroutine, the state's only writer, so it reads st without a
// lock; the replica applies nothing while it encodes and writes (O(state)).
func (r *replica) maybeSnapshot(seq uint64) {
	r.sinceSnap++
	if r.snaps.every > 0 && r.sinceSnap >= r.snaps.every {
		r.snapshot()
	}
}

// snapshot writes the state if it changed since the last snapshot.
func (r *replica) snapshot() {
	if r.st.seq == r.snapSeq {
		return
	}
	data, err := encodeState(r.st)
	if err == nil {
		err = r.snaps.save(r.tenant, data)
	}
	if err != nil {
		r.log.Error("hub: snapshot", "err", err)
		return
	}
	r.snapSeq, r.sinceSnap = r.st.seq, 0
	r.log.Debug("hub: snapshot written", "seq", r.st.seq, "bytes", len(data))
}

func encodeState(s *state) ([]byte, error) {
	w := &snapWriter{buf: []byte(snapMagic)}
	w.uint(s.seq)
	ix, err := s.ix.MarshalBinary()
	if err != nil {
		return nil, err
	}
	w.bytes(ix)
	names := sortedBoards(s)
	w.uint(uint64(len(names)))
	for _, name := range names {
		if err := w.board(name, s.boards[name]); err != nil {
			return nil, err
		}
	}
	return binary.LittleEndian.AppendUint32(w.buf, crc32.Checksum(w.buf, castagnoli)), nil
}
