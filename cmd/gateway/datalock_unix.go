//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// lockData takes an exclusive lock (flock) on dir's lock file, creating dir
// and the file where missing, records this process's PID in it, and
// returns the function that releases it. The kernel releases the lock when
// the process dies, kill -9 included, so a stale file never blocks a start.
// A second gateway on dir fails with errDataLocked naming the holder's PID.
// The file itself stays: removing it would race with a gateway starting.
func lockData(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--data %s: %w", dir, err)
	}
	path := lockPath(dir)
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("--data %s: lock file: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: --data %s is used by another gateway (pid %s, lock %s); stop it or give this one another --data",
				errDataLocked, dir, lockHolder(path), path)
		}
		return nil, fmt.Errorf("--data %s: lock %s: %w", dir, path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return func() { f.Close() }, nil
}
