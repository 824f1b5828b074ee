package k6

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"
	"testing"
)

// skippedNoK6 counts the tests skipped for want of k6, so that TestMain
// can say so in go test's default output, where a skip's reason does not
// show (web/skips_test.go does the same for Chromium and Node).
var skippedNoK6 atomic.Int32

// TestMain runs the tests, then says how many skipped without k6: "k6: 3
// tests skipped: k6 not found (go install go.k6.io/k6@v1.8.1)".
func TestMain(m *testing.M) {
	code := m.Run()
	if n := skippedNoK6.Load(); n > 0 {
		w, done := skipReportWriter()
		fmt.Fprintf(w, "k6: %d tests skipped: k6 not found (go install go.k6.io/k6@v1.8.1)\n", n)
		done()
	}
	os.Exit(code)
}

// skipReportWriter returns where the skip report is seen. go test keeps a
// passing package's output to itself unless -v or -json, so without -v the
// report goes to the stderr of the go command that ran this binary (on
// Linux /proc/<ppid>/fd/2) where that is a terminal or a pipe; not a
// regular file, whose reopened offset would let go's next line overwrite
// the report. Else, and with -v, this binary's own stderr.
func skipReportWriter() (io.Writer, func()) {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", os.Getppid()))
	if testing.Verbose() || err != nil || strings.TrimSpace(string(comm)) != "go" {
		return os.Stderr, func() {}
	}
	path := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	if fi, err := os.Stat(path); err != nil || fi.Mode().IsRegular() {
		return os.Stderr, func() {}
	}
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return os.Stderr, func() {}
	}
	return f, func() { f.Close() }
}
