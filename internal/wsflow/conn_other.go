//go:build !unix

package wsflow

import "syscall"

// writeOnce takes nothing where write(2) on the descriptor is not at hand:
// every write goes through the drain, a blocking write with a deadline.
func (f *Conn) writeOnce(uintptr) {
	f.rawErr = syscall.EAGAIN
}
