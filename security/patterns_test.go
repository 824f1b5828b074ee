package security

import (
	"strings"
	"testing"
)

// TestBoardPatternMetacharacters: in a token's boards claim only * is
// special. An operator that builds patterns from its own users' input
// (a lobby's board prefix) must not find ?, [ ], \, case or spacing
// widening a pattern: none of these reaches poker-final, over a read, a
// submission or the board list. The control p*l does.
func TestBoardPatternMetacharacters(t *testing.T) {
	patterns := []string{"?oker-final", "[p]oker-final", "[!s]*", "[a-z]*", "poker-fina?", "p\\oker-final",
		"\\*", "POKER-FINAL", "poker-final ", " poker-final", "poker-fina", "", "poker-final/..", "poker-final\x00*", "**?"}
	for _, p := range patterns {
		read := tokA(t, base(tenantA, "read").with("boards", []string{p}))
		submit := tokA(t, base(tenantA, "submit").with("boards", []string{p}))
		if r := do(t, "GET", "/v1/boards/poker-final/top", read, ""); r.status != 403 && r.status != 401 {
			t.Errorf("boards [%q]: GET poker-final: %d %.200s, want 403", p, r.status, r.body)
		}
		if r := do(t, "POST", "/v1/boards/poker-final/scores", submit, `{"member":"forger","score":1e15}`); r.status != 403 && r.status != 401 {
			t.Errorf("boards [%q]: POST poker-final: %d %.200s, want 403", p, r.status, r.body)
		}
		if r := do(t, "GET", "/v1/boards", read, ""); r.status == 200 && strings.Contains(r.body, "poker-final") {
			t.Errorf("boards [%q]: the board list shows poker-final: %.200s", p, r.body)
		}
	}
	control := tokA(t, base(tenantA, "read").with("boards", []string{"p*l"}))
	if r := do(t, "GET", "/v1/boards/poker-final/top", control, ""); r.status != 200 {
		t.Errorf("boards [\"p*l\"]: GET poker-final: %d %.200s, want 200", r.status, r.body)
	}
	assertUntouched(t)
}
