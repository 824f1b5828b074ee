// Package api serves rankwire's HTTP contract (PROTOCOL.md): routes with chi,
// bearer-token authentication through auth, and calls into hub. It decodes
// and validates every request at the edge, maps every error to one of the
// protocol's codes with the offending field named, and never lets a client's
// input crash the process or reach another tenant: the tenant always comes
// from the token.
//
// /v1/ws is internal/live's Plane, mounted here: api builds it with its
// keyring and its error mapping, but does not wire it to the hub's change
// feed (Server.Feed; the owner calls hub.SetFeed), so that two Servers over
// one hub never take each other's feed.
//
// It may import every rankwire package below it (board, identity, hub,
// auth, internal/live) and chi, prometheus; nothing imports it but
// cmd/gateway and internal/gwtest.
package api
