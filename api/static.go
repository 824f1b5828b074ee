package api

import "github.com/go-chi/chi/v5"

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
	r.Get("/console", s.cfg.Static.ServeHTTP) // the operator console: it asks for an admin token itself
}
