package web_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// demoGateway builds cmd/gateway and runs it as `go run ./cmd/gateway` does
// (no flags: the demo tenant and the simulated tournament) on a free port.
// It returns the base URL; the gateway gets SIGTERM when the test ends.
func demoGateway(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "gateway")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/rankwire/rankwire/cmd/gateway").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	cmd := exec.Command(bin, "--addr", "127.0.0.1:0", "--metrics-addr", "127.0.0.1:0", "--data", t.TempDir())
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	addr := make(chan string, 1)
	go func() {
		ready := regexp.MustCompile(`msg=ready addr=(\S+)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := ready.FindStringSubmatch(sc.Text()); m != nil {
				addr <- m[1]
			}
		}
	}()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("gateway exit after SIGTERM: %v", err)
			}
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			t.Error("gateway still running 30 s after SIGTERM")
		}
	})
	select {
	case a := <-addr:
		return "http://" + a
	case <-time.After(60 * time.Second):
		t.Fatal("the demo gateway did not log ready within 60 s")
		return ""
	}
}

// demoReady is the page's condition for a screenshot: every board live with
// rows, the viewer highlighted, the panel counting.
const demoReady = `(() => {
  const board = (id) => document.getElementById(id);
  const rows = (id) => board(id) ? [...board(id).shadowRoot.querySelectorAll("tbody tr")] : [];
  const problems = [];
  for (const id of ["top", "around", "prize", "friends"]) {
    if (!board(id) || board(id).getAttribute("state") !== "live") problems.push(id + " not live");
  }
  if (rows("top").length !== 10) problems.push("top has " + rows("top").length + " rows");
  if (!rows("around").some((tr) => tr.classList.contains("me"))) problems.push("around: no viewer row");
  if (rows("prize").length !== 1) problems.push("prize line has no row");
  if (rows("friends").length !== 5) problems.push("friends has " + rows("friends").length + " rows");
  for (const id of ["top", "around", "prize", "friends"]) {
    if (rows(id).some((tr) => getComputedStyle(tr).opacity !== "1")) problems.push(id + " has a faded row");
  }
  const n = (id) => Number(document.getElementById(id).textContent.replace(/[^\d]/g, ""));
  if (n("players") !== 20000) problems.push("players " + document.getElementById("players").textContent);
  if (!(n("rate") > 0)) problems.push("rate " + document.getElementById("rate").textContent);
  return problems.join("; ");
})()`

// TestDemoPage opens the demo page of a real demo-mode gateway at a phone's,
// a tablet's and a laptop's width, waits until every view is live and the
// panel counts, and saves full-page screenshots into $RANKWIRE_SCREENSHOTS
// where set, else the test's temp dir. docs/screenshots/ holds them:
//
//	RANKWIRE_SCREENSHOTS=$PWD/docs/screenshots go test -run TestDemoPage ./web/
func TestDemoPage(t *testing.T) {
	chromium(t)
	base := demoGateway(t)
	dir := os.Getenv("RANKWIRE_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	}
	for _, v := range []struct {
		name          string
		width, height int
		open          func(*testing.T, int, int) context.Context
	}{
		{"demo-360.png", 360, 780, phone}, {"demo-390.png", 390, 844, phone},
		{"demo-768.png", 768, 1024, browser}, {"demo-1366.png", 1366, 900, browser},
	} {
		ctx := v.open(t, v.width, v.height)
		do(t, ctx, chromedp.Navigate(base+"/"))
		waitFor(t, "demo page live", 30*time.Second, func() string { return js[string](t, ctx, demoReady) })
		// Let a few pushes land so rows carry their movement markers, and the
		// panel's chart a few seconds of history.
		waitFor(t, "movement shown", 15*time.Second, func() string {
			if !js[bool](t, ctx, `[...document.querySelectorAll("rankwire-board")].some((b) => b.shadowRoot.querySelector(".mark"))`) {
				return "no up/down marker yet"
			}
			if n := js[int](t, ctx, `document.getElementById("sparkline").points.numberOfItems`); n < 6 {
				return "the panel's chart has few points"
			}
			return ""
		})
		png := shot(t, ctx)
		path := filepath.Join(dir, v.name)
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(png))
	}
}

func shot(t *testing.T, ctx context.Context) []byte {
	t.Helper()
	c, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	png, err := chromedp.Run(c, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	return png
}
