package api

import (
	"fmt"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/wire"
)

// CORS and the methods every route answers besides its own.
//
// Which pages may call the REST API from another origin is the live
// plane's rule (live.Plane.OriginAllowed, --allowed-origins): by default
// only the gateway's own host, never every origin. Tokens travel in the
// Authorization header, never in cookies, so no answer carries
// Access-Control-Allow-Credentials, and Access-Control-Allow-Origin echoes
// the allowed origin, never "*".

// corsMaxAge is how long, in seconds, a browser may cache a preflight.
const corsMaxAge = "600"

// corsExposed are the answer headers a page's script may read.
const corsExposed = "Retry-After, Content-Type"

// corsAllowedHeaders are the request headers a page may send.
const corsAllowedHeaders = "Authorization, Content-Type"

// probedMethods are the methods an Allow header may list, in its order.
var probedMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions}

// cors answers preflights and OPTIONS, adds CORS headers to the answers
// of allowed origins, and routes HEAD to GET where a route has no HEAD.
// A preflight (OPTIONS with Origin and Access-Control-Request-Method) is
// answered before authentication: browsers send it without the token.
func (s *Server) cors(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin, allowed := s.live.OriginAllowed(r)
		if origin != "" {
			w.Header().Add("Vary", "Origin")
		}
		preflight := r.Method == http.MethodOptions && origin != "" && r.Header.Get("Access-Control-Request-Method") != ""
		if preflight && !allowed {
			writeError(w, forbidden("origin %q: not an allowed origin (--allowed-origins)", truncate(origin)))
			return
		}
		if origin != "" && allowed {
			w.Header().Set("Access-Control-Allow-Origin", origin)
			w.Header().Set("Access-Control-Expose-Headers", corsExposed)
		}
		if r.Method == http.MethodOptions { // routes are looked up for OPTIONS and HEAD alone: off the hot path
			if methods := s.allowedMethods(r); len(methods) > 0 {
				s.answerOptions(w, methods, preflight)
				return
			}
		}
		if r.Method == http.MethodHead && s.headAsGet(r) {
			// Served as GET; net/http drops the body of an answer to HEAD
			// (it keeps the ResponseWriter's own request, whose method is HEAD).
			g := *r
			g.Method = http.MethodGet
			r = &g
		}
		next.ServeHTTP(w, r)
	})
}

// answerOptions answers OPTIONS on a route: 204 with Allow and, for a
// preflight of an allowed origin, what the browser asks.
func (s *Server) answerOptions(w http.ResponseWriter, methods []string, preflight bool) {
	allow := strings.Join(methods, ", ")
	w.Header().Set("Allow", allow)
	if preflight {
		w.Header().Set("Access-Control-Allow-Methods", allow)
		w.Header().Set("Access-Control-Allow-Headers", corsAllowedHeaders)
		w.Header().Set("Access-Control-Max-Age", corsMaxAge)
	}
	w.WriteHeader(http.StatusNoContent)
}

// has reports whether the router has a handler for method on r's path,
// looked up without serving it. chi's Find alone is not enough: below a
// mounted router it names the mount's pattern for a method the route does
// not take, so its answer is checked against the table walked from the
// router (routeMethods).
func (s *Server) has(r *http.Request, method string) bool {
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	pattern := s.router.Find(chi.NewRouteContext(), method, path)
	return pattern != "" && s.methods[routeKeyOf(pattern)][method]
}

// routeMethods walks router into a table of the methods of each route
// pattern (keyed by routeKeyOf).
func routeMethods(router chi.Routes) map[string]map[string]bool {
	table := map[string]map[string]bool{}
	_ = chi.Walk(router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		k := routeKeyOf(route)
		if table[k] == nil {
			table[k] = map[string]bool{}
		}
		table[k][method] = true
		return nil
	})
	return table
}

// routeKeyOf is a pattern without its trailing slash: Walk names a
// subrouter's "/" route "/v1/boards/{board}/", Find "/v1/boards/{board}".
func routeKeyOf(pattern string) string {
	if len(pattern) > 1 {
		return strings.TrimSuffix(pattern, "/")
	}
	return pattern
}

// streams are the GET routes that never end (a WebSocket, an event
// stream): HEAD there would hold a connection open with nothing to show,
// so they answer it 405.
var streams = map[string]bool{"/v1/ws": true, "/v1/stream": true}

// headAsGet reports whether HEAD on r's path is served as GET: the route
// has GET, no HEAD of its own, and is not a stream.
func (s *Server) headAsGet(r *http.Request) bool {
	return !streams[r.URL.Path] && !s.has(r, http.MethodHead) && s.has(r, http.MethodGet)
}

// allowedMethods lists the methods r's path answers: its own, HEAD where
// it has GET, and OPTIONS. Nil where no route matches the path.
func (s *Server) allowedMethods(r *http.Request) []string {
	var out []string
	for _, m := range probedMethods {
		switch {
		case s.has(r, m):
			out = append(out, m)
		case m == http.MethodHead && s.headAsGet(r):
			out = append(out, m)
		}
	}
	if len(out) > 0 && out[len(out)-1] != http.MethodOptions {
		out = append(out, http.MethodOptions)
	}
	return out
}

// methodNotAllowed answers 405 method_not_allowed with Allow.
func (s *Server) methodNotAllowed(w http.ResponseWriter, r *http.Request) {
	if methods := s.allowedMethods(r); len(methods) > 0 {
		w.Header().Set("Allow", strings.Join(methods, ", "))
	}
	writeError(w, &Error{Status: http.StatusMethodNotAllowed, Code: string(wire.CodeMethodNotAllowed),
		Message: fmt.Sprintf("method: %.16q is not one this route takes", r.Method)})
}
