package loadtest

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
)

// FanoutReport is what a fan-out load measured. Durations in JSON are
// nanoseconds; the *Seconds fields are seconds. Messages are subscription
// messages (the gateway may send a connection's several in one write); the
// per-connection figures divide by connections, stalled ones included. A
// report from before per_connection has 0 there and a connection per
// subscription.
type FanoutReport struct {
	Peer           string  `json:"peer"`        // "rankwire", "redis" or "centrifugo"
	Subscribers    int     `json:"subscribers"` // subscriptions
	Connected      int     `json:"connected"`   // subscriptions on open connections when the measured phase began
	Workers        int     `json:"workers"`
	Mix            string  `json:"mix"`
	BoardMembers   int     `json:"board_members"`
	Rate           float64 `json:"rate"`
	Shape          Shape   `json:"shape"`
	Batch          int     `json:"batch"`
	PreloadSeconds float64 `json:"preload_seconds"`
	ConnectSeconds float64 `json:"connect_seconds"`
	ElapsedSeconds float64 `json:"elapsed_seconds"` // measured phase, writes and drain

	SubmitsPerSecond float64        `json:"submits_per_second"` // acknowledged, over the writing time
	LateBatches      int64          `json:"late_batches"`       // due but no writer free: dropped
	WriteLatency     Latency        `json:"write_latency"`
	WriteErrors      map[string]int `json:"write_errors"`
	MessagesPerSec   float64        `json:"messages_per_second"`
	BytesPerSec      float64        `json:"bytes_per_second"`
	WireBytesPerSec  float64        `json:"wire_bytes_per_second,omitempty"` // the WebSocket frames that carried them, headers included (Centrifugo's carry several messages each, and newlines between)
	// DeltasPerSec and DeltaBytesPerSec are, of the messages, Centrifugo's
	// publications that came as fossil deltas (-centrifugo-delta) and
	// their bytes; the rest came whole.
	DeltasPerSec     float64            `json:"deltas_per_second,omitempty"`
	DeltaBytesPerSec float64            `json:"delta_bytes_per_second,omitempty"`
	Latency          map[string]Latency `json:"latency"` // submit-to-receive by view kind
	All              Latency            `json:"latency_all"`
	AfterAck         *Latency           `json:"latency_after_ack,omitempty"` // from the batch's acknowledgement (fanout_ack.go), where the subscribers ran in the writers' process; nil: not measured
	Gaps             int64              `json:"gaps"`                        // diffs whose prev was not the last seq
	Reconnects       int64              `json:"reconnects"`
	Viewed           int64              `json:"viewed"` // subscriptions that received their view (the gateway's first snapshot) by the end
	DialErrors       int64              `json:"dial_errors"`
	Errors           map[string]int64   `json:"errors"`
	ErrorsByNode     map[string]int64   `json:"errors_by_node,omitempty"` // the subscribers' errors and refused dials by the gateway that gave them: "<host:port> <error>"
	Closes           map[string]int64   `json:"closes"`                   // unexpected closes by code
	WorkerErrors     []string           `json:"worker_errors,omitempty"`

	ServerCores         float64              `json:"server_cores"`           // CPU of --pid during the measured phase
	ToolCores           float64              `json:"tool_cores"`             // the workers' and the coordinator's CPU, likewise (in-process workers count twice)
	WriterCores         float64              `json:"writer_cores"`           // the coordinator's CPU alone, likewise: the writers (for the Centrifugo peer, the app) where the workers are processes of their own
	CPUPerMessageMicros float64              `json:"cpu_per_message_micros"` // server CPU ÷ messages received
	RSSIdle             int64                `json:"rss_idle"`               // before the subscribers connected
	RSSConnected        int64                `json:"rss_connected"`
	RSSEnd              int64                `json:"rss_end"`
	HeapIdle            float64              `json:"heap_inuse_idle"` // go_memstats_heap_inuse_bytes
	HeapConnected       float64              `json:"heap_inuse_connected"`
	StackIdle           float64              `json:"stack_inuse_idle"` // go_memstats_stack_inuse_bytes
	StackConnected      float64              `json:"stack_inuse_connected"`
	GoroutinesIdle      float64              `json:"goroutines_idle"`
	GoroutinesConnected float64              `json:"goroutines_connected"`
	RSSPerConn          float64              `json:"rss_per_connection"`  // RSS growth ÷ connections
	HeapPerConn         float64              `json:"heap_per_connection"` // heap growth ÷ connections
	Tick                TickStats            `json:"push_tick"`
	Parts               map[string]PartStats `json:"parts,omitempty"` // the gateway's own histograms: submit_http, publish, push_tick (fanout_parts.go)
	Views               float64              `json:"views"`           // rankwire_ws_views at the end
	Coalesced           float64              `json:"coalesced"`
	// MessagesPerWrite is the gateway's live messages sent ÷ its socket
	// writes over the measured phase (rankwire_ws_messages_sent_total ÷
	// rankwire_ws_writes_total): how many a write packs; 0 where the
	// gateway does not count writes.
	MessagesPerWrite float64 `json:"messages_per_write,omitempty"`

	Connections          int `json:"connections"` // ⌈subscribers ÷ per_connection⌉
	PerConnection        int `json:"per_connection"`
	ConnectionsConnected int `json:"connections_connected"` // open when the measured phase began

	Stalled *StalledStats `json:"stalled,omitempty"` // nil: none asked for
	// BurstFloor is the burst floor measured in the run (burst.go); nil:
	// not asked for.
	BurstFloor *BurstFloorStats `json:"burst_floor,omitempty"`

	// Nodes are each server process's memory and CPU where the load ran
	// against several (FanoutConfig.Nodes); the server figures above are
	// then their sums.
	Nodes []NodeMemory `json:"nodes,omitempty"`

	// HeartbeatsPerSec, HeartbeatBytesPerSec and HeartbeatWirePerSec are,
	// of the messages, the gateway's heartbeats (its wheel spreads each
	// connection's over the interval, so a run shorter than the interval
	// still gets connections ÷ interval a second), their bytes and their
	// frames' bytes: what the delivered updates cost is the rest.
	HeartbeatsPerSec     float64 `json:"heartbeats_per_second,omitempty"`
	HeartbeatBytesPerSec float64 `json:"heartbeat_bytes_per_second,omitempty"`
	HeartbeatWirePerSec  float64 `json:"heartbeat_wire_per_second,omitempty"`

	// topFirst is the least top-N latency the workers recorded, read off
	// the top view's histogram final merged (BurstFloorStats.TopFirst).
	topFirst time.Duration
}

