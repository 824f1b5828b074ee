package main

import (
	"strings"
	"testing"
)

// TestRacesSplitsOwnFromUpstream: a report whose racing accesses are all
// inside nats-server is upstream even though its goroutines were created
// from our code; one access in our code makes it ours.
func TestRacesSplitsOwnFromUpstream(t *testing.T) {
	log := `time=… level=INFO msg=ready addr=127.0.0.1:1
==================
WARNING: DATA RACE
Read at 0x00c000005600 by goroutine 215:
  github.com/nats-io/nats-server/v2/server.(*jetStream).applyStreamMsgOp()
      /x/jetstream_cluster.go:6083 +0xba4

Previous write at 0x00c000005600 by goroutine 214:
  github.com/nats-io/nats-server/v2/server.(*batchStagedDiff).commit()
      /x/jetstream_batching.go:493 +0xd39

Goroutine 215 (running) created at:
  github.com/rankwire/rankwire/internal/natsconf.Start()
      /y/natsconf.go:10 +0x1
==================
==================
WARNING: DATA RACE
Write at 0x00c0000a0000 by goroutine 7:
  github.com/rankwire/rankwire/hub.(*Hub).apply()
      /y/hub.go:1 +0x1

Previous read at 0x00c0000a0000 by goroutine 8:
  github.com/nats-io/nats-server/v2/server.(*stream).internalLoop()
      /x/stream.go:1 +0x1
==================
Found 2 data race(s)`
	p := &proc{log: strings.Split(log, "\n")}
	own, upstream := p.races()
	if len(own) != 1 || !strings.Contains(own[0], "hub.(*Hub).apply") {
		t.Errorf("own: %q", own)
	}
	if len(upstream) != 1 || !strings.Contains(upstream[0], "jetstream_batching.go:493") {
		t.Errorf("upstream: %q", upstream)
	}
}
