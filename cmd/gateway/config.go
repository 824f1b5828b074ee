package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strings"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/readiness"
	"github.com/rankwire/rankwire/webhook"
)

// Config is everything the gateway reads from flags and the environment.
type Config struct {
	Addr         string        // HTTP and WebSocket listen address
	DataDir      string        // embedded JetStream store and snapshots
	NATSURL      string        // external NATS; empty starts the embedded server
	KeysFile     string        // tenants' key file; empty generates a demo tenant
	PushInterval time.Duration // the longest a change waits to be pushed under load
	Demo         bool          // seed the demo tenant with a simulated board
	DemoRound    time.Duration // length of the demo's sprint tournaments
	LogFormat    string        // "text" or "json"
	PprofAddr    string        // where to serve /debug/pprof; empty means nowhere
	Origins      []string      // browser origins allowed to open WebSockets besides our own
	SlowTimeout  time.Duration // how long a WebSocket's unsent bytes may wait before 4008
	PingInterval time.Duration // how often WebSockets are pinged
	Heartbeat    time.Duration // how often live WebSockets get a heartbeat; 0 none
	MaxLag       time.Duration // how long a replica may trail its stream before /readyz says stale
	ReadyHold    time.Duration // how long a cluster-wide fault must last before /readyz turns 503
	MaxConns     int           // WebSocket connections per tenant unless its key file says otherwise
	MaxStore     int64         // bytes the embedded JetStream may store; 0: NATS's default

	// Cluster: see docs/CLUSTERING.md.
	Node              string        // this node's name in the cluster
	Cluster           string        // cluster name; set: the embedded server joins a cluster
	ClusterListen     string        // host:port for routes from the other nodes
	Routes            []string      // nats://host:port of the other nodes
	ClusterSecretFile string        // file holding the cluster secret
	ClusterTLSCert    string        // this node's certificate for TLS on routes
	ClusterTLSKey     string        // its key
	ClusterTLSCA      string        // the CA that signs every node's route certificate
	NATSListen        string        // authenticated NATS client listener; empty: none
	Replicas          int           // JetStream replicas of tenant streams; 0: 1 alone, 3 with --cluster
	Sync              time.Duration // 0 or hub.SyncAlways: fsync before every ack; an interval: the lazy opt-out
	FingerprintEvery  uint64        // events between state checkpoints compared across the cluster; 0: the default
	NATSCreds         string        // credentials file for --nats
	NATSTLSCA         string        // CA file for --nats
	NATSTLSCert       string        // client certificate for --nats
	NATSTLSKey        string        // client key for --nats
	NATSDomain        string        // JetStream domain for --nats on a leaf node

	// Listeners and timeouts: see docs/OPERATIONS.md "Listeners and timeouts".
	MetricsAddr string        // where to serve /metrics; empty means nowhere
	IdleTimeout time.Duration // close a keep-alive connection idle this long
	ReadTimeout time.Duration // a request body must arrive within this
	TLSCert     string        // PEM certificate chain for direct TLS on --addr; empty: plain HTTP
	TLSKey      string        // its PEM private key

	WriteTimeout time.Duration // how long a write may wait for JetStream, retrying through a leader change

	IdempotencyRetention time.Duration // how long boards keep idempotency ids; 0: for ever

	WebhookAllow []netip.Prefix // --webhook-allow: destinations webhooks may reach although refused by default

	cursorKey []byte // not a flag: derived at start from the cluster or data-dir secret (cursorkey.go)
}

// envName is the environment variable of a flag: --push-interval reads
// RANKWIRE_PUSH_INTERVAL.
func envName(flagName string) string {
	return "RANKWIRE_" + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// parseConfig reads flags from args over environment variables (getenv)
// over defaults. Flags win, so a script can override a deployment's
// environment for one run.
func parseConfig(args []string, getenv func(string) string, usage io.Writer) (Config, error) {
	var c Config
	fs := flag.NewFlagSet("gateway", flag.ContinueOnError)
	fs.SetOutput(usage)
	serveFlags(fs, &c)
	liveFlags(fs, &c)
	storeFlags(fs, &c)
	clusterFlags(fs, &c)
	listenerFlags(fs, &c)
	webhookFlags(fs, &c)
	fs.Usage = func() {
		printCommands(usage)
		fmt.Fprintf(usage, "Flags of serving; each may also be set by its environment variable, e.g. --push-interval as %s:\n\n", envName("push-interval"))
		fs.PrintDefaults()
	}
	if err := fromEnv(fs, getenv); err != nil {
		return c, err
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if fs.NArg() > 0 {
		return c, fmt.Errorf("unexpected argument %q: not a flag, nor a subcommand (gateway help lists them)", fs.Arg(0))
	}
	return c, c.validate()
}

// serveFlags registers the flags of what the gateway serves: its address,
// its data, its keys, the demo, its logs and profiles.
func serveFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.Addr, "addr", "127.0.0.1:8080", "HTTP and WebSocket listen `address`")
	fs.StringVar(&c.DataDir, "data", "./data", "data `directory`: the embedded JetStream store and snapshots")
	fs.StringVar(&c.NATSURL, "nats", "", "`URL` of an external NATS server or cluster with JetStream; empty starts the embedded one")
	fs.StringVar(&c.KeysFile, "keys", "", "the tenants' key `file`; empty generates a demo tenant and key and prints tokens")
	fs.BoolVar(&c.Demo, "demo", false, "seed the demo tenant's board \"weekly\" with players (implied without --keys)")
	fs.DurationVar(&c.DemoRound, "demo-round", 5*time.Minute, "how `long` each of the demo's sprint tournaments runs before the next starts (1m..24h)")
	fs.StringVar(&c.LogFormat, "log-format", "text", "log `format`: text or json")
	fs.StringVar(&c.PprofAddr, "pprof", "", "serve Go's /debug/pprof profiles on this `address` (keep it on loopback); empty: off")
}

