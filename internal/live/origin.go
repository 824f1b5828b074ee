package live

import (
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
)

// originAllowed reports whether a WebSocket upgrade's Origin may connect,
// and the origin it checked. It is coder/websocket's rule, run before the
// upgrade so that a refusal can be a close code the page sees (4003)
// instead of an HTTP 403 it cannot see: no Origin header (not a browser),
// an origin whose host equals the request's Host, or one matching a
// pattern of Options.AllowedOrigins (path.Match, case-insensitive; against
// host[:port], or scheme://host[:port] for a pattern with "://"). A port
// is part of the host: "games.example" does not match
// "games.example:8443". O(patterns).
func (p *Plane) originAllowed(r *http.Request) (string, bool) {
	origin := r.Header.Get("Origin")
	if origin == "" {
		return "", true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return origin, false
	}
	if strings.EqualFold(r.Host, u.Host) {
		return origin, true
	}
	for _, p := range p.origins {
		target := u.Host
		if strings.Contains(p, "://") {
			target = u.Scheme + "://" + u.Host
		}
		if ok, _ := path.Match(strings.ToLower(p), strings.ToLower(target)); ok {
			return origin, true
		}
	}
	return origin, false
}

// warnOpenOrigins logs a warning, once at start, for each allowed-origin
// pattern that matches any site (such as "*"): with it, a page of any
// site holding a token may open WebSockets on the gateway.
func warnOpenOrigins(log *slog.Logger, patterns []string) {
	for _, p := range patterns {
		target := "any-site.invalid:1"
		if strings.Contains(p, "://") {
			target = "https://" + target
		}
		if ok, _ := path.Match(strings.ToLower(p), target); ok {
			log.Warn("websocket: an allowed origin pattern matches every site: pages of any site may open WebSockets", "pattern", p)
		}
	}
}

// OriginAllowed is originAllowed for the REST API's CORS (api/cors.go), so
// that one rule decides which pages may call the gateway, over WebSocket,
// Server-Sent Events and REST alike.
func (p *Plane) OriginAllowed(r *http.Request) (string, bool) { return p.originAllowed(r) }
