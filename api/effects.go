package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/wire"
)

// The table of effects. Every HTTP route, every WebSocket message and
// every event kind of the log declares here what it touches, the role and
// the board reach it needs, and the budget it spends. authorize applies
// the table to every /v1 request, from the route pattern chi matched; a
// route missing from the table is refused (500: a wiring mistake) and
// fails TestEffectsCoverEveryRoute, as a WebSocket message or an event
// kind missing from it fails TestEffectsCoverEveryMessage and
// TestEffectsCoverEveryEventKind. docs/SECURITY.md states the rule.

// Touch is what an effect reads or changes, as bits.
type Touch uint8

// What an effect may touch.
const (
	TouchTenant  Touch = 1 << iota // tenant-wide state: its board list, its limits, its connections
	TouchBoard                     // one board, named by the route or message
	TouchMembers                   // members' profiles and identities, shown on every board that ranks them
)

// ReachRule says which boards a token must reach for an effect.
type ReachRule uint8

// The reach rules.
const (
	// ReachNone: no board; the answer counts or lists only boards the
	// token reaches (listBoards, tenant).
	ReachNone ReachRule = iota
	// ReachBoard: the board named by {board} (or the message's board).
	ReachBoard
	// ReachQueryBoard: the board named by the query parameter board,
	// required (GET /v1/audit).
	ReachQueryBoard
	// ReachMember: a write needs every board where the member ranks, a
	// read at least one of them. Which boards those are is decided in
	// stream order: the hub carries the token's reach in the event and
	// apply decides (ledger.Reach), reads decide under the read lock.
	ReachMember
	// ReachEvery: every board, by a token with no boards claim or "*":
	// merges of members, decided at apply time (ledger's NoMerge).
	ReachEvery
)

// Effect is one row of the table.
type Effect struct {
	Role auth.Role // the role needed; 0: none (the route needs no token), unless AnyRole
	// AnyRole says any verified token of the tenant may, whatever its roles.
	AnyRole bool
	Touches Touch
	Reach   ReachRule
	// Budget names the tenant limits the effect spends (the key file's
	// fields, docs/OPERATIONS.md), "" where none.
	Budget string
	// Apply says the effect's reach is decided at apply time (ReachMember
	// writes, ReachEvery), not only here.
	Apply bool
}

// Budgets named in the table.
const (
	budgetSubmissions = "key file submissions_per_second, quarantine (held items per board)"
	budgetBoards      = "key file boards, board_writes_per_second"
	budgetBoardWrites = "key file board_writes_per_second"
	budgetConnections = "key file connections"
	budgetProfiles    = "key file profiles, identity_writes_per_second; member ids (hub MaxMembers)"
	budgetAliases     = "key file aliases, identity_writes_per_second; member ids (hub MaxMembers)"
)

var (
	effRead   = Effect{Role: auth.RoleRead, Touches: TouchBoard, Reach: ReachBoard}
	effSubmit = Effect{Role: auth.RoleSubmit, Touches: TouchBoard, Reach: ReachBoard}
	effAdmin  = Effect{Role: auth.RoleAdmin, Touches: TouchBoard, Reach: ReachBoard}
)

// routeEffects is the table for HTTP: the key is the method and the route
// pattern as chi reports it (RoutePattern). Routes outside /v1 need no
// token and touch no tenant: their rows have Role 0.
var routeEffects = map[string]Effect{
	"GET /healthz":      {},
	"GET /readyz":       {},
	"GET /openapi.json": {},
	// The widget, the demo page and the console (static.go, where
	// Config.Static is set): files, no tenant data; the console asks for a
	// token itself and then speaks this table's routes.
	"* /widget/*":  {},
	"* /demo/*":    {},
	"GET /":        {},
	"GET /console": {},
	// /v1/ws authenticates itself: its messages are wsEffects.
	"GET /v1/ws": {Touches: TouchBoard, Reach: ReachBoard, Budget: budgetConnections},
	// /v1/stream authenticates itself too: one live view, whose query is a
	// subscribe message's fields (wsEffects["subscribe"]).
	"GET /v1/stream": {Role: auth.RoleRead, Touches: TouchBoard, Reach: ReachBoard, Budget: budgetConnections},

	"GET /v1/boards":                                   {Role: auth.RoleRead, Touches: TouchTenant, Reach: ReachNone},
	"PUT /v1/boards/{board}":                           withBudget(effAdmin, budgetBoards),
	"GET /v1/boards/{board}":                           effRead,
	"DELETE /v1/boards/{board}":                        withBudget(effAdmin, budgetBoardWrites),
	"POST /v1/boards/{board}/reset":                    withBudget(effAdmin, budgetBoardWrites),
	"POST /v1/boards/{board}/scores":                   withBudget(effSubmit, budgetSubmissions),
	"GET /v1/boards/{board}/scores":                    effRead,
	"GET /v1/boards/{board}/quarantine":                effAdmin,
	"POST /v1/boards/{board}/quarantine/{qid}/approve": effAdmin,
	"POST /v1/boards/{board}/quarantine/{qid}/reject":  effAdmin,
	"GET /v1/boards/{board}/top":                       effRead,
	"GET /v1/boards/{board}/standings":                 effRead,
	"GET /v1/boards/{board}/ranks/{rank}":              effRead,
	"GET /v1/boards/{board}/score-rank":                effRead,
	"GET /v1/boards/{board}/members":                   effRead,
	"GET /v1/boards/{board}/members/{member}":          effRead,
	"DELETE /v1/boards/{board}/members/{member}":       withBudget(effAdmin, budgetBoardWrites),
	"GET /v1/boards/{board}/members/{member}/around":   effRead,
	"GET /v1/boards/{board}/members/{member}/history":  effRead,
	"POST /v1/boards/{board}/disqualify":               effAdmin,
	"POST /v1/boards/{board}/reinstate":                effAdmin,
	"POST /v1/boards/{board}/settle":                   effAdmin,
	"POST /v1/boards/{board}/void":                     effAdmin,
	"GET /v1/audit":                                    {Role: auth.RoleAdmin, Touches: TouchBoard, Reach: ReachQueryBoard},
	"GET /v1/tenant":                                   {Role: auth.RoleAdmin, Touches: TouchTenant, Reach: ReachNone},
	// A token of the caller's tenant, its role and boards within the
	// caller's own (handler_tokens.go checks the boards claim).
	"POST /v1/tokens": {Role: auth.RoleAdmin, Touches: TouchTenant, Reach: ReachNone, Budget: "key file token_mints_per_minute"},
	// A link needs ReachMember; one that merges members needs ReachEvery
	// and role admin (mayMerge), both decided at apply time.
	"POST /v1/identities":              {Role: auth.RoleSubmit, Touches: TouchMembers, Reach: ReachMember, Apply: true, Budget: budgetAliases},
	"GET /v1/identities/{id}":          {Role: auth.RoleSubmit, Touches: TouchMembers, Reach: ReachMember},
	"PUT /v1/members/{member}/profile": {Role: auth.RoleSubmit, Touches: TouchMembers, Reach: ReachMember, Apply: true, Budget: budgetProfiles},
	"GET /v1/members/{member}/profile": {AnyRole: true, Touches: TouchMembers, Reach: ReachMember},
}

