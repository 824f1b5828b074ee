package api

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/internal/await"
)

// reloaded parses a key file with casino-a (kid a1, same secret as the
// test hub's) and the entries of more, a JSON fragment.
func reloaded(t *testing.T, aLimits, more string) *auth.Keyring {
	t.Helper()
	k, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{
		"casino-a":{"keys":[{"kid":"a1","alg":"HS256","secret":%q}],"limits":{%s}}%s}}`, secret('a'), aLimits, more))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestReloadKeysClosesRemovedTenant: removing casino-b closes its live
// connections with 4003, whether their token came in the URL or in an
// auth message, refuses its tokens over HTTP, and leaves casino-a's
// connections serving.
func TestReloadKeysClosesRemovedTenant(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adminA, adminB := e.token("a", auth.RoleAdmin), e.token("b", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/w", adminA, "")
	inURL := e.dial("access_token="+adminB, true, nil)
	inMsg := e.dial("", true, nil)
	inMsg.send(map[string]any{"type": "auth", "token": adminB})
	keep := e.dial("access_token="+adminA, true, nil)
	await.For(t, 5*time.Second, func() error { // both of casino-b's are authenticated
		if n := e.s.live.authedOf("casino-b"); n != 2 {
			return fmt.Errorf("%d connections of casino-b authenticated", n)
		}
		return nil
	})
	if _, err := e.s.ReloadKeys(nil); !errors.Is(err, auth.ErrKeyFile) {
		t.Fatalf("ReloadKeys(nil) = %v, want ErrKeyFile", err)
	}
	changes, err := e.s.ReloadKeys(reloaded(t, "", ""))
	if err != nil || len(changes.RemovedTenants) != 1 || changes.RemovedKeys[0] != "b1" {
		t.Fatalf("ReloadKeys = %+v, %v", changes, err)
	}
	for name, wc := range map[string]*wsClient{"token in the URL": inURL, "token in auth": inMsg} {
		if code := wc.waitClosed(5 * time.Second); code != closeForbidden {
			t.Errorf("%s: closed %d, want 4003", name, code)
		}
	}
	e.must(401, "GET", "/v1/boards", adminB, "")
	keep.subscribe("s1", "w", map[string]any{"kind": "top", "limit": 10})
	await.For(t, 5*time.Second, func() error {
		if _, ok := keep.rows("s1"); !ok {
			return errors.New("casino-a's connection got no snapshot after the reload")
		}
		return nil
	})
}

// TestReloadKeysRacesConnects: connections of a tenant being removed,
// opened while the reload runs, never survive it: each one's key is
// checked again after its scope is installed.
func TestReloadKeysRacesConnects(t *testing.T) {
	e := newLiveEnv(t, Config{}, func(s *Server) { s.live.maxConn = 1000 })
	tok := e.token("a", auth.RoleRead)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if c, err := e.tryDial("access_token="+tok, nil); err == nil {
				t.Cleanup(func() { c.CloseNow() })
			}
		})
	}
	_, err := e.s.ReloadKeys(reloadedWithout(t))
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	await.For(t, 5*time.Second, func() error {
		if n := e.s.live.authedOf("casino-a"); n != 0 {
			return fmt.Errorf("%d connections of removed casino-a still authenticated", n)
		}
		return nil
	})
}

// reloadedWithout is a keyring of casino-b alone.
func reloadedWithout(t *testing.T) *auth.Keyring {
	t.Helper()
	k, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{"casino-b":{"keys":[{"kid":"b1","alg":"HS256","secret":%q}]}}}`, secret('b')))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// TestReloadKeysAppliesLimits: a lowered board limit and submission rate
// apply from the reload on, to a tenant that already has a rate bucket.
func TestReloadKeysAppliesLimits(t *testing.T) {
	e := newEnv(t, Config{})
	s := e.api
	admin := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/b0", admin, "")
	e.must(200, "POST", "/v1/boards/b0/scores", admin, `{"member":"m","score":1}`)
	if _, err := s.ReloadKeys(reloaded(t, `"boards":1,"submissions_per_second":2`, "")); err != nil {
		t.Fatal(err)
	}
	if code, msg := errCode(e.must(429, "PUT", "/v1/boards/b1", admin, "")); code != "rate_limited" {
		t.Errorf("second board under a reloaded limit of 1: %s %q", code, msg)
	}
	limited := 0
	for i := range 10 {
		if status, _ := e.do("POST", "/v1/boards/b0/scores", admin, fmt.Sprintf(`{"member":"m%d","score":1}`, i)); status == 429 {
			limited++
		}
	}
	if limited == 0 {
		t.Error("10 submissions at once passed a reloaded rate of 2 a second")
	}
}

// authedOf counts the authenticated connections of tenant.
func (l *live) authedOf(tenant string) int {
	n := 0
	for c := range l.connections() {
		if sc, ok := c.current(); ok && sc.Tenant == tenant && !c.ended.Load() {
			n++
		}
	}
	return n
}
