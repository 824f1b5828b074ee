package live

import (
	"slices"
	"testing"

	"github.com/rankwire/rankwire/subscriptions"
	"github.com/rankwire/rankwire/wire"
)

// TestWireLimits: wire's limits of the live views and its close codes are
// the ones the plane enforces and sends, until the plane reads them from
// wire.
func TestWireLimits(t *testing.T) {
	for _, l := range []struct {
		name       string
		wire, live int
	}{
		{"MaxMessage", wire.MaxMessage, maxWSMessage},
		{"MaxSubID", wire.MaxSubID, maxSubIDLen},
		{"MaxSubscriptions", wire.MaxSubscriptions, MaxSubscriptions},
		{"MaxViewLimit", wire.MaxViewLimit, MaxViewLimit},
		{"MaxViewRadius", wire.MaxViewRadius, MaxViewRadius},
		{"MaxViewMembers", wire.MaxViewMembers, MaxViewMembers},
		{"MessageBurst", wire.MessageBurst, MessageBurst},
		{"MessageRate", wire.MessageRate, MessageRate},
		{"MaxCloseReason", wire.MaxCloseReason, maxReason},
		{"SinceChanges", wire.SinceChanges, subscriptions.DefaultRingSize},
	} {
		if l.wire != l.live {
			t.Errorf("wire.%s = %d, the plane enforces %d", l.name, l.wire, l.live)
		}
	}
	sent := []int{int(closeGoingAway), int(closeInvalidText), int(closeTooBig), int(closeExpired),
		int(closeForbidden), int(closeSlow), int(closeOverLimit)}
	var listed []int
	for _, c := range wire.CloseCodes {
		listed = append(listed, int(c))
	}
	if !slices.Equal(sent, listed) {
		t.Errorf("the plane sends close codes %v, wire.CloseCodes lists %v", sent, listed)
	}
}
