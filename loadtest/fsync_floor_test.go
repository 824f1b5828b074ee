package loadtest

import (
	"context"
	"os"
	"testing"
	"time"
)

// TestFsyncFloor runs the floor briefly: it counts fsyncs, the counts
// agree, the CPU is not negative, and the files are removed.
func TestFsyncFloor(t *testing.T) {
	dir := t.TempDir()
	r, err := FsyncFloor(context.Background(), FsyncFloorConfig{Dir: dir, Size: 512, Files: 2, Duration: 100 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	if r.Fsyncs < 2 || r.Fsyncs != r.Wall.Count || r.PerSecond <= 0 {
		t.Fatalf("report %+v: want fsyncs counted in both places", r)
	}
	if r.UserUS < 0 || r.SysUS < 0 {
		t.Fatalf("report %+v: negative CPU", r)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Fatalf("%d files left in the directory", len(left))
	}
	if _, err := FsyncFloor(context.Background(), FsyncFloorConfig{Dir: dir, Size: 0, Files: 1, Duration: time.Second}); err == nil {
		t.Fatal("size 0 accepted")
	}
}
