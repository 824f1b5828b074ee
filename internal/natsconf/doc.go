// Package natsconf turns the gateway's NATS settings into the options of
// the libraries that act on them: the embedded nats-server's options
// (store, fsync policy, disk limit, and its place in a cluster: routes,
// the route and client listeners, their TLS and the passwords derived from
// the cluster secret), and the nats.go options with which the hub
// authenticates to its own server or to an external one.
//
// It builds options only: it starts no server, dials nothing and reads
// no file itself (nats-server's TLS builder reads the PEM files named).
// Package hub starts the server and connects with what it returns, and
// keeps its names for these types as aliases.
//
// Importing it shortens the embedded cluster's Raft timings for the whole
// process (raft_timing.go): nats-server has no option for them.
//
// It imports nats-io only.
package natsconf
