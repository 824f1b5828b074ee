// Package effects is the table of effects: every HTTP route, every live
// message (WebSocket and Server-Sent Events) and every event kind of the
// log declares here what it touches, the role and the board reach it
// needs, and the budget it spends. api applies the route rows to every
// /v1 request and internal/live the message rows to every live message,
// both through Effect.Allow, so that one table decides for every surface.
// A route, message or event kind missing from the table fails a test (in
// api and internal/live), and is refused at run time (fail closed).
//
// It imports auth (scopes and roles) and the standard library only: it is
// data and one decision, and must not import api, hub or internal/live.
package effects
