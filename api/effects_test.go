package api

import (
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/effects"
	"github.com/rankwire/rankwire/internal/ledger"
)

// TestEffectsCoverEveryRoute walks the router (with Static set, so that its
// routes are mounted too): every route has a row in the table of effects,
// and every row is a route.
func TestEffectsCoverEveryRoute(t *testing.T) {
	keys, h := startTestHub(t, "", hub.Config{})
	s := New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Static: http.NotFoundHandler()})
	seen := map[string]bool{}
	err := chi.Walk(s.router, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		key := routeKey(method, route)
		if _, ok := effects.Routes[key]; !ok {
			key = routeKey("*", route) // r.Handle: every method
		}
		if _, ok := effects.Routes[key]; !ok {
			t.Errorf("route %s %s has no row in the table of effects (effects.go)", method, route)
		}
		seen[key] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for key := range effects.Routes {
		if !seen[key] {
			t.Errorf("the table of effects has a row for %s, which is no route", key)
		}
	}
}

// TestEffectsCoverEveryEventKind: every event kind of the log has a row.
func TestEffectsCoverEveryEventKind(t *testing.T) {
	for _, k := range ledger.EventKinds {
		if _, ok := effects.Events[string(k)]; !ok {
			t.Errorf("event kind %q has no row in the table of effects", k)
		}
	}
	if len(effects.Events) != len(ledger.EventKinds) {
		t.Errorf("%d event rows, %d kinds", len(effects.Events), len(ledger.EventKinds))
	}
}

// TestEffectsCoverEveryMessage: the WebSocket's refusal of an unknown type
// names the types it takes; each is a row of effects.Messages and each row one of
// them.
func TestEffectsCoverEveryMessage(t *testing.T) {
	e := newLiveEnv(t, Config{})
	c := e.dial("access_token="+e.token("a", auth.RoleRead), true, nil)
	c.Send(map[string]any{"type": "no-such-type", "id": "x"})
	var msg string
	checkFor(t, 5*time.Second, func() error {
		if errs := c.Errors(); len(errs) > 0 {
			msg = errs[0].Message
			return nil
		}
		return errors.New("no error message yet")
	})
	_, list, ok := strings.Cut(msg, " is not ")
	if !ok {
		t.Fatalf("refusal %q names no types", msg)
	}
	named := regexp.MustCompile(`[a-z]+`).FindAllString(strings.ReplaceAll(list, " or ", ","), -1)
	for _, typ := range named {
		if _, ok := effects.Messages[typ]; !ok {
			t.Errorf("message type %q has no row in the table of effects", typ)
		}
	}
	for typ := range effects.Messages {
		if !slices.Contains(named, typ) {
			t.Errorf("the table has a row for message %q, which the WebSocket does not take (%q)", typ, msg)
		}
	}
}

// TestEffectsRowsAreSound: rows that touch a board need a role; member
// writes are decided at apply time.
func TestEffectsRowsAreSound(t *testing.T) {
	for key, e := range effects.Routes {
		if key == "GET /v1/ws" || key == "GET /v1/stream" || !strings.Contains(key, " /v1/") { // the live plane's: it authenticates itself
			continue
		}
		if (e.Role == 0 && !e.AnyRole) || e.Touches == 0 {
			t.Errorf("%s: a /v1 route with no role or touching nothing", key)
		}
		if strings.Contains(key, "{board}") != (e.Reach == effects.ReachBoard) && e.Reach != effects.ReachQueryBoard {
			t.Errorf("%s: names a board iff it needs the board's reach", key)
		}
		if e.Reach == effects.ReachMember && !strings.HasPrefix(key, "GET") && !e.Apply {
			t.Errorf("%s: a member write not decided at apply time", key)
		}
	}
}
