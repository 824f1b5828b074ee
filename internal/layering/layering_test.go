package layering

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/rankwire/rankwire/"

// allowed maps a package to the prefixes of the non-standard packages it may
// import directly, per docs/ARCHITECTURE.md's package table. Test files are not counted.
var allowed = map[string][]string{
	"board":         nil,
	"identity":      nil,
	"auth":          {"github.com/golang-jwt/jwt/v5", module + "internal/names", module + "internal/redact"},
	"subscriptions": {module + "board"},
	"hub": {module + "board", module + "identity", module + "internal/diskwatch", module + "internal/jsread", module + "internal/ledger", module + "internal/names",
		module + "internal/notify", module + "internal/redact", module + "internal/snapbucket",
		module + "internal/shred", module + "internal/streamwatch", module + "internal/natsstats", module + "internal/fingerprint",
		module + "internal/natsconf", module + "internal/raftcompact", module + "internal/streamreplicas", module + "internal/snapfile", module + "internal/pace", module + "internal/jserr", module + "internal/applywait", module + "internal/streamfollow", module + "internal/failpoint", "github.com/nats-io/"},
	"web": nil,
	// ledger is one tenant's state as a pure function of its events: no
	// NATS, no I/O (its purity test also forbids clocks and goroutines).
	"internal/ledger": {module + "board", module + "identity", module + "internal/names", module + "internal/tzdb"},
	// tzdb is the tz database embedded in the binary: the standard library only.
	"internal/tzdb": nil,
	// notify publishes each tenant's notifications, built by the ledger,
	// to the notifications' stream: nothing of the hub but the Tenant
	// handles it is given.
	"internal/notify": {module + "internal/jsread", module + "internal/ledger", "github.com/nats-io/"},
	// jsread is the one loop that reads a stream in order (the audit, the
	// backup, the notifier's seed): JetStream only.
	"internal/jsread": {"github.com/nats-io/"},
	// streamwatch hears of streams created in the account: NATS only.
	"internal/streamwatch": {"github.com/nats-io/"},
	// natstest starts a nats-server, or a cluster of them with the
	// gateway's options, for tests: NATS, natsconf and testport only.
	"internal/natstest": {module + "internal/natsconf", module + "internal/testport", "github.com/nats-io/"},
	// testport hands tests ports below the ephemeral range: the standard
	// library only.
	"internal/testport": nil,
	// wstest is the test client of the live protocol: coder/websocket and
	// the protocol's types.
	"internal/wstest": {"github.com/coder/websocket", module + "wire"},
	// edgetest is what api's and internal/live's tests share beside
	// wstest (the test tenants' keys and tokens): auth only.
	"internal/edgetest": {module + "auth"},
	// logtest is the tests' log buffer: the standard library only.
	"internal/logtest": nil,
	// certtest makes the tests' throwaway certificates: the standard
	// library only.
	"internal/certtest": nil,
	// skiptest counts and reports the tests skipped for a missing tool:
	// the standard library only.
	"internal/skiptest": nil,
	// jserr classifies NATS and JetStream errors: nats.go only.
	"internal/jserr": {"github.com/nats-io/"},
	// pace paces the change feed's drains: the standard library only.
	"internal/pace": nil,
	// applywait is a replica's waiters (an event's apply, a sequence): the
	// standard library only.
	"internal/applywait": nil,
	// snapfile is the snapshot files in the data directory: the standard
	// library only.
	"internal/snapfile": nil,
	// streamreplicas brings the tenants' streams to the configured replica
	// count: JetStream only.
	"internal/streamreplicas": {"github.com/nats-io/"},
	// natsconf builds the embedded server's and the connection's options
	// from the hub's settings: NATS only.
	"internal/natsconf": {"github.com/nats-io/"},
	// natsstats is the NATS connection's counters: the standard library only.
	"internal/natsstats": nil,
	// snapbucket is the cluster's bucket of snapshots: the ledger to decode
	// one, shred to wipe one, fingerprint to check one, and JetStream.
	"internal/snapbucket": {module + "internal/ledger", module + "internal/shred", module + "internal/fingerprint", "github.com/nats-io/"},
	// raftcompact has the embedded server compact streams' Raft logs after
	// an erasure: NATS only.
	"internal/raftcompact": {"github.com/nats-io/"},
	// diskwatch restarts the embedded JetStream through a full disk: the
	// server's module only.
	"internal/diskwatch": {"github.com/nats-io/nats-server/"},
	// webhook delivers the notifications over HTTP: the notifications'
	// stream (internal/notify) and JetStream, nothing of the hub or the API.
	"webhook": {module + "internal/notify", module + "internal/redact", "github.com/nats-io/"},
	// scheduler fires the tenants' schedules through the hub's Schedules:
	// nothing of NATS or the API.
	"internal/scheduler": {module + "hub"},
	// client is the Go SDK: it speaks the public protocol only, whose
	// types are package wire's.
	"client": {"github.com/coder/websocket", module + "wire"},
	// gwtest runs a real gateway in-process, for the tests of the SDK and
	// the widget: the API over the hub.
	"internal/gwtest": {module + "api", module + "auth", module + "hub", module + "internal/live", "github.com/prometheus/"},
	"security":        nil, // tests only: they drive the gateway binary from outside
	// jsonbody decodes request bodies for api: the standard library only.
	"internal/jsonbody": nil,
	// failpoint is the test build's fault injection (empty stubs in the
	// default build): the ledger's state it perturbs.
	"internal/failpoint": {module + "internal/ledger"},
	// fingerprint compares the nodes' state checkpoints: pure, the standard library only.
	"internal/fingerprint": nil,
	"internal/names":       nil,
	// redact keeps secrets out of URLs in logs and errors: the standard library only.
	"internal/redact": nil,
	// shred keeps the per-member keys of sealed personal data and wipes
	// what erasure must not leave behind: JetStream, and the ledger's
	// events it seals.
	"internal/shred": {module + "internal/ledger", "github.com/nats-io/"},
	// readiness is a pure state machine fed observations: the standard library only.
	"internal/readiness": nil,
	// reach tracks whom a node hears from the cluster's beats: pure, the standard library only.
	"internal/reach": nil,
	// electhold holds the embedded server's Raft groups back from
	// elections: nats-server only.
	"internal/electhold": {"github.com/nats-io/"},
	"internal/connguard": nil,
	// wsflow is the delivery plane's socket: the standard library only
	// (its tests drive the real coder/websocket).
	"internal/wsflow": nil,
	// wire is the protocol's types: the standard library only, so that
	// anything that speaks the protocol may import it.
	"wire": nil,
	// live is the WebSocket delivery plane: subscriptions' engine and
	// outboxes over wsflow's sockets. hub because a join reads its
	// board-window under the tenant's read lock (ReadWindow) and the plane
	// is the hub's Feed; identity and names to validate a view's member ids
	// and board at the edge; auth for tokens; effects for the table that
	// decides each message's role and reach; refusal and connguard for the
	// listeners' shared refusal log and descriptor budget; wire for the
	// protocol's messages, close codes and limits, written once there.
	"internal/live": {module + "wire", module + "subscriptions", module + "internal/wsflow", module + "internal/connguard",
		module + "internal/refusal", module + "internal/effects", module + "auth", module + "hub", module + "identity", module + "internal/names",
		module + "internal/catchup", "github.com/coder/websocket", "github.com/prometheus/"},
	// catchup holds a read that found nothing until this node's replica
	// applied what the tenant's stream held: the hub's reads and JetStream.
	"internal/catchup": {module + "hub", "github.com/nats-io/"},
	// effects is the table of effects that api and live both apply: data
	// and one decision over auth's scopes.
	"internal/effects": {module + "auth"},
	// streamfollow reads a replica's stream through a consumer it replaces
	// when it breaks or stalls: JetStream and clusterops (CreateLocal).
	"internal/streamfollow": {module + "internal/clusterops", "github.com/nats-io/"},
	// clusterops speaks the JetStream API for the gateway's cluster
	// operations (handing leaderships over, the meta peers): nats.go only.
	"internal/clusterops": {"github.com/nats-io/nats.go", "github.com/nats-io/nats.go/"},
	// refusal is the rate-limited refusal log of api and live.
	"internal/refusal": {module + "auth"},
}

