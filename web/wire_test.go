package web_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestWireGoldenNode runs testdata/wire_golden.test.mjs with Node's test
// runner: client.js applies the protocol's golden messages (wire/testdata,
// generated from package wire), sends the golden subscribe, and
// client.d.ts declares exactly the golden messages' fields. Without node
// it skips, unless CI=true.
func TestWireGoldenNode(t *testing.T) {
	node := tool(t, "node", "nodejs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "--test", "testdata/wire_golden.test.mjs").CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	if !strings.Contains(string(out), "# fail 0") || strings.Contains(string(out), "# pass 0") {
		t.Fatalf("node --test:\n%s", out)
	}
}
