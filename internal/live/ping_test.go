package live

import (
	"fmt"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// TestPings: a client that reads (and so answers pings) stays connected
// across ping intervals; one that never reads cannot answer and is
// dropped (its 4008 close frame may never reach a client that does not
// read, as PROTOCOL.md says). The interval, 200 ms, is also the time a
// pong may take: at 20 ms a loaded machine delayed the reading client's
// pong past it.
func TestPings(t *testing.T) {
	e := newEnv(t, Options{PingInterval: 200 * time.Millisecond})
	tok := e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour))
	e.putBoard("a", "pinged", hub.Settings{})
	alive := e.dial("access_token="+tok, true, nil)
	deaf := e.dial("access_token="+tok, false, nil)
	checkFor(t, 10*time.Second, func() error {
		if n := testutil.ToFloat64(e.p.metrics.conns); n != 1 {
			return fmt.Errorf("%v connections open, want the deaf one closed", n)
		}
		return nil
	})
	_ = deaf
	alive.Subscribe("s1", "pinged", map[string]any{"kind": "top", "limit": 3})
	checkFor(t, 10*time.Second, func() error {
		if _, ok := alive.Rows("s1"); !ok {
			return fmt.Errorf("no snapshot for the reading client")
		}
		return nil
	})
}
