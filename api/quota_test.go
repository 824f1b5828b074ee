package api

import (
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rankwire/rankwire/auth"
)

// wantRefused fails t unless out is a rate_limited answer naming limit.
func wantRefused(t *testing.T, out map[string]any, limit string) {
	t.Helper()
	if code, msg := errCode(out); code != "rate_limited" || !strings.Contains(msg, limit) {
		t.Fatalf("%v, want rate_limited naming %s", out, limit)
	}
}

// TestProfileQuota: 1,001 profiles at a limit of 1,000, sent at once: one
// is refused, naming the limit; a replacement still passes, and the other
// tenant gives the same member a profile.
func TestProfileQuota(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"profiles":1000,"identity_writes_per_second":1e6`)
	tok, other := e.token("b", auth.RoleSubmit), e.token("a", auth.RoleSubmit)
	var mu sync.Mutex
	refused := map[int]map[string]any{}
	var wg sync.WaitGroup
	next := make(chan int)
	for range 8 {
		wg.Go(func() {
			for i := range next {
				st, out := e.do("PUT", fmt.Sprintf("/v1/members/m%d/profile", i), tok, `{"name":"n"}`)
				if st != 200 {
					mu.Lock()
					refused[i] = out
					mu.Unlock()
				}
			}
		})
	}
	for i := range 1001 {
		next <- i
	}
	close(next)
	wg.Wait()
	if len(refused) != 1 {
		t.Fatalf("%d refused, want 1: %v", len(refused), refused)
	}
	var last int
	for i, out := range refused {
		last = i
		wantRefused(t, out, "profiles")
		if code, _ := e.do("GET", fmt.Sprintf("/v1/members/m%d/profile", i), tok, ""); code != 404 {
			t.Fatalf("the refused profile answers %d", code)
		}
	}
	e.must(200, "PUT", fmt.Sprintf("/v1/members/m%d/profile", (last+1)%1001), tok, `{"name":"renamed"}`)
	e.must(200, "PUT", fmt.Sprintf("/v1/members/m%d/profile", last), other, `{"name":"n"}`)
	u := usage(t, e, "b")["profiles"].(map[string]any)
	if u["used"] != 1000.0 || u["limit"] != 1000.0 {
		t.Fatalf("usage.profiles %v", u)
	}
}

// TestAliasQuota: the default limit of 32 aliases per member; the 33rd,
// alone or through a merge, is refused and nothing changes; the other
// tenant's member of the same name is unaffected.
func TestAliasQuota(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"identity_writes_per_second":1e6`)
	admin := e.token("b", auth.RoleAdmin)
	aliases := make([]string, auth.DefaultAliases)
	for i := range aliases {
		aliases[i] = fmt.Sprintf("%q", fmt.Sprintf("alias:%d", i))
	}
	body := `{"member":"u1","aliases":[` + strings.Join(aliases, ",") + `]}`
	if out := e.must(200, "POST", "/v1/identities", admin, body); len(out["aliases"].([]any)) != 32 {
		t.Fatalf("link: %v", out)
	}
	_, out := e.do("POST", "/v1/identities", admin, `{"member":"u1","aliases":["alias:32"]}`)
	wantRefused(t, out, "aliases")
	e.must(200, "POST", "/v1/identities", admin, `{"member":"u2","aliases":["u2:x"]}`)
	_, out = e.do("POST", "/v1/identities", admin, `{"member":"u1","aliases":["u2"]}`) // a merge brings 2
	wantRefused(t, out, "aliases")
	if out := e.must(200, "GET", "/v1/identities/u1", admin, ""); len(out["aliases"].([]any)) != 32 {
		t.Fatalf("after refused links: %v", out)
	}
	e.must(200, "POST", "/v1/identities", e.token("a", auth.RoleAdmin), body)
	u := usage(t, e, "b")["aliases"].(map[string]any)
	if u["used"] != 32.0 || u["limit"] != 32.0 {
		t.Fatalf("usage.aliases %v", u)
	}
}

// TestBoardWriteRate: past board_writes_per_second, a board PUT answers
// rate_limited naming the limit; tokens that may not write take nothing
// from the bucket; the other tenant's PUT of the same board passes.
func TestBoardWriteRate(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"board_writes_per_second":0.1`) // a bucket of 1, refilled in 10 s
	admin := e.token("b", auth.RoleAdmin)
	for _, tok := range []string{e.token("b", auth.RoleRead), e.token("b", auth.RoleAdmin, "other-*")} {
		e.must(403, "PUT", "/v1/boards/b", tok, "") // refused for its scope: takes nothing from the bucket
	}
	e.must(200, "PUT", "/v1/boards/b", admin, "")
	_, out := e.do("PUT", "/v1/boards/b", admin, `{"order":"asc"}`)
	wantRefused(t, out, "board_writes_per_second")
	_, out = e.do("POST", "/v1/boards/b/reset", admin, "")
	wantRefused(t, out, "board_writes_per_second")
	e.must(200, "PUT", "/v1/boards/b", e.token("a", auth.RoleAdmin), "")
	e.must(200, "POST", "/v1/boards/b/scores", admin, `{"member":"p","score":1}`) // submissions have their own rate
}

// TestIdentityWriteRate: links and profile PUTs share
// identity_writes_per_second; past it they answer rate_limited naming it.
func TestIdentityWriteRate(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"identity_writes_per_second":0.1`) // a bucket of 1, refilled in 10 s
	tok := e.token("b", auth.RoleSubmit)
	e.must(200, "POST", "/v1/identities", tok, `{"member":"u1","aliases":["x"]}`)
	_, out := e.do("PUT", "/v1/members/u1/profile", tok, `{"name":"n"}`)
	wantRefused(t, out, "identity_writes_per_second")
	_, out = e.do("POST", "/v1/identities", tok, `{"member":"u1","aliases":["y"]}`)
	wantRefused(t, out, "identity_writes_per_second")
	e.must(200, "PUT", "/v1/members/u1/profile", e.token("a", auth.RoleSubmit), `{"name":"n"}`)
}

