package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCursorKey: the cluster secret gives every node one key; without it
// the data directory's secret is made once (0600) and kept across starts;
// a damaged secret file is an error, not replaced.
func TestCursorKey(t *testing.T) {
	const cluster = "a-cluster-secret-of-32-bytes-or-more"
	k1, err1 := cursorKey(t.TempDir(), cluster)
	k2, err2 := cursorKey(t.TempDir(), cluster)
	if err1 != nil || err2 != nil || !bytes.Equal(k1, k2) {
		t.Fatalf("two nodes of one cluster: %x %v, %x %v; want one key", k1, err1, k2, err2)
	}
	dir := t.TempDir()
	a, err := cursorKey(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, cursorSecretFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the data directory's secret: %v, %v; want mode 0600", fi, err)
	}
	if b, _ := cursorKey(dir, ""); !bytes.Equal(a, b) {
		t.Error("a restart changed the cursor key")
	}
	if c, _ := cursorKey(t.TempDir(), ""); bytes.Equal(a, c) || bytes.Equal(a, k1) {
		t.Error("two data directories (or a data directory and a cluster) share a cursor key")
	}
	if err := os.WriteFile(filepath.Join(dir, cursorSecretFile), []byte("short"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := cursorKey(dir, ""); err == nil {
		t.Error("a 5-byte secret file was accepted")
	}
}
