// Package loadtest drives a running rankwire gateway over its HTTP and
// WebSocket protocol (docs/PROTOCOL.md) and measures it: durable
// submissions per second from many concurrent clients (RunSubmit), read
// latency on a large board while a paced background write load is applied
// (RunRead), and fan-out to many WebSocket subscribers spread over worker
// processes and loopback source addresses, with submit-to-receive latency
// per view kind, Redis pub/sub and "Redis + app + Centrifugo" as the
// peers, and a cluster's nodes measured together (fanout*.go); and the
// machine's own floors: a bare write(2) per message (Floor) and, beside a
// running benchmark, the latency floor (Probe: how late a sleeping loop
// wakes, and a loopback ping-pong). The command
// loadtest/cmd/rwload is its front end; docs/BENCHMARKS.md records the
// figures it produced and the command lines that produced them.
//
// It speaks the protocol only: it imports the standard library, the Go SDK
// (github.com/rankwire/rankwire/client, which any client may use),
// github.com/golang-jwt/jwt/v5 (to mint its own HS256 tokens from a key
// file), github.com/coder/websocket (subscribers, and Centrifugo's clients),
// go-redis (the peers' sorted set and pub/sub) and
// github.com/shadowspore/fossil-delta (to apply the deltas of Centrifugo's
// delta option, as Centrifugo's own Go client does), never the gateway's own packages, so it measures what any client
// sees. With SubmitConfig.Failover the writers use the SDK's failover, and
// the report's longest write gap per client is what a fault cost them.
//
// Every loop is bounded in time (a duration) and in count (a request cap),
// and every target must be a loopback address: the tool refuses to load
// anything but 127.0.0.0/8 or ::1.
//
//	go run ./loadtest/cmd/rwload keygen -out keys.json
//	go run ./cmd/gateway --keys keys.json --data /tmp/rw --addr 127.0.0.1:8080 &
//	go run ./loadtest/cmd/rwload submit -url http://127.0.0.1:8080 -keys keys.json -batch 100
//	go run ./loadtest/cmd/rwload read -url http://127.0.0.1:8080 -keys keys.json -write-rate 20000
//
// gateway_bench.sh runs every measurement of docs/BENCHMARKS.md's Gateway
// section, with Redis as the peer in the same run.
package loadtest