// TestQuarantineQuota: past the quarantine limit a board refuses what
// breaks a rule (reason quarantine_full: neither held nor ranked); another
// board and the other tenant's board of the same name hold theirs.
func TestQuarantineQuota(t *testing.T) {
	e := newEnvLimits(t, Config{}, `"quarantine":3,"board_writes_per_second":1e6`)
	admin, other := e.token("b", auth.RoleAdmin), e.token("a", auth.RoleAdmin)
	items := `{"scores":[{"member":"p1","score":5},{"member":"p2","score":5},{"member":"p3","score":5},{"member":"p4","score":5}]}`
	for _, tok := range []string{admin, other} {
		e.must(200, "PUT", "/v1/boards/q", tok, `{"rules":{"max_score":1}}`)
	}
	e.must(200, "PUT", "/v1/boards/r", admin, `{"rules":{"max_score":1}}`)
	res := e.must(200, "POST", "/v1/boards/q/scores", admin, items)["results"].([]any)
	for i, r := range res {
		r := r.(map[string]any)
		if held := r["quarantined"] == true; held != (i < 3) || i == 3 && r["reason"] != "quarantine_full" {
			t.Fatalf("results[%d] %v: want the first 3 held, the last refused quarantine_full", i, r)
		}
	}
	if top := e.must(200, "GET", "/v1/boards/q/top", admin, ""); len(members(top)) != 0 {
		t.Fatalf("a refused item is ranked: %v", top)
	}
	if r := e.must(200, "POST", "/v1/boards/r/scores", admin, items)["results"].([]any)[2].(map[string]any); r["quarantined"] != true {
		t.Fatalf("board r: %v", r)
	}
	if r := e.must(200, "POST", "/v1/boards/q/scores", other, items)["results"].([]any)[3].(map[string]any); r["quarantined"] != true {
		t.Fatalf("the other tenant's board: %v", r)
	}
	u := usage(t, e, "b")["quarantine"].(map[string]any)
	if u["used"] != 3.0 || u["limit"] != 3.0 {
		t.Fatalf("usage.quarantine %v", u)
	}
}

// usage returns GET /v1/tenant's usage for tenant ("a" or "b").
func usage(t *testing.T, e *env, tenant string) map[string]any {
	t.Helper()
	out := e.must(200, "GET", "/v1/tenant", e.token(tenant, auth.RoleAdmin), "")
	u, ok := out["usage"].(map[string]any)
	if !ok {
		t.Fatalf("no usage: %v", out)
	}
	return u
}

// TestTenantSizeMetrics: each open tenant's memory estimate and stream
// bytes are exported, and grow with what the tenant writes.
func TestTenantSizeMetrics(t *testing.T) {
	reg := prometheus.NewRegistry()
	e := newEnv(t, Config{Registry: reg})
	tok := e.token("a", auth.RoleAdmin)
	e.must(200, "PUT", "/v1/boards/m", tok, `{}`)
	mem0, disk0 := tenantSizes(t, reg, "casino-a")
	if mem0 <= 0 || disk0 <= 0 {
		t.Fatalf("memory %v, store %v: want both above 0", mem0, disk0)
	}
	var batch []string
	for i := range 200 {
		batch = append(batch, fmt.Sprintf(`{"member":"p%d","score":%d}`, i, i))
	}
	e.must(200, "POST", "/v1/boards/m/scores", tok, `{"scores":[`+strings.Join(batch, ",")+`]}`)
	if mem, disk := tenantSizes(t, reg, "casino-a"); mem <= mem0 || disk <= disk0 {
		t.Fatalf("after 200 members: memory %v (was %v), store %v (was %v)", mem, mem0, disk, disk0)
	}
}

// tenantSizes scrapes reg for tenant's memory and store bytes (0 where absent).
func tenantSizes(t *testing.T, reg *prometheus.Registry, tenant string) (mem, disk float64) {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		for _, m := range f.GetMetric() {
			if len(m.GetLabel()) != 1 || m.GetLabel()[0].GetValue() != tenant {
				continue
			}
			switch f.GetName() {
			case "rankwire_tenant_memory_bytes":
				mem = m.GetGauge().GetValue()
			case "rankwire_tenant_store_bytes":
				disk = m.GetGauge().GetValue()
			}
		}
	}
	return mem, disk
}
