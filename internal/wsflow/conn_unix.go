//go:build unix

package wsflow

import "syscall"

// writeOnce is RawConn.Control's function: one write on the non-blocking
// descriptor (EAGAIN when the socket's buffer is full; see sockWrite),
// retried only when a signal interrupted it.
func (f *Conn) writeOnce(fd uintptr) {
	for f.rawN < len(f.rawBuf) {
		n, err := sockWrite(fd, f.rawBuf[f.rawN:])
		if err == syscall.EINTR {
			continue
		}
		if n > 0 {
			f.rawN += n
		}
		if err != nil || n <= 0 {
			f.rawErr = err
			return
		}
	}
}
