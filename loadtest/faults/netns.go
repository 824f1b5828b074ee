package faults

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// netnet is a cluster's network when every node runs in its own network
// namespace: one veth pair per node into a bridge in the root namespace,
// which holds the .254 address so that the load (in the root namespace)
// reaches every node. Partitions are blackhole routes inside the nodes'
// namespaces, so that the load still reaches a cut-off node, as a client
// on the node's side of a split would. Needs root and iproute2.
type netnet struct {
	id     string // short and unique on the machine: names are at most 15 bytes
	subnet string // 10.213.<k>. — the first three octets
	n      int
}

// ip runs ip(8) with args.
func ip(args ...string) error {
	out, err := exec.Command("ip", args...).CombinedOutput()
	if err != nil {
		return fmt.Errorf("faults: ip %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func (nn *netnet) ns(k int) string       { return fmt.Sprintf("rwf%sn%d", nn.id, k+1) }
func (nn *netnet) addr(k int) string     { return fmt.Sprintf("%s%d", nn.subnet, k+1) }
func (nn *netnet) bridge() string        { return "rwf" + nn.id + "b" }
func (nn *netnet) rootVeth(k int) string { return fmt.Sprintf("rwf%sv%d", nn.id, k+1) }

// newNetnet creates the bridge and n namespaces; on an error it removes
// what it made.
func newNetnet(n int) (*netnet, error) {
	pid := os.Getpid() % 10000
	nn := &netnet{id: fmt.Sprint(pid), subnet: fmt.Sprintf("10.213.%d.", pid%250), n: n}
	steps := [][]string{
		{"link", "add", nn.bridge(), "type", "bridge"},
		{"addr", "add", nn.subnet + "254/24", "dev", nn.bridge()},
		{"link", "set", nn.bridge(), "up"},
	}
	for k := range n {
		peer := fmt.Sprintf("rwf%sp%d", nn.id, k+1)
		steps = append(steps,
			[]string{"netns", "add", nn.ns(k)},
			[]string{"link", "add", nn.rootVeth(k), "type", "veth", "peer", "name", peer},
			[]string{"link", "set", nn.rootVeth(k), "master", nn.bridge()},
			[]string{"link", "set", nn.rootVeth(k), "up"},
			[]string{"link", "set", peer, "netns", nn.ns(k)},
			[]string{"-n", nn.ns(k), "link", "set", "lo", "up"},
			[]string{"-n", nn.ns(k), "link", "set", peer, "name", "eth0"},
			[]string{"-n", nn.ns(k), "addr", "add", nn.addr(k) + "/24", "dev", "eth0"},
			[]string{"-n", nn.ns(k), "link", "set", "eth0", "up"})
	}
	for _, s := range steps {
		if err := ip(s...); err != nil {
			nn.close()
			return nil, err
		}
	}
	return nn, nil
}

// close removes the namespaces (their veths go with them) and the bridge.
// Errors are ignored: it also cleans up after a partial setup.
func (nn *netnet) close() {
	for k := range nn.n {
		exec.Command("ip", "netns", "del", nn.ns(k)).Run()
		exec.Command("ip", "link", "del", nn.rootVeth(k)).Run()
	}
	exec.Command("ip", "link", "del", nn.bridge()).Run()
}

// cut drops every packet between nodes a and b (both ways); heal undoes it.
func (nn *netnet) cut(a, b int) error {
	if err := ip("-n", nn.ns(a), "route", "add", "blackhole", nn.addr(b)+"/32"); err != nil {
		return err
	}
	return ip("-n", nn.ns(b), "route", "add", "blackhole", nn.addr(a)+"/32")
}

func (nn *netnet) heal(a, b int) error {
	err1 := ip("-n", nn.ns(a), "route", "del", "blackhole", nn.addr(b)+"/32")
	err2 := ip("-n", nn.ns(b), "route", "del", "blackhole", nn.addr(a)+"/32")
	if err1 != nil {
		return err1
	}
	return err2
}