// StalledStats are the connections that never read (FanoutConfig.Stalled),
// counted apart from the subscribers: they receive nothing, so they add
// no messages, latencies or gaps.
type StalledStats struct {
	Connections int `json:"connections"` // asked for
	Connected   int `json:"connected"`   // open when the measured phase began
	Failed      int `json:"failed"`      // never opened
	// ClosedAtEnd were found closed by the server when checked after the
	// measured phase, OpenAtEnd still open.
	ClosedAtEnd int `json:"closed_at_end"`
	OpenAtEnd   int `json:"open_at_end"`
	// SlowCloses is the growth of the gateway's
	// rankwire_ws_slow_closes_total (connections it closed 4008 because
	// bytes waited unsent past its slow timeout) from before any
	// connection opened to the end of the measured phase: every client's,
	// regular subscribers' too (see closes). -1: /metrics not read.
	SlowCloses float64 `json:"slow_closes"`
}

// final fills s from the workers' final reports and the gateway's
// metrics before the connections opened and at the end. Nil s: none.
func (s *StalledStats) final(idle, end metrics, finals []workerReport) {
	if s == nil {
		return
	}
	const name = "rankwire_ws_slow_closes_total"
	s.SlowCloses = -1
	if idle != nil && end != nil {
		s.SlowCloses = end[name] - idle[name]
	}
	for _, f := range finals {
		s.Failed += int(f.StalledFailed)
		s.ClosedAtEnd += int(f.StalledClosed)
		s.OpenAtEnd += int(f.StalledOpen)
	}
}

