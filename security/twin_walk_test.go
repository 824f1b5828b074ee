package security

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"

	"github.com/rankwire/rankwire/internal/testport"
)

// TestTwinTenantsWalkEveryRoute: two tenants with identical names for
// everything (boards, members, aliases, windows, rules, ends_at, qids)
// walk every route of the table of effects, A's request just before B's
// at every step; B's answers (status and body, times and sealed cursors
// masked) and B's notifications (ids and bodies) are exactly those of B
// walking alone on a fresh gateway. A route of the table without a walk
// entry fails the test, as does a walk entry that is no route.
func TestTwinTenantsWalkEveryRoute(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: two gateway processes")
	}
	rows := effectRoutes(t)
	walk := twinWalk()
	covered := map[string]bool{}
	for _, s := range walk {
		if !rows[s.route] {
			t.Errorf("walk entry %q is no route of the table of effects", s.route)
		}
		covered[s.route] = true
	}
	for r := range rows {
		if !covered[r] {
			t.Errorf("route %s of the table of effects has no entry in the twin walk (twin_walk_test.go)", r)
		}
	}
	if t.Failed() {
		return
	}
	// One past end for both runs: board.ended's id carries it.
	past := time.Now().Add(-2 * time.Minute).UTC().Format(msTime)
	alone := runWalk(t, walk, past, false)
	twin := runWalk(t, walk, past, true)
	for i, s := range walk {
		if alone.answers[i] != twin.answers[i] {
			t.Errorf("%s (%s %s): B alone answered\n  %.600s\nbeside A\n  %.600s", s.route, s.method, s.path, alone.answers[i], twin.answers[i])
		}
	}
	if !slices.Equal(alone.notes, twin.notes) {
		t.Errorf("B's notifications alone (%d):\n  %s\nbeside A (%d):\n  %s", len(alone.notes), strings.Join(alone.notes, "\n  "),
			len(twin.notes), strings.Join(twin.notes, "\n  "))
	}
}

// walkStep is one request of the walk: route is its row's key in the
// table of effects; until, where set, repeats it until its answer holds.
type walkStep struct {
	route, method, path, role, body string
	until                           func(reply) bool
}

// The walk's one board that ends: its ends_at is this far after the walk
// starts, so that the reads after the wait see it ended (not yet final).
const cupEndsIn = 3 * time.Second

// msTime is the gateway's time format: RFC 3339 in UTC with milliseconds.
const msTime = "2006-01-02T15:04:05.000Z"

