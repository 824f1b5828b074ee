package natsconf

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
)

const secret = "a-cluster-secret-of-some-length"

// Bad cluster settings are ErrClusterConfig, before any port opens; the
// secret never appears in the message.
func TestClusterRefused(t *testing.T) {
	for name, c := range map[string]Cluster{
		"no secret":       {Name: "c", Listen: "127.0.0.1:0", Routes: []string{"nats://127.0.0.1:1"}},
		"no routes":       {Name: "c", Listen: "127.0.0.1:0", Secret: secret},
		"routes alone":    {Routes: []string{"nats://127.0.0.1:1"}, Secret: secret},
		"bad route":       {Name: "c", Listen: "127.0.0.1:0", Secret: secret, Routes: []string{"http://x:1"}},
		"creds in route":  {Name: "c", Listen: "127.0.0.1:0", Secret: secret, Routes: []string{"nats://u:p@x:1"}},
		"bad listen":      {Name: "c", Listen: "nohost", Secret: secret, Routes: []string{"nats://127.0.0.1:1"}},
		"bad port":        {Name: "c", Listen: "127.0.0.1:70000", Secret: secret, Routes: []string{"nats://127.0.0.1:1"}},
		"client, no auth": {ClientListen: "127.0.0.1:0"},
		"route TLS, no CA": {Name: "c", Listen: "127.0.0.1:0", Secret: secret, Routes: []string{"nats://127.0.0.1:1"},
			RouteTLS: RouteTLS{Cert: "c.pem", Key: "k.pem"}},
		"route TLS, no files": {Name: "c", Listen: "127.0.0.1:0", Secret: secret, Routes: []string{"nats://127.0.0.1:1"},
			RouteTLS: RouteTLS{Cert: "/nonexistent/c.pem", Key: "/nonexistent/k.pem", CA: "/nonexistent/ca.pem"}},
	} {
		_, err := ServerOptions(Embedded{Cluster: c})
		if !errors.Is(err, ErrClusterConfig) {
			t.Errorf("%s: got %v, want ErrClusterConfig", name, err)
		}
		if err != nil && strings.Contains(err.Error(), secret) {
			t.Errorf("%s: the error holds the secret: %v", name, err)
		}
		if strings.HasPrefix(name, "route TLS") && !strings.Contains(err.Error(), "route TLS") {
			t.Errorf("%s: %v does not name route TLS", name, err)
		}
	}
}

// Without a cluster the server listens on no port; a cluster gets routes
// carrying the route user and its password, and a loopback client
// listener asking for the client password.
func TestServerOptions(t *testing.T) {
	o, err := ServerOptions(Embedded{StoreDir: "d", Sync: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if !o.DontListen || o.Cluster.Port != 0 || o.SyncAlways || o.SyncInterval != time.Second || o.StoreDir != "d" {
		t.Errorf("no cluster: %+v", o)
	}
	o, err = ServerOptions(Embedded{Cluster: Cluster{Node: "n1", Name: "c", Listen: "127.0.0.1:0", Secret: secret,
		Routes: []string{"nats://10.0.0.2:6222"}}})
	if err != nil {
		t.Fatal(err)
	}
	switch {
	case !o.SyncAlways, o.DontListen, o.ServerName != "n1", o.Cluster.Port != server.RANDOM_PORT, o.Port != server.RANDOM_PORT:
		t.Errorf("cluster: %+v", o)
	case o.Host != "127.0.0.1" || o.Username != "" || len(o.Users) != 2 || o.Users[0].Username != ClientUser ||
		o.Users[0].Password != ClientPassword(secret) || o.Users[0].Account != nil:
		t.Errorf("client listener: %s %s %+v", o.Host, o.Username, o.Users)
	case o.Users[1].Username != SystemUser || o.Users[1].Account == nil || o.Users[1].Account.Name != SystemAccount || o.SystemAccount != SystemAccount:
		t.Errorf("system user: %+v", o.Users[1])
	case len(o.Routes) != 1 || o.Routes[0].User.Username() != RouteUser:
		t.Errorf("routes: %v", o.Routes)
	}
	if pass, _ := o.Routes[0].User.Password(); pass != RoutePassword(secret) || pass == ClientPassword(secret) {
		t.Error("the route's password is not the route user's own")
	}
}

// The hub sends the client password to an external server whenever it has
// the secret, and to its embedded one only where that has a listener.
func TestAuthOptions(t *testing.T) {
	for _, tc := range []struct {
		name     string
		c        Cluster
		a        NATSAuth
		embedded bool
		want     int
	}{
		{"embedded alone", Cluster{Secret: secret}, NATSAuth{Creds: "x"}, true, 0},
		{"embedded listener", Cluster{Secret: secret, ClientListen: "127.0.0.1:0"}, NATSAuth{}, true, 1},
		{"external", Cluster{Secret: secret}, NATSAuth{Creds: "x", TLSCA: "ca", TLSCert: "c", TLSKey: "k"}, false, 4},
		{"external, nothing", Cluster{}, NATSAuth{}, false, 0},
	} {
		if got := len(AuthOptions(tc.c, tc.a, tc.embedded)); got != tc.want {
			t.Errorf("%s: %d options, want %d", tc.name, got, tc.want)
		}
	}
}
