package catchup_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go/jetstream"
	dto "github.com/prometheus/client_model/go"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/gwtest"
	"github.com/rankwire/rankwire/internal/natstest"
	"github.com/rankwire/rankwire/internal/wstest"
)

// cluster is gateways in-process on one NATS server (each its own replica
// of every tenant, as the nodes of a cluster), with the keys of tenants t1
// and t2, and a JetStream connection that can hold a gateway's replica
// behind by pausing its consumer (JetStream's consumer pause: the consumer
// keeps its pull requests and heartbeats but delivers nothing).
type cluster struct {
	t    *testing.T
	url  string
	keys *auth.Keyring
	js   jetstream.JetStream
}

func newCluster(t *testing.T) *cluster {
	t.Helper()
	s := natstest.Server(t)
	_, js := natstest.Connect(t, s)
	keys, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{"t1":{"keys":[{"kid":"k1","alg":"HS256","secret":%q}]},
		"t2":{"keys":[{"kid":"k2","alg":"HS256","secret":%q}]}}}`,
		base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'c'}, 32)), base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{'d'}, 32))))
	if err != nil {
		t.Fatal(err)
	}
	return &cluster{t: t, url: s.ClientURL(), keys: keys, js: js}
}

// gateway starts a gateway whose replicas' consumers are named after id and
// whose reads that found nothing wait up to wait.
func (c *cluster) gateway(id string, wait time.Duration) *gwtest.Gateway {
	return gwtest.Start(c.t, gwtest.Options{Keys: c.keys, NATSURL: c.url, ReplicaID: id, CatchupWait: wait})
}

func (c *cluster) token(tenant, kid string) string {
	key, _ := c.keys.SigningKey(kid)
	tok, err := auth.Mint(key, auth.Claims{Tenant: tenant, Subject: "p1", Roles: auth.RoleAdmin, Expiry: time.Now().Add(time.Hour)})
	if err != nil {
		c.t.Fatal(err)
	}
	return tok
}

// hold pauses (or, with resume, resumes) gateway id's consumers of tenant's
// stream: its replica applies nothing meanwhile.
func (c *cluster) hold(tenant, id string, resume bool) {
	c.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	stream := hub.StreamOf(tenant)
	st, err := c.js.Stream(ctx, stream)
	if err != nil {
		c.t.Fatal(err)
	}
	names := st.ConsumerNames(ctx)
	n := 0
	for name := range names.Name() {
		if !strings.HasPrefix(name, "rw_"+id+"_"+tenant+"_") {
			continue
		}
		n++
		var err error
		if resume {
			_, err = c.js.ResumeConsumer(ctx, stream, name)
		} else {
			_, err = c.js.PauseConsumer(ctx, stream, name, time.Now().Add(time.Hour))
		}
		if err != nil {
			c.t.Fatalf("pause %s: %v", name, err)
		}
	}
	if names.Err() != nil || n == 0 {
		c.t.Fatalf("no consumer of %s's replica of %s: %v", id, tenant, names.Err())
	}
}

// answer is an HTTP answer: its status and the protocol's error code.
type answer struct {
	status int
	code   string
	body   string
}

// call sends a request with tok; a failure to send is an answer of
// status 0 (it may run on a goroutine of its own: no t.Fatal).
func call(method, url, tok, body string) answer {
	resp, failed := send(method, url, tok, body)
	if resp == nil {
		return failed
	}
	defer resp.Body.Close()
	return answerOf(resp)
}

// send sends a request with tok and returns its response, or nil and the
// failure to send as an answer of status 0.
func send(method, url, tok, body string) (*http.Response, answer) {
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		return nil, answer{body: err.Error()}
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, answer{body: err.Error()}
	}
	return resp, answer{}
}

// answerOf reads resp's status and error code.
func answerOf(resp *http.Response) answer {
	b, _ := io.ReadAll(resp.Body)
	var e struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(b, &e)
	return answer{resp.StatusCode, e.Error.Code, string(b)}
}

// putBoard creates board through g and fails unless it is acknowledged.
func putBoard(t *testing.T, g *gwtest.Gateway, tok, board string) {
	t.Helper()
	if a := call("PUT", g.URL()+"/v1/boards/"+board, tok, `{"policy":"best"}`); a.status != 200 {
		t.Fatalf("PUT %s: %+v", board, a)
	}
}

// awaitBoard waits until g reads board (its replica applied it).
func awaitBoard(t *testing.T, g *gwtest.Gateway, tok, board string) {
	t.Helper()
	await.For(t, 20*time.Second, func() error {
		if a := call("GET", g.URL()+"/v1/boards/"+board+"/top", tok, ""); a.status != 200 {
			return fmt.Errorf("GET %s: %+v", board, a)
		}
		return nil
	})
}

// gauge reads a gauge or counter of g's metrics.
func gauge(t *testing.T, g *gwtest.Gateway, name string) float64 {
	t.Helper()
	fams, err := g.Reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return valueOf(fams, name)
}

func valueOf(fams []*dto.MetricFamily, name string) float64 {
	for _, f := range fams {
		if f.GetName() != name {
			continue
		}
		for _, m := range f.GetMetric() {
			if m.GetGauge() != nil {
				return m.GetGauge().GetValue()
			}
			return m.GetCounter().GetValue()
		}
	}
	return -1
}

// A board created through one gateway, read at once through another whose
// replica has not applied it: the reader never answers not_found. With the
// replica held for longer than the wait, HTTP reads, WebSocket and SSE
// subscriptions answer unavailable (503), a second tenant's read of the same
// name answers not_found at once; released while they wait, they answer
// from the caught-up state.
// lateBoard starts gateway a and two replicas held behind for tenant t1
// (short answers unavailable while held, long waits until released), with
// boards t1/first and t2/other everywhere and t1/late put through a only:
// acknowledged, stored and applied there, unknown to the held replicas.
func lateBoard(t *testing.T) (c *cluster, short, long *gwtest.Gateway, t1, t2 string) {
	t.Helper()
	c = newCluster(t)
	a := c.gateway("a", 0)
	short = c.gateway("short", 300*time.Millisecond)
	long = c.gateway("long", time.Minute)
	t1, t2 = c.token("t1", "k1"), c.token("t2", "k2")
	putBoard(t, a, t1, "first")
	putBoard(t, a, t2, "other")
	for _, g := range []*gwtest.Gateway{short, long} {
		awaitBoard(t, g, t1, "first")
		awaitBoard(t, g, t2, "other")
	}
	c.hold("t1", "short", false)
	c.hold("t1", "long", false)
	putBoard(t, a, t1, "late")
	return c, short, long, t1, t2
}

func TestNotFoundOnlyWhenCaughtUp(t *testing.T) {
	c, short, long, t1, t2 := lateBoard(t)

	t.Run("held past the wait: unavailable", func(t *testing.T) {
		for _, path := range []string{"/v1/boards/late/top", "/v1/boards/late", "/v1/boards/late/members/m1"} {
			if got := call("GET", short.URL()+path, t1, ""); got.status != 503 || got.code != "unavailable" {
				t.Errorf("GET %s on a node behind: %+v, want 503 unavailable", path, got)
			}
		}
		if got := openStream(short, t1, "late"); got.status != 503 || got.code != "unavailable" {
			t.Errorf("GET /v1/stream on a node behind: %+v, want 503 unavailable", got)
		}
		ws := wstest.Dial(t, wstest.URL(short.URL(), "access_token="+t1), wstest.Options{Read: true})
		ws.Subscribe("s1", "late", map[string]any{"kind": "top", "limit": 3})
		await.For(t, 10*time.Second, func() error {
			if errs := ws.Errors(); len(errs) != 1 || errs[0].Code != "unavailable" {
				return fmt.Errorf("errors: %+v, want one unavailable", errs)
			}
			return nil
		})
		if n := gauge(t, short, "rankwire_reads_behind_total"); n < 5 {
			t.Errorf("rankwire_reads_behind_total = %v, want ≥ 5", n)
		}
	})

	t.Run("another tenant's same name: not_found at once", func(t *testing.T) {
		start := time.Now()
		if got := call("GET", long.URL()+"/v1/boards/late/top", t2, ""); got.status != 404 || got.code != "not_found" {
			t.Errorf("t2 GET late: %+v, want 404 not_found", got)
		}
		if got := openStream(long, t2, "late"); got.status != 404 {
			t.Errorf("t2 stream late: %+v, want 404", got)
		}
		ws := wstest.Dial(t, wstest.URL(long.URL(), "access_token="+t2), wstest.Options{Read: true})
		ws.Subscribe("s1", "late", map[string]any{"kind": "top", "limit": 3})
		await.For(t, 10*time.Second, func() error {
			if errs := ws.Errors(); len(errs) != 1 || errs[0].Code != "not_found" {
				return fmt.Errorf("errors: %+v, want one not_found", errs)
			}
			return nil
		})
		// long waits a minute for t1's replica, which is held: an answer
		// within seconds did not wait on t1.
		if d := time.Since(start); d > 20*time.Second {
			t.Errorf("t2's answers took %v: they waited on t1's replica", d)
		}
	})

	t.Run("released while waiting: found", func(t *testing.T) {
		reads := make(chan answer, 1)
		go func() { reads <- call("GET", long.URL()+"/v1/boards/late/top", t1, "") }()
		streams := make(chan answer, 1)
		go func() { streams <- openStream(long, t1, "late") }()
		ws := wstest.Dial(t, wstest.URL(long.URL(), "access_token="+t1), wstest.Options{Read: true})
		ws.Subscribe("s1", "late", map[string]any{"kind": "top", "limit": 3})
		await.For(t, 20*time.Second, func() error {
			select {
			case got := <-reads:
				t.Fatalf("GET answered while the replica was held: %+v", got)
			case got := <-streams:
				t.Fatalf("GET /v1/stream answered while the replica was held: %+v", got)
			default:
			}
			if errs := ws.Errors(); len(errs) > 0 {
				t.Fatalf("subscribe answered while the replica was held: %+v", errs)
			}
			if n := gauge(t, long, "rankwire_reads_catching_up"); n != 3 {
				return fmt.Errorf("%v reads catching up, want 3", n)
			}
			return nil
		})
		c.hold("t1", "long", true)
		if got := <-reads; got.status != 200 {
			t.Errorf("GET late once caught up: %+v", got)
		}
		if got := <-streams; got.status != 200 {
			t.Errorf("GET /v1/stream late once caught up: %+v", got)
		}
		await.For(t, 10*time.Second, func() error {
			if _, ok := ws.Rows("s1"); !ok {
				return fmt.Errorf("no snapshot of late yet (errors %+v)", ws.Errors())
			}
			return nil
		})
	})
}

// openStream opens GET /v1/stream for a top view of board and returns its
// status (and error code); a 200 stream is read up to its first event, the
// snapshot, and closed.
func openStream(g *gwtest.Gateway, tok, board string) answer {
	resp, failed := send("GET", g.URL()+"/v1/stream?kind=top&limit=3&board="+board, tok, "")
	if resp == nil {
		return failed
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		return answerOf(resp)
	}
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "event: ") {
			return answer{200, "", line}
		}
	}
	return answer{200, "", "ended: " + fmt.Sprint(sc.Err())}
}
