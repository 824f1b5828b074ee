package effects

import (
	"errors"
	"fmt"
	"slices"

	"github.com/rankwire/rankwire/auth"
)

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
	budgetSchedules   = "key file schedules, board_writes_per_second"
	budgetConnections = "key file connections"
	budgetProfiles    = "key file profiles, identity_writes_per_second; member ids (hub MaxMembers)"
	budgetAliases     = "key file aliases, identity_writes_per_second; member ids (hub MaxMembers)"
	budgetErasures    = "key file identity_writes_per_second"
)

var (
	effRead   = Effect{Role: auth.RoleRead, Touches: TouchBoard, Reach: ReachBoard}
	effSubmit = Effect{Role: auth.RoleSubmit, Touches: TouchBoard, Reach: ReachBoard}
	effAdmin  = Effect{Role: auth.RoleAdmin, Touches: TouchBoard, Reach: ReachBoard}

	effSchedules     = Effect{Role: auth.RoleAdmin, Touches: TouchTenant, Reach: ReachNone}
	effScheduleWrite = Effect{Role: auth.RoleAdmin, Touches: TouchTenant | TouchBoard, Reach: ReachEvery}
)

// Routes is the table for HTTP: the key is the method and the route
// pattern as chi reports it (RoutePattern). Routes outside /v1 need no
// token and touch no tenant: their rows have Role 0.
var Routes = map[string]Effect{
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
	// /v1/ws authenticates itself: its messages are Messages' rows.
	"GET /v1/ws": {Touches: TouchBoard, Reach: ReachBoard, Budget: budgetConnections},
	// /v1/stream authenticates itself too: one live view, whose query is a
	// subscribe message's fields (Messages["subscribe"]).
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
	// Schedules: role admin; a write creates boards of any name, so it
	// needs a token that reaches every board (Allow).
	"GET /v1/schedules":               effSchedules,
	"GET /v1/schedules/{schedule}":    effSchedules,
	"PUT /v1/schedules/{schedule}":    withBudget(effScheduleWrite, budgetSchedules),
	"DELETE /v1/schedules/{schedule}": withBudget(effScheduleWrite, budgetBoardWrites),
	"GET /v1/audit":                   {Role: auth.RoleAdmin, Touches: TouchBoard, Reach: ReachQueryBoard},
	"GET /v1/tenant":                  {Role: auth.RoleAdmin, Touches: TouchTenant, Reach: ReachNone},
	// A token of the caller's tenant, its role and boards within the
	// caller's own (api's handler_tokens.go checks the boards claim).
	"POST /v1/tokens": {Role: auth.RoleAdmin, Touches: TouchTenant, Reach: ReachNone, Budget: "key file token_mints_per_minute"},
	// A link needs ReachMember; one that merges members needs ReachEvery
	// and role admin (mayMerge), both decided at apply time.
	"POST /v1/identities":              {Role: auth.RoleSubmit, Touches: TouchMembers, Reach: ReachMember, Apply: true, Budget: budgetAliases},
	"GET /v1/identities/{id}":          {Role: auth.RoleSubmit, Touches: TouchMembers, Reach: ReachMember},
	"PUT /v1/members/{member}/profile": {Role: auth.RoleSubmit, Touches: TouchMembers, Reach: ReachMember, Apply: true, Budget: budgetProfiles},
	"GET /v1/members/{member}/profile": {AnyRole: true, Touches: TouchMembers, Reach: ReachMember},
	// A data subject's rights (GDPR art. 15 and 17): admin only.
	"GET /v1/members/{member}/personal-data":    {Role: auth.RoleAdmin, Touches: TouchMembers, Reach: ReachMember},
	"DELETE /v1/members/{member}/personal-data": {Role: auth.RoleAdmin, Touches: TouchMembers, Reach: ReachMember, Apply: true, Budget: budgetErasures},
}