func (s *StalledStats) String() string {
	closes := "n/a"
	if s.SlowCloses >= 0 {
		closes = fmt.Sprintf("%.0f", s.SlowCloses)
	}
	failed := ""
	if s.Failed > 0 {
		failed = fmt.Sprintf(", %d failed to open", s.Failed)
	}
	return fmt.Sprintf("stalled: %d connections that never read (%d connected%s); server slow closes %s (4008); at the end %d found closed, %d still open",
		s.Connections, s.Connected, failed, closes, s.ClosedAtEnd, s.OpenAtEnd)
}

// memory fills the memory figures from the samples before and after the
// subscriptions connected, over n connections.
func (r *FanoutReport) memory(idle, conn procSample, mIdle, mConn metrics, n int) {
	r.RSSIdle, r.RSSConnected = idle.RSS, conn.RSS
	r.HeapIdle, r.HeapConnected = mIdle["go_memstats_heap_inuse_bytes"], mConn["go_memstats_heap_inuse_bytes"]
	r.StackIdle, r.StackConnected = mIdle["go_memstats_stack_inuse_bytes"], mConn["go_memstats_stack_inuse_bytes"]
	r.GoroutinesIdle, r.GoroutinesConnected = mIdle["go_goroutines"], mConn["go_goroutines"]
	if n > 0 {
		r.RSSPerConn = float64(conn.RSS-idle.RSS) / float64(n)
		if mIdle != nil && mConn != nil {
			r.HeapPerConn = (r.HeapConnected - r.HeapIdle) / float64(n)
		}
	}
}

// measured fills the rates and latencies of the measured phase.
func (r *FanoutReport) measured(a, b fanoutSample, writing time.Duration, ws *writeStats, finals []workerReport) {
	el := b.proc.At.Sub(a.proc.At)
	r.ElapsedSeconds = el.Seconds()
	r.SubmitsPerSecond = float64(ws.acked.Load()) / writing.Seconds()
	r.LateBatches = ws.late.Load()
	r.WriteLatency, r.WriteErrors = summarize(ws.rec.samples), ws.rec.errors
	msgs := b.c.Messages - a.c.Messages
	r.MessagesPerSec = float64(msgs) / el.Seconds()
	r.BytesPerSec = float64(b.c.Bytes-a.c.Bytes) / el.Seconds()
	r.WireBytesPerSec = float64(b.c.Wire-a.c.Wire) / el.Seconds()
	r.DeltasPerSec = float64(b.c.Deltas-a.c.Deltas) / el.Seconds()
	r.DeltaBytesPerSec = float64(b.c.DeltaBytes-a.c.DeltaBytes) / el.Seconds()
	r.HeartbeatsPerSec = float64(b.c.Heartbeats-a.c.Heartbeats) / el.Seconds()
	r.HeartbeatBytesPerSec = float64(b.c.HeartbeatBytes-a.c.HeartbeatBytes) / el.Seconds()
	r.HeartbeatWirePerSec = float64(b.c.HeartbeatWire-a.c.HeartbeatWire) / el.Seconds()
	r.RSSEnd = b.proc.RSS
	r.ToolCores = (b.c.CPU - a.c.CPU + b.self - a.self).Seconds() / el.Seconds()
	r.WriterCores = (b.self - a.self).Seconds() / el.Seconds()
	if b.proc.CPU > 0 {
		r.ServerCores = cores(a.proc, b.proc)
		if msgs > 0 {
			r.CPUPerMessageMicros = float64((b.proc.CPU - a.proc.CPU).Microseconds()) / float64(msgs)
		}
	}
	r.Tick = tickStats(a.m, b.m, el)
	r.Parts = partsStats(a.m, b.m)
	r.Views, r.Coalesced = b.m["rankwire_ws_views"], b.m["rankwire_ws_coalesced_total"]-a.m["rankwire_ws_coalesced_total"]
	if w := b.m["rankwire_ws_writes_total"] - a.m["rankwire_ws_writes_total"]; w > 0 {
		r.MessagesPerWrite = (b.m["rankwire_ws_messages_sent_total"] - a.m["rankwire_ws_messages_sent_total"]) / w
	}
	r.final(finals)
}