// twinWalk is the walk: writes first, then every read, then the board
// that ends (its amendments), deletes, and the routes outside /v1. Every
// name is the same for both tenants; ENDS stands for the cup's ends_at,
// PAST for that of a board that ended long enough ago to be final (its
// board.ended is due at once).
func twinWalk() []walkStep {
	ended := func(r reply) bool { return strings.Contains(r.body, `"ended_at":"`) }
	return []walkStep{
		{route: "PUT /v1/boards/{board}", method: "PUT", path: "/v1/boards/weekly", role: "admin",
			body: `{"policy":"best","windows":["all","day"],"rules":{"max_score":1000}}`},
		{route: "PUT /v1/boards/{board}", method: "PUT", path: "/v1/boards/cup", role: "admin",
			body: `{"ends_at":"ENDS","prizes":[{"from":1,"to":1,"prize":"gold"}]}`},
		{route: "PUT /v1/boards/{board}", method: "PUT", path: "/v1/boards/spare", role: "admin", body: `{}`},
		{route: "PUT /v1/boards/{board}", method: "PUT", path: "/v1/boards/past", role: "admin", body: `{"ends_at":"PAST"}`},
		{route: "POST /v1/boards/{board}/scores", method: "POST", path: "/v1/boards/weekly/scores", role: "submit",
			body: `{"scores":[{"id":"s1","member":"p1","score":10},{"id":"s2","member":"p2","score":20},{"id":"s3","member":"p3","score":30},{"id":"s4","member":"p4","score":5000}]}`},
		{route: "POST /v1/boards/{board}/scores", method: "POST", path: "/v1/boards/weekly/scores", role: "submit", body: `{"id":"s5","member":"p5","score":9000}`},
		{route: "POST /v1/boards/{board}/scores", method: "POST", path: "/v1/boards/cup/scores", role: "submit",
			body: `{"scores":[{"id":"c1","member":"p1","score":7},{"id":"c2","member":"p2","score":8}]}`},
		{route: "POST /v1/identities", method: "POST", path: "/v1/identities", role: "submit", body: `{"member":"p1","aliases":["email:p1@x.example"]}`},
		{route: "PUT /v1/members/{member}/profile", method: "PUT", path: "/v1/members/p1/profile", role: "submit", body: `{"name":"Ann","country":"MT"}`},
		{route: "GET /v1/boards", method: "GET", path: "/v1/boards", role: "read"},
		{route: "GET /v1/boards/{board}", method: "GET", path: "/v1/boards/weekly", role: "read"},
		{route: "GET /v1/boards/{board}/scores", method: "GET", path: "/v1/boards/weekly/scores?min=0&max=100&limit=2", role: "read"},
		{route: "GET /v1/boards/{board}/top", method: "GET", path: "/v1/boards/weekly/top?limit=2", role: "read"},
		{route: "GET /v1/boards/{board}/quarantine", method: "GET", path: "/v1/boards/weekly/quarantine", role: "admin"},
		{route: "POST /v1/boards/{board}/quarantine/{qid}/approve", method: "POST", path: "/v1/boards/weekly/quarantine/1/approve", role: "admin"},
		{route: "POST /v1/boards/{board}/quarantine/{qid}/reject", method: "POST", path: "/v1/boards/weekly/quarantine/2/reject", role: "admin"},
		{route: "GET /v1/boards/{board}/ranks/{rank}", method: "GET", path: "/v1/boards/weekly/ranks/1", role: "read"},
		{route: "GET /v1/boards/{board}/score-rank", method: "GET", path: "/v1/boards/weekly/score-rank?score=15", role: "read"},
		{route: "GET /v1/boards/{board}/members", method: "GET", path: "/v1/boards/weekly/members?ids=p1,p2,p4", role: "read"},
		{route: "GET /v1/boards/{board}/members/{member}", method: "GET", path: "/v1/boards/weekly/members/p1", role: "read"},
		{route: "GET /v1/boards/{board}/members/{member}/around", method: "GET", path: "/v1/boards/weekly/members/p2/around?radius=1", role: "read"},
		{route: "GET /v1/boards/{board}/members/{member}/history", method: "GET", path: "/v1/boards/weekly/members/p1/history", role: "read"},
		{route: "GET /v1/identities/{id}", method: "GET", path: "/v1/identities/" + url.PathEscape("email:p1@x.example"), role: "admin"},
		{route: "GET /v1/members/{member}/profile", method: "GET", path: "/v1/members/p1/profile", role: "read"},
		{route: "GET /v1/members/{member}/personal-data", method: "GET", path: "/v1/members/p1/personal-data", role: "admin"},
		{route: "GET /v1/boards/{board}/standings", method: "GET", path: "/v1/boards/cup/standings", role: "read", until: ended},
		{route: "POST /v1/boards/{board}/disqualify", method: "POST", path: "/v1/boards/cup/disqualify", role: "admin", body: `{"member":"p2","reason":"ticket 1"}`},
		{route: "POST /v1/boards/{board}/reinstate", method: "POST", path: "/v1/boards/cup/reinstate", role: "admin", body: `{"member":"p2","reason":"appeal"}`},
		{route: "POST /v1/boards/{board}/void", method: "POST", path: "/v1/boards/cup/void", role: "admin", body: `{"seq":1,"reason":"ticket 2"}`},
		{route: "POST /v1/boards/{board}/settle", method: "POST", path: "/v1/boards/cup/settle", role: "admin", body: `{"reason":"paid"}`},
		{route: "POST /v1/boards/{board}/settle", method: "POST", path: "/v1/boards/past/settle", role: "admin", body: `{"reason":"paid"}`},
		{route: "GET /v1/audit", method: "GET", path: "/v1/audit?board=cup", role: "admin"},
		{route: "PUT /v1/schedules/{schedule}", method: "PUT", path: "/v1/schedules/nightly", role: "admin",
			body: `{"every":"day","at":"03:00","time_zone":"Europe/Malta","duration":"1h","paused":true,"settings":{"prizes":[{"from":1,"to":1,"prize":"gold"}]}}`},
		{route: "GET /v1/schedules", method: "GET", path: "/v1/schedules", role: "admin"},
		{route: "GET /v1/schedules/{schedule}", method: "GET", path: "/v1/schedules/nightly", role: "admin"},
		{route: "DELETE /v1/schedules/{schedule}", method: "DELETE", path: "/v1/schedules/nightly", role: "admin"},
		{route: "GET /v1/boards/{board}/standings", method: "GET", path: "/v1/boards/cup/standings", role: "read"},
		{route: "DELETE /v1/boards/{board}/members/{member}", method: "DELETE", path: "/v1/boards/weekly/members/p3", role: "admin"},
		{route: "DELETE /v1/members/{member}/personal-data", method: "DELETE", path: "/v1/members/p1/personal-data", role: "admin"},
		{route: "POST /v1/boards/{board}/reset", method: "POST", path: "/v1/boards/spare/reset", role: "admin"},
		{route: "DELETE /v1/boards/{board}", method: "DELETE", path: "/v1/boards/spare", role: "admin"},
		{route: "GET /v1/tenant", method: "GET", path: "/v1/tenant", role: "admin"},
		{route: "POST /v1/tokens", method: "POST", path: "/v1/tokens", role: "admin", body: `{"role":"read","boards":["weekly"],"sub":"lobby","ttl":"1h"}`},
		{route: "GET /v1/ws", method: "WS", path: "weekly", role: "read"},
		{route: "GET /v1/stream", method: "GET", path: "/v1/stream?board=weekly&kind=top&limit=3", role: "read"},
		{route: "GET /healthz", method: "GET", path: "/healthz"},
		{route: "GET /readyz", method: "GET", path: "/readyz"},
		{route: "GET /openapi.json", method: "GET", path: "/openapi.json"},
		{route: "* /widget/*", method: "GET", path: "/widget/rankwire.js"},
		{route: "* /demo/*", method: "GET", path: "/demo/"},
		{route: "GET /", method: "GET", path: "/"},
		{route: "GET /console", method: "GET", path: "/console"},
	}
}

