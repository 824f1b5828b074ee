// Package security holds rankwire's black-box security suite: its tests
// build the real gateway binary from ./cmd/gateway, start it on loopback
// with a key file of two tenants, and attack it as a client would, over
// HTTP, WebSocket and the process's own sockets. Each test asserts the
// refusal and that no byte of the other tenant's data comes back.
//
// The package has no code besides its tests and imports nothing.
// docs/SECURITY.md lists what the gateway guarantees; every guarantee
// there has a test here.
package security
