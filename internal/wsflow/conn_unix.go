//go:build unix

package wsflow

import "syscall"

// writeOnce is RawConn.Write's function: one write(2), retried only when
// a signal interrupted it; true, so that the runtime never parks on it.
func (f *Conn) writeOnce(fd uintptr) bool {
	for f.rawN < len(f.rawBuf) {
		n, err := syscall.Write(int(fd), f.rawBuf[f.rawN:])
		if err == syscall.EINTR {
			continue
		}
		if n > 0 {
			f.rawN += n
		}
		if err != nil || n <= 0 {
			f.rawErr = err
			return true
		}
	}
	return true
}
