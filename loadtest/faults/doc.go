// Package faults is rankwire's fault suite: it starts a cluster of gateway
// processes (a binary built once, --replicas 3, every process on loopback),
// puts a load on it through the Go SDK (writers with idempotency ids on a
// board with the sum policy, a WebSocket watcher per node, a /readyz
// poller per node), injects one fault at a time (kill -9 of the stream
// leader or a follower, SIGSTOP of the leader, a rolling restart with
// SIGTERM, corruption of a stopped follower's data files, kill -9 of the
// leader and a replica together on five nodes (double.go), kill -9 of the
// leader after a fourth node joined and left, removed from the meta group
// or not (departed.go)), heals it, and checks the outcome:
//
//   - every acknowledged submission is applied exactly once on every node:
//     each writer owns one member of the sum board and submits 1 each time,
//     so the member's score is the number of its applications, which must
//     lie between the writer's acknowledged count and that count plus its
//     unresolved (failed, possibly applied) calls;
//   - every node serves the same boards, settings and full standings (every
//     rank of every board), byte for byte, once the cluster settled: the
//     writers' calls returned, every node applied the stream's last
//     sequence (JetStream's own), unmoved across 2 s, and each state was
//     read at it (settle.go, check.go; the run's line gives their count,
//     a hash and that sequence);
//
// and measures per run each writer's longest write gap, each watcher's
// longest silence and the time the nodes the fault did not touch (partition.go,
// cutPlan) did not answer /readyz 200, with the reason of each such
// answer (Flap), and the readiness truth (truth.go): per node, a write
// probe through that node alone every 100 ms beside its /readyz and reads,
// the longest stretch it said ready while it could not write or was stale
// and the longest it said not ready while it could, and the healthy
// nodes' flaps; a stretch longer than ReadyWrongBound (3 s) is a violation.
// Per run it also places every episode of write gaps over 100 ms among the
// nodes' stops and starts, with the writers' requests meanwhile and the
// suite's own stalls (timeline.go), and gives the longest gap during the
// fault apart from the load around it.
// Report formats them as a table per fault (min/median/max over runs).
//
// loadtest/cmd/rwfault is its front end and loadtest/faults.sh the one
// command; docs/CLUSTERING.md "Fault suite" records the figures. Every
// process it starts is stopped by its PID, every directory it makes is
// removed. It imports hub for ClientPassword only (to ask a node's
// --nats-listen which node leads the tenant's stream).
package faults
