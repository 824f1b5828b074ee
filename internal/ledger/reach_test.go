package ledger

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"slices"
	"strings"
	"testing"
)

// TestEventKindsListed: every EventKind constant of the package is in
// EventKinds, so that the API's table of effects, which must cover
// EventKinds, covers every kind the log holds.
func TestEventKindsListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "event.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	ast.Inspect(f, func(n ast.Node) bool {
		vs, ok := n.(*ast.ValueSpec)
		if ok && vs.Type != nil && types(vs.Type) == "EventKind" {
			for _, name := range vs.Names {
				declared = append(declared, name.Name)
			}
		}
		return true
	})
	if len(declared) == 0 || len(declared) != len(EventKinds) {
		t.Fatalf("event.go declares %d kinds %v; EventKinds lists %d", len(declared), declared, len(EventKinds))
	}
}

func types(e ast.Expr) string {
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return ""
}

// TestProfileReachAtApply: a profile or link event carrying a reach fails
// with ErrForbidden naming the first board (sorted) out of reach where the
// member ranks, and changes nothing; within reach it applies.
func TestProfileReachAtApply(t *testing.T) {
	st := New()
	for i, b := range []string{"slots-1", "poker-final", "a-cup"} {
		set, _ := Settings{}.normalize()
		st.Apply(uint64(i+1), &Event{Kind: EvSettings, Board: b, Settings: &set})
	}
	st.Apply(4, &Event{Kind: EvSubmit, Board: "poker-final", Items: []Item{{Member: "champ", Score: 9}}})
	st.Apply(5, &Event{Kind: EvSubmit, Board: "a-cup", Items: []Item{{Member: "champ", Score: 9}}})
	st.Apply(6, &Event{Kind: EvSubmit, Board: "slots-1", Items: []Item{{Member: "champ", Score: 1}, {Member: "thief", Score: 1}}})
	slots := &Reach{Scoped: true, Boards: []string{"slots-*"}}
	out := st.Apply(7, &Event{Kind: EvProfile, Member: "champ", Profile: &Profile{Name: "pwned"}, Reach: slots})
	if !errors.Is(out.Err, ErrForbidden) || !strings.Contains(out.Err.Error(), `board "a-cup"`) {
		t.Fatalf("profile out of reach: %v, want forbidden naming a-cup", out.Err)
	}
	if _, ok := st.Profile("champ"); ok {
		t.Fatal("the refused profile was stored")
	}
	out = st.Apply(8, &Event{Kind: EvLink, Member: "champ", Aliases: []string{"e@x"}, NoMerge: true, Reach: slots})
	if !errors.Is(out.Err, ErrForbidden) {
		t.Fatalf("link out of reach: %v", out.Err)
	}
	if out := st.Apply(9, &Event{Kind: EvProfile, Member: "thief", Profile: &Profile{Name: "T"}, Reach: slots}); out.Err != nil {
		t.Fatalf("profile within reach: %v", out.Err)
	}
	if !st.MemberReachable("champ", *slots) || st.MemberReachable("champ", Reach{Scoped: true}) ||
		!st.MemberReachable("champ", Reach{}) || st.MemberReachable("nobody", *slots) {
		t.Fatal("MemberReachable")
	}
	if got := st.ranksOn(mustResolve(t, st, "champ")); !slices.Equal(got, []string{"a-cup", "poker-final", "slots-1"}) {
		t.Fatalf("ranksOn: %v", got)
	}
}

func mustResolve(t *testing.T, st *State, m string) uint32 {
	h, ok := st.ix.Resolve(m)
	if !ok {
		t.Fatalf("%q unknown", m)
	}
	return h
}
