package faults

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	rwclient "github.com/rankwire/rankwire/client"
)

func names(nodes []*Node) string {
	var out []string
	for _, n := range nodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, " ")
}

// kill9-two kills the stream's leader and its first other replica: the
// stream keeps one replica of three; the survivors are its last replica
// and the nodes holding none.
func TestDoubleVictims(t *testing.T) {
	var nodes []*Node
	for i := range 5 {
		nodes = append(nodes, &Node{Name: fmt.Sprintf("n%d", i+1)})
	}
	victims, survivors, err := doubleVictims(nodes, nodes[3], []*Node{nodes[1], nodes[4]})
	if err != nil {
		t.Fatal(err)
	}
	if got := names(victims); got != "n4 n2" {
		t.Errorf("victims %s, want the leader n4 and the replica n2", got)
	}
	if got := names(survivors); got != "n5 n1 n3" {
		t.Errorf("survivors %s, want the last replica n5 first, then n1 n3", got)
	}
	if _, _, err := doubleVictims(nodes, nodes[0], []*Node{nodes[1]}); err == nil {
		t.Error("a stream of two replicas: no error")
	}
}

// readyTrack keeps each node's changes only (the same reason's figures
// aside), and says by when every node watched said not ready.
func TestReadyTrack(t *testing.T) {
	t0 := time.Unix(100, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	tr := &readyTrack{start: t0, nodes: []string{"n3", "n5"}, changes: map[string][]readyChange{}}
	tr.saw("n3", at(0), true, "")
	tr.saw("n3", at(100), true, "")
	tr.saw("n3", at(4100), false, "no leader for 3s or more")
	tr.saw("n3", at(4200), false, "no leader for 3.1s or more")
	tr.saw("n3", at(8200), true, "")
	tr.saw("n5", at(0), true, "")
	if got := tr.summary(); got != "never not 200: n5" {
		t.Errorf("summary %q, want n5 named", got)
	}
	if !tr.allReady() {
		t.Error("allReady false with both nodes' last answers 200")
	}
	tr.saw("n5", at(3900), false, "cut off")
	if tr.allReady() {
		t.Error("allReady with n5 not ready")
	}
	want := "/readyz n3: 200 +0.0s, not 200 +4.1s (no leader for 3s or more), 200 +8.2s; n5: 200 +0.0s, not 200 +3.9s (cut off)"
	if got := tr.describe(); got != want {
		t.Errorf("describe:\n%s\nwant\n%s", got, want)
	}
	if got := tr.summary(); got != "every node watched said not 200 by +4.1s" {
		t.Errorf("summary %q, want by +4.1s", got)
	}
}

// A spare lists the cluster's nodes and itself in --routes; the nodes do
// not list it, so it joins as an added node and JetStream does not count
// it before it does.
func TestNewClusterSpareRoutes(t *testing.T) {
	c, err := NewCluster("gateway", t.TempDir(), 3, 1, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Nodes) != 3 || len(c.Spares) != 1 || c.Spares[0].Name != "n4" {
		t.Fatalf("%d nodes and spares %v, want 3 and n4", len(c.Nodes), c.Spares)
	}
	routes := func(n *Node) []string {
		i := slices.Index(n.args, "--routes")
		return strings.Split(n.args[i+1], ",")
	}
	var members []string
	for _, n := range c.Nodes {
		members = append(members, "nats://"+n.ClusterAddr)
	}
	for _, n := range c.Nodes {
		if got := routes(n); !slices.Equal(got, members) {
			t.Errorf("%s routes %v, want %v", n.Name, got, members)
		}
	}
	spare := c.Spares[0]
	if got, want := routes(spare), append(members, "nats://"+spare.ClusterAddr); !slices.Equal(got, want) {
		t.Errorf("the spare's routes %v, want %v", got, want)
	}
	if i := slices.Index(spare.args, "--data"); spare.args[i+1] != filepath.Join(c.Dir, "n4") || spare.MetricsAddr == "" {
		t.Errorf("the spare's data %s, metrics %q", spare.args[i+1], spare.MetricsAddr)
	}
}

func TestPeerStatesAndMetaSeries(t *testing.T) {
	table := `NODE  STATE    LEADER  CURRENT  LAG  LAST SEEN
n1    online   yes     yes      0    -
n4    offline          no       0    5m12s ago
`
	if got := peerStates(strings.NewReader(table)); len(got) != 2 || got["n1"] != "online" || got["n4"] != "offline" {
		t.Errorf("peerStates = %v", got)
	}
	metrics := `# HELP x
rankwire_cluster_meta_leader 1
rankwire_cluster_meta_peers{state="offline"} 1
rankwire_cluster_peer_offline_seconds{peer="n4"} 21.5
rankwire_cluster_routes 2
`
	if got := strings.Join(metaSeries(strings.NewReader(metrics)), ", "); got != `meta_peers{state="offline"} 1, peer_offline_seconds{peer="n4"} 21.5` {
		t.Errorf("metaSeries = %s", got)
	}
	follower := strings.Replace(metrics, "meta_leader 1", "meta_leader 0", 1)
	if got := metaSeries(strings.NewReader(follower)); got != nil {
		t.Errorf("a follower's series were taken: %v", got)
	}
}

// stateDiff names the first difference of two nodes' standings.
func TestStateDiff(t *testing.T) {
	row := func(rank int, m string, s float64) rwclient.StandingRow {
		return rwclient.StandingRow{Row: rwclient.Row{Rank: rank, Member: m, Score: s}}
	}
	a := []boardState{{Board: rwclient.Board{Name: "sum"}, Standings: rwclient.Standings{Seq: 9, Total: 2, Rows: []rwclient.StandingRow{row(1, "w1", 5), row(2, "w0", 4)}}}}
	b := []boardState{{Board: rwclient.Board{Name: "sum"}, Standings: rwclient.Standings{Seq: 9, Total: 2, Rows: []rwclient.StandingRow{row(1, "w1", 5), row(2, "w0", 3)}}}}
	if got := stateDiff(a, b, "n1"); !strings.Contains(got, "board sum rank 2") {
		t.Errorf("stateDiff = %q, want rank 2 named", got)
	}
	b[0].Standings.Seq = 8
	if got := stateDiff(a, b, "n1"); got != "board sum at seq 8, n1 at seq 9" {
		t.Errorf("stateDiff = %q", got)
	}
	if got := stateDiff(a, nil, "n1"); got != "0 boards, n1 1" {
		t.Errorf("stateDiff = %q", got)
	}
	if fingerprintOf(a) == fingerprintOf(b) {
		t.Error("two states share a fingerprint")
	}
}

func TestErrKind(t *testing.T) {
	if got := errKind(fmt.Errorf("submit: %w", &rwclient.Error{Status: 503, Code: "unavailable", Message: "x"})); got != "503 unavailable" {
		t.Errorf("errKind = %q", got)
	}
	if got := errKind(errors.New("dial tcp 10.213.1.3:8080: i/o timeout after 2s")); got != "dial tcp #.#:#: i/o timeout after #s" {
		t.Errorf("errKind = %q", got)
	}
}
