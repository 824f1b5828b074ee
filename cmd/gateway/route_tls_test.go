package main

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
)

// TestClusterRouteTLS: three gateway processes whose routes run mutual
// TLS form one cluster (a write on one node is read on the others), and
// the route listener answers nothing that is not a node of the cluster: a
// plain connection, a TLS client without a certificate, and one whose
// certificate another CA signed, each presenting the right route password.
func TestClusterRouteTLS(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: three gateway processes")
	}
	dir := t.TempDir()
	ca := newTestCA(t, "rankwire test CA")
	cert, key := ca.issue(t, dir, "node")
	caFile := ca.write(t, dir, "ca.pem")
	c := startCluster(t, 3, "RANKWIRE_CLUSTER_TLS_CERT="+cert, "RANKWIRE_CLUSTER_TLS_KEY="+key, "RANKWIRE_CLUSTER_TLS_CA="+caFile)
	if status, err := call("PUT", c.nodes[0].p.url("/v1/boards/b"), c.tok, `{}`, nil); status != 200 {
		t.Fatalf("create board through node 1: %d %v", status, err)
	}
	await.For(t, 30*time.Second, func() error { // node 2 discovers the tenant over the encrypted routes
		if s, err := call("POST", c.nodes[1].p.url("/v1/boards/b/scores"), c.tok, `{"id":"s1","member":"ann","score":7}`, nil); s != 200 {
			return fmt.Errorf("submit through node 2: %d %v", s, err)
		}
		return nil
	})
	var page topPage
	await.For(t, 20*time.Second, func() error { return samePages(c.nodes, c.tok, &page) })
	if page.Total != 1 {
		t.Fatalf("every node holds %d members, want 1", page.Total)
	}

	route := "127.0.0.1:" + c.ports[0]
	t.Run("plain", func(t *testing.T) {
		// A plain route listener would send its INFO at once; a TLS one
		// waits for the handshake, so a plain CONNECT gets nothing back.
		if got := tryRoute(dialRoute(t, route), c); got != "" {
			t.Fatalf("a plain route connection was answered: %q", got)
		}
	})
	other := newTestCA(t, "another CA")
	foreignCert, foreignKey := other.issue(t, dir, "intruder")
	foreign, err := tls.LoadX509KeyPair(foreignCert, foreignKey)
	if err != nil {
		t.Fatal(err)
	}
	own, err := tls.LoadX509KeyPair(cert, key)
	if err != nil {
		t.Fatal(err)
	}
	tlsRoute := func(t *testing.T, certs []tls.Certificate) string {
		tc := tls.Client(dialRoute(t, route), &tls.Config{RootCAs: ca.pool(), ServerName: "127.0.0.1", Certificates: certs})
		if err := tc.Handshake(); err != nil {
			return "" // refused in the handshake
		}
		return tryRoute(tc, c)
	}
	// The control: with a node's certificate the same steps are answered,
	// so the refusals below are the certificate's.
	t.Run("a node's certificate", func(t *testing.T) {
		if got := tlsRoute(t, []tls.Certificate{own}); !strings.HasPrefix(got, "INFO ") {
			t.Fatalf("a node's certificate: answered %q, want the route's INFO", got)
		}
	})
	for name, certs := range map[string][]tls.Certificate{"no certificate": nil, "another CA's certificate": {foreign}} {
		t.Run(name, func(t *testing.T) {
			if got := tlsRoute(t, certs); got != "" {
				t.Fatalf("answered: %q", got)
			}
		})
	}
}

// dialRoute connects to a route listener, bounded to 5 s in all.
func dialRoute(t *testing.T, addr string) net.Conn {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	return conn
}

// tryRoute sends a route CONNECT with the cluster's real route password
// and a PING, and returns the first line the listener answers before it
// closes the connection ("" where it answers nothing).
func tryRoute(conn net.Conn, c *cluster) string {
	secret, err := readSecret(c.secret)
	if err != nil {
		return "reading the secret: " + err.Error()
	}
	user, pass := hub.RouteUser, hub.RoutePassword(secret)
	fmt.Fprintf(conn, "CONNECT {\"user\":%q,\"pass\":%q,\"name\":\"intruder\",\"cluster\":\"rw-test\"}\r\nPING\r\n", user, pass)
	line, err := bufio.NewReader(conn).ReadString('\n')
	if err != nil {
		return ""
	}
	return line
}

// testCA is a certificate authority made for one test.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key, der: der}
}

func (ca *testCA) pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// write stores the CA's certificate in dir/name.
func (ca *testCA) write(t *testing.T, dir, name string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	writePEM(t, path, "CERTIFICATE", ca.der)
	return path
}

// issue makes a certificate for 127.0.0.1, for a server and a client (a
// node is both on its routes), and returns the files of it and its key.
func (ca *testCA) issue(t *testing.T, dir, name string) (certFile, keyFile string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile = filepath.Join(dir, name+".pem"), filepath.Join(dir, name+"-key.pem")
	writePEM(t, certFile, "CERTIFICATE", der)
	writePEM(t, keyFile, "EC PRIVATE KEY", kder)
	return certFile, keyFile
}

func writePEM(t *testing.T, path, kind string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: kind, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
