package live

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rankwire/rankwire/auth"
	"github.com/rankwire/rankwire/hub"
	"github.com/rankwire/rankwire/internal/effects"
)

// TestMessagesHaveEffects: every client message the plane dispatches has a
// row in the table of effects, and every row is a message it dispatches;
// over a real connection each of them reaches its handler, while a type
// without a row is refused naming the types taken.
func TestMessagesHaveEffects(t *testing.T) {
	for _, typ := range messageTypes {
		if _, ok := effects.Messages[typ]; !ok {
			t.Errorf("live message %q has no row in the table of effects (internal/effects)", typ)
		}
	}
	for typ := range effects.Messages {
		if !slices.Contains(messageTypes, typ) {
			t.Errorf("the table of effects has a row for live message %q, which the plane does not take", typ)
		}
	}
	e := newEnv(t, Options{})
	e.putBoard("a", "b", hub.Settings{})
	tok := e.token("a", auth.RoleRead)
	c := e.dial("access_token="+tok, true, nil)
	c.Send(map[string]any{"type": "auth", "token": tok}) // a refresh
	c.Subscribe("s1", "b", map[string]any{"kind": "top", "limit": 3})
	c.Send(map[string]any{"type": "unsubscribe", "id": "s1"})
	c.Send(map[string]any{"type": "no-such-type", "id": "x"}) // answered last: the others were handled
	checkFor(t, 5*time.Second, func() error {
		for _, m := range c.Errors() {
			if m.ID != nil && *m.ID == "x" {
				return nil
			}
		}
		return errors.New("the unknown type not refused yet")
	})
	for _, m := range c.Errors() {
		id := ""
		if m.ID != nil {
			id = *m.ID
		}
		switch {
		case id == "x" && !strings.Contains(m.Message, typeList):
			t.Errorf("an unknown type: %q, want it to name %q", m.Message, typeList)
		case id != "x":
			t.Errorf("message %q: error %s %q, want it handled", id, m.Code, m.Message)
		}
	}
}

// TestSubscribeDecidedByTable: a subscribe's role and reach come from the
// table's subscribe row: a token scoped to other boards is refused naming
// the board, and one scoped to it is served.
func TestSubscribeDecidedByTable(t *testing.T) {
	row := effects.Messages["subscribe"]
	if row.Role != auth.RoleRead || row.Reach != effects.ReachBoard {
		t.Fatalf("subscribe row %+v: want role read and the board's reach", row)
	}
	e := newEnv(t, Options{})
	e.putBoard("a", "b", hub.Settings{})
	out := e.dial("access_token="+e.token("a", auth.RoleRead, "other-*"), true, nil)
	out.Subscribe("s1", "b", map[string]any{"kind": "top", "limit": 3})
	checkFor(t, 5*time.Second, func() error {
		if errs := out.Errors(); len(errs) == 0 || errs[0].Code != "forbidden" || !strings.Contains(errs[0].Message, `"b"`) {
			return errors.New("no forbidden naming the board yet")
		}
		return nil
	})
	in := e.dial("access_token="+e.token("a", auth.RoleRead, "b"), true, nil)
	in.Subscribe("s1", "b", map[string]any{"kind": "top", "limit": 3})
	checkFor(t, 5*time.Second, func() error {
		if _, ok := in.Rows("s1"); !ok {
			return errors.New("no snapshot yet")
		}
		return nil
	})
	if errs := in.Errors(); len(errs) > 0 {
		t.Errorf("a token reaching b: %+v", errs)
	}
}
