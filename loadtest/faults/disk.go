package faults

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// tmpfsSize is each node's data filesystem for the disk-full fault: room
// for a minute of the suite's load, small enough to fill at once.
const tmpfsSize = "256m"

// mountData mounts a tmpfs of tmpfsSize on every node's data directory
// (root only); unmountData undoes it.
func (c *Cluster) mountData() error {
	for _, n := range c.Nodes {
		if err := os.MkdirAll(n.Data, 0o700); err != nil {
			return err
		}
		if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size="+tmpfsSize+",mode=0700", "tmpfs", n.Data).CombinedOutput(); err != nil {
			c.unmountData()
			return fmt.Errorf("faults: mount tmpfs on %s: %v: %s", n.Data, err, strings.TrimSpace(string(out)))
		}
		c.mounted = append(c.mounted, n.Data)
	}
	return nil
}

func (c *Cluster) unmountData() {
	for _, d := range c.mounted {
		exec.Command("umount", "-l", d).Run()
	}
	c.mounted = nil
}

// fill writes a file in dir until its filesystem is full and returns the
// file's path.
func fill(dir string) (string, error) {
	path := filepath.Join(dir, "filler")
	f, err := os.Create(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	chunk := make([]byte, 1<<20)
	for {
		if _, err := f.Write(chunk); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return path, nil
			}
			return path, err
		}
	}
}

// diskFull fills the leader's data filesystem for Hold, frees it, and
// waits for the leader to be ready again; where it is not within 30 s it
// restarts it (SIGTERM) and says so in the run's note.
func (r *run) diskFull(ctx context.Context) error {
	if len(r.c.mounted) == 0 {
		return errors.New("faults: disk-full needs the data directories on tmpfs")
	}
	n, err := r.target(ctx, true)
	if err != nil {
		return err
	}
	path, err := fill(n.Data)
	if err != nil {
		os.Remove(path)
		return err
	}
	sleep(ctx, r.cfg.Hold)
	if err := os.Remove(path); err != nil {
		return err
	}
	if r.c.WaitReady(ctx, n, 30*time.Second) == nil {
		r.setExempt(n, false)
		return nil
	}
	r.note = fmt.Sprintf("%s not ready 30 s after the disk was freed: restarted", n.Name)
	if err := n.Stop(syscall.SIGTERM, 60*time.Second); err != nil {
		r.cfg.Log.Warn("stop", "node", n.Name, "err", err)
	}
	return r.restart(ctx, n)
}
