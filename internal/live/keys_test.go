package live

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/await"
	"github.com/rankwire/rankwire/internal/edgetest"
	"github.com/rankwire/rankwire/wire"
)

// TestReloadKeysClosesRemovedTenant: removing casino-b closes its live
// connections with 4003, whether their token came in the URL or in an
// auth message, refuses its tokens over HTTP, and leaves casino-a's
// connections serving.
func TestReloadKeysClosesRemovedTenant(t *testing.T) {
	e := newEnv(t, Options{})
	adminA, adminB := e.token("a", auth.RoleAdmin), e.token("b", auth.RoleAdmin)
	e.putBoard("a", "w", hub.Settings{})
	inURL := e.dial("access_token="+adminB, true, nil)
	inMsg := e.dial("", true, nil)
	inMsg.Send(map[string]any{"type": "auth", "token": adminB})
	keep := e.dial("access_token="+adminA, true, nil)
	await.For(t, 5*time.Second, func() error { // both of casino-b's are authenticated
		if n := e.p.authedOf("casino-b"); n != 2 {
			return fmt.Errorf("%d connections of casino-b authenticated", n)
		}
		return nil
	})
	if _, err := e.reload(nil); !errors.Is(err, auth.ErrKeyFile) {
		t.Fatalf("ReloadKeys(nil) = %v, want ErrKeyFile", err)
	}
	changes, err := e.reload(edgetest.KeysA(t, "", ""))
	if err != nil || len(changes.RemovedTenants) != 1 || changes.RemovedKeys[0] != "b1" {
		t.Fatalf("ReloadKeys = %+v, %v", changes, err)
	}
	for name, wc := range map[string]*wsClient{"token in the URL": inURL, "token in auth": inMsg} {
		if code := wc.WaitClosed(5 * time.Second); code != wire.CloseForbidden {
			t.Errorf("%s: closed %d, want 4003", name, code)
		}
	}
	if _, err := e.v.Verify(adminB); err == nil {
		t.Error("a token of the removed tenant still verifies")
	}
	keep.Subscribe("s1", "w", map[string]any{"kind": "top", "limit": 10})
	await.For(t, 5*time.Second, func() error {
		if _, ok := keep.Rows("s1"); !ok {
			return errors.New("casino-a's connection got no snapshot after the reload")
		}
		return nil
	})
}

// TestReloadKeysRacesConnects: connections of a tenant being removed,
// opened while the reload runs, never survive it: each one's key is
// checked again after its scope is installed.
func TestReloadKeysRacesConnects(t *testing.T) {
	e := newEnv(t, Options{}, func(p *Plane) { p.maxConn = 1000 })
	tok := e.token("a", auth.RoleRead)
	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			if c, err := e.tryDial("access_token="+tok, nil); err == nil {
				t.Cleanup(func() { c.CloseNow() })
			}
		})
	}
	_, err := e.reload(reloadedWithout(t))
	wg.Wait()
	if err != nil {
		t.Fatal(err)
	}
	await.For(t, 5*time.Second, func() error {
		if n := e.p.authedOf("casino-a"); n != 0 {
			return fmt.Errorf("%d connections of removed casino-a still authenticated", n)
		}
		return nil
	})
}

// reloadedWithout is a keyring of casino-b alone.
func reloadedWithout(t *testing.T) *auth.Keyring {
	t.Helper()
	k, err := auth.ParseKeys(fmt.Appendf(nil, `{"tenants":{"casino-b":{"keys":[{"kid":"b1","alg":"HS256","secret":%q}]}}}`, edgetest.Secret('b')))
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func (p *Plane) authedOf(tenant string) int {
	n := 0
	for _, c := range p.connections() {
		if sc, ok := c.current(); ok && sc.Tenant == tenant && !c.ending() {
			n++
		}
	}
	return n
}
