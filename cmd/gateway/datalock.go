package main

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockName is the lock file in --data that one gateway holds for its life.
const lockName = "gateway.lock"

// errDataLocked: another process holds the data directory's lock. Two
// gateways on one JetStream store lose acknowledged writes, so the second
// refuses to start.
var errDataLocked = errors.New("data directory in use")

// lockHolder returns the PID recorded in the lock file at path, or
// "unknown" (the holder may not have written it yet).
func lockHolder(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "unknown"
	}
	pid := strings.TrimSpace(string(b))
	if _, err := strconv.Atoi(pid); err != nil {
		return "unknown"
	}
	return pid
}

func lockPath(dir string) string { return filepath.Join(dir, lockName) }
