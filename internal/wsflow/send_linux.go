package wsflow

import (
	"syscall"
	"unsafe"
)

// sockWrite writes p to the socket fd with one send(2) (sendto without an
// address): the socket layer at once, without write(2)'s generic file
// path, and MSG_NOSIGNAL, so that a peer gone away is an EPIPE only, not
// also a SIGPIPE for the runtime to field. p is not empty. (syscall.Sendto
// drops the count a stream socket's partial send needs, hence the raw call;
// the pointer's conversion in the call's arguments is the one unsafe's
// rules allow for a system call.)
func sockWrite(fd uintptr, p []byte) (int, error) {
	n, _, errno := syscall.Syscall6(syscall.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&p[0])), uintptr(len(p)),
		syscall.MSG_NOSIGNAL, 0, 0)
	if errno == syscall.ENOTSOCK { // a descriptor that is not a socket (a pipe under a net.Conn): write(2) serves
		return syscall.Write(int(fd), p)
	}
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
