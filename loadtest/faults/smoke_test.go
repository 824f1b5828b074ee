package faults

import (
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

var smoke = flag.Bool("faults.smoke", false, "run the fault suite's smoke subset (also with CI=true)")

// TestSmoke is the suite's CI subset: kill -9 of the stream leader and
// SIGSTOP of the leader, once each on a fresh 3-node cluster, with the
// checker. It needs no network namespace and no root.
func TestSmoke(t *testing.T) {
	if !*smoke && os.Getenv("CI") != "true" {
		t.Skip("the fault suite's smoke subset runs with CI=true or -faults.smoke")
	}
	bin := filepath.Join(t.TempDir(), "gateway")
	if out, err := exec.Command("go", "build", "-o", bin, "../../cmd/gateway").CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/gateway: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cfg := Config{Binary: bin, Writers: 4, Warm: time.Second, Hold: 3 * time.Second, Settle: 3 * time.Second}
	for _, name := range []string{"kill9-leader", "sigstop-leader"} {
		f, _ := FaultByName(name)
		r := RunOne(ctx, cfg, f, t.TempDir())
		t.Logf("%s: %d acknowledged, write gap %v, watcher silence %v, healthy not ready %v",
			name, r.Acked, r.WriteGap, r.WatchGap, r.NotReady)
		if r.Err != nil {
			t.Errorf("%s: %v", name, r.Err)
		}
		for _, v := range r.Violations {
			t.Errorf("%s: %s", name, v)
		}
	}
}
