package natsconf

import (
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
)

// Embedded is what the hub asks of its embedded nats-server.
type Embedded struct {
	StoreDir string        // JetStream's store
	MaxStore int64         // JetStream's disk limit in bytes; zero: NATS's default (75 % of the free disk at start)
	Sync     time.Duration // positive: fsync every Sync (the lazy opt-out); else fsync before every ack
	Cluster  Cluster       // zero: no cluster and no client listener
}

// ServerOptions returns the options of the embedded server e describes.
// Without e.Cluster it listens on no port at all (DontListen): the hub
// reaches it in-process, so no other process can read or write the
// streams through it. With Cluster.Name it takes and opens routes, and
// with Cluster.ClientListen it opens a client listener; both ask for the
// passwords derived from the cluster secret. Errors wrap ErrClusterConfig.
func ServerOptions(e Embedded) (*server.Options, error) {
	opts := &server.Options{
		ServerName: "rankwire",
		DontListen: true,
		JetStream:  true,
		StoreDir:   e.StoreDir,
		NoSigs:     true,
		NoLog:      true,
	}
	if e.MaxStore > 0 { // else NATS's default: 75 % of the disk's free space at start
		opts.JetStreamMaxStore = e.MaxStore
	}
	if e.Sync > 0 { // the lazy opt-out; else fsync before every ack
		opts.SyncInterval = e.Sync
	} else {
		opts.SyncAlways = true
	}
	if err := clusterOptions(opts, e.Cluster); err != nil {
		return nil, err
	}
	return opts, nil
}

// AuthOptions are the nats.go options that authenticate the hub: to its
// own embedded server (embedded) when that asks for a password (a client
// listener), or to an external NATS with the cluster secret's client
// password, a credentials file and TLS files.
func AuthOptions(c Cluster, a NATSAuth, embedded bool) []nats.Option {
	var opts []nats.Option
	asks := c.ClientListen != "" || c.Name != "" // the embedded server's client listener
	if c.Secret != "" && (!embedded || asks) {
		opts = append(opts, nats.UserInfo(ClientUser, ClientPassword(c.Secret)))
	}
	if embedded {
		return opts
	}
	if a.Creds != "" {
		opts = append(opts, nats.UserCredentials(a.Creds))
	}
	if a.TLSCA != "" {
		opts = append(opts, nats.RootCAs(a.TLSCA))
	}
	if a.TLSCert != "" || a.TLSKey != "" {
		opts = append(opts, nats.ClientCert(a.TLSCert, a.TLSKey))
	}
	return opts
}
