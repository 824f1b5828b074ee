package api

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
)

// reachModel is what FuzzReach expects of the gateway: which members rank
// on which boards and their profiles. It knows the rule, not the code:
// writes on a member need every board it ranks on, reads one of them.
type reachModel struct {
	ranks    map[string]map[string]bool // member -> boards it ranks on
	profiles map[string]string          // member -> name
	known    map[string]bool            // members the tenant has interned
}

// reaches reports whether patterns (nil: every board) reach board.
func reaches(patterns []string, board string) bool {
	return auth.Scope{Boards: patterns}.CanBoard(board)
}

func (m *reachModel) mayWrite(patterns []string, member string) bool {
	for b := range m.ranks[member] {
		if !reaches(patterns, b) {
			return false
		}
	}
	return true
}

func (m *reachModel) mayRead(patterns []string, member string) bool {
	if patterns == nil {
		return m.known[member]
	}
	for b := range m.ranks[member] {
		if reaches(patterns, b) {
			return true
		}
	}
	return false
}

var (
	fuzzBoards  = []string{"slots-1", "slots-2", "poker-final", "poker-daily"}
	fuzzMembers = []string{"m0", "m1", "m2", "m3", "m4"}
	fuzzReaches = [][]string{nil, {"slots-*"}, {"poker-*"}, {"poker-final"}, {}, {"slots-2", "poker-daily"}}
)

// fuzzReach is FuzzReach's gateway, tokens and model, shared by its inputs.
type fuzzReach struct {
	s      *Server
	submit []string // a submit|read token per fuzzReaches entry
	admin  []string // an admin token per fuzzReaches entry
	m      reachModel
	names  int
}

func newFuzzReach(tb testing.TB) *fuzzReach {
	keys, h := startTestHub(tb, "", hub.Config{})
	fz := &fuzzReach{s: New(Config{Hub: h, Verifier: auth.NewVerifier(keys, auth.Options{}), Keys: keys}),
		m: reachModel{ranks: map[string]map[string]bool{}, profiles: map[string]string{}, known: map[string]bool{}}}
	key, _ := keys.SigningKey("a1")
	mint := func(roles auth.Role, boards []string) string {
		tok, err := auth.Mint(key, auth.Claims{Tenant: "casino-a", Subject: "p1", Roles: roles, Boards: boards, Expiry: time.Now().Add(time.Hour)})
		if err != nil {
			tb.Fatal(err)
		}
		return tok
	}
	for _, r := range fuzzReaches {
		fz.submit = append(fz.submit, mint(auth.RoleSubmit|auth.RoleRead, r))
		fz.admin = append(fz.admin, mint(auth.RoleAdmin, r))
	}
	for _, b := range fuzzBoards {
		if code, out := fz.do("PUT", "/v1/boards/"+b, fz.admin[0], ""); code != 200 {
			tb.Fatalf("PUT %s: %d %v", b, code, out)
		}
	}
	return fz
}

// do serves one request in-process and decodes its JSON answer.
func (fz *fuzzReach) do(method, path, token, body string) (int, map[string]any) {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	rec := httptest.NewRecorder()
	fz.s.ServeHTTP(rec, req)
	var out map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &out)
	return rec.Code, out
}