// required lists the packages that must exist for the test to mean anything.
var required = map[string]bool{"board": true, "identity": true, "wire": true, "internal/ledger": true}

// TestImports fails when a package imports anything outside the standard
// library that its row of the table does not allow.
func TestImports(t *testing.T) {
	for pkg, prefixes := range allowed {
		out, err := exec.Command("go", "list", "-f", "{{join .Imports \" \"}}", module+pkg).Output()
		if err != nil && required[pkg] {
			t.Fatalf("go list %s: %v", pkg, err)
		}
		if err != nil {
			t.Logf("%s: not present yet (%v)", pkg, err)
			continue
		}
		for _, imp := range strings.Fields(string(out)) {
			if !standard(imp) && !matches(imp, prefixes) {
				t.Errorf("%s imports %s, which docs/ARCHITECTURE.md does not allow", pkg, imp)
			}
		}
	}
}

// standard reports whether an import path is in the standard library: its
// first element has no dot.
func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

func matches(path string, prefixes []string) bool {
	for _, p := range prefixes {
		if path == p || strings.HasSuffix(p, "/") && strings.HasPrefix(path, p) {
			return true
		}
	}
	return false
}

// TestDetects guards the guard: a non-standard import is caught.
func TestDetects(t *testing.T) {
	if standard("github.com/nats-io/nats.go") || !standard("encoding/json") {
		t.Fatal("standard() misclassifies")
	}
	if matches("github.com/go-chi/chi/v5", allowed["hub"]) || !matches("github.com/nats-io/nats.go", allowed["hub"]) {
		t.Fatal("matches() misclassifies")
	}
}