// wsEffects is the table for the WebSocket's client messages, by type.
// internal/live applies it in one place (liveLoc: the board of a
// subscribe must be reached, by a token with role read).
var wsEffects = map[string]Effect{
	"auth":        {Role: auth.RoleRead, Touches: TouchBoard, Reach: ReachBoard}, // narrows: subscriptions out of the new reach end
	"subscribe":   effRead,
	"unsubscribe": {Role: auth.RoleRead},
}

// eventEffects is the table for the log's event kinds: the HTTP effect
// that writes each, and where apply decides reach.
var eventEffects = map[string]Effect{
	"settings":   withBudget(effAdmin, budgetBoards),
	"submit":     withBudget(effSubmit, budgetSubmissions),
	"submits":    withBudget(effSubmit, budgetSubmissions),
	"link":       routeEffects["POST /v1/identities"],
	"remove":     effAdmin,
	"reset":      effAdmin,
	"delete":     effAdmin,
	"approve":    effAdmin,
	"reject":     effAdmin,
	"profile":    routeEffects["PUT /v1/members/{member}/profile"],
	"disqualify": effAdmin,
	"reinstate":  effAdmin,
	"settle":     effAdmin,
	"void":       effAdmin,
}

func withBudget(e Effect, budget string) Effect {
	e.Budget = budget
	return e
}

// authorize applies the table to r, whose route chi has matched: the role,
// then the board reach where the route names a board (after checking the
// name, so that a malformed name is a 400 whoever asks). ReachMember and
// ReachEvery are passed on to the hub (reachOf) and decided there.
func authorize(r *http.Request) error {
	key := routeKey(r.Method, chi.RouteContext(r.Context()).RoutePattern())
	e, ok := routeEffects[key]
	if !ok {
		return &Error{Status: http.StatusInternalServerError, Code: string(wire.CodeInternal), Message: "route " + truncate(key) + " has no row in the table of effects"}
	}
	sc := scopeOf(r)
	if e.Reach == ReachBoard || e.Reach == ReachQueryBoard {
		name := chi.URLParam(r, "board")
		if e.Reach == ReachQueryBoard {
			if name = r.URL.Query().Get("board"); name == "" {
				return badRequest("board: required")
			}
		}
		if !names.Valid(name) {
			return badRequest("board: %q does not match %s", truncate(name), names.Pattern)
		}
		if !e.AnyRole && !sc.Can(e.Role) {
			return forbidden("role %s: not granted", e.Role)
		}
		if !sc.CanBoard(name) {
			return forbidden("board %q: the token does not reach it", name)
		}
		return nil
	}
	if !e.AnyRole && e.Role != 0 && !sc.Can(e.Role) {
		return forbidden("role %s: not granted", e.Role)
	}
	return nil
}

// routeKey is the table's key of a route: its method and pattern without
// a trailing slash (chi reports "/v1/boards/{board}/" for a route mounted
// at "/" of a subrouter, or without the slash, depending on the request).
func routeKey(method, pattern string) string {
	if len(pattern) > 1 {
		pattern = strings.TrimSuffix(pattern, "/")
	}
	return method + " " + pattern
}

// reachOf is sc's board reach as the hub carries it into events and reads.
func reachOf(sc auth.Scope) hub.Reach {
	if sc.Boards == nil {
		return hub.Reach{}
	}
	return hub.Reach{Scoped: true, Boards: sc.Boards}
}
