package natsconf

import (
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

// The users that the cluster secret's passwords belong to.
const (
	RouteUser  = "rankwire-route"
	ClientUser = "rankwire"
)

// ErrClusterConfig is the class of errors in a Cluster's settings. Its
// text keeps the hub's prefix that operators know it by: the hub returns
// it from Start unchanged (as hub.ErrClusterConfig).
var ErrClusterConfig = errors.New("hub: cluster configuration")

// derivePassword derives the password of user from the cluster secret:
// hex SHA-256 of user, a NUL and the secret. Different per user, so a
// client password cannot open a route. O(len(secret)).
func derivePassword(secret, user string) string {
	sum := sha256.Sum256([]byte(user + "\x00" + secret))
	return hex.EncodeToString(sum[:])
}

// ClientPassword is the password of ClientUser on a node's client listener
// (--nats-listen) for secret.
func ClientPassword(secret string) string { return derivePassword(secret, ClientUser) }

// RoutePassword is the password of RouteUser on a node's route listener
// for secret (for a NATS server run beside the gateways in their cluster).
func RoutePassword(secret string) string { return derivePassword(secret, RouteUser) }

// hostPort splits a host:port listen address.
func hostPort(field, addr string) (string, int, error) {
	host, p, err := net.SplitHostPort(addr)
	if err != nil {
		return "", 0, fmt.Errorf("%w: %s %q: want host:port", ErrClusterConfig, field, addr)
	}
	port, err := strconv.Atoi(p)
	if err != nil || port < 0 || port > 65535 {
		return "", 0, fmt.Errorf("%w: %s %q: want a port 0..65535", ErrClusterConfig, field, addr)
	}
	return host, port, nil
}

// routeURLs parses the nats://host:port routes and adds the route user
// and password derived from secret.
func routeURLs(routes []string, secret string) ([]*url.URL, error) {
	out := make([]*url.URL, 0, len(routes))
	for _, r := range routes {
		u, err := url.Parse(r)
		if err != nil || u.Scheme != "nats" || u.Host == "" || u.User != nil {
			return nil, fmt.Errorf("%w: route %q: want nats://host:port without credentials", ErrClusterConfig, r)
		}
		u.User = url.UserPassword(RouteUser, derivePassword(secret, RouteUser))
		out = append(out, u)
	}
	return out, nil
}

// clusterOptions sets the route and client listeners of opts from c.
// Without c.Name and c.ClientListen it leaves opts alone (no port).
func clusterOptions(opts *server.Options, c Cluster) error {
	if (c.Name != "" || c.ClientListen != "") && c.Secret == "" {
		return fmt.Errorf("%w: a cluster or a client listener needs the secret", ErrClusterConfig)
	}
	if c.Name == "" && len(c.Routes) > 0 {
		return fmt.Errorf("%w: routes need a cluster name", ErrClusterConfig)
	}
	if c.Name != "" && len(c.Routes) == 0 { // JetStream refuses a cluster without routes
		return fmt.Errorf("%w: a cluster needs routes (they may include this node's own)", ErrClusterConfig)
	}
	if c.Node != "" {
		opts.ServerName = c.Node
	}
	if c.Name != "" {
		if err := routeOptions(opts, c); err != nil {
			return err
		}
	}
	listen := c.ClientListen
	if listen == "" && c.Name != "" {
		// nats-server starts routing only once a client listener is up:
		// a clustered node without one listens on a loopback port.
		listen = "127.0.0.1:0"
	}
	if listen != "" {
		host, port, err := hostPort("client listener", listen)
		if err != nil {
			return err
		}
		if port == 0 {
			port = server.RANDOM_PORT // 0 would mean NATS's 4222
		}
		opts.DontListen, opts.Host, opts.Port = false, host, port
		opts.Username, opts.Password = ClientUser, ClientPassword(c.Secret)
	}
	if c.Name != "" {
		if err := systemAccountOptions(opts, c); err != nil {
			return err
		}
	}
	return clientTLSOptions(opts, c)
}

// clientTLSOptions makes c.ClientListen TLS only where c.ClientTLS names a
// certificate (nats-server's own builder; with a CA, clients must present
// a certificate it signed). The loopback client listener of a node without
// ClientListen stays plain: nothing outside the host reaches it. The Hub's
// in-process connection never negotiates TLS (nats-server waives it).
func clientTLSOptions(opts *server.Options, c Cluster) error {
	t := c.ClientTLS
	if t.Cert == "" || c.ClientListen == "" {
		return nil
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.Cert, KeyFile: t.Key, CaFile: t.CA, Verify: t.CA != ""})
	if err != nil {
		return fmt.Errorf("%w: client listener TLS: %v", ErrClusterConfig, err)
	}
	opts.TLSConfig, opts.TLSTimeout, opts.TLSVerify = tc, routeTLSTimeout.Seconds(), t.CA != ""
	return nil
}

// routeOptions sets the cluster block of opts: name, listener, routes and
// the route authorization derived from c.Secret.
func routeOptions(opts *server.Options, c Cluster) error {
	host, port, err := hostPort("cluster listener", c.Listen)
	if err != nil {
		return err
	}
	if port == 0 {
		port = server.RANDOM_PORT // 0 would mean "no cluster"
	}
	routes, err := routeURLs(c.Routes, c.Secret)
	if err != nil {
		return err
	}
	if opts.ServerName == "rankwire" {
		if opts.ServerName, err = os.Hostname(); err != nil {
			return fmt.Errorf("%w: node name: %v", ErrClusterConfig, err)
		}
	}
	opts.Cluster = server.ClusterOpts{Name: c.Name, Host: host, Port: port,
		Username: RouteUser, Password: derivePassword(c.Secret, RouteUser)}
	opts.Routes = routes
	if c.RouteTLS.enabled() {
		tc, err := routeTLSConfig(c.RouteTLS)
		if err != nil {
			return err
		}
		opts.Cluster.TLSConfig, opts.Cluster.TLSTimeout = tc, routeTLSTimeout.Seconds()
	}
	return nil
}

// routeTLSTimeout bounds a route's TLS handshake.
const routeTLSTimeout = 2 * time.Second

// routeTLSConfig builds the routes' mutual TLS from t with nats-server's
// own builder. A node both dials and is dialed, so the CA verifies peers
// in both roles: as the pool of client CAs (with a certificate required)
// and as the roots for the servers it dials.
func routeTLSConfig(t RouteTLS) (*tls.Config, error) {
	if t.Cert == "" || t.Key == "" || t.CA == "" {
		return nil, fmt.Errorf("%w: route TLS needs a certificate, its key and the CA", ErrClusterConfig)
	}
	tc, err := server.GenTLSConfig(&server.TLSConfigOpts{CertFile: t.Cert, KeyFile: t.Key, CaFile: t.CA, Verify: true})
	if err != nil {
		return nil, fmt.Errorf("%w: route TLS: %v", ErrClusterConfig, err)
	}
	tc.RootCAs = tc.ClientCAs
	return tc, nil
}
