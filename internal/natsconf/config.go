package natsconf

// Cluster is the embedded server's place in a NATS cluster.
type Cluster struct {
	Node   string   // this server's name, unique in the cluster; empty: the host name
	Name   string   // the cluster's name; empty: no cluster
	Listen string   // host:port for routes from the other nodes
	Routes []string // nats://host:port of the other nodes' cluster listeners
	// Secret authenticates routes and client connections: both sides derive
	// the user and password from it (RouteUser, ClientUser). Never logged.
	Secret string
	// System is the password of SystemUser, the system account's user that
	// only in-process connections may be (system.go); empty: a random one
	// nobody knows. Used with Name only. Never logged.
	System string
	// ClientListen is host:port of a client listener that asks for the
	// user and password derived from Secret; empty: none (no client port).
	ClientListen string
	// ClientTLS makes ClientListen TLS only (a plain client is refused);
	// zero: plain. Not applied to the Hub's own in-process connection.
	ClientTLS ClientTLS
	// RouteTLS encrypts the routes between the nodes, each side proving
	// itself with a certificate that RouteTLS.CA signed; zero: plain routes.
	RouteTLS RouteTLS
}

// RouteTLS holds the PEM files of mutual TLS on the cluster's routes. Every
// node presents Cert (which must name the host that its peers dial, as
// listed in their routes) and accepts only peers whose certificate CA
// signed, both when it dials and when it is dialed.
type RouteTLS struct {
	Cert, Key, CA string
}

// enabled reports whether any file is given (then all three must be).
func (t RouteTLS) enabled() bool { return t.Cert != "" || t.Key != "" || t.CA != "" }

// ClientTLS holds the PEM files of TLS on the client listener: Cert and
// Key are this server's; CA, where set, is the CA that must sign every
// client's certificate (mutual TLS). Zero Cert: no TLS.
type ClientTLS struct {
	Cert, Key, CA string
}

// NATSAuth holds the files that authenticate the Hub to an external NATS.
type NATSAuth struct {
	Creds   string // a NATS credentials (.creds) file
	TLSCA   string // CA certificate that signs the servers' certificates
	TLSCert string // client certificate, with TLSKey
	TLSKey  string
}
