// Package wire is rankwire's public protocol written once, as Go values:
// the JSON bodies of the HTTP API (requests and answers), the WebSocket
// messages (client to server and server to client), the error codes, the
// WebSocket close codes and the limits a client must keep. docs/PROTOCOL.md
// is the contract in prose; api/spec/openapi.json is the same contract as
// an OpenAPI document, and api's tests check it against this package field
// by field (every property against a json tag, required against
// omitempty, both ways).
//
// The gateway (api) encodes these types, the Go SDK (client) decodes them,
// and wire/testdata holds one golden message of each kind, generated from
// these values (go test ./wire -update) and read by the tests of every
// other implementation of the protocol: the SDK, the load tool's decoder,
// the browser client (web/static/client.js) and the k6 library.
//
// The package must stay standard-library only: the SDK, the load tools and
// any program that speaks the protocol import it, and nothing of the
// gateway (hub, NATS, chi) may come with it.
//
// A field's JSON name, its omitempty and its Go type are the protocol: a
// change here is a change of the protocol (docs/ARCHITECTURE.md, "How to
// add a field to the protocol").
package wire