// Messages is the table for the live plane's client messages, by type
// (wire.TypeAuth, ...). internal/live looks every message up here before
// it acts, and decides with Allow: an auth (a connection's first token,
// or a refresh) needs role read; a subscribe (and an event stream's one
// view, whose query is a subscribe's fields) the reach of its board; a
// refresh re-decides each subscription with the subscribe row under the
// new token, ending those it no longer allows.
var Messages = map[string]Effect{
	"auth":        {Role: auth.RoleRead, Touches: TouchTenant, Reach: ReachNone, Budget: budgetConnections},
	"subscribe":   effRead,
	"unsubscribe": {Role: auth.RoleRead, Touches: TouchBoard, Reach: ReachNone}, // ends one of the connection's own views
}

// Events is the table for the log's event kinds: the HTTP effect
// that writes each, and where apply decides reach.
var Events = map[string]Effect{
	"settings":   withBudget(effAdmin, budgetBoards),
	"submit":     withBudget(effSubmit, budgetSubmissions),
	"submits":    withBudget(effSubmit, budgetSubmissions),
	"link":       Routes["POST /v1/identities"],
	"remove":     effAdmin,
	"reset":      effAdmin,
	"delete":     effAdmin,
	"approve":    effAdmin,
	"reject":     effAdmin,
	"profile":    Routes["PUT /v1/members/{member}/profile"],
	"disqualify": effAdmin,
	"reinstate":  effAdmin,
	"settle":     effAdmin,
	"void":       effAdmin,
	"erase":      Routes["DELETE /v1/members/{member}/personal-data"],
	"schedule":   withBudget(effScheduleWrite, budgetSchedules),
	"unschedule": effScheduleWrite,
	// fire: a schedule's occurrence creates its board; published by the
	// gateway's own ticker (internal/scheduler), never by a request.
	"fire": withBudget(effScheduleWrite, budgetBoards),
}

func withBudget(e Effect, budget string) Effect {
	e.Budget = budget
	return e
}

// Errors of Allow, for the edges to answer (403 on HTTP, a forbidden
// error message live); they wrap auth's (auth.ErrRole, auth.ErrBoard).
var (
	// ErrNoRow: the route or message has no row: refused, a wiring
	// mistake (a test fails first).
	ErrNoRow = errors.New("effects: no row in the table of effects")
	// ErrNoBoard: the row needs a board's reach and none was named.
	ErrNoBoard = errors.New("effects: the effect needs a board")
	// ErrNotEvery: a ReachEvery row decided here (not at apply time: a
	// schedule's writes) and a token that does not reach every board (a
	// boards claim without "*"). It wraps auth.ErrBoard.
	ErrNotEvery = fmt.Errorf("%w: the token must reach every board", auth.ErrBoard)
)

// Allow decides whether sc may have e on board: the role (unless AnyRole,
// or Role 0 for an unauthenticated route), then, where e.Reach is
// ReachBoard or ReachQueryBoard, the board's reach. board is the
// validated name the request or message gives ("" where it gives none,
// which a board rule refuses with ErrNoBoard: fail closed). ReachMember
// and ReachEvery are decided later, by the hub and ledger (Effect.Apply),
// but a ReachEvery row without Apply (a schedule's writes) here: a token
// with a boards claim without "*" fails with ErrNotEvery.
// The error wraps auth.ErrRole, auth.ErrBoard or ErrNoBoard. O(board
// patterns); safe for concurrent use.
func (e Effect) Allow(sc auth.Scope, board string) error {
	if !e.AnyRole && e.Role != 0 && !sc.Can(e.Role) {
		return fmt.Errorf("%w: role %s not granted", auth.ErrRole, e.Role)
	}
	if e.Reach == ReachEvery && !e.Apply && sc.Boards != nil && !slices.Contains(sc.Boards, "*") {
		return fmt.Errorf("%w: every board not reached", ErrNotEvery)
	}
	if e.Reach != ReachBoard && e.Reach != ReachQueryBoard {
		return nil
	}
	if board == "" {
		return ErrNoBoard
	}
	if !sc.CanBoard(board) {
		return fmt.Errorf("%w: board %q not reached", auth.ErrBoard, board)
	}
	return nil
}

// AllowMessage is Allow for the live message of type typ: ErrNoRow where
// typ has no row in Messages.
func AllowMessage(typ string, sc auth.Scope, board string) error {
	e, ok := Messages[typ]
	if !ok {
		return fmt.Errorf("%w: message %q", ErrNoRow, typ)
	}
	return e.Allow(sc, board)
}