// final merges the workers' final reports: histograms, errors, closes.
func (r *FanoutReport) final(finals []workerReport) {
	hists := make([]*Hist, len(viewKinds))
	all, ack := newHist(), newHist()
	for i := range hists {
		hists[i] = newHist()
	}
	r.Errors, r.Closes, r.ErrorsByNode = map[string]int64{}, map[string]int64{}, map[string]int64{}
	for _, f := range finals {
		for k, v := range f.ByNode {
			r.ErrorsByNode[k] += v
		}
		r.Gaps += f.Gaps
		r.Reconnects += f.Reconnects
		r.Viewed += f.Viewed
		r.DialErrors += f.DialErrors
		for k, v := range f.Errors {
			r.Errors[k] += v
		}
		for k, v := range f.Closes {
			r.Closes[k] += v
		}
		for i, h := range f.Hists {
			if i < len(hists) {
				hists[i].merge(h)
				all.merge(h)
			} else if i == afterAckHist {
				ack.merge(h)
			}
		}
		if f.Err != "" {
			r.WorkerErrors = append(r.WorkerErrors, f.Err)
		}
	}
	r.topFirst = hists[0].first() // viewKinds[0]: the top view
	r.Latency = map[string]Latency{}
	for i, h := range hists {
		if l := h.Latency(); l.Count > 0 {
			r.Latency[viewKinds[i]] = l
		}
	}
	r.All = all.Latency()
	if l := ack.Latency(); l.Count > 0 {
		r.AfterAck = &l
	}
}

// conns is the connections open when the measured phase began, stalled
// ones included: the divisor of per-connection figures.
func (r FanoutReport) conns() int {
	if r.PerConnection == 0 { // a report from before per_connection
		return r.Connected
	}
	if r.Stalled != nil {
		return r.ConnectionsConnected + r.Stalled.Connected
	}
	return r.ConnectionsConnected
}