// effectRoutes reads the keys of the table of effects' Routes from its
// source (this suite imports nothing of the gateway: it drives the binary).
func effectRoutes(t *testing.T) map[string]bool {
	t.Helper()
	f, err := parser.ParseFile(token.NewFileSet(), filepath.Join("..", "internal", "effects", "effects.go"), nil, 0)
	if err != nil {
		t.Fatalf("the table of effects: %v", err)
	}
	routes := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if !ok || len(vs.Names) != 1 || vs.Names[0].Name != "Routes" || len(vs.Values) != 1 {
			return true
		}
		for _, el := range vs.Values[0].(*ast.CompositeLit).Elts {
			if key, err := strconv.Unquote(el.(*ast.KeyValueExpr).Key.(*ast.BasicLit).Value); err == nil {
				routes[key] = true
			}
		}
		return false
	})
	if len(routes) < 10 {
		t.Fatalf("the table of effects lists %d routes: not read", len(routes))
	}
	return routes
}

// walkRun is what tenant B saw in one run: the answer to each step
// (masked) and its notifications.
type walkRun struct {
	answers []string
	notes   []string
}

// runWalk starts a fresh gateway and walks: B alone, or (twin) A then B at
// every step; then waits for B's notifications and reads them.
func runWalk(t *testing.T, walk []walkStep, past string, twin bool) walkRun {
	g, natsURL, secret := startWalkGateway(t)
	times := strings.NewReplacer("ENDS", time.Now().Add(cupEndsIn).UTC().Format(msTime), "PAST", past)
	var run walkRun
	for _, s := range walk {
		s.body = times.Replace(s.body)
		if twin {
			walkOnce(t, g, s, tenantA, g.secretA, "a1")
		}
		run.answers = append(run.answers, walkOnce(t, g, s, tenantB, g.secretB, "b1"))
	}
	run.notes = tenantNotes(t, natsURL, secret, tenantB)
	return run
}

