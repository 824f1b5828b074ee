package web_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/rankwire/rankwire/web"
)

type fakeDemo struct{ err error }

func (d fakeDemo) Session() (web.Session, error) {
	return web.Session{Token: "t", Board: "weekly", Member: "player-01", Friends: []string{"player-01"}, Prize: 100}, d.err
}
func (fakeDemo) Stats() web.Stats {
	return web.Stats{SubmissionsPerSecond: 42, Connections: 3, Players: 20000}
}

func TestHandler(t *testing.T) {
	widget := web.Handler(web.Options{})
	demo := web.Handler(web.Options{Demo: fakeDemo{}})
	broken := web.Handler(web.Options{Demo: fakeDemo{err: errors.New("no key")}})
	tests := []struct {
		name    string
		h       http.Handler
		path    string
		status  int
		type_   string
		contain string
	}{
		{"the element", widget, "/widget/rankwire.js", 200, "text/javascript", "customElements.define"},
		{"the client", widget, "/widget/client.js", 200, "text/javascript", "class RankwireClient"},
		{"no demo page in the widget", widget, "/widget/index.html", 404, "application/json", `"code":"not_found"`},
		{"no demo page without Demo", widget, "/", 404, "application/json", `"code":"not_found"`},
		{"no demo token without Demo", widget, "/demo/token", 404, "application/json", `"code":"not_found"`},
		{"unknown widget file", widget, "/widget/nope.js", 404, "", ""},
		{"demo page", demo, "/", 200, "text/html", "<rankwire-board"},
		{"demo token", demo, "/demo/token", 200, "application/json", `"member":"player-01"`},
		{"demo stats", demo, "/demo/stats", 200, "application/json", `"submissions_per_second":42`},
		{"demo token failing", broken, "/demo/token", 500, "application/json", `"code":"internal"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			tt.h.ServeHTTP(rec, httptest.NewRequest("GET", tt.path, nil))
			body, _ := io.ReadAll(rec.Body)
			if rec.Code != tt.status {
				t.Fatalf("status %d, want %d: %s", rec.Code, tt.status, body)
			}
			if ct := rec.Header().Get("Content-Type"); !strings.HasPrefix(ct, tt.type_) {
				t.Errorf("Content-Type %q, want %s", ct, tt.type_)
			}
			if !strings.Contains(string(body), tt.contain) {
				t.Errorf("body lacks %q", tt.contain)
			}
		})
	}
}
