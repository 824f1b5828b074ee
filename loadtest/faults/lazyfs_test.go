package faults

import (
	"os"
	"path/filepath"
	"testing"
)

// TestLazyFSPowerOff writes through the FUSE filesystem, fsyncs part of
// it, and checks that a power off keeps exactly the fsynced part. It needs
// /dev/fuse and root (it mounts).
func TestLazyFSPowerOff(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a FUSE filesystem needs root")
	}
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("no FUSE: %v", err)
	}
	dir := t.TempDir()
	lz, err := mountLazy(filepath.Join(dir, "backing"), filepath.Join(dir, "mnt"))
	if err != nil { // root in a container without CAP_SYS_ADMIN: no mounts at all
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() { lz.unmount() })
	f, err := os.Create(filepath.Join(dir, "mnt", "log"))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("synced")
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	f.WriteString(" and lost")
	f.WriteAt([]byte("S"), 0)
	f.Close()
	if b, _ := os.ReadFile(filepath.Join(dir, "mnt", "log")); string(b) != "Synced and lost" {
		t.Fatalf("before the power off the file reads %q", b)
	}
	lost, err := lz.powerOff()
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "backing", "log")); string(b) != "synced" || lost != 10 {
		t.Errorf("after the power off: %q, %d bytes not fsynced; want \"synced\", 10", b, lost)
	}
}
