//go:build !unix

package main

import (
	"fmt"
	"os"
)

// lockData creates dir; without flock here, it does not lock it: run one
// gateway per --data.
func lockData(dir string) (release func(), err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("--data %s: %w", dir, err)
	}
	return func() {}, nil
}
