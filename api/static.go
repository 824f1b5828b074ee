package api

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountStatic routes the paths of Config.Static, where set: /widget/* and,
// for the demo page, / and /demo/*. Only these paths, so that every other
// unknown path keeps answering the protocol's JSON not_found.
func (s *Server) mountStatic(r chi.Router) {
	if s.cfg.Static == nil {
		return
	}
	r.Handle("/widget/*", s.cfg.Static)
	r.Handle("/demo/*", s.cfg.Static)
	r.Get("/", s.cfg.Static.ServeHTTP)
	r.Get("/console", consoleHeaders(s.cfg.Static)) // the operator console: it asks for an admin token itself
}

// ConsolePolicy is the Content-Security-Policy of the operator console
// (/console), a page that holds an admin token. Scripts come from the
// gateway's own files only (no inline script, no eval), so that text a
// tenant's data brings into the page can never run; it connects to the
// gateway only (its API and WebSocket); no plugin, no <base>, no form
// posted elsewhere, and no page may frame it (clickjacking of Approve).
// Styles come from the gateway's files only, too (no style element or
// attribute: text a tenant's data brings in cannot restyle the page, say
// to hide a row or overlay a button); the live-board widget styles its
// shadow root with a constructed stylesheet, which the policy allows.
// Images may come from any https origin: members' avatars.
const ConsolePolicy = "default-src 'self'; script-src 'self'; style-src 'self'; " +
	"img-src 'self' https: data:; connect-src 'self'; object-src 'none'; base-uri 'none'; " +
	"form-action 'none'; frame-ancestors 'none'"

// consoleHeaders adds the console's security headers to h's answer:
// ConsolePolicy, X-Frame-Options for browsers without frame-ancestors,
// nosniff. O(1).
func consoleHeaders(h http.Handler) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", ConsolePolicy)
		hd.Set("X-Frame-Options", "DENY")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "no-referrer")
		h.ServeHTTP(w, r)
	}
}
