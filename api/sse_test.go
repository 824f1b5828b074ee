package api

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// streamGet opens GET /v1/stream?query with token as a Bearer header.
func (e *liveEnv) streamGet(query, token string) *http.Response {
	e.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/v1/stream?"+query, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// nextData returns the data of the stream's next event named event,
// skipping others; lines are read on a goroutine so that a stuck stream
// fails after 5 s.
func nextData(t *testing.T, lines <-chan string, event string) map[string]any {
	t.Helper()
	name := ""
	for {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("stream ended before a %s event", event)
			}
			if n, ok := strings.CutPrefix(line, "event: "); ok {
				name = n
			}
			if d, ok := strings.CutPrefix(line, "data: "); ok && name == event {
				var m map[string]any
				if err := json.Unmarshal([]byte(d), &m); err != nil {
					t.Fatal(err)
				}
				return m
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("no %s event within 5 s", event)
		}
	}
}

func lineChan(body io.Reader) <-chan string {
	ch := make(chan string, 100)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(body)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// TestStreamThroughGateway: /v1/stream on the gateway's router gives the
// snapshot, then each submission's diff, as the WebSocket's messages.
func TestStreamThroughGateway(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/weekly", adm, `{}`)
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"member":"p1","score":10}`)
	resp := e.streamGet("board=weekly&kind=top&limit=5", e.token("a", auth.RoleRead))
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("%d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	lines := lineChan(resp.Body)
	if snap := nextData(t, lines, "snapshot"); snap["total"] != 1.0 {
		t.Fatalf("snapshot %v, want p1 alone", snap)
	}
	e.must(200, "POST", "/v1/boards/weekly/scores", adm, `{"member":"p2","score":20}`)
	d := nextData(t, lines, "diff")
	if rows := d["rows"].([]any); d["total"] != 2.0 || rows[0].(map[string]any)["member"] != "p2" {
		t.Fatalf("diff %v, want p2 first of 2", d)
	}
}

// TestStreamRefusedAsHTTP: a stream refused for its token answers what
// any request with that token answers: the same status and body.
func TestStreamRefusedAsHTTP(t *testing.T) {
	e := newLiveEnv(t, Config{})
	e.must(200, "PUT", "/v1/boards/weekly", e.token("a", admin), `{}`)
	key, _ := e.keys.SigningKey("a1") // casino-a's key, casino-b's claim
	wrongTenant, err := auth.Mint(key, auth.Claims{Tenant: "casino-b", Roles: auth.RoleRead, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	for name, tok := range map[string]string{
		"expired":      e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(-time.Minute)),
		"wrong tenant": wrongTenant,
		"garbage":      "not-a-token",
	} {
		t.Run(name, func(t *testing.T) {
			wantStatus, want := e.do("GET", "/v1/boards/weekly/top", tok, "")
			resp := e.streamGet("board=weekly&kind=top", tok)
			var got map[string]any
			if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
				t.Fatal(err)
			}
			if resp.StatusCode != wantStatus || !reflect.DeepEqual(got, want) {
				t.Fatalf("stream: %d %v, HTTP: %d %v", resp.StatusCode, got, wantStatus, want)
			}
		})
	}
}