// liveFlags registers the flags of the live views' WebSocket plane.
func liveFlags(fs *flag.FlagSet, c *Config) {
	fs.DurationVar(&c.PushInterval, "push-interval", 100*time.Millisecond, "the longest a live view's change waits while the gateway is busy (`interval`); idle, changes are pushed at once")
	fs.Func("allowed-origins", "comma-separated `origins` (host patterns, e.g. lobby.example.com,*.casino.io) whose pages may open WebSockets; empty: the gateway's own host only", func(v string) error {
		c.Origins = splitList(v)
		return nil
	})
	fs.DurationVar(&c.SlowTimeout, "slow-timeout", 10*time.Second, "close a WebSocket client (4008) whose unsent bytes waited this `long`: it stopped reading")
	fs.DurationVar(&c.PingInterval, "ping-interval", 30*time.Second, "ping WebSockets this `often`; one that does not answer within it is closed (4008)")
	fs.DurationVar(&c.Heartbeat, "heartbeat-interval", 2*time.Second, "send live WebSockets a heartbeat (this node's applied sequence and whether it can write) this `often`; 0: none")
	fs.DurationVar(&c.MaxLag, "max-lag", readiness.DefaultMaxLag, "the longest this node's replica of a tenant may trail the tenant's stream before /readyz answers 503 and heartbeats say stale (1s..1m; docs/OPERATIONS.md \"Readiness\")")
	fs.DurationVar(&c.ReadyHold, "ready-hold", readiness.DefaultFailAfter, "how `long` a fault the whole cluster sees (no stream leader, no JetStream API) must last before /readyz answers 503: longer than an election, so that healthy nodes do not flap when a peer dies (1s..1m)")
	fs.IntVar(&c.MaxConns, "max-connections", 0, "WebSocket `connections` per tenant unless the key file sets its own limits.connections; 0: half the connection budget, at most 20000")
}

// storeFlags registers the flags of the store and of writes to it: see
// docs/OPERATIONS.md "When NATS fails".
func storeFlags(fs *flag.FlagSet, c *Config) {
	fs.Func("max-store", "bytes of disk the embedded JetStream may use, e.g. 50GB or 512MiB; past it writes answer 503 until space is freed; empty: NATS's default, 75% of the free disk at start", func(v string) (err error) {
		c.MaxStore, err = parseSize(v)
		return err
	})
	fs.DurationVar(&c.WriteTimeout, "write-timeout", 10*time.Second, "how `long` a write may wait for JetStream, retrying through a leader change, before it answers 503")
	fs.DurationVar(&c.IdempotencyRetention, "idempotency-retention", 0, "how `long` a board keeps a submission's idempotency id (a repeat after that applies again); 0: for ever")
}

// listenerFlags registers the listener and timeout flags: see
// docs/OPERATIONS.md "Listeners and timeouts".
func listenerFlags(fs *flag.FlagSet, c *Config) {
	fs.StringVar(&c.MetricsAddr, "metrics-addr", "127.0.0.1:9464", "serve Prometheus /metrics on this `address`, never on --addr (port 0: any free port, logged at start); empty: off")
	fs.DurationVar(&c.IdleTimeout, "idle-timeout", 60*time.Second, "close an HTTP connection with no request in progress after this `long`")
	fs.DurationVar(&c.ReadTimeout, "read-timeout", 30*time.Second, "a request body must arrive within this `long` after its headers")
	fs.StringVar(&c.TLSCert, "tls-cert", "", "PEM certificate (chain) `file`: serve HTTPS and WSS on --addr (with --tls-key); empty: plain HTTP, e.g. behind a TLS-terminating proxy")
	fs.StringVar(&c.TLSKey, "tls-key", "", "PEM private key `file` of --tls-cert")
}

