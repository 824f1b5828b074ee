package loadtest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"
)

const floorTestConns = 20

// TestFloor runs the floor measurement small: 20 connections to a sink
// process, 10 ticks. Every write succeeds and both processes' CPU is
// counted.
func TestFloor(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	r, err := Floor(ctx, FloorConfig{Conns: floorTestConns, Size: 600, Interval: 20 * time.Millisecond, Duration: 200 * time.Millisecond,
		Sink: func(addr string, conns int) *exec.Cmd {
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			cmd.Env = append(os.Environ(), "RWLOAD_FLOOR_SINK="+addr)
			return cmd
		}})
	if err != nil {
		t.Fatalf("Floor: %v", err)
	}
	t.Log(r)
	if r.Writes < floorTestConns || r.Writes%floorTestConns != 0 || r.WritesPerSec <= 0 {
		t.Errorf("writes %d (%.0f/s), want whole ticks of %d", r.Writes, r.WritesPerSec, floorTestConns)
	}
	if r.MicrosPerMsg < 0 || r.SinkMicrosMsg < 0 {
		t.Errorf("negative CPU: %+v", r)
	}
}
