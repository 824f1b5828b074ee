package live

import (
	"net/http"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/wire"
)

// pingEnv is an env pinging every interval, without heartbeats (so that a
// raw client sees control frames only), and one raw client of tenant a.
func pingEnv(t *testing.T, interval time.Duration) (*env, *rawWS) {
	e := newEnv(t, Options{PingInterval: interval, HeartbeatInterval: -1})
	r, status := e.rawDial("access_token="+e.token("a", auth.RoleRead), nil)
	if status != http.StatusSwitchingProtocols {
		t.Fatalf("upgrade answered %d", status)
	}
	return e, r
}

// TestPingUnansweredCloses: a client that reads every frame but never
// answers a ping gets one ping, and at the next visit, an interval later,
// the close 4008 "no pong": within about two intervals of connecting.
func TestPingUnansweredCloses(t *testing.T) {
	const interval = 250 * time.Millisecond
	_, r := pingEnv(t, interval)
	start := time.Now()
	pings := 0
	for {
		op, p, err := r.frame()
		if err != nil {
			t.Fatalf("after %d pings, no close frame: %v", pings, err)
		}
		if op == opPing {
			pings++
			continue
		}
		if op != opClose || len(p) < 2 {
			t.Fatalf("frame of opcode %d (%q), want a ping or the close", op, p)
		}
		code, reason := wire.CloseCode(uint16(p[0])<<8|uint16(p[1])), string(p[2:])
		if code != wire.CloseSlow || reason != "no pong" {
			t.Fatalf("closed %d %q, want %d \"no pong\"", code, reason, wire.CloseSlow)
		}
		break
	}
	if pings != 1 {
		t.Fatalf("%d pings before the close, want 1 (closed at the visit after it)", pings)
	}
	// Two intervals, and slack for a loaded machine.
	if took := time.Since(start); took > 2*interval+2*time.Second {
		t.Fatalf("closed after %v, want about two intervals (%v)", took, 2*interval)
	}
}

// TestPingAnsweredStaysOpen: a client that answers every ping with its
// pong stays connected over several intervals. The interval is also the
// time the pong may take to be read: 250 ms, for a loaded machine.
func TestPingAnsweredStaysOpen(t *testing.T) {
	e, r := pingEnv(t, 250*time.Millisecond)
	for pings := 0; pings < 5; {
		op, p, err := r.frame()
		if err != nil {
			t.Fatalf("after %d pings: %v", pings, err)
		}
		if op != opPing {
			t.Fatalf("after %d answered pings, frame of opcode %d (%q), want pings only", pings, op, p)
		}
		pings++
		r.write(appendClientFrame(nil, 0xA, p)) // the pong, echoing the payload
	}
	if n := testutil.ToFloat64(e.p.metrics.conns); n != 1 {
		t.Fatalf("%v connections open after five answered pings, want 1", n)
	}
}

// TestWheelSlots: members spread evenly over the slots, and removing one
// keeps every other member's place right.
func TestWheelSlots(t *testing.T) {
	w := newWheel(time.Second, func(lc liveConn) *wheelPos { return &lc.(*wsConn).ka.ping }, nil)
	if len(w.slots) != int(time.Second/wheelTick) {
		t.Fatalf("%d slots, want %d", len(w.slots), time.Second/wheelTick)
	}
	conns := make([]*wsConn, 23)
	for i := range conns {
		conns[i] = &wsConn{}
		w.add(conns[i])
	}
	for s, members := range w.slots {
		if n := len(members); n < 4 || n > 5 {
			t.Fatalf("slot %d holds %d, want 4 or 5 of 23 in 5 slots", s, n)
		}
	}
	for _, i := range []int{0, 5, 22, 10, 15} { // firsts and lasts of slot 0
		w.remove(conns[i])
		w.remove(conns[i]) // a second time: nothing
	}
	total := 0
	for s, members := range w.slots {
		for i, lc := range members {
			if pos := lc.(*wsConn).ka.ping; pos != (wheelPos{int32(s + 1), int32(i)}) {
				t.Fatalf("slot %d index %d: member says %+v", s, i, pos)
			}
			total++
		}
	}
	if total != 18 {
		t.Fatalf("%d members left, want 18", total)
	}
}

// TestHeartbeatsSpread: the heartbeats of one interval are spread over it,
// each connection at its own offset (the wheel's slots, 200 ms apart),
// not sent to every connection at one moment; each connection still gets
// one per interval.
func TestHeartbeatsSpread(t *testing.T) {
	const every = time.Second // five slots
	e := newEnv(t, Options{HeartbeatInterval: every})
	tok := e.token("a", auth.RoleRead)
	clients := make([]*wsClient, 10)
	for i := range clients {
		clients[i] = e.dial("access_token="+tok, true, nil)
	}
	offsets := map[time.Duration]bool{}
	for _, c := range clients {
		beats := beatsFor(t, c, 3)
		at := beatAt(t, beats[1])
		offsets[at.Sub(at.Truncate(every))/(100*time.Millisecond)] = true
		if gap := beatAt(t, beats[2]).Sub(at); gap < every*9/10 || gap > 4*every {
			t.Fatalf("a connection's heartbeats %v apart, want about %v", gap, every)
		}
	}
	if len(offsets) < 3 {
		t.Fatalf("10 connections' heartbeats at %d offsets in the interval, want them spread over the slots", len(offsets))
	}
}
