// Package failpoint holds the gateway's fault-injection hooks, compiled
// only into a test build on a Unix system: `go build -tags
// rankwire_failpoints` (elsewhere the tag builds the stubs too). The
// default build has the stubs of off.go, empty functions the compiler
// inlines away, so that no environment variable or signal reaches a hook
// (cmd/gateway's TestFailpointsOnlyInTaggedBuild checks the binary).
//
// The hooks (on.go), each read from the environment once at start:
//
//   - RANKWIRE_FAILPOINT_DIVERGE=<tenant>/<board>/<member>=<score>@<seq>:
//     once this node's replica of tenant has applied the event at stream
//     sequence seq, it sets member's score on board to score in its state
//     in memory, once, as memory gone wrong would: the stream, the other
//     nodes and the files never hold it (hub's replica.handle calls
//     AfterApply under the replica's write lock).
//   - RANKWIRE_FAILPOINT_HOLD_REBUILD=<tenant>: the rebuild of tenant after
//     a divergence waits, before it starts, until the process receives
//     SIGUSR1 (or the hub closes), so that a test sees the node refuse the
//     tenant for as long as it looks (hub's streamLog.rebuild calls
//     BeforeRebuild).
//
// Nothing here is for operators: docs/ARCHITECTURE.md describes it for
// contributors, docs/CLUSTERING.md the test that uses it.
package failpoint