// webhookFlags registers the webhooks' destination policy: see
// docs/SECURITY.md.
func webhookFlags(fs *flag.FlagSet, c *Config) {
	fs.Func("webhook-allow", "comma-separated `CIDRs` (e.g. 127.0.0.0/8,10.0.0.0/8) webhooks may connect to although loopback, link-local, private, multicast or unspecified; empty: none (docs/SECURITY.md)", func(v string) (err error) {
		c.WebhookAllow, err = webhook.ParseAllow(splitList(v))
		return err
	})
}

// fromEnv sets every flag whose environment variable is set.
func fromEnv(fs *flag.FlagSet, getenv func(string) string) error {
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if v := getenv(envName(f.Name)); v != "" && err == nil {
			if e := f.Value.Set(v); e != nil {
				err = fmt.Errorf("%s: %w", envName(f.Name), e)
			}
		}
	})
	return err
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

func (c Config) validate() error {
	switch {
	case c.LogFormat != "text" && c.LogFormat != "json":
		return fmt.Errorf("--log-format %q: want text or json", c.LogFormat)
	case c.DataDir == "":
		return errors.New("--data: must not be empty")
	case c.DemoRound < time.Minute || c.DemoRound > 24*time.Hour:
		return fmt.Errorf("--demo-round %v: want 1m..24h", c.DemoRound)
	case c.MaxStore != 0 && c.MaxStore < minStore:
		return fmt.Errorf("--max-store %d bytes: want at least 1MiB", c.MaxStore)
	case c.MaxStore != 0 && c.NATSURL != "":
		return errors.New("--max-store: applies to the embedded NATS server only; set the limit on the external one")
	}
	if err := c.validateLive(); err != nil {
		return err
	}
	if err := c.validateWrite(); err != nil {
		return err
	}
	if err := c.validateCluster(); err != nil {
		return err
	}
	return c.validateListeners()
}

// validateLive checks the live views' flags.
func (c Config) validateLive() error {
	switch {
	case c.PushInterval < time.Millisecond || c.PushInterval > time.Minute:
		return fmt.Errorf("--push-interval %v: want 1ms..1m", c.PushInterval)
	case c.SlowTimeout < time.Second || c.SlowTimeout > 10*time.Minute:
		return fmt.Errorf("--slow-timeout %v: want 1s..10m", c.SlowTimeout)
	case c.PingInterval < time.Second || c.PingInterval > 10*time.Minute:
		return fmt.Errorf("--ping-interval %v: want 1s..10m", c.PingInterval)
	case c.Heartbeat != 0 && (c.Heartbeat < 100*time.Millisecond || c.Heartbeat > time.Minute):
		return fmt.Errorf("--heartbeat-interval %v: want 0 (none) or 100ms..1m", c.Heartbeat)
	case c.MaxLag < time.Second || c.MaxLag > time.Minute:
		return fmt.Errorf("--max-lag %v: want 1s..1m", c.MaxLag)
	case c.ReadyHold < time.Second || c.ReadyHold > time.Minute:
		return fmt.Errorf("--ready-hold %v: want 1s..1m", c.ReadyHold)
	case c.MaxConns < 0 || c.MaxConns > 1_000_000:
		return fmt.Errorf("--max-connections %d: want 0 (half the connection budget) or 1..1000000", c.MaxConns)
	}
	return nil
}

// validateWrite checks --write-timeout: at least a second, so a leader
// change (about a second) can pass, and at most hub.MaxWriteTimeout, which
// the streams' duplicate window covers.
func (c Config) validateWrite() error {
	if c.WriteTimeout < time.Second || c.WriteTimeout > hub.MaxWriteTimeout {
		return fmt.Errorf("--write-timeout %v: want 1s..%v", c.WriteTimeout, hub.MaxWriteTimeout)
	}
	if c.IdempotencyRetention != 0 && c.IdempotencyRetention < hub.MinIdempotencyRetention {
		return fmt.Errorf("--idempotency-retention %v: want 0 (for ever) or at least %v", c.IdempotencyRetention, hub.MinIdempotencyRetention)
	}
	return nil
}

// validateListeners checks the listener and timeout flags.
func (c Config) validateListeners() error {
	switch {
	case c.IdleTimeout < time.Second || c.IdleTimeout > time.Hour:
		return fmt.Errorf("--idle-timeout %v: want 1s..1h", c.IdleTimeout)
	case c.ReadTimeout < time.Second || c.ReadTimeout > 10*time.Minute:
		return fmt.Errorf("--read-timeout %v: want 1s..10m", c.ReadTimeout)
	}
	if (c.TLSCert == "") != (c.TLSKey == "") {
		return errors.New("--tls-cert and --tls-key: give both or neither")
	}
	if c.MetricsAddr != "" {
		_, port, err := net.SplitHostPort(c.MetricsAddr)
		if err != nil {
			return fmt.Errorf("--metrics-addr %q: want host:port, e.g. 127.0.0.1:9464", c.MetricsAddr)
		}
		if c.MetricsAddr == c.Addr && port != "0" {
			return fmt.Errorf("--metrics-addr %q: must differ from --addr", c.MetricsAddr)
		}
	}
	return nil
}
