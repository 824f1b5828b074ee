package api

import (
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/identity"
	"github.com/rankwire/rankwire/internal/names"
)

// Bounds on what a client controls, from PROTOCOL.md.
const (
	MaxLimit   = 1000 // rows of a top read
	MaxRadius  = 100  // rows each side of an around read
	MaxIDs     = 100  // members of a members read
	maxOffset  = 1 << 30
	maxRankArg = 1 << 31
)

// boardFor returns the {board} of the route after checking its name and
// that the token may use it for role.
func boardFor(r *http.Request, role auth.Role) (string, error) {
	return boardNamed(r, chi.URLParam(r, "board"), role)
}

// boardNamed checks name as a board name and that the token may use it
// for role; boardFor and boardQuery name it from the route or the query.
func boardNamed(r *http.Request, name string, role auth.Role) (string, error) {
	if !names.Valid(name) {
		return "", badRequest("board: %q does not match %s", truncate(name), names.Pattern)
	}
	sc := scopeOf(r)
	if !sc.Can(role) {
		return "", forbidden("role %s: not granted", role)
	}
	if !sc.CanBoard(name) {
		return "", forbidden("board %q: the token does not reach it", name)
	}
	return name, nil
}

// locFor returns the board-window a read addresses: ?window= and ?at=.
func locFor(r *http.Request) (hub.Loc, error) {
	b, err := boardFor(r, auth.RoleRead)
	if err != nil {
		return hub.Loc{}, err
	}
	l := hub.Loc{Tenant: scopeOf(r).Tenant, Board: b}
	q := r.URL.Query()
	switch w := q.Get("window"); w {
	case "", "all", "day", "week", "month":
		l.Window = w
	default:
		return l, badRequest("window: %q is not one of all, day, week, month", truncate(w))
	}
	if at := q.Get("at"); at != "" {
		if _, err := time.Parse(time.DateOnly, at); err != nil {
			return l, badRequest("at: %q is not a date YYYY-MM-DD", truncate(at))
		}
		l.Date = at // a date of the board's calendar: the hub finds its window
	}
	return l, nil
}

// intParam reads query parameter name as an integer in [lo, hi], or def
// where it is absent.
func intParam(r *http.Request, name string, def, lo, hi int) (int, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		return def, nil
	}
	return parseBounded(name, s, lo, hi)
}

// floatParam reads query parameter name as a finite number, or def where it
// is absent; required makes an absent one a bad request.
func floatParam(r *http.Request, name string, def float64, required bool) (float64, error) {
	s := r.URL.Query().Get(name)
	if s == "" {
		if required {
			return 0, badRequest("%s: required", name)
		}
		return def, nil
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, badRequest("%s: %q is not a finite number", name, truncate(s))
	}
	return v, nil
}

// cursorParam reads query parameter name as a cursor from an earlier
// page's next on l, or nil where it is absent. A cursor that is not one
// this gateway sealed for l (tampered, forged, another tenant's or another
// board-window's) is a bad request naming the parameter: cursor.go.
func (s *Server) cursorParam(r *http.Request, l hub.Loc, name string) (*hub.Cursor, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	c, err := s.cursors.open(l, v)
	if err != nil {
		return nil, badRequest("%s: %q is not a cursor from a page's next on this board", name, truncate(v))
	}
	return &c, nil
}

func parseBounded(name, s string, lo, hi int) (int, error) {
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		return 0, badRequest("%s: %q is not an integer in %d..%d", name, truncate(s), lo, hi)
	}
	return v, nil
}

// memberParam returns the {member} of the route, checked as an identifier.
func memberParam(r *http.Request, name string) (string, error) {
	m, err := pathParam(r, name)
	if err != nil {
		return "", err
	}
	if p := identity.Reason(m); p != "" {
		return "", badRequest("%s: %s", name, p)
	}
	return m, nil
}

// pathParam returns the route parameter name, unescaped. The router
// matches on the escaped path whenever the client's escaping is not Go's
// own (a%ff, caf%c3%a9) and on the unescaped path otherwise; unescaping in
// the first case gives every spelling of the same bytes one reading.
func pathParam(r *http.Request, name string) (string, error) {
	p := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return p, nil
	}
	u, err := url.PathUnescape(p)
	if err != nil {
		return "", badRequest("%s: not a valid percent-encoded path segment", name)
	}
	return u, nil
}

// idsParam splits ?ids=a,b,c into at most MaxIDs checked identifiers.
func idsParam(r *http.Request) ([]string, error) {
	raw := r.URL.Query().Get("ids")
	if raw == "" {
		return nil, badRequest("ids: required, a comma-separated list of member ids")
	}
	ids := strings.Split(raw, ",")
	if len(ids) > MaxIDs {
		return nil, badRequest("ids: %d ids, at most %d", len(ids), MaxIDs)
	}
	for i, id := range ids {
		if p := identity.Reason(id); p != "" {
			return nil, badRequest("ids[%d]: %s", i, p)
		}
	}
	return ids, nil
}

// truncate shortens what a client sent before it is echoed in a message.
func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	return s[:64] + "…"
}
