package main

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"
)

// A stop step that never returns is given up after its bound, logged by
// name; one that returns is waited for (issue 25: a gateway always exits
// on SIGTERM).
func TestRunBoundedGivesUpAHungStep(t *testing.T) {
	var buf, dump bytes.Buffer
	log := slog.New(slog.NewTextHandler(&buf, nil))
	dumpTo = &dump
	defer func() { dumpTo = os.Stderr }()
	hang := make(chan struct{})
	defer close(hang)
	start := time.Now()
	if runBounded(log, func() { <-hang }, 50*time.Millisecond) {
		t.Fatal("a step that never returns reported finished")
	}
	if took := time.Since(start); took > 5*time.Second {
		t.Fatalf("gave up after %v, bound 50 ms", took)
	}
	if !strings.Contains(buf.String(), "shutdown step gave up") || !strings.Contains(buf.String(), "TestRunBoundedGivesUpAHungStep.func") {
		t.Fatalf("the log does not name the step given up: %q", buf.String())
	}
	if !strings.Contains(dump.String(), "TestRunBoundedGivesUpAHungStep") {
		t.Fatalf("no goroutine dump showing the hung step: %q", dump.String())
	}
	buf.Reset()
	ran := false
	if !runBounded(log, func() { ran = true }, time.Minute) || !ran {
		t.Fatal("a step that returns was not waited for")
	}
	if buf.Len() != 0 {
		t.Fatalf("a finished step logged: %q", buf.String())
	}
}
