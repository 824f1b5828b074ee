package ledger

import (
	"errors"
	"strings"
	"testing"
)

func f64(v float64) *float64 { return &v }

// A full quarantine refuses what breaks a rule, neither ranking nor holding it.
func TestQuarantineFull(t *testing.T) {
	st := New()
	st.Apply(1, &Event{Kind: EvSettings, Board: "b", Settings: &Settings{Rules: &Rules{MaxScore: f64(0)}}})
	q := &st.boards["b"].quarantine
	for i := range MaxHeld {
		q.hold(Item{Member: "p", Score: 1}, ReasonMaxScore, int64(i), 1)
	}
	out := st.Apply(2, &Event{Kind: EvSubmit, Board: "b", Items: []Item{{Member: "x", Score: 5}}})
	if res := out.Results[0]; res.Reason != ReasonFull || res.Applied || res.QID != 0 || len(out.Held) != 0 {
		t.Fatalf("a refused item: %+v", out)
	}
	if v, _ := st.View("b", "", 0); v.Total() != 0 {
		t.Fatalf("a refused item is ranked: %+v", v.Top(0, 10))
	}
}

func TestRulesRefused(t *testing.T) {
	for _, tt := range []struct {
		r    Rules
		want string
	}{
		{Rules{MinScore: f64(5), MaxScore: f64(4)}, "rules.min_score: 5 is above rules.max_score 4"},
		{Rules{MaxStep: f64(0)}, "rules.max_step: 0 is not above 0"},
		{Rules{MaxStep: f64(-1)}, "rules.max_step: "},
		{Rules{MaxPerMinute: -1}, "rules.max_per_minute: -1 is not in 0..1000000"},
		{Rules{MaxPerMinute: MaxPerMinuteLimit + 1}, "rules.max_per_minute: "},
	} {
		_, err := Settings{Rules: &tt.r}.normalize()
		var he *Error
		if !errors.As(err, &he) || !errors.Is(err, ErrBadRequest) || !strings.HasPrefix(he.Msg, tt.want) {
			t.Errorf("%+v: %v, want a bad request %q", tt.r, err, tt.want)
		}
	}
	if s, err := (Settings{Rules: &Rules{}}).normalize(); err != nil || s.Rules != nil {
		t.Errorf("empty rules: %+v %v, want none", s.Rules, err)
	}
}
