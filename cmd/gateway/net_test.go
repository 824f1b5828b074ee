package main

import (
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/testport"
)

// freePort returns a loopback port free a moment ago, below the ephemeral
// range (see internal/testport).
func freePort(t *testing.T) int {
	t.Helper()
	return testport.Free(t)
}

// waitForPort polls until something accepts on port, for up to 30 s.
func waitForPort(t *testing.T, port int) {
	t.Helper()
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	await.For(t, 30*time.Second, func() error {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
		}
		return err
	})
}
