package web

import (
	"embed"
	"encoding/json"
	"io/fs"
	"net/http"
	"time"
)

//go:embed static
var static embed.FS

// Static returns the embedded files: rankwire.js, client.js, styles.js and
// index.html at its root.
func Static() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the embed directive guarantees static exists
	}
	return sub
}

// Demo supplies the demo page's endpoints. Its methods are called from
// concurrent requests and must be safe for concurrent use.
type Demo interface {
	// Session returns a fresh read token for the demo's viewer, with what
	// the page shows about them.
	Session() (Session, error)
	// Stats returns the figures of the page's panel.
	Stats() Stats
}

// Session is what GET /demo/token answers.
type Session struct {
	Token   string    `json:"token"`   // a read token whose sub is Member
	Expires time.Time `json:"expires"` // the token's exp
	Board   string    `json:"board"`
	Member  string    `json:"member"`  // the viewer
	Friends []string  `json:"friends"` // members of the friends view, the viewer included
	Prize   int       `json:"prize"`   // the prize line's rank
}

// Stats is what GET /demo/stats answers.
type Stats struct {
	SubmissionsPerSecond float64 `json:"submissions_per_second"`
	Connections          int     `json:"connections"` // open WebSockets
	Players              int     `json:"players"`     // members of the demo board
	Sprint               string  `json:"sprint"`      // the board of the sprint tournament under way
	// SeedingProfiles counts the players' profiles a fresh demo has still
	// to seed (it serves first; a player shows their nickname until then).
	SeedingProfiles int `json:"seeding_profiles,omitempty"`
}

// Options configures Handler. The zero value serves the widget only.
type Options struct {
	// Demo serves the demo page at / and its endpoints GET /demo/token and
	// GET /demo/stats. Nil means no demo page: / answers 404. Only the
	// gateway's demo mode sets it: /demo/token hands a token to anyone who asks.
	Demo Demo
}

// Handler serves /widget/* (the widget's modules) and, with a Demo, the
// demo page and its endpoints. Every other path answers 404. Safe for
// concurrent use.
func Handler(o Options) http.Handler {
	mux := http.NewServeMux()
	files := http.FileServerFS(Static())
	widget := http.StripPrefix("/widget", files)
	mux.Handle("GET /widget/{file}", noIndex(cacheShort(widget)))
	mux.Handle("GET /console", console())
	if o.Demo != nil {
		mux.Handle("GET /{$}", files)
		mux.Handle("GET /demo/token", demoToken(o.Demo))
		mux.Handle("GET /demo/stats", demoStats(o.Demo))
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == "" {
			notFound(w, r)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

// notFound answers in the protocol's error shape, like every other path
// of the gateway.
func notFound(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusNotFound)
	msg, _ := json.Marshal("no route " + r.URL.Path)
	_, _ = w.Write([]byte(`{"error":{"code":"not_found","message":` + string(msg) + "}}\n"))
}

// cacheShort lets browsers and CDNs keep the widget for a minute: a lobby's
// many page loads come from cache, and a gateway upgrade reaches them soon.
func cacheShort(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=60")
		// Lobbies load the module from the gateway's origin into their own.
		w.Header().Set("Access-Control-Allow-Origin", "*")
		h.ServeHTTP(w, r)
	})
}

// console serves the operator console (console.html): on every gateway,
// demo or not; it holds no data and asks for an admin token.
func console() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		page, err := fs.ReadFile(Static(), "console.html")
		if err != nil {
			notFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Frame-Options", "DENY") // no clickjacking of the Approve buttons
		w.Header().Set("Referrer-Policy", "no-referrer")
		_, _ = w.Write(page)
	})
}

// noIndex serves only the widget's modules: index.html is the demo page,
// not part of the widget.
func noIndex(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := r.PathValue("file"); f == "index.html" || f == "console.html" {
			notFound(w, r)
			return
		}
		h.ServeHTTP(w, r)
	})
}

func demoToken(d Demo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s, err := d.Session()
		if err != nil {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			_, _ = w.Write([]byte(`{"error":{"code":"internal","message":"minting the demo token failed"}}` + "\n"))
			return
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, s)
	})
}

func demoStats(d Demo) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, d.Stats())
	})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v) // plain structs: cannot fail
}
