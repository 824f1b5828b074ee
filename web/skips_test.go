package web_test

import (
	"testing"

	"github.com/rankwire/rankwire/internal/skiptest"
)

// skipMissing records that t needs what is missing and skips it, so that
// TestMain can say so in go test's default output (internal/skiptest).
// what names the tests it stops ("browser"), why says what is missing and
// how to install it ("chromium not found (apt-get install chromium)").
func skipMissing(t *testing.T, what, why string) {
	t.Helper()
	skiptest.Missing(t, what, why)
}

// TestMain runs the tests, then says which were skipped for a missing tool
// (where CI=true they fail instead: see chromium and tool).
func TestMain(m *testing.M) { skiptest.Main(m, "web") }