func (r FanoutReport) String() string {
	var b strings.Builder
	if r.PerConnection > 1 {
		fmt.Fprintf(&b, "fanout (%s): %d subscriptions on %d connections of %d (%d on %d connected in %.1f s, %d workers), views %s, board %d members\n",
			r.Peer, r.Subscribers, r.Connections, r.PerConnection, r.Connected, r.ConnectionsConnected, r.ConnectSeconds, r.Workers, r.Mix, r.BoardMembers)
	} else {
		fmt.Fprintf(&b, "fanout (%s): %d subscribers (%d connected in %.1f s, %d workers), views %s, board %d members\n",
			r.Peer, r.Subscribers, r.Connected, r.ConnectSeconds, r.Workers, r.Mix, r.BoardMembers)
	}
	fmt.Fprintf(&b, "  writes: target %.0f/s %s in batches of %d: acknowledged %.0f/s, late batches %d, batch latency %v, errors %s\n",
		r.Rate, r.Shape, r.Batch, r.SubmitsPerSecond, r.LateBatches, r.WriteLatency, errorList(r.WriteErrors))
	fmt.Fprintf(&b, "  received: %.0f messages/s, %.2f MB/s (%.2f MB/s in WebSocket frames) over %.1f s\n", r.MessagesPerSec, r.BytesPerSec/1e6, r.WireBytesPerSec/1e6, r.ElapsedSeconds)
	fmt.Fprintf(&b, "  submit-to-receive  %-8s %8s %8s %8s %8s %8s\n", "view", "n", "p50", "p90", "p99", "max")
	for _, k := range append(viewKinds, "all") {
		l, ok := r.Latency[k]
		if k == "all" {
			l, ok = r.All, true
		}
		if ok {
			fmt.Fprintf(&b, "                     %-8s %8d %8v %8v %8v %8v\n", k, l.Count, round(l.P50), round(l.P90), round(l.P99), round(l.Max))
		}
	}
	if f := r.BurstFloor; f != nil {
		b.WriteString(f.String(r.Latency["top"]))
	}
	if l := r.AfterAck; l != nil {
		fmt.Fprintf(&b, "  ack-to-receive     %-8s %8d %8v %8v %8v %8v\n", "all", l.Count, round(l.P50), round(l.P90), round(l.P99), round(l.Max))
	}
	fmt.Fprintf(&b, "  load tool: %.2f cores (subscriber workers and writers), of which the writers' process %.2f\n", r.ToolCores, r.WriterCores)
	fmt.Fprintf(&b, "  views received %d of %d; gaps %d, reconnects %d, dial errors %d, errors %s, closes %s\n",
		r.Viewed, r.Subscribers, r.Gaps, r.Reconnects, r.DialErrors, errorList64(r.Errors), errorList64(r.Closes))
	if len(r.ErrorsByNode) > 0 {
		fmt.Fprintf(&b, "  errors by gateway: %s\n", errorList64(r.ErrorsByNode))
	}
	for _, n := range r.Nodes {
		fmt.Fprintf(&b, "  node %d: RSS %s idle, %s connected, %s at the end; %.2f cores\n",
			n.PID, mib(n.RSSIdle), mib(n.RSSConnected), mib(n.RSSEnd), n.Cores)
	}
	if r.Stalled != nil {
		fmt.Fprintf(&b, "  %s\n", r.Stalled)
	}
	if r.ServerCores > 0 {
		fmt.Fprintf(&b, "  server: %.2f cores, %.2f µs CPU per message received, RSS %s idle, %s connected (%.1f KiB per connection), %s at the end\n",
			r.ServerCores, r.CPUPerMessageMicros, mib(r.RSSIdle), mib(r.RSSConnected), r.RSSPerConn/1024, mib(r.RSSEnd))
	}
	if r.Peer == "rankwire" {
		fmt.Fprintf(&b, "  gateway: heap in use %s idle, %s connected (%.1f KiB per connection); %0.f views; %0.f coalesced; %.2f messages per write\n",
			mib(int64(r.HeapIdle)), mib(int64(r.HeapConnected)), r.HeapPerConn/1024, r.Views, r.Coalesced, r.MessagesPerWrite)
		if n := float64(r.conns()); n > 0 {
			fmt.Fprintf(&b, "  gateway: stacks %s idle, %s connected (%.1f KiB per connection); goroutines %.0f idle, %.0f connected (%.1f per connection)\n",
				mib(int64(r.StackIdle)), mib(int64(r.StackConnected)), (r.StackConnected-r.StackIdle)/n/1024,
				r.GoroutinesIdle, r.GoroutinesConnected, (r.GoroutinesConnected-r.GoroutinesIdle)/n)
		}
		fmt.Fprintf(&b, "  push tick: %d ticks, mean %.3f ms, p99 %s, max %s, busy %.1f %%\n",
			r.Tick.Ticks, r.Tick.Mean*1e3, bucketBound(r.Tick.P99), bucketBound(r.Tick.Max), r.Tick.Busy*100)
	}
	for _, e := range r.WorkerErrors {
		fmt.Fprintf(&b, "  worker error: %s\n", e)
	}
	return b.String()
}

func mib(n int64) string { return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20)) }

func errorList64(m map[string]int64) string {
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = int(v)
	}
	return errorList(c)
}

// fanoutProgress prints a line a second until stopped: subscribers
// connected, messages and submissions in the last second, and the
// server's CPU and RSS.
func fanoutProgress(ctx context.Context, w io.Writer, p *workerPool, ws *writeStats, pid int) func() {
	if w == nil {
		return func() {}
	}
	last, lastAcked, lastProc := p.sum(), ws.acked.Load(), procOr(pid)
	return everySecond(ctx, func(i int) {
		s, acked, pr := p.sum(), ws.acked.Load(), procOr(pid)
		fmt.Fprintf(w, "  %3ds subs %d%s  msgs/s %d  MB/s %.2f  acked/s %d  late %d  gaps %d",
			i, s.Connected, p.connections(s), s.Messages-last.Messages, float64(s.Bytes-last.Bytes)/1e6, acked-lastAcked, ws.late.Load(), s.Gaps)
		if pr.CPU > 0 {
			fmt.Fprintf(w, "  server %.2f cores, RSS %s", cores(lastProc, pr), mib(pr.RSS))
		}
		fmt.Fprintln(w)
		last, lastAcked, lastProc = s, acked, pr
	})
}

func bucketBound(le float64) string {
	if le < 0 {
		return "> 250 ms"
	}
	return fmt.Sprintf("≤ %g ms", le*1e3)
}
