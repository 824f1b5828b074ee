package natsconf

import (
	"errors"
	"fmt"
	"sync"
)

// FatalLog is the embedded server's logger while its own log is off
// (ServerOptions sets NoLog): it keeps the first fatal line and drops every
// other. nats-server reports a listener it cannot open (a route or client
// port another process holds) with a fatal log line only, which without a
// logger goes nowhere, and then carries on without that listener: its
// ReadyForConnections waits out its whole timeout, and a clustered node sat
// "waiting for a majority" with every route answering (the port's holder
// answered for the node's own route). The hub asks Err while it waits, and
// fails the start with the line. Set it with server.SetLogger before
// Start. Safe for concurrent use.
type FatalLog struct {
	mu    sync.Mutex
	first string // the first fatal line; "" before one
}

// Err returns the first fatal line as an error, or nil where there was none.
func (l *FatalLog) Err() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == "" {
		return nil
	}
	return errors.New(l.first)
}

// Fatalf keeps the first fatal line.
func (l *FatalLog) Fatalf(format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.first == "" {
		l.first = fmt.Sprintf(format, v...)
	}
}

// Noticef drops the line, like the rest of nats-server's log.
func (*FatalLog) Noticef(string, ...any) {}

// Warnf drops the line.
func (*FatalLog) Warnf(string, ...any) {}

// Errorf drops the line (route dial failures while a cluster forms).
func (*FatalLog) Errorf(string, ...any) {}

// Debugf drops the line.
func (*FatalLog) Debugf(string, ...any) {}

// Tracef drops the line.
func (*FatalLog) Tracef(string, ...any) {}
