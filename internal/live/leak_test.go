package live

import (
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// openFiles counts this process's open file descriptors.
func openFiles(t *testing.T) int {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skipf("no /proc/self/fd: %v", err)
	}
	return len(fds)
}

// TestAbruptDisconnectFreesSocket: clients that vanish without a close
// handshake (a bare TCP close) leave no socket behind on the server: every
// descriptor they cost comes back.
func TestAbruptDisconnectFreesSocket(t *testing.T) {
	e := newEnv(t, Options{})
	tok := e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour))
	before := openFiles(t)
	for range 30 {
		c, err := e.tryDial("access_token="+tok, nil)
		if err != nil {
			t.Fatal(err)
		}
		c.CloseNow() // no close frame: the TCP connection just ends
	}
	checkFor(t, 10*time.Second, func() error {
		if n := openFiles(t); n > before+2 {
			return fmt.Errorf("%d descriptors open, %d before the clients came and went", n, before)
		}
		return nil
	})
}
