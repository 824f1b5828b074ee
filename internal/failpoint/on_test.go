//go:build rankwire_failpoints && unix

package failpoint

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/ledger"
)

func TestParseDiverge(t *testing.T) {
	d, err := parseDiverge("t1/b/m3=1e6@15")
	if err != nil || *d != (diverge{tenant: "t1", board: "b", member: "m3", score: 1e6, seq: 15}) {
		t.Fatalf("parseDiverge: %+v %v", d, err)
	}
	for _, bad := range []string{"t1/b/m3=1@", "t1/b=1@2", "t1/b/m3@2", "t1/b/m3=x@2", "t1/b/m3=1@-2", "t1/b/c/m3=1@2"} {
		if _, err := parseDiverge(bad); err == nil {
			t.Errorf("parseDiverge(%q): no error", bad)
		}
	}
}

// AfterApply changes the asked tenant's state once, at the asked seq only.
func TestAfterApplyOnce(t *testing.T) {
	perturb = &diverge{tenant: "t1", board: "b", member: "m", score: 9, seq: 2}
	fired.Store(false)
	t.Cleanup(func() { perturb = nil })
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	st := ledger.New()
	if out := st.Apply(1, &ledger.Event{Kind: ledger.EvSettings, Board: "b", Settings: &ledger.Settings{}}); out.Err != nil {
		t.Fatal(out.Err)
	}
	st.Skip(2) // the event at seq 2, applied: the hook runs after it
	before := encode(t, st)
	AfterApply(log, "t1", 1, st) // another seq
	AfterApply(log, "t2", 2, st) // another tenant
	if !bytes.Equal(before, encode(t, st)) {
		t.Fatal("changed by another seq or tenant")
	}
	AfterApply(log, "t1", 2, st)
	changed := encode(t, st)
	if bytes.Equal(before, changed) || st.Seq() != 2 {
		t.Fatalf("not changed, or its seq moved (%d)", st.Seq())
	}
	AfterApply(log, "t1", 2, st)
	if !bytes.Equal(changed, encode(t, st)) {
		t.Fatal("changed twice")
	}
}

// BeforeRebuild waits for SIGUSR1 for the asked tenant only, and ends
// with its context.
func TestBeforeRebuildHolds(t *testing.T) {
	if holdFor == "" { // as init does where RANKWIRE_FAILPOINT_HOLD_REBUILD=t1
		holdFor, released = "t1", make(chan os.Signal, 1)
		signal.Notify(released, syscall.SIGUSR1)
		t.Cleanup(func() { signal.Stop(released); holdFor = "" })
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	BeforeRebuild(context.Background(), log, holdFor+"-other") // returns at once
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	BeforeRebuild(ctx, log, holdFor) // ends with ctx
	done := make(chan struct{})
	go func() { defer close(done); BeforeRebuild(context.Background(), log, holdFor) }()
	if err := syscall.Kill(syscall.Getpid(), syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("not released by SIGUSR1")
	}
}

func encode(t *testing.T, st *ledger.State) []byte {
	t.Helper()
	data, err := st.Encode(nil)
	if err != nil {
		t.Fatal(err)
	}
	return data
}
