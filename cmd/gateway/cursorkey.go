package main

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/rankwire/rankwire/api"
)

// cursorSecretFile is the data directory's cursor secret: 32 random bytes
// written on the first start without --cluster-secret-file, read on every
// later one, so that cursors survive a restart of a single node.
const cursorSecretFile = "cursor.secret"

// cursorKey returns the key that seals paging cursors (api.Config.CursorKey):
// derived from the cluster secret where one is given, since every node of a
// cluster (and every gateway given the same file) has it and must open the
// others' cursors; else from the data directory's own secret. The secret
// itself never leaves this function.
func cursorKey(dataDir, clusterSecret string) ([]byte, error) {
	if clusterSecret != "" {
		return api.DeriveCursorKey([]byte(clusterSecret)), nil
	}
	secret, err := dataSecret(filepath.Join(dataDir, cursorSecretFile))
	if err != nil {
		return nil, fmt.Errorf("--data %s: cursor secret: %w", dataDir, err)
	}
	return api.DeriveCursorKey(secret), nil
}

// dataSecret reads the api.CursorKeyLen-byte secret at path, creating it
// (mode 0600, written then renamed into place) where it is missing. A file
// of another size is an error, never replaced: an operator's copy is not
// overwritten silently.
func dataSecret(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil && len(b) == api.CursorKeyLen:
		return b, nil
	case err == nil:
		return nil, fmt.Errorf("%s holds %d bytes, want %d (remove it to make a new one)", path, len(b), api.CursorKeyLen)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	b = make([]byte, api.CursorKeyLen)
	rand.Read(b) // never fails (crypto/rand's contract)
	tmp := path + ".new"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return b, nil
}
