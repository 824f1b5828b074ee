package faults

import (
	"context"
	"fmt"
	"syscall"
	"time"
)

// mountLazyData puts every node's data directory on a lazyFS over
// <data>.backing (root and /dev/fuse).
func (c *Cluster) mountLazyData() error {
	for _, n := range c.Nodes {
		lz, err := mountLazy(n.Data+".backing", n.Data)
		if err != nil {
			c.unmountLazy()
			return err
		}
		c.lazy = append(c.lazy, lz)
	}
	return nil
}

func (c *Cluster) unmountLazy() {
	for _, lz := range c.lazy {
		lz.unmount()
	}
	c.lazy = nil
}

// powerLoss cuts the power of every node at once: kill -9 of each, every
// write not fsynced dropped (lazyFS), then all start again. The note says
// how many bytes the power loss took back.
func (r *run) powerLoss(ctx context.Context) error {
	if len(r.c.lazy) != len(r.c.Nodes) {
		return fmt.Errorf("faults: power-loss needs every data directory on the lazy FUSE filesystem")
	}
	for _, n := range r.c.Nodes {
		r.setExempt(n, true)
		n.Stop(syscall.SIGKILL, 10*time.Second)
	}
	var undone int64
	for i, lz := range r.c.lazy {
		b, err := lz.powerOff()
		undone += b
		if err != nil {
			return err
		}
		nlz, err := mountLazy(lz.backing, lz.mnt)
		if err != nil {
			return err
		}
		r.c.lazy[i] = nlz
	}
	r.note = fmt.Sprintf("the power loss dropped %d bytes written or cut since their file's last fsync", undone)
	sleep(ctx, r.cfg.Hold)
	for _, n := range r.c.Nodes {
		if err := r.c.StartNode(n); err != nil {
			return err
		}
	}
	for _, n := range r.c.Nodes {
		if err := r.c.WaitReady(ctx, n, 90*time.Second); err != nil {
			return err
		}
		r.setExempt(n, false)
	}
	return nil
}