// step sends one request of kind op as the token of reach r about member
// (and board, from arg) and checks the answer against the model.
func (fz *fuzzReach) step(t *testing.T, op byte, r, mi, arg int) {
	t.Helper()
	patterns, member, board := fuzzReaches[r], fuzzMembers[mi], fuzzBoards[arg%len(fuzzBoards)]
	m := &fz.m
	switch op {
	case 0: // submit on board
		code, out := fz.do("POST", "/v1/boards/"+board+"/scores", fz.submit[r], fmt.Sprintf(`{"member":%q,"score":%d}`, member, arg))
		want := 403
		if reaches(patterns, board) {
			want = 200
			if m.ranks[member] == nil {
				m.ranks[member] = map[string]bool{}
			}
			m.ranks[member][board], m.known[member] = true, true
		}
		expect(t, "submit", code, want, out)
	case 1: // rename
		fz.names++
		name := fmt.Sprintf("n%d", fz.names)
		code, out := fz.do("PUT", "/v1/members/"+member+"/profile", fz.submit[r], fmt.Sprintf(`{"name":%q}`, name))
		want := 403
		if m.mayWrite(patterns, member) {
			want, m.profiles[member], m.known[member] = 200, name, true
		}
		expect(t, "rename", code, want, out)
	case 2: // read the profile
		code, out := fz.do("GET", "/v1/members/"+member+"/profile", fz.submit[r], "")
		name, has := m.profiles[member]
		if !has || !m.mayRead(patterns, member) {
			expect(t, "profile", code, 404, out)
		} else if expect(t, "profile", code, 200, out); out["name"] != name {
			t.Fatalf("profile of %s: %v, model %q", member, out, name)
		}
	case 3: // read the identity
		code, out := fz.do("GET", "/v1/identities/"+member, fz.submit[r], "")
		want := 404
		if m.mayRead(patterns, member) {
			want = 200
		}
		expect(t, "identity", code, want, out)
	case 4: // the tenant panel
		code, out := fz.do("GET", "/v1/tenant", fz.admin[r], "")
		expect(t, "tenant", code, 200, out)
		n := 0
		for _, b := range fuzzBoards {
			if reaches(patterns, b) {
				n++
			}
		}
		if out["boards"] != float64(n) {
			t.Fatalf("tenant as %v: boards %v, want %d", patterns, out["boards"], n)
		}
	case 5: // a board's rows show the model's names, and only where reached
		fz.checkTop(t, r, board)
	}
}

// checkTop reads board's top rows as the token of reach r: 403 outside
// its reach; else every row's member ranks there and shows its profile.
func (fz *fuzzReach) checkTop(t *testing.T, r int, board string) {
	code, out := fz.do("GET", "/v1/boards/"+board+"/top?limit=10", fz.submit[r], "")
	if !reaches(fuzzReaches[r], board) {
		expect(t, "top", code, 403, out)
		return
	}
	expect(t, "top", code, 200, out)
	rows, _ := out["rows"].([]any)
	var got []string
	for _, row := range rows {
		rm := row.(map[string]any)
		member, _ := rm["member"].(string)
		got = append(got, member)
		if name, _ := rm["name"].(string); name != fz.m.profiles[member] || !fz.m.ranks[member][board] {
			t.Fatalf("%s row %v: model ranks %v, profile %q", board, rm, fz.m.ranks[member], fz.m.profiles[member])
		}
	}
	var want []string
	for _, mem := range fuzzMembers {
		if fz.m.ranks[mem][board] {
			want = append(want, mem)
		}
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("%s ranks %v, model %v", board, got, want)
	}
}

func expect(t *testing.T, what string, code, want int, out map[string]any) {
	t.Helper()
	if code != want {
		t.Fatalf("%s: status %d, want %d: %v", what, code, want, out)
	}
}

// FuzzReach drives random sequences of requests from tokens of random
// board reach through the API handler (in-process, over a real hub on
// embedded NATS) and checks every answer against reachModel: nothing
// outside a token's reach changes, and nothing of it is read. State
// carries over from one input to the next, and so does the model; the
// seed corpus is small so that go test stays fast.
func FuzzReach(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 0, 2})
	f.Add([]byte{0, 2, 1, 2, 1, 1, 1, 1, 3, 2, 1, 1, 5, 0, 2, 0, 2, 2, 3, 3, 4, 1, 4, 5, 0, 4, 2, 0})
	f.Add([]byte{0, 1, 0, 0, 0, 0, 2, 3, 1, 3, 0, 5, 2, 1, 0, 3, 0, 4, 2, 0, 3, 5, 0, 0, 4, 3, 0, 1, 5, 5, 4, 4})
	fz := newFuzzReach(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := 0; i+3 < len(data) && i < 4*40; i += 4 {
			fz.step(t, data[i]%6, int(data[i+1])%len(fuzzReaches), int(data[i+2])%len(fuzzMembers), int(data[i+3]))
		}
	})
}
