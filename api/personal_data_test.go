package api

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
)

// TestPersonalDataAPI: the export shows the profile, the aliases and the
// entries; the erasure (by an alias) leaves reads, rows, identities and the
// export without them while the entries stay; tenant b's member of the
// same id and alias keeps its data; roles and reach are enforced.
func TestPersonalDataAPI(t *testing.T) {
	e := newEnv(t, Config{})
	for _, tenant := range []string{"a", "b"} {
		tok := e.token(tenant, admin)
		e.must(200, "PUT", "/v1/boards/b", tok, `{}`)
		e.must(200, "PUT", "/v1/boards/other", tok, `{}`)
		e.must(200, "POST", "/v1/boards/b/scores", tok, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":5}]}`)
		e.must(200, "POST", "/v1/identities", tok, `{"member":"p1","aliases":["email:ann@x.io"]}`)
		e.must(200, "PUT", "/v1/members/p1/profile", tok, `{"name":"Ann `+tenant+`","avatar":"https://cdn.example/ann.png"}`)
	}
	tok := e.token("a", admin)
	got := e.must(200, "GET", "/v1/members/email:ann@x.io/personal-data", tok, "")
	want := `map[aliases:[email:ann@x.io] entries:[map[board:b rank:1 score:10 subscore:0 window:all]] member:p1 profile:map[avatar:https://cdn.example/ann.png name:Ann a]]`
	if fmt.Sprint(got) != want {
		t.Fatalf("export:\n%v\nwant\n%s", got, want)
	}
	// Roles and reach: submit may not; a token for another board does not
	// see the member; one limited to board other may not erase it.
	for _, tc := range []struct {
		method, token string
		status        int
	}{
		{"GET", e.token("a", auth.RoleSubmit), 403},
		{"DELETE", e.token("a", auth.RoleSubmit), 403},
		{"GET", e.token("a", admin, "other"), 404},
		{"DELETE", e.token("a", admin, "other"), 404},
	} {
		if status, out := e.do(tc.method, "/v1/members/p1/personal-data", tc.token, ""); status != tc.status {
			t.Errorf("%s by %s: %d %v, want %d", tc.method, tc.token[:8], status, out, tc.status)
		}
	}
	e.must(404, "DELETE", "/v1/members/nobody/personal-data", tok, "")

	got = e.must(200, "DELETE", "/v1/members/email:ann@x.io/personal-data", tok, "")
	if fmt.Sprint(got) != "map[aliases:1 member:p1 profile:true]" {
		t.Fatalf("erasure: %v", got)
	}
	e.must(404, "GET", "/v1/members/p1/profile", tok, "")
	e.must(404, "GET", "/v1/identities/email:ann@x.io", tok, "")
	got = e.must(200, "GET", "/v1/members/p1/personal-data", tok, "")
	if got["profile"] != nil || strings.Contains(fmt.Sprint(got), "ann@x.io") || len(got["entries"].([]any)) != 1 {
		t.Fatalf("export after the erasure: %v", got)
	}
	if row := e.must(200, "GET", "/v1/boards/b/members/p1", tok, ""); row["name"] != nil || row["score"] != 10.0 {
		t.Fatalf("p1's row after the erasure: %v", row)
	}
	// Erasing again erases nothing more.
	if got := e.must(200, "DELETE", "/v1/members/p1/personal-data", tok, ""); fmt.Sprint(got) != "map[aliases:0 member:p1 profile:false]" {
		t.Fatalf("a second erasure: %v", got)
	}
	// Tenant b's p1 keeps everything.
	got = e.must(200, "GET", "/v1/members/email:ann@x.io/personal-data", e.token("b", admin), "")
	if got["profile"].(map[string]any)["name"] != "Ann b" || fmt.Sprint(got["aliases"]) != "[email:ann@x.io]" {
		t.Fatalf("tenant b's export: %v", got)
	}
}

// TestErasureLiveRows: a live view showing the member's name sends its row
// again without it when the member's personal data is erased.
func TestErasureLiveRows(t *testing.T) {
	e := newLiveEnv(t, Config{})
	adm := e.token("a", admin)
	e.must(200, "PUT", "/v1/boards/b", adm, `{}`)
	e.must(200, "POST", "/v1/boards/b/scores", adm, `{"scores":[{"member":"p1","score":10},{"member":"p2","score":20}]}`)
	e.must(200, "PUT", "/v1/members/p1/profile", adm, `{"name":"Ace","avatar":"https://cdn.example/a.png"}`)
	c := e.dial("access_token="+e.tokenFor("a", auth.RoleRead, "p1", time.Now().Add(time.Hour)), true, nil)
	c.Subscribe("s1", "b", map[string]any{"kind": "top", "limit": 10})
	p1At := func(rank int) func() error {
		return func() error {
			rows, _ := c.Rows("s1")
			if r, ok := rows[rank]; !ok || r.Member != "p1" {
				return fmt.Errorf("rows %v", rows)
			}
			return nil
		}
	}
	checkFor(t, 5*time.Second, p1At(2))
	if rows, _ := c.Rows("s1"); rows[2].Name != "Ace" {
		t.Fatalf("before: %+v", rows[2])
	}
	e.must(200, "DELETE", "/v1/members/p1/personal-data", adm, "")
	checkFor(t, 5*time.Second, func() error {
		if rows, _ := c.Rows("s1"); rows[2].Name != "" || rows[2].Avatar != "" || rows[2].Score != 10 {
			return fmt.Errorf("after the erasure the live row is %+v", rows[2])
		}
		return nil
	})
}
