//go:build unix && !linux

package wsflow

import "syscall"

// sockWrite writes p to the socket fd with one write(2).
func sockWrite(fd uintptr, p []byte) (int, error) { return syscall.Write(int(fd), p) }
