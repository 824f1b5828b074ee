package main

import (
	"context"
	"crypto/tls"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/rankwire/rankwire/hub"
)

// TestNATSListenTLS: with --nats-tls-cert, --nats-tls-key and --nats-tls-ca
// the --nats-listen port speaks TLS only and verifies clients: a plain
// client with the right password is refused, and so are a TLS client
// without a certificate and one whose certificate another CA signed; a TLS
// client with a certificate the CA signed and the password reads JetStream
// (the control: the refusals are the TLS settings', not the password's).
func TestNATSListenTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: a gateway process")
	}
	dir := t.TempDir()
	ca := newTestCA(t, "rankwire NATS CA")
	srvCert, srvKey := ca.issue(t, dir, "server")
	cliCert, cliKey := ca.issue(t, dir, "client")
	caFile := ca.write(t, dir, "ca.pem")
	other := newTestCA(t, "another CA")
	badCert, badKey := other.issue(t, dir, "intruder")
	secretFile := filepath.Join(dir, "secret")
	const secret = "a-test-cluster-secret-0123456789"
	if err := os.WriteFile(secretFile, []byte(secret+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, _ := keyFile(t)
	port := freePorts(t, 1)[0]
	startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(),
		"RANKWIRE_NATS_LISTEN=127.0.0.1:"+port, "RANKWIRE_CLUSTER_SECRET_FILE="+secretFile,
		"RANKWIRE_NATS_TLS_CERT="+srvCert, "RANKWIRE_NATS_TLS_KEY="+srvKey, "RANKWIRE_NATS_TLS_CA="+caFile)
	url := "nats://127.0.0.1:" + port
	pass := nats.UserInfo(hub.ClientUser, hub.ClientPassword(secret))
	connect := func(opts ...nats.Option) error {
		nc, err := nats.Connect(url, append([]nats.Option{pass, nats.Timeout(5 * time.Second), nats.NoReconnect()}, opts...)...)
		if err != nil {
			return err
		}
		defer nc.Close()
		js, err := jetstream.New(nc)
		if err != nil {
			return err
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err = js.AccountInfo(ctx)
		return err
	}
	withCert := func(cert, key string) nats.Option {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			t.Fatal(err)
		}
		return nats.Secure(&tls.Config{RootCAs: ca.pool(), Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12})
	}
	if err := connect(nats.RootCAs(caFile), nats.ClientCert(cliCert, cliKey)); err != nil {
		t.Fatalf("a TLS client with the CA's certificate and the password: %v", err)
	}
	for name, opts := range map[string][]nats.Option{
		"plain":                      nil,
		"TLS without a certificate":  {nats.Secure(&tls.Config{RootCAs: ca.pool(), MinVersion: tls.VersionTLS12})},
		"TLS with another CA's cert": {withCert(badCert, badKey)},
	} {
		if err := connect(opts...); err == nil {
			t.Errorf("%s: connected and read JetStream", name)
		}
	}
}
