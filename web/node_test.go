package web_test

import (
	"context"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// TestClientUnitsNode runs the client's unit tests (testdata/client_test.mjs)
// in Node, where one is installed: the close-code decisions and waits on an
// injected clock, without a browser. TestClientUnits runs the same tests in
// Chromium, which CI requires; Node is optional, so this one skips without it.
func TestClientUnitsNode(t *testing.T) {
	node := tool(t, "node", "nodejs")
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, node, "testdata/client_test.mjs").CombinedOutput()
	text := strings.TrimSpace(string(out))
	if err != nil {
		t.Fatalf("node testdata/client_test.mjs: %v\n%s", err, text)
	}
	if !strings.Contains(text, " passed, 0 failed") {
		t.Fatalf("unexpected output:\n%s", text)
	}
	t.Log(text)
}
