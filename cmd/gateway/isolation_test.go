package main

import (
	"context"
	"encoding/base64"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/natstest"
)

// TestOneTenantDownOthersServed: the gateway binary on a NATS server that
// refuses one tenant's stream starts, is ready, serves the other tenant,
// and answers the refused tenant's reads and writes 503 unavailable within
// a second each.
func TestOneTenantDownOthersServed(t *testing.T) {
	deny := &server.Permissions{Publish: &server.SubjectPermission{Deny: []string{
		"$JS.API.STREAM.INFO.RW_t2", "$JS.API.CONSUMER.CREATE.RW_t2", "$JS.API.CONSUMER.CREATE.RW_t2.>", "rw.t2.ev"}}}
	s := natstest.ServerWith(t, func(o *server.Options) {
		o.Users = []*server.User{{Username: "admin", Password: "a"}, {Username: "gw", Password: "g", Permissions: deny}}
	})
	port := strings.TrimPrefix(s.ClientURL(), "nats://127.0.0.1:")
	createBoards(t, "nats://admin:a@127.0.0.1:"+port, "t1", "t2")

	keys, t1, t2 := twoTenantKeys(t)
	p := startGateway(t, "RANKWIRE_KEYS="+keys, "RANKWIRE_DATA="+t.TempDir(), "RANKWIRE_NATS=nats://gw:g@127.0.0.1:"+port)
	if status, err := call("GET", p.url("/readyz"), "", "", nil); status != 200 {
		t.Fatalf("readyz %d %v, want 200: one tenant down leaves the node ready", status, err)
	}
	if status, err := call("POST", p.url("/v1/boards/b/scores"), t1, `{"member":"p1","score":1}`, nil); status != 200 {
		t.Fatalf("t1 submit: %d %v", status, err)
	}
	for _, req := range [][3]string{{"POST", "/v1/boards/b/scores", `{"member":"p1","score":1}`},
		{"GET", "/v1/boards/b/top", ""}, {"PUT", "/v1/boards/c", "{}"}} {
		var body struct {
			Error struct{ Code, Message string }
		}
		start := time.Now()
		status, err := call(req[0], p.url(req[1]), t2, req[2], &body)
		if d := time.Since(start); status != 503 || body.Error.Code != "unavailable" || d > time.Second {
			t.Fatalf("t2 %s %s: %d %v %+v after %v, want 503 unavailable within 1s", req[0], req[1], status, err, body, d)
		}
		if strings.Contains(body.Error.Message, "RW_") || strings.Contains(body.Error.Message, "$JS") {
			t.Fatalf("t2 %s: message %q names a stream or subject", req[1], body.Error.Message)
		}
	}
	if len(p.logged(regexp.MustCompile(`tenant unavailable.*tenant=t2`))) == 0 {
		t.Fatal("no log line for the tenant that failed to open")
	}
}

func createBoards(t *testing.T, url string, tenants ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	h, err := hub.Start(ctx, hub.Config{DataDir: t.TempDir(), NATSURL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	for _, tenant := range tenants {
		if _, err := h.PutBoard(ctx, tenant, "b", hub.Settings{}); err != nil {
			t.Fatal(err)
		}
	}
}

// twoTenantKeys writes a key file with tenants t1 (key k1) and t2 (key
// k2) and returns it with an admin token of each.
func twoTenantKeys(t *testing.T) (path, t1, t2 string) {
	t.Helper()
	key := func(n string) string {
		secret := base64.StdEncoding.EncodeToString([]byte(strings.Repeat(n, 32)))
		return `{"keys":[{"kid":"k` + n + `","alg":"HS256","secret":"` + secret + `"}]}`
	}
	body := `{"tenants":{"t1":` + key("1") + `,"t2":` + key("2") + `}}`
	path = filepath.Join(t.TempDir(), "keys.json")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	keys, err := auth.LoadKeys(path)
	if err != nil {
		t.Fatal(err)
	}
	token := func(kid, tenant string) string {
		sk, _ := keys.SigningKey(kid)
		tok, err := auth.Mint(sk, auth.Claims{Tenant: tenant, Roles: auth.RoleAdmin, Expiry: time.Now().Add(time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	return path, token("k1", "t1"), token("k2", "t2")
}
