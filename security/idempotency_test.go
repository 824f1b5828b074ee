package security

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestIdempotencyIDsStayWithTheirTenant: a submission id is a tenant's
// own. Tenant A reusing an id that tenant B already used on its board of
// the same name is applied as new, and its reply is A's own, never B's
// stored answer (which would hand A B's member and score); A's repeat is
// then a duplicate of A's submission.
func TestIdempotencyIDsStayWithTheirTenant(t *testing.T) {
	adminA, adminB := tokA(t, base(tenantA, "admin")), tokB(t, base(tenantB, "admin"))
	t.Cleanup(func() {
		do(t, "DELETE", "/v1/boards/poker-final/members/idem-a", adminA, "")
		do(t, "DELETE", "/v1/boards/poker-final/members/zq-idem-77", adminB, "")
	})
	// Ids unique to this run, so that -count=2 on one gateway starts afresh.
	r := strings.NewReplacer("match-shared", fmt.Sprint("match-shared-", time.Now().UnixNano()))
	post := func(token, body string) reply {
		return mustOK(t, "POST", "/v1/boards/poker-final/scores", token, r.Replace(body))
	}
	post(adminB, `{"member":"zq-idem-77","score":7654320,"id":"match-shared-1"}`)
	first := post(adminA, `{"member":"idem-a","score":3,"id":"match-shared-1"}`)
	if !strings.Contains(first.body, `"member":"idem-a"`) || !strings.Contains(first.body, `"applied":true`) || strings.Contains(first.body, `"duplicate":true`) {
		t.Errorf("A's first use of an id B used: %s, want applied, not a duplicate", first.body)
	}
	noLeak(t, "A's first use of B's id", first.body)
	again := post(adminA, `{"member":"idem-a","score":3,"id":"match-shared-1"}`)
	if !strings.Contains(again.body, `"member":"idem-a"`) || !strings.Contains(again.body, `"duplicate":true`) {
		t.Errorf("A's repeat: %s, want a duplicate of A's own", again.body)
	}
	noLeak(t, "A's repeat of B's id", again.body)
	batch := post(adminA, `{"scores":[{"member":"idem-a","score":4,"id":"match-shared-2"},{"member":"idem-a","score":5,"id":"match-shared-1"}]}`)
	noLeak(t, "A's batch reusing B's id", batch.body)
	if b := mustOK(t, "GET", "/v1/boards/poker-final/top?limit=100", adminB, "").body; strings.Contains(b, "idem-a") {
		t.Errorf("tenant B's board shows A's submission: %s", b)
	}
}
