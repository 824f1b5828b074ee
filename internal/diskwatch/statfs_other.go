//go:build !linux && !darwin

package diskwatch

import "errors"

// freeBytes is not measured here: the disk watch does nothing.
func freeBytes(string) (int64, error) {
	return 0, errors.New("free space: not measured on this system")
}
