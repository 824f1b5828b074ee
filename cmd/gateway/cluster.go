package main

import (
	"errors"
	"flag"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/rankwire/rankwire/hub"
)

// minSecret is the shortest cluster secret accepted, in bytes.
const minSecret = 16

// clusterFlags declares the cluster flags (docs/CLUSTERING.md) on fs.
func clusterFlags(fs *flag.FlagSet, c *Config) {
	host, _ := os.Hostname()
	fs.StringVar(&c.Node, "node", host, "this node's `name` in the cluster")
	fs.StringVar(&c.Cluster, "cluster", "", "cluster `name`; setting it makes the embedded NATS server join a cluster (needs --cluster-secret-file)")
	fs.StringVar(&c.ClusterListen, "cluster-listen", "0.0.0.0:6222", "host:port `address` where this node takes routes from the others")
	fs.Func("routes", "comma-separated nats://host:port `URLs` of the other nodes' cluster listeners", func(v string) error {
		c.Routes = splitList(v)
		return nil
	})
	fs.StringVar(&c.ClusterSecretFile, "cluster-secret-file", "", "`file` holding the secret every node presents to join (routes) and that --nats-listen asks for")
	fs.StringVar(&c.ClusterTLSCert, "cluster-tls-cert", "", "this node's certificate `file` for TLS on routes (with --cluster-tls-key and --cluster-tls-ca; it must name the host the other nodes dial)")
	fs.StringVar(&c.ClusterTLSKey, "cluster-tls-key", "", "the key `file` of --cluster-tls-cert")
	fs.StringVar(&c.ClusterTLSCA, "cluster-tls-ca", "", "CA certificate `file` that signs every node's route certificate: routes from and to nodes without one are refused")
	fs.StringVar(&c.NATSListen, "nats-listen", "", "host:port `address` of a NATS client listener (user and password derived from the cluster secret) for gateways run with --nats; empty: none")
	fs.IntVar(&c.Replicas, "replicas", 0, "JetStream `replicas` of each tenant's stream: 1, 3 or 5 (default 1 alone, 3 with --cluster)")
	fs.Func("sync", "JetStream fsync `policy`: always (the default: fsync before acknowledging), or lazy (NATS's 2m) or an interval such as 1s, "+
		"which acknowledge before the disk has the write: a power loss or kernel crash loses up to the last interval of acknowledged submissions", func(v string) error {
		d, err := parseSync(v)
		c.Sync = d
		return err
	})
	fs.Uint64Var(&c.FingerprintEvery, "fingerprint-every", 0, "with --cluster: every this many `events` each node publishes a hash of each tenant's state; "+
		"a node whose hash differs from the majority's stops serving the tenant and rebuilds it from the stream (default 100000)")
	fs.StringVar(&c.NATSCreds, "nats-creds", "", "NATS credentials `file` for --nats")
	fs.StringVar(&c.NATSDomain, "nats-domain", "", "JetStream `domain` of the servers holding the streams, when --nats is a leaf node without JetStream (a region)")
	// The --nats-tls-* flags are this gateway's end of NATS client TLS: a
	// client's with --nats, the listener's with --nats-listen (never both).
	fs.StringVar(&c.NATSTLSCA, "nats-tls-ca", "", "CA certificate `file`: with --nats, the one that signs the servers'; with --nats-listen, the one that must sign every client's certificate (mutual TLS)")
	fs.StringVar(&c.NATSTLSCert, "nats-tls-cert", "", "certificate `file` (with --nats-tls-key): with --nats, this client's; with --nats-listen, the listener's, which then refuses plain clients")
	fs.StringVar(&c.NATSTLSKey, "nats-tls-key", "", "key `file` of --nats-tls-cert")
}

// validateCluster checks the cluster flags and their combinations.
func (c Config) validateCluster() error {
	if err := c.validateClusterNeeds(); err != nil {
		return err
	}
	if c.Replicas != 0 && c.Replicas != 1 && c.Replicas != 3 && c.Replicas != 5 {
		return fmt.Errorf("--replicas %d: want 1, 3 or 5", c.Replicas)
	}
	if c.Replicas > 1 && c.Cluster == "" && c.NATSURL == "" {
		return fmt.Errorf("--replicas %d: needs --cluster (or --nats): a single node holds one replica", c.Replicas)
	}
	if c.Sync != 0 && c.NATSURL != "" {
		return errors.New("--sync: applies to the embedded NATS server only; set sync_interval on the external one")
	}
	for _, r := range c.Routes {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "nats" || u.Host == "" || u.User != nil || u.Path != "" {
			return fmt.Errorf("--routes %q: want nats://host:port without credentials", r)
		}
	}
	for name, addr := range map[string]string{"--cluster-listen": c.ClusterListen, "--nats-listen": c.NATSListen} {
		if _, _, err := net.SplitHostPort(addr); addr != "" && err != nil {
			return fmt.Errorf("%s %q: want host:port", name, addr)
		}
	}
	return c.validateNATSAuth()
}

