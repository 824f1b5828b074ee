package k6

import (
	"context"
	"fmt"
	"go/build"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/skiptest"
)

// scripts are the load scripts README.md documents; each must parse.
var scripts = []string{"burst.js", "soak.js", "lobby.js"}

// TestScriptsParse runs `k6 inspect --execution-requirements` on each script:
// it compiles the script with its imports, evaluates its options (scenarios
// and thresholds) with the default environment, and fails on any error.
// CI does not install k6 (building it takes minutes), so without it the test
// skips.
func TestScriptsParse(t *testing.T) {
	bin := findK6(t)
	for _, script := range scripts {
		t.Run(script, func(t *testing.T) {
			runK6(t, bin, "inspect", "--execution-requirements", script)
		})
	}
}

// TestViewChecker runs selftest.js, which feeds the scripts' view checker a
// made-up message sequence; its thresholds fail (and k6 exits non-zero)
// unless the checker counts exactly the gap, the inconsistent state, the
// resync and the probes the sequence holds. It needs no gateway.
func TestViewChecker(t *testing.T) {
	bin := findK6(t)
	runK6(t, bin, "run", "--quiet", "--no-color", "selftest.js")
}

// TestGolden runs golden.js, which feeds the view checker the protocol's
// golden messages (wire/testdata) and compares the state it makes with
// them; its thresholds fail unless every comparison passed.
func TestGolden(t *testing.T) {
	bin := findK6(t)
	runK6(t, bin, "run", "--quiet", "--no-color", "golden.js")
}

// runK6 runs k6 with args in this directory, failing the test with its
// output when it exits non-zero or takes over two minutes.
func runK6(t *testing.T, bin string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if out, err := exec.CommandContext(ctx, bin, args...).CombinedOutput(); err != nil {
		t.Fatalf("k6 %v: %v\n%s", args, err, out)
	}
}

// findK6 returns the k6 binary on PATH or in $GOBIN or $GOPATH/bin (where
// `go install go.k6.io/k6@v1.8.1` puts it), or skips the test.
func findK6(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("k6"); err == nil {
		return p
	}
	gobin := filepath.Join(build.Default.GOPATH, "bin", "k6")
	if dir := os.Getenv("GOBIN"); dir != "" {
		gobin = filepath.Join(dir, "k6")
	}
	if p, err := exec.LookPath(gobin); err == nil {
		return p
	}
	msg := fmt.Sprintf("k6 is not on PATH nor at %s: install it with `go install go.k6.io/k6@v1.8.1` to run the k6 script checks", gobin)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg) // .ci/run installs k6: missing there is a broken CI, not a skip
	}
	skiptest.Missing(t, "script", msg)
	return ""
}
