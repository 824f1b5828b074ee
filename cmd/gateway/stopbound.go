package main

import (
	"context"
	"io"
	"log/slog"
	"os"
	"reflect"
	"runtime"
	"runtime/pprof"
	"strings"
	"time"
)

// stopStepBound bounds each step of a stop (the hub's close, which writes
// the snapshots and shuts the embedded NATS server down, is the longest:
// well under a second on a 2-core machine, more with many large boards).
// A step still running then is given up: its name and every goroutine's
// stack are logged and the stop goes on, so that a SIGTERM always ends
// the process. What the step had not done is redone at the next start:
// the snapshots it did not write are rebuilt from the stream, which holds
// every acknowledged submission.
const stopStepBound = 15 * time.Second

// dumpTo is where a shutdown that gives up writes the goroutines: the
// process's stderr, where its log goes (a test's buffer in tests).
var dumpTo io.Writer = os.Stderr

// runBounded runs the stop step f and returns once it has returned or
// bound has passed, whichever is first. It reports whether f finished. A
// step given up is left running: the process exits after its stop, and
// nothing else waits for the step.
func runBounded(log *slog.Logger, f func(), bound time.Duration) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	t := time.NewTimer(bound)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
	}
	name := stepName(f)
	log.Error("shutdown step gave up: still running after its bound; the process exits without it (its goroutines follow on stderr)",
		"step", name, "bound", bound)
	// The grouped form: one stack per distinct state, short enough for a log.
	_ = pprof.Lookup("goroutine").WriteTo(dumpTo, 1)
	return false
}

// stepName names a stop step by its function ("startHub.func3" for the
// third closure of startHub), for the log of a step given up.
func stepName(f func()) string {
	fn := runtime.FuncForPC(reflect.ValueOf(f).Pointer())
	if fn == nil {
		return "unknown"
	}
	name := fn.Name()
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	return strings.TrimPrefix(strings.TrimPrefix(name, "main."), "(*gateway).")
}

// hardStop bounds a whole shutdown, from the signal to the exit: the HTTP
// drain (shutdownTimeout) and every stop step within its own bound leave
// it unused; it catches a wait outside them, so that a SIGTERM always ends
// the process.
const hardStop = 2 * time.Minute

// exitIfStuck exits the process with status 1, after logging every
// goroutine's stack, where the shutdown that ctx's end starts has not
// returned (the returned function) within hardStop.
func exitIfStuck(ctx context.Context, log *slog.Logger) (returned func()) {
	done := make(chan struct{})
	go func() {
		select {
		case <-done:
			return
		case <-ctx.Done():
		}
		t := time.NewTimer(hardStop)
		defer t.Stop()
		select {
		case <-done:
		case <-t.C:
			log.Error("shutdown not finished: the process exits now (its goroutines follow on stderr)", "bound", hardStop)
			_ = pprof.Lookup("goroutine").WriteTo(dumpTo, 1)
			os.Exit(1)
		}
	}()
	return func() { close(done) }
}
