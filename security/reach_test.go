package security

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestMemberEffectsFollowBoardReach is issue 21's attack on the gateway
// binary: a token limited to slots-* may not rename or alias a member of
// poker-final (403 naming the board), may not read its profile or identity
// (404, word for word what a member that does not exist gets), and
// /v1/tenant shows it only slots-* boards.
func TestMemberEffectsFollowBoardReach(t *testing.T) {
	adminA := tokA(t, base(tenantA, "admin"))
	slotsSubmit := tokA(t, base(tenantA, "submit").with("boards", []string{"slots-*"}))
	slotsRead := tokA(t, base(tenantA, "read").with("boards", []string{"slots-*"}))
	slotsAdmin := tokA(t, base(tenantA, "admin").with("boards", []string{"slots-*"}))
	mustOK(t, "PUT", "/v1/members/runner-up/profile", adminA, `{"name":"Runner"}`)

	for _, c := range []struct{ name, method, path, body string }{
		{"rename poker-final's champion", "PUT", "/v1/members/champion/profile", `{"name":"pwned"}`},
		{"rename poker-final's runner-up", "PUT", "/v1/members/runner-up/profile", `{"name":"pwned"}`},
		{"alias poker-final's champion", "POST", "/v1/identities", `{"member":"champion","aliases":["email:thief@x.example"]}`},
	} {
		r := do(t, c.method, c.path, slotsSubmit, c.body)
		if code, msg := protocolError(t, c.name, r); r.status != 403 || code != "forbidden" || !strings.Contains(msg, `"poker-final"`) {
			t.Errorf("%s: %d %q, want 403 naming poker-final", c.name, r.status, msg)
		}
	}
	for _, c := range []struct{ name, path, ghost, token string }{
		{"profile", "/v1/members/runner-up/profile", "/v1/members/nobody-xyz/profile", slotsRead},
		{"identity", "/v1/identities/champion", "/v1/identities/nobody-xyz", slotsSubmit},
	} {
		mustOK(t, "GET", c.path, adminA, "")
		r, ghost := do(t, "GET", c.path, c.token, ""), do(t, "GET", c.ghost, c.token, "")
		_, msg := protocolError(t, c.name, r)
		_, gmsg := protocolError(t, c.name, ghost)
		member := strings.TrimPrefix(strings.TrimSuffix(strings.TrimPrefix(c.path, "/v1/members/"), "/profile"), "/v1/identities/")
		if r.status != 404 || ghost.status != 404 || strings.ReplaceAll(gmsg, "nobody-xyz", member) != msg {
			t.Errorf("%s of a poker-final member through slots-*: %d %q; a member that does not exist: %d %q", c.name, r.status, msg, ghost.status, gmsg)
		}
	}
	var all, slots struct{ Boards int }
	_ = json.Unmarshal([]byte(mustOK(t, "GET", "/v1/tenant", adminA, "").body), &all)
	body := mustOK(t, "GET", "/v1/tenant", slotsAdmin, "").body
	_ = json.Unmarshal([]byte(body), &slots)
	if strings.Contains(body, "poker-final") || slots.Boards < 1 || slots.Boards >= all.Boards {
		t.Errorf("/v1/tenant through slots-*: %s (all boards: %d)", body, all.Boards)
	}
	assertUntouched(t)
}
