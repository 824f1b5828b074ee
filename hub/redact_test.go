package hub

import (
	"context"
	"strings"
	"testing"
	"time"
)

// A NATS URL's password never reaches an error: the gateway prints the
// error on a failed start.
func TestConnectErrorHidesPassword(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := Start(ctx, Config{DataDir: t.TempDir(), NATSURL: "nats://u:s3cret@127.0.0.1:1"})
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("start against an unreachable NATS with a password: %v", err)
	}
}
