package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/effects"
	"github.com/rankwire/rankwire/internal/names"
	"github.com/rankwire/rankwire/wire"
)

// The table of effects is internal/effects: every HTTP route, live
// message and event kind declares there what it touches, the role and
// board reach it needs and the budget it spends. authorize applies the
// route rows to every /v1 request, from the route pattern chi matched; a
// route missing from the table is refused (500: a wiring mistake) and
// fails TestEffectsCoverEveryRoute, as an event kind missing from it fails
// TestEffectsCoverEveryEventKind (internal/live tests its messages).
// docs/SECURITY.md states the rule.

// authorize applies the table to r, whose route chi has matched: the role,
// then the board reach where the route names a board (after checking the
// name, so that a malformed name is a 400 whoever asks). ReachMember and
// ReachEvery are passed on to the hub (reachOf) and decided there.
func authorize(r *http.Request) error {
	key := routeKey(r.Method, chi.RouteContext(r.Context()).RoutePattern())
	e, ok := effects.Routes[key]
	if !ok {
		return &Error{Status: http.StatusInternalServerError, Code: string(wire.CodeInternal), Message: "route " + truncate(key) + " has no row in the table of effects"}
	}
	var name string
	if e.Reach == effects.ReachBoard || e.Reach == effects.ReachQueryBoard {
		name = chi.URLParam(r, "board")
		if e.Reach == effects.ReachQueryBoard {
			if name = r.URL.Query().Get("board"); name == "" {
				return badRequest("board: required")
			}
		}
		if !names.Valid(name) {
			return badRequest("board: %q does not match %s", truncate(name), names.Pattern)
		}
	}
	err := e.Allow(scopeOf(r), name)
	switch {
	case errors.Is(err, effects.ErrNotEvery):
		return forbidden("boards: the token must reach every board (no boards claim, or \"*\")")
	case errors.Is(err, auth.ErrRole):
		return forbidden("role %s: not granted", e.Role)
	case err != nil:
		return forbidden("board %q: the token does not reach it", name)
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
