//go:build unix

package connguard

import "syscall"

// limit returns the process's soft RLIMIT_NOFILE (which the Go runtime
// raises to the hard limit at start), or 0 where it cannot be read.
func limit() int {
	var rl syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &rl); err != nil || rl.Cur > 1<<30 {
		return 0
	}
	return int(rl.Cur)
}
