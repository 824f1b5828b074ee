package hub

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// smallDisk mounts a tmpfs of size bytes on a temporary directory, for a
// disk that really fills. It needs root; the test is skipped without it.
func smallDisk(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+size, "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("mount tmpfs: %v %s", err, out)
	}
	t.Cleanup(func() { _ = exec.Command("umount", "-l", dir).Run() })
	return dir
}

// TestDiskFullRecovers fills the disk under NATS's default store limit
// (75 % of the free space at start) with another file, so that JetStream's
// own writes fail (and its file store keeps failing them): writes fail,
// then answer ErrStoreFull at once, and Writable says so; once the file is
// removed, the disk watch restarts JetStream and writes and Writable
// recover with no restart of the Hub.
func TestDiskFullRecovers(t *testing.T) {
	dir := smallDisk(t, "16m")
	h := startHub(t, Config{DataDir: dir, SnapshotEvery: -1, SnapshotInterval: -1, Logger: slog.New(slog.NewTextHandler(tw{t}, nil))})
	ctx := context.Background()
	mustPut(t, h, "t1", "b", Settings{})
	filler := filepath.Join(dir, "filler")
	f, err := os.Create(filler)
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64<<10)
	for { // fill the disk
		if _, err := f.Write(buf); err != nil {
			break
		}
	}
	f.Close()
	items := make([]Item, 200)
	for round := 0; round < 100 && err == nil; round++ {
		for i := range items {
			items[i] = Item{Member: fmt.Sprintf("m%03d-%03d", round, i), Score: 1, ID: fmt.Sprintf("%03d-%03d-%s", round, i, strings.Repeat("x", 20))}
		}
		c, cancel := context.WithTimeout(ctx, 3*time.Second)
		_, err = h.Submit(c, "t1", "b", items)
		cancel()
	}
	if err == nil {
		t.Fatal("writes succeed on a full disk")
	}
	checkFor(t, 5*time.Second, func() error {
		if err := h.Writable(ctx); !errors.Is(err, ErrStoreFull) {
			return fmt.Errorf("Writable on a full disk: %v", err)
		}
		return nil
	})
	if _, err := h.Submit(ctx, "t1", "b", items[:1]); !errors.Is(err, ErrStoreFull) {
		t.Fatalf("a write once the disk is known full: %v, want ErrStoreFull at once", err)
	}
	if err := os.Remove(filler); err != nil {
		t.Fatal(err)
	}
	checkFor(t, 30*time.Second, func() error {
		c, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if err := h.Writable(c); err != nil {
			return err
		}
		_, err := h.Submit(c, "t1", "b", []Item{{Member: "after", Score: 2}})
		return err
	})
	if got := top(t, h, Loc{Tenant: "t1", Board: "b"}); len(got) == 0 || got[0] != "after:2" {
		t.Fatalf("after recovery: %v", got)
	}
}

type tw struct{ t *testing.T }

func (w tw) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
