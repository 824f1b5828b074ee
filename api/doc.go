// Package api serves rankwire's HTTP contract (PROTOCOL.md): routes with chi,
// bearer-token authentication through auth, and calls into hub. It decodes
// and validates every request at the edge, maps every error to one of the
// protocol's codes with the offending field named, and never lets a client's
// input crash the process or reach another tenant: the tenant always comes
// from the token.
//
// It may import every rankwire package below it (board, identity, hub,
// subscriptions, auth) and chi, prometheus; nothing imports it but
// cmd/gateway.
package api