// startWalkGateway starts a gateway with the suite's key file whose
// embedded NATS also listens for clients (to read the notifications'
// stream from outside), and returns it, that URL and the cluster secret.
func startWalkGateway(t *testing.T) (*gateway, string, string) {
	t.Helper()
	dir := t.TempDir()
	const secret = "twin-walk-cluster-secret-0123456789"
	secretFile := filepath.Join(dir, "cluster.secret")
	if err := os.WriteFile(secretFile, []byte(secret), 0o600); err != nil {
		t.Fatal(err)
	}
	port := testport.Free(t) // a route listener's port, named on the command line
	g, err := startGateway(dir, nil, fmt.Sprintf("RANKWIRE_NATS_LISTEN=127.0.0.1:%d", port), "RANKWIRE_CLUSTER_SECRET_FILE="+secretFile)
	if g != nil {
		t.Cleanup(g.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	return g, fmt.Sprintf("nats://127.0.0.1:%d", port), secret
}

// walkOnce runs step s as tenant (its token of s.role, none where empty)
// and returns the answer, masked.
func walkOnce(t *testing.T, g *gateway, s walkStep, tenant string, secret []byte, kid string) string {
	t.Helper()
	tok := ""
	if s.role != "" {
		tok = hs(t, kid, secret, base(tenant, s.role))
	}
	switch {
	case s.method == "WS":
		return mask(walkWS(t, g, tok, s.path))
	case strings.HasPrefix(s.path, "/v1/stream"):
		return mask(walkStream(t, g, s.path, tok))
	}
	deadline := time.Now().Add(cupEndsIn + 20*time.Second)
	for {
		r := call2(t, g, s.method, s.path, tok, s.body)
		if s.until == nil || s.until(r) || time.Now().After(deadline) {
			return mask(fmt.Sprintf("%d %s", r.status, r.body))
		}
		time.Sleep(100 * time.Millisecond) // polling an outside process for a time to pass: no event to await
	}
}

// call2 sends one request to g and reads the answer whole.
func call2(t *testing.T, g *gateway, method, path, token, body string) reply {
	t.Helper()
	req, err := http.NewRequest(method, g.url(path), strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	r := send(t, req)
	if len(r.body) > 4096 { // the OpenAPI document, the widget: compared by hash
		r.body = fmt.Sprintf("%d bytes sha256 %x", len(r.body), sha256.Sum256([]byte(r.body)))
	}
	return r
}

// walkWS subscribes to board's top over /v1/ws and returns the snapshot.
func walkWS(t *testing.T, g *gateway, token, board string) string {
	t.Helper()
	w, err := dialWSAt(t, "ws://"+g.addr, token, nil)
	if err != nil {
		t.Fatalf("/v1/ws: %v", err)
	}
	defer w.c.CloseNow()
	w.send(t, map[string]any{"type": "subscribe", "id": "s1", "board": board, "view": map[string]any{"kind": "top", "limit": 3}})
	snap := w.until(t, 5*time.Second, "snapshot", isType("snapshot", "s1"))
	b, _ := json.Marshal(snap)
	return string(b)
}

// walkStream opens path (an event stream) and returns its first data line.
func walkStream(t *testing.T, g *gateway, path, token string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, "GET", g.url(path+"&access_token="+url.QueryEscape(token)), nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if data, ok := strings.CutPrefix(sc.Text(), "data:"); ok {
			return fmt.Sprintf("%d %s", resp.StatusCode, data)
		}
	}
	return fmt.Sprintf("%d no data: %v", resp.StatusCode, sc.Err())
}

// Masks: what differs between runs whoever else is there (times, sealed
// cursors with their random nonces, names sealed in stored notifications
// under each run's own keys).
var (
	timeText   = regexp.MustCompile(`\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z`)
	cursorText = regexp.MustCompile(`"next":"[A-Za-z0-9_-]{40,}"`)
	tokenText  = regexp.MustCompile(`"token":"[A-Za-z0-9_.-]{40,}"`) // a minted token: its iat and exp differ
	sealedText = regexp.MustCompile(`"sealed":"[A-Za-z0-9+/=]{40,}"`)
)

func mask(s string) string {
	s = cursorText.ReplaceAllString(timeText.ReplaceAllString(s, "<time>"), `"next":"<cursor>"`)
	s = sealedText.ReplaceAllString(s, `"sealed":"<sealed>"`)
	return tokenText.ReplaceAllString(s, `"token":"<token>"`)
}

// tenantNotes waits until tenant's notifications of the walk are stored
// (the past board's end, two quarantines, the cup's amendments and the
// past board's settlement) and returns each as
// its message id and masked body, in stream order.
func tenantNotes(t *testing.T, natsURL, secret, tenant string) []string {
	t.Helper()
	nc, err := nats.Connect(natsURL, nats.UserInfo("rankwire", clientPassword(secret)))
	if err != nil {
		t.Fatalf("--nats-listen: %v", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	var notes []string
	deadline := time.Now().Add(30 * time.Second)
	for {
		notes = readNotes(t, js, "rw."+tenant+".notify")
		all := strings.Join(notes, "\n")
		if strings.Count(all, `"type":"board.ended"`) == 1 && strings.Count(all, `"type":"standings.amended"`) == 4 &&
			strings.Count(all, `"type":"submission.quarantined"`) == 2 {
			return notes
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s's notifications after 30 s:\n%s", tenant, all)
		}
		time.Sleep(200 * time.Millisecond) // polling an outside process's stream
	}
}

// readNotes reads every message of the notifications' stream on subject.
func readNotes(t *testing.T, js jetstream.JetStream, subject string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	st, err := js.Stream(ctx, "rankwire_notify")
	if err != nil {
		return nil // not created yet
	}
	info, err := st.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for seq := info.State.FirstSeq; seq <= info.State.LastSeq && seq > 0; seq++ {
		m, err := st.GetMsg(ctx, seq)
		if err != nil || m.Subject != subject {
			continue // deleted, or another tenant's
		}
		// An erasure's copy (its id suffixed "#erased.<seq>", the body
		// re-encoded without the member's name) stands for the notification,
		// and may come after the notifications that followed it: whether a
		// notification was stored before the erasure (and copied) or after
		// (built without the name) depends on the notifier's tick, so each is
		// compared by id and content, in id order.
		id, _, _ := strings.Cut(m.Header.Get("Nats-Msg-Id"), "#")
		out = append(out, id+" "+mask(canonical(m.Data)))
	}
	slices.Sort(out)
	return out
}

// canonical re-encodes JSON data with its object keys sorted (data as it
// is where it is not JSON).
func canonical(data []byte) string {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return string(data)
	}
	out, err := json.Marshal(v)
	if err != nil {
		return string(data)
	}
	return string(out)
}

// clientPassword is the password --nats-listen asks of the user rankwire:
// docs/CLUSTERING.md's derivation (SHA-256 of the user, a NUL and the
// secret, in hex).
func clientPassword(secret string) string {
	sum := sha256.Sum256([]byte("rankwire\x00" + secret))
	return fmt.Sprintf("%x", sum)
}