// validateClusterNeeds checks which flags need which.
func (c Config) validateClusterNeeds() error {
	switch {
	case c.Cluster != "" && c.NATSURL != "":
		return errors.New("--cluster: the embedded server's; with --nats the cluster is the external one")
	case c.Cluster != "" && c.ClusterSecretFile == "":
		return errors.New("--cluster: needs --cluster-secret-file")
	case c.Cluster != "" && len(c.Routes) == 0:
		return errors.New("--cluster: needs --routes (every node's cluster listener, this one's included)")
	case c.Cluster == "" && len(c.Routes) > 0:
		return errors.New("--routes: needs --cluster")
	case c.NATSListen != "" && c.NATSURL != "":
		return errors.New("--nats-listen: the embedded server's; not with --nats")
	case c.NATSListen != "" && c.ClusterSecretFile == "":
		return errors.New("--nats-listen: needs --cluster-secret-file")
	case c.Cluster != "" && strings.TrimSpace(c.Node) == "":
		return errors.New("--node: must not be empty")
	case c.Cluster == "" && (c.ClusterTLSCert != "" || c.ClusterTLSKey != "" || c.ClusterTLSCA != ""):
		return errors.New("--cluster-tls-*: need --cluster")
	case (c.ClusterTLSCert == "") != (c.ClusterTLSKey == "") || (c.ClusterTLSCert == "") != (c.ClusterTLSCA == ""):
		return errors.New("--cluster-tls-cert, --cluster-tls-key and --cluster-tls-ca: give all three or none")
	}
	return nil
}

// validateNATSAuth checks the --nats credentials and TLS flags.
func (c Config) validateNATSAuth() error {
	anyTLS := c.NATSTLSCA != "" || c.NATSTLSCert != "" || c.NATSTLSKey != ""
	switch {
	case c.NATSCreds != "" && c.NATSURL == "":
		return errors.New("--nats-creds: needs --nats")
	case anyTLS && c.NATSURL == "" && c.NATSListen == "":
		return errors.New("--nats-tls-*: need --nats (a client's TLS) or --nats-listen (the listener's)")
	case c.NATSListen != "" && c.NATSTLSCA != "" && c.NATSTLSCert == "":
		return errors.New("--nats-tls-ca: with --nats-listen, needs --nats-tls-cert and --nats-tls-key (clients are verified over TLS)")
	case c.NATSDomain != "" && c.NATSURL == "":
		return errors.New("--nats-domain: needs --nats")
	case (c.NATSTLSCert == "") != (c.NATSTLSKey == ""):
		return errors.New("--nats-tls-cert and --nats-tls-key: give both or neither")
	}
	return nil
}

// readSecret reads the cluster secret from path: surrounding white space
// trimmed, at least minSecret bytes. The error never holds the secret.
func readSecret(path string) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("--cluster-secret-file: %w", err)
	}
	s := strings.TrimSpace(string(b))
	if len(s) < minSecret {
		return "", fmt.Errorf("--cluster-secret-file %s: the secret must be at least %d bytes", path, minSecret)
	}
	return s, nil
}

// hubCluster turns the flags into the hub's cluster and auth settings.
func (c Config) hubCluster(secret string) (hub.Cluster, hub.NATSAuth) {
	hc := hub.Cluster{Name: c.Cluster, Routes: c.Routes, Secret: secret, ClientListen: c.NATSListen}
	if c.Cluster != "" { // alone, the server keeps its name: nothing changes without cluster flags
		hc.Node, hc.Listen = c.Node, c.ClusterListen
		hc.RouteTLS = hub.RouteTLS{Cert: c.ClusterTLSCert, Key: c.ClusterTLSKey, CA: c.ClusterTLSCA}
	}
	if c.NATSListen != "" { // the listener's TLS; with --nats the same flags are the client's
		hc.ClientTLS = hub.ClientTLS{Cert: c.NATSTLSCert, Key: c.NATSTLSKey, CA: c.NATSTLSCA}
		return hc, hub.NATSAuth{}
	}
	return hc, hub.NATSAuth{Creds: c.NATSCreds, TLSCA: c.NATSTLSCA, TLSCert: c.NATSTLSCert, TLSKey: c.NATSTLSKey}
}

// parseSync reads --sync: always (hub.SyncAlways), lazy (hub.SyncLazy) or
// a positive interval.
func parseSync(v string) (time.Duration, error) {
	switch v {
	case "always":
		return hub.SyncAlways, nil
	case "lazy":
		return hub.SyncLazy, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want always, lazy or a positive interval such as 1s")
	}
	return d, nil
}
