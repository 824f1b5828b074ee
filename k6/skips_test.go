package k6

import (
	"testing"

	"github.com/rankwire/rankwire/internal/skiptest"
)

// TestMain runs the tests, then says how many skipped without k6 (findK6
// records them), in go test's default output too, where a skip's reason
// does not show (internal/skiptest).
func TestMain(m *testing.M) { skiptest.Main(m, "k6") }
