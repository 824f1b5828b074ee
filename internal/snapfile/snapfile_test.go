package snapfile

import (
	"bytes"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// A tenant without a file reads as none; a save reads back, and a second
// replaces the first whole, leaving no temporary file.
func TestSaveRead(t *testing.T) {
	f := In(t.TempDir())
	if data, err := f.Read("t1"); data != nil || err != nil {
		t.Fatalf("before any save: %q, %v", data, err)
	}
	for _, want := range [][]byte{[]byte("first snapshot"), []byte("second")} {
		if err := f.Save("t1", want); err != nil {
			t.Fatal(err)
		}
		if got, err := f.Read("t1"); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("read %q, %v; want %q", got, err, want)
		}
	}
	entries, err := os.ReadDir(f.Dir)
	if err != nil || len(entries) != 1 || entries[0].Name() != "t1.snap" {
		t.Fatalf("directory holds %v, %v; want t1.snap alone", entries, err)
	}
}

// RemoveStale deletes what an interrupted Save left and nothing else.
func TestRemoveStale(t *testing.T) {
	f := Files{Dir: t.TempDir()}
	stale, keep := []string{"t1.snap.123456", "t2.snap.9"}, []string{"t1.snap", "notes.txt"}
	for _, name := range append(stale, keep...) {
		if err := os.WriteFile(filepath.Join(f.Dir, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f.RemoveStale(slog.New(slog.NewTextHandler(io.Discard, nil)))
	for _, name := range stale {
		if _, err := os.Stat(filepath.Join(f.Dir, name)); !os.IsNotExist(err) {
			t.Errorf("%s still there: %v", name, err)
		}
	}
	for _, name := range keep {
		if _, err := os.Stat(filepath.Join(f.Dir, name)); err != nil {
			t.Errorf("%s removed: %v", name, err)
		}
	}
}
