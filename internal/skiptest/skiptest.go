// Package skiptest counts the tests a package skips for want of a tool
// (Chromium, Node, k6) and says so in go test's default output: a skip's
// reason shows only with -v, and a package whose tests all skipped still
// prints "ok". The tests of web and k6 share it. Test helper: only tests
// import it; the standard library only.
package skiptest

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
)

// missing counts the skipped tests by what is missing.
var missing struct {
	mu    sync.Mutex // guards the fields below
	kinds map[string]*skipped
	order []string // first-seen order of kinds' keys, for a stable report
}

// skipped is one missing tool: what it stops, why, and how many tests.
type skipped struct {
	what, why string
	n         int
}

// Missing records that t needs what is missing and skips it. what names
// the tests it stops ("browser"), why says what is missing and how to
// install it ("chromium not found (apt-get install chromium)"). Safe for
// concurrent use.
func Missing(t testing.TB, what, why string) {
	t.Helper()
	missing.mu.Lock()
	if missing.kinds == nil {
		missing.kinds = map[string]*skipped{}
	}
	k := what + "|" + why
	if missing.kinds[k] == nil {
		missing.kinds[k] = &skipped{what: what, why: why}
		missing.order = append(missing.order, k)
	}
	missing.kinds[k].n++
	missing.mu.Unlock()
	t.Skip(why)
}

// Main runs m's tests, reports the tests Missing skipped (pkg names the
// package in the report) and exits with the tests' code: a package's
// TestMain.
func Main(m *testing.M, pkg string) {
	code := m.Run()
	w, done := reportWriter()
	report(w, pkg)
	done()
	os.Exit(code)
}

// report writes one line per missing tool: "web: 19 browser tests
// skipped: chromium not found (apt-get install chromium)".
func report(w io.Writer, pkg string) {
	missing.mu.Lock()
	defer missing.mu.Unlock()
	for _, k := range missing.order {
		s := missing.kinds[k]
		noun := "tests"
		if s.n == 1 {
			noun = "test"
		}
		fmt.Fprintf(w, "%s: %d %s %s skipped: %s\n", pkg, s.n, s.what, noun, s.why)
	}
}

// reportWriter returns where the skip report is seen. go test keeps a
// passing package's output (stdout and stderr alike) to itself unless -v or
// -json: the "ok" line is all it prints. So without -v the report goes to
// the stderr of the go command that ran this binary (its parent, on Linux
// /proc/<ppid>/fd/2) where that is a terminal or a pipe (a CI log). Not
// where it is a regular file: a file reopened there has an offset of its
// own, and the go command's next line would overwrite the report. Else,
// and with -v, the report goes to this binary's own stderr.
func reportWriter() (io.Writer, func()) {
	if testing.Verbose() || !parentIsGo() {
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

// parentIsGo reports whether this test binary was started by the go
// command (and not run by hand, or through go test -exec).
func parentIsGo() bool {
	comm, err := os.ReadFile(fmt.Sprintf("/proc/%d/comm", os.Getppid()))
	return err == nil && strings.TrimSpace(string(comm)) == "go"
}
